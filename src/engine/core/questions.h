// File: questions.h
//
// Questions to the human partner (DESIGN.md §3 "questions"), in sgai's shape:
// questions[{question, choices[], multiSelect}], a work-gate flag and a
// free-text message. A question's id is derived from its content as sgai
// derives it — the first 16 hex digits of SHA-256 over the message and the
// question's JSON — so asking the same thing again while it is open is the
// same question, and an answer that arrived after the asker gave up is
// handed to the next ask or wait instead of being lost (sgai kept it only in
// memory; baton keeps it in the store, so it survives a restart too).
//
// Asking moves the run into its profile's waiting status (sgai
// waiting-for-human, graph/baton paused, Sinfonia blocked, Stigmergy
// HUMAN_INPUT_REQUIRED) and remembers the status it left; when the run's last
// open question is answered or cancelled the run goes back there. Only a
// human answers. Each function runs inside the caller's transaction.

#ifndef BATON_SRC_ENGINE_CORE_QUESTIONS_H_
#define BATON_SRC_ENGINE_CORE_QUESTIONS_H_

#ifndef BATON_ENGINE_ROOM_CORE
#error "engine/core/ is above this target: link baton_engine_core (src/engine/README.md)"
#endif

#include <string>

#include "engine/ledger/op_context.h"

namespace baton {

// sgai's work gate: the fixed question ask_user_work_gate asks, and the
// choice that approves it (which moves an sgai run to interactionMode
// "building").
inline constexpr char kWorkGateQuestion[] =
    "Is the definition complete? May I begin implementation?";
inline constexpr char kWorkGateApproval[] = "DEFINITION IS COMPLETE, BUILD MAY BEGIN";
inline constexpr char kWorkGateNotYet[] = "Not ready yet, need more clarification";

// sgai's question id: hex(SHA-256(message + json(multi_choice)))[0:16], where
// multi_choice is {"questions": [...], "isWorkGate": true?} marshalled as Go's
// encoding/json does (field order, HTML-safe escapes, isWorkGate omitted
// when false).
std::string QuestionId(const std::string& message, const Json& questions, bool work_gate);

// FailedPrecondition naming the question while "run_id" has an open one:
// decisions that move a run wait for the human's answer, which returns the
// run to where it was.
Status CheckNoOpenQuestion(Txn& txn, const std::string& run_id);

Result<Json> AskQuestion(OpContext& ctx, const Json& in);     // question.ask
Result<Json> AnswerQuestion(OpContext& ctx, const Json& in);  // question.answer
Result<Json> CancelQuestion(OpContext& ctx, const Json& in);  // question.cancel
Result<Json> ShowQuestion(OpContext& ctx, const Json& in);    // question.show
Result<Json> ListQuestions(OpContext& ctx, const Json& in);   // question.list
// Marks an answered question's answer as handed to its asker (question.wait
// calls it once it sees the answer).
Result<Json> MarkAnswerDelivered(OpContext& ctx, const Json& in);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_CORE_QUESTIONS_H_
