// File: sinfonia.h
//
// The Sinfonia profile (docs/profiles/sinfonia.md): a workflow is a run with
// profile "sinfonia" (machine sinfonia.workflow, exactly Sinfonia's
// transitionMap) and a linear list of steps, tasks of kind "step" (machine
// sinfonia.step) with key = the step's name, position = its 1-based index and
// assignee = its persona. The run's cursor is the current step's key and
// cursor_index its 1-based index; the run's meta holds workflow_id, goal,
// context and description. Sessions live in "sessions", hand-off envelopes in
// "handoffs", decisions in "approvals" (only through RecordDecision: one
// decision is one row and one ledger event).
//
// Every function runs inside the caller's transaction and takes the
// operation's input JSON, already validated against its schema. Every status
// change goes through the run's or the step's machine; a refusal leaves the
// transaction to be rolled back, so a refused call changes nothing.
//
// Errors: NotFound for an unknown run, step or hand-off; InvalidArgument for a
// run of another profile, a missing or empty steps folder, a body over 500
// words; FailedPrecondition (with the machine's details) for a move the
// machines refuse, and for decisions on a workflow that is complete, failed or
// waiting for an answer to a question.

#ifndef BATON_SRC_ENGINE_PROFILES_SINFONIA_SINFONIA_H_
#define BATON_SRC_ENGINE_PROFILES_SINFONIA_SINFONIA_H_

#ifndef BATON_ENGINE_ROOM_PROFILES_SINFONIA
#error "engine/profiles/sinfonia/ is above this target: link baton_engine_sinfonia (src/engine/README.md)"
#endif

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ledger/op_context.h"
#include "model/run.h"
#include "model/task.h"
#include "store/tables/handoff_table.h"

namespace baton {

inline constexpr int kSinfoniaMaxHandoffWords = 500;     // writer.ts
inline constexpr int kSinfoniaMaxCompactionWords = 200;  // compaction.ts

// One step file found in "<workflow>/steps/".
struct SinfoniaStepFile {
  int64_t number = 0;  // the NN of step-NN-slug.md
  std::string key;     // "NN-slug" as written ("01-gather-context")
  std::string slug;    // "gather-context"
  std::string path;
  std::string title;  // the file's first "# " heading, else the slug
};

// The files of "<dir>/steps/" named ^step-(\d+)-(.+)\.md$, in numeric order
// (step-10 after step-9). InvalidArgument naming the path when the folder is
// missing or holds no step file.
Result<std::vector<SinfoniaStepFile>> DiscoverSinfoniaSteps(const std::string& workflow_dir);

// The "Description:" line of "<dir>/workflow.md", else its first non-empty
// line that is not a heading; "" when there is no workflow.md.
std::string SinfoniaWorkflowDescription(const std::string& workflow_dir);

// "s-YYYYMMDD-HHMMSS" of "millis" (Unix epoch) in UTC.
std::string SinfoniaSessionId(int64_t millis);

// Words as Sinfonia counts them: runs of non-whitespace.
int SinfoniaCountWords(std::string_view text);

// sinfonia.start. in: {workflow_dir | workflows[] (+ workflows_root?), goal,
// context?, project?, run?, title?}. Creates the run (created), its steps
// (pending) and its first session; returns SinfoniaState.
Result<Json> SinfoniaStart(OpContext& ctx, const Json& in);
// sinfonia.session {run}: starts a session; the run's active one ends.
Result<Json> SinfoniaStartSession(OpContext& ctx, const Json& in);
// sinfonia.current {run}: Sinfonia's advanceStep / resumeWorkflow, a pure
// read: {step: the current step or null when complete or out of range, ...}.
Result<Json> SinfoniaCurrent(OpContext& ctx, const Json& in);
// sinfonia.handoff {run, type, source, target, body?, step?}.
Result<Json> SinfoniaHandoff(OpContext& ctx, const Json& in);
// sinfonia.state {run}: the whole workflow index as data.
Result<Json> SinfoniaState(OpContext& ctx, const Json& in);

// Moves (sinfonia_flow.cc).
// sinfonia.complete_step {run, index}: completeStep, idempotent.
Result<Json> SinfoniaCompleteStep(OpContext& ctx, const Json& in);
// sinfonia.retry / skip / abort {run, note?, reviewer?}: one decision each.
Result<Json> SinfoniaRetry(OpContext& ctx, const Json& in);
Result<Json> SinfoniaSkip(OpContext& ctx, const Json& in);
Result<Json> SinfoniaAbort(OpContext& ctx, const Json& in);

// Continuity (sinfonia_index.cc).
// sinfonia.compact {run}: {summary, words, ...}, the compaction block.
Result<Json> SinfoniaCompact(OpContext& ctx, const Json& in);
// sinfonia.resume {summary, run?}: {status: ok|recovered|missing|
// inconsistent, inconsistencies[], ...}.
Result<Json> SinfoniaResume(OpContext& ctx, const Json& in);

// Shared by the three files; not for other callers.
namespace sinfonia_internal {

// The run, or InvalidArgument when it is not a sinfonia run.
Result<Run> LoadWorkflow(Txn& txn, const std::string& run_id);
// The run's steps in order.
Result<std::vector<Task>> LoadSteps(OpContext& ctx, const std::string& run_id);
// Writes the cursor "key" ("" for none) at "index" into "run" as loaded,
// bumps its version, appends "sinfonia.cursor" when they changed.
Status SetCursor(OpContext& ctx, const Run& run, const std::string& key, int64_t index);
// Moves the run through its machine (SetRunStatus); nothing when already there.
Status MoveWorkflow(OpContext& ctx, const std::string& run_id, const std::string& to,
                    const std::string& reason);
// Moves a step through sinfonia.step, stamping started_at (to in-progress),
// completed_at (to completed) and "note" into its meta notes. Returns the
// step as stored after the move.
Result<Task> MoveStep(OpContext& ctx, const Task& step, const std::string& to,
                      const std::string& reason, const std::string& note = "");
// Records an envelope inside the transaction: sequence = max + 1 for the run,
// id = "<active session>-NNN", for "step" (none when null). InvalidArgument
// over 500 words, naming "field".
Result<HandoffRow> RecordHandoff(OpContext& ctx, const Run& run, const std::string& type,
                                 const std::string& source, const std::string& target,
                                 const std::string& body, const Task* step,
                                 const std::string& field);
// The run's active session id ("" when none), and a touch of its
// last_active_at.
Result<std::string> ActiveSession(Txn& txn, const std::string& run_id);
Status TouchSession(OpContext& ctx, const std::string& run_id);
// Run "run_id"'s hand-off "id"; NotFound naming it.
Result<HandoffRow> LoadHandoff(Txn& txn, const std::string& run_id, const std::string& id);
// A hand-off as the operations answer it: its row, with "step" and
// "word_count" from its meta.
Json HandoffToJson(const HandoffRow& handoff);

}  // namespace sinfonia_internal

}  // namespace baton

#endif  // BATON_SRC_ENGINE_PROFILES_SINFONIA_SINFONIA_H_
