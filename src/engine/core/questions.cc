#include "engine/core/questions.h"

#include <set>

#include "engine/core/core_services.h"
#include "engine/core/engine_hooks.h"
#include "engine/ledger/ledger.h"
#include "model/profile.h"
#include "model/question.h"
#include "store/tables/question_table.h"
#include "util/optional_text.h"
#include "util/sha256.h"

namespace baton {
namespace {

// A JSON string as Go's encoding/json writes it: HTML-safe (<, >, & escaped)
// and U+2028/U+2029 escaped, so the hash matches sgai's.
void AppendGoString(std::string& out, const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
                static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

std::string GoMultiChoiceJson(const Json& questions, bool work_gate) {
  std::string out = "{\"questions\":[";
  for (size_t i = 0; i < questions.size(); ++i) {
    const Json& q = questions[i];
    if (i > 0) out += ',';
    out += "{\"question\":";
    AppendGoString(out, q.value("question", ""));
    out += ",\"choices\":[";
    const Json choices = q.value("choices", Json::array());
    for (size_t c = 0; c < choices.size(); ++c) {
      if (c > 0) out += ',';
      AppendGoString(out, choices[c].get<std::string>());
    }
    out += "],\"multiSelect\":";
    out += q.value("multiSelect", false) ? "true" : "false";
    out += '}';
  }
  out += ']';
  if (work_gate) out += ",\"isWorkGate\":true";
  out += '}';
  return out;
}

// The questions as stored: every item with its multiSelect, choices unique.
Result<Json> NormalizeQuestions(const Json& in, bool work_gate) {
  if (!in.contains("questions")) {
    if (!work_gate) {
      return InvalidArgumentError("questions: required unless work_gate is true "
                                  "(a work gate asks sgai's fixed question)");
    }
    return Json::array({{{"question", kWorkGateQuestion},
                         {"choices", {kWorkGateApproval, kWorkGateNotYet}},
                         {"multiSelect", false}}});
  }
  Json out = Json::array();
  const Json& questions = in["questions"];
  for (size_t i = 0; i < questions.size(); ++i) {
    const Json& q = questions[i];
    std::set<std::string> seen;
    for (size_t c = 0; c < q["choices"].size(); ++c) {
      if (!seen.insert(q["choices"][c].get<std::string>()).second) {
        return InvalidArgumentError("questions[" + std::to_string(i) + "].choices[" +
                                    std::to_string(c) + "]: duplicate choice \"" +
                                    q["choices"][c].get<std::string>() + "\"");
      }
    }
    out.push_back({{"question", q["question"]},
                   {"choices", q["choices"]},
                   {"multiSelect", q.value("multiSelect", false)}});
  }
  return out;
}

// The question "in" names: by id (and run, when given), open ones first,
// then the newest. Ids come from content, so the same words asked in two runs
// share one: without a run that is refused, except that an operation needing
// an open question ("want_open") takes the only run where it is open.
Result<Question> FindQuestion(Txn& txn, const Json& in, bool want_open = false) {
  const std::string id = in.at("id").get<std::string>();
  std::optional<std::string> run_id;
  if (in.contains("run")) run_id = in["run"].get<std::string>();
  ASSIGN_OR_RETURN(std::vector<Question> found, FindQuestionRows(txn, id, run_id));
  if (found.empty()) {
    return NotFoundError("id: no question with id \"" + id + "\"" +
                         (in.contains("run") ? " in run " + in["run"].get<std::string>() : ""));
  }
  std::set<std::string> runs;
  std::set<std::string> open_runs;
  for (const Question& q : found) {
    const std::string run = q.run_id.value_or("");
    runs.insert(run);
    if (q.status == "open") open_runs.insert(run);
  }
  if (runs.size() > 1 && !(want_open && open_runs.size() == 1)) {
    std::string names;
    for (const std::string& r : runs) names += (names.empty() ? "" : ", ") + (r.empty() ? "(none)" : r);
    return InvalidArgumentError("run: question \"" + id + "\" was asked in several runs (" + names +
                                "); pass run to say which");
  }
  return found[0];
}

// After question "q" of "run_id" closes: when none is left open and the run
// still waits, it goes back to the status the questions found it in. A run
// that was already waiting for another reason (a Sinfonia rejection, a human's
// pause) stays where it is. When the machine does not allow going back (sgai
// answers always lead to working) the run takes the first status allowed.
Status ReleaseRun(OpContext& ctx, const std::string& run_id, const Question& q,
                  const std::string& why) {
  ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, run_id));
  ASSIGN_OR_RETURN(const Profile* profile, FindProfile(run.profile));
  ASSIGN_OR_RETURN(int64_t open, CountOpenQuestions(ctx.txn, run_id));
  if (open > 0 || run.status != profile->waiting_status) return Status();
  const std::string before = q.status_before.value_or("");
  if (before.empty() || before == profile->waiting_status) return Status();
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(run.machine));
  std::string target = before;
  if (!machine->Check(profile->waiting_status, target, ctx.transition()).ok()) {
    std::vector<std::string> allowed = machine->AllowedNext(profile->waiting_status, ctx.transition());
    if (allowed.empty()) return Status();  // the machine keeps it waiting
    target = allowed[0];
  }
  RETURN_IF_ERROR(MoveRunStatus(ctx, run, target, why));
  return StoreRun(ctx, run);
}

// Checks an answer against the question and returns it in stored form:
// {"answers": [[choice, ...] per question], "text": "..."}.
Result<Json> ValidateAnswer(const Question& q, const Json& in) {
  const Json& questions = q.questions;
  const std::string text = in.value("text", "");
  Json answers;
  if (in.contains("answers") && in.contains("choices")) {
    return InvalidArgumentError("choices: give choices (one part) or answers (every part), not both");
  }
  if (in.contains("answers")) {
    answers = in["answers"];
  } else if (in.contains("choices")) {
    if (questions.size() != 1) {
      return InvalidArgumentError("choices: the question has " + std::to_string(questions.size()) +
                                  " parts; give answers, one list of choices per part");
    }
    answers = Json::array({in["choices"]});
  } else {
    answers = Json::array();
    for (size_t i = 0; i < questions.size(); ++i) answers.push_back(Json::array());
  }
  if (answers.size() != questions.size()) {
    return InvalidArgumentError("answers: " + std::to_string(answers.size()) + " given for " +
                                std::to_string(questions.size()) + " questions; answer each");
  }
  for (size_t i = 0; i < questions.size(); ++i) {
    const Json& item = questions[i];
    const std::string where = "answers[" + std::to_string(i) + "]";
    std::string offered;
    for (const Json& c : item["choices"]) offered += (offered.empty() ? "" : ", ") + c.get<std::string>();
    std::set<std::string> chosen;
    for (const Json& c : answers[i]) {
      const std::string choice = c.get<std::string>();
      bool known = false;
      for (const Json& o : item["choices"]) known = known || o == choice;
      if (!known) {
        return InvalidArgumentError(where + ": \"" + choice + "\" is not one of the choices (" +
                                    offered + ")");
      }
      if (!chosen.insert(choice).second) {
        return InvalidArgumentError(where + ": \"" + choice + "\" is chosen twice");
      }
    }
    if (!item["multiSelect"].get<bool>() && chosen.size() > 1) {
      return InvalidArgumentError(where + ": \"" + item["question"].get<std::string>() +
                                  "\" takes one choice, " + std::to_string(chosen.size()) +
                                  " were given (" + offered + ")");
    }
    if (chosen.empty() && text.empty()) {
      return InvalidArgumentError(where + ": choose from (" + offered +
                                  ") or give a free-text answer in text");
    }
  }
  return Json{{"answers", answers}, {"text", text}};
}

// The question as the question operations answer it: with its run's status.
Result<Json> WithRunStatus(Txn& txn, const Question& question) {
  Json q = QuestionToJson(question);
  q["run_status"] = Json();
  if (question.run_id) {
    ASSIGN_OR_RETURN(Run run, LoadRun(txn, *question.run_id));
    q["run_status"] = run.status;
  }
  return q;
}

Result<Json> LoadBySeq(Txn& txn, int64_t seq) {
  ASSIGN_OR_RETURN(Question q, LoadQuestionRow(txn, seq));
  return WithRunStatus(txn, q);
}

}  // namespace

std::string QuestionId(const std::string& message, const Json& questions, bool work_gate) {
  return Sha256Hex(message + GoMultiChoiceJson(questions, work_gate)).substr(0, 16);
}

Status CheckNoOpenQuestion(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::optional<std::string> open, FirstOpenQuestionId(txn, run_id));
  if (!open) return Status();
  return FailedPreconditionError("run: " + run_id + " is waiting for the answer to question " +
                                 *open + "; answer or cancel it first");
}

Result<Json> AskQuestion(OpContext& ctx, const Json& in) {
  const bool work_gate = in.value("work_gate", false);
  ASSIGN_OR_RETURN(Json questions, NormalizeQuestions(in, work_gate));
  std::string message = in.value("message", "");
  if (message.empty() && work_gate && !in.contains("questions")) message = kWorkGateQuestion;
  const std::string id = QuestionId(message, questions, work_gate);

  std::string run_id;
  std::string project_id;
  std::optional<Run> run;
  if (in.contains("run")) {
    run_id = in["run"].get<std::string>();
    ASSIGN_OR_RETURN(run, LoadRun(ctx.txn, run_id));
    project_id = run->project_id.value_or("");
  } else if (in.contains("project")) {
    ASSIGN_OR_RETURN(project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  const Json blocks = in.value("blocks", Json::array());
  for (size_t i = 0; i < blocks.size(); ++i) {
    Result<Task> task = LoadTask(ctx.txn, blocks[i].get<std::string>());
    if (!task.ok()) {
      return InvalidArgumentError("blocks[" + std::to_string(i) + "]: " + task.status().message());
    }
  }

  // The same question again: the open one, or an answer its asker never got.
  ASSIGN_OR_RETURN(std::optional<Question> earlier,
                   FindOpenOrUndeliveredQuestion(
                       ctx.txn, id, NoneIfEmpty(run_id)));
  if (earlier) {
    Json q;
    if (earlier->status == "answered") {
      ASSIGN_OR_RETURN(q, MarkAnswerDelivered(ctx, {{"id", id}, {"run", run_id}}));
    } else {
      ASSIGN_OR_RETURN(q, WithRunStatus(ctx.txn, *earlier));
    }
    q["asked_again"] = true;
    return q;
  }

  // Every question remembers the status the run had before any open
  // question held it; the waiting status itself means "already held".
  std::string status_before;
  if (run) {
    ASSIGN_OR_RETURN(const Profile* profile, FindProfile(run->profile));
    const std::string status = run->status;
    status_before = status;
    if (status != profile->waiting_status) {
      // The machine decides whether this run can wait from where it is.
      RETURN_IF_ERROR(MoveRunStatus(ctx, *run, profile->waiting_status,
                                    "question " + id + " asked by " + ctx.actor.id)
                          .WithPrefix("run"));
      RETURN_IF_ERROR(StoreRun(ctx, *run).WithPrefix("run"));
    } else {
      ASSIGN_OR_RETURN(std::optional<std::string> held, FirstOpenStatusBefore(ctx.txn, run_id));
      if (held) status_before = *held;
    }
  }
  ASSIGN_OR_RETURN(int64_t seq,
                   InsertQuestionRow(ctx.txn, Question{.id = id,
                                                       .run_id = NoneIfEmpty(run_id),
                                                       .project_id = NoneIfEmpty(project_id),
                                                       .asked_by = ctx.actor.id,
                                                       .asked_by_role = ctx.actor.role,
                                                       .message = message,
                                                       .questions = questions,
                                                       .work_gate = work_gate,
                                                       .blocks = blocks,
                                                       .status_before = NoneIfEmpty(status_before),
                                                       .created_at = ctx.now,
                                                       .updated_at = ctx.now}));
  std::string summary = questions[0]["question"].get<std::string>();
  if (questions.size() > 1) summary += " (+" + std::to_string(questions.size() - 1) + " more)";
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "question.asked",
                                    .summary = "question " + id + ": " + summary,
                                    .payload = {{"question_id", id},
                                                {"message", message},
                                                {"questions", questions},
                                                {"work_gate", work_gate},
                                                {"blocks", blocks},
                                                {"status_before", status_before}}})
                      .status());
  ASSIGN_OR_RETURN(Json q, LoadBySeq(ctx.txn, seq));
  q["asked_again"] = false;
  return q;
}

Result<Json> AnswerQuestion(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Question q, FindQuestion(ctx.txn, in, /*want_open=*/true));
  const std::string id = q.id;
  if (q.status != "open") {
    return FailedPreconditionError("question " + id + " is " + q.status +
                                   (q.answered_by ? " (by " + *q.answered_by + " at " +
                                                        q.answered_at.value_or("") + ")"
                                                  : std::string()) +
                                   "; only an open question takes an answer");
  }
  ASSIGN_OR_RETURN(Json answer, ValidateAnswer(q, in));
  RETURN_IF_ERROR(AnswerQuestionRow(ctx.txn, q.seq, answer, ctx.actor.id, ctx.now));
  Json payload = {{"question_id", id}, {"answer", answer}};
  if (ctx.hooks != nullptr) {
    for (const auto& hook : ctx.hooks->question_answered) {
      RETURN_IF_ERROR(hook(ctx, q, answer, payload));
    }
  }
  const std::string run_id = q.run_id.value_or("");
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "question.answered",
                                    .summary = "question " + id + " answered by " + ctx.actor.id,
                                    .payload = payload})
                      .status());
  if (!run_id.empty()) {
    RETURN_IF_ERROR(ReleaseRun(ctx, run_id, q, "question " + id + " answered"));
  }
  return LoadBySeq(ctx.txn, q.seq);
}

Result<Json> CancelQuestion(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Question q, FindQuestion(ctx.txn, in, /*want_open=*/true));
  const std::string id = q.id;
  if (q.status != "open") {
    return FailedPreconditionError("question " + id + " is " + q.status +
                                   "; only an open question can be cancelled");
  }
  const std::string reason = in.value("reason", "");
  RETURN_IF_ERROR(CancelQuestionRow(ctx.txn, q.seq, ctx.actor.id, ctx.now));
  const std::string run_id = q.run_id.value_or("");
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "question.cancelled",
                                    .summary = "question " + id + " cancelled by " + ctx.actor.id +
                                               (reason.empty() ? "" : ": " + reason),
                                    .payload = {{"question_id", id}, {"reason", reason}}})
                      .status());
  if (!run_id.empty()) {
    RETURN_IF_ERROR(ReleaseRun(ctx, run_id, q, "question " + id + " cancelled"));
  }
  return LoadBySeq(ctx.txn, q.seq);
}

Result<Json> ShowQuestion(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Question q, FindQuestion(ctx.txn, in));
  return WithRunStatus(ctx.txn, q);
}

Result<Json> ListQuestions(OpContext& ctx, const Json& in) {
  QuestionFilter filter;
  if (in.contains("run")) filter.run_id = in["run"].get<std::string>();
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(filter.project_id,
                     ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  const std::string status = in.value("status", "open");
  if (status != "all") filter.status = status;
  filter.limit = in.value("limit", 1000);
  ASSIGN_OR_RETURN(std::vector<Question> rows, ListQuestionRows(ctx.txn, filter));
  Json list = Json::array();
  for (const Question& q : rows) list.push_back(QuestionToJson(q));
  return Json{{"questions", list}};
}

Result<Json> MarkAnswerDelivered(OpContext& ctx, const Json& in) {
  // The closed question whose outcome its asker has not had yet, else
  // whatever the id names (already delivered: nothing to do).
  const std::string id = in.at("id").get<std::string>();
  const std::string run_id = in.value("run", "");
  ASSIGN_OR_RETURN(std::optional<Question> pending,
                   FindUndeliveredClosedQuestion(
                       ctx.txn, id, NoneIfEmpty(run_id)));
  if (!pending) {
    Json query = {{"id", id}};
    if (!run_id.empty()) query["run"] = run_id;
    ASSIGN_OR_RETURN(Question q, FindQuestion(ctx.txn, query));
    return WithRunStatus(ctx.txn, q);
  }
  const Question& q = *pending;
  RETURN_IF_ERROR(MarkQuestionDelivered(ctx.txn, q.seq, ctx.now));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = q.run_id.value_or(""),
                                    .kind = "question.delivered",
                                    .summary = "the outcome of question " + id + " (" + q.status +
                                               ") reached " + q.asked_by,
                                    .payload = {{"question_id", id}}})
                      .status());
  return LoadBySeq(ctx.txn, q.seq);
}

}  // namespace baton
