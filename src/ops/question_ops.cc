// Questions to the human and decisions on work: question.* and approval.*.

#include <algorithm>

#include "engine/core/approvals.h"
#include "engine/core/core_services.h"
#include "engine/core/questions.h"
#include "ops/api.h"
#include "ops/schemas.h"
#include "store/tables/handoff_table.h"
#include "store/tables/task_table.h"
#include "util/clock.h"

namespace baton {
namespace {

namespace s = schema;

constexpr int64_t kDefaultWaitMillis = 30000;

Json Strings(const char* description, int max_items) {
  return {{"type", "array"},
          {"description", description},
          {"maxItems", max_items},
          {"items", s::String("a choice", 1000)}};
}

Json QuestionItems() {
  return {{"type", "array"},
          {"description", "the questions, in sgai's shape"},
          {"minItems", 1},
          {"maxItems", 20},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"question", {{"type", "string"}, {"minLength", 1}, {"maxLength", 4000}}},
              {"choices",
               {{"type", "array"},
                {"minItems", 1},
                {"maxItems", 50},
                {"items", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1000}}}}},
              {"multiSelect", s::Boolean("several choices may be picked")}}},
            {"required", {"question", "choices"}},
            {"additionalProperties", false}}}};
}

// A question; "run_status" (the status of its run now) is in every answer
// about one question, not in lists.
Json QuestionOut(bool with_run_status = true) {
  Json out = s::Entity({{"id", {{"type", "string"}}},
                    {"seq", {{"type", "integer"}}},
                    {"run_id", s::Nullable("string")},
                    {"asked_by", {{"type", "string"}}},
                    {"message", {{"type", "string"}}},
                    {"questions", {{"type", "array"}}},
                    {"work_gate", {{"type", "boolean"}}},
                    {"blocks", {{"type", "array"}}},
                    {"status", s::Enum("open, answered or cancelled", {"open", "answered", "cancelled"})},
                    {"answer", {{"type", {"object", "null"}}}},
                    {"answered_by", s::Nullable("string")},
                    {"answered_at", s::Nullable("string")},
                    {"delivered_at", s::Nullable("string")},
                    {"run_status", s::Nullable("string")},
                    {"created_at", {{"type", "string"}}}});
  if (!with_run_status) {
    Json& required = out["required"];
    required.erase(std::remove(required.begin(), required.end(), "run_status"), required.end());
  }
  return out;
}

Json DecisionOut() {
  return s::Entity({{"id", {{"type", "string"}}},
                    {"run_id", s::Nullable("string")},
                    {"subject_kind", {{"type", "string"}}},
                    {"subject", {{"type", "string"}}},
                    {"decision", {{"type", "string"}}},
                    {"reviewer", {{"type", "string"}}},
                    {"note", {{"type", "string"}}},
                    {"event_seq", {{"type", "integer"}}},
                    {"created_at", {{"type", "string"}}}});
}

Json QuestionRef(std::initializer_list<std::pair<const char*, Json>> extra) {
  Json in = s::Input({{"id", s::Id("the question's id (16 hex digits)")},
                      {"run", s::Id("the run it belongs to (needed only when the same id is open "
                                    "in several runs)")}},
                     {"id"});
  for (const auto& [name, schema] : extra) in["properties"][name] = schema;
  return in;
}

// question.wait: until the question is answered or cancelled, or the timeout.
// The outcome is marked as delivered to the asker, so a waiter that timed out
// gets a late answer from its next wait (or its next ask).
Result<Json> WaitForAnswer(OpRunner& runner, const Json& in) {
  Json ref = {{"id", in.at("id")}};
  if (in.contains("run")) ref["run"] = in["run"];
  const int64_t deadline = NowMillis() + in.value("timeout_ms", kDefaultWaitMillis);
  for (bool waiting = true;; waiting = runner.WaitForChange(deadline)) {
    ASSIGN_OR_RETURN(Json q, runner.Call("question.show", ref));
    if (q["status"] != "open") {
      // Only the asker takes the outcome; anyone else just looks at it.
      if (q["asked_by"] == runner.actor().id) {
        if (!q["run_id"].is_null()) ref["run"] = q["run_id"];
        ASSIGN_OR_RETURN(q, runner.CallAsSystem("question.mark_delivered", ref));
      }
      q["timed_out"] = false;
      return q;
    }
    if (!waiting) {
      q["timed_out"] = true;
      return q;
    }
  }
}

// NotFound unless the subject of a plain decision exists (a task, a step or
// story of the run, a hand-off of the run); "run" subjects name what is
// approved ("execution") and need only the run.
Status CheckSubject(OpContext& ctx, const DecisionInput& d) {
  if (d.subject_kind == "run") {
    if (d.run_id.empty()) return InvalidArgumentError("run: a decision on a run names the run");
    return Status();
  }
  if (d.subject_kind == "task") {
    Result<Task> task = LoadTask(ctx.txn, d.subject);
    if (!task.ok()) return NotFoundError("subject: " + task.status().message());
    if (!d.run_id.empty() && task->run_id != d.run_id) {
      return InvalidArgumentError("subject: task " + d.subject + " is not in run " + d.run_id);
    }
    return Status();
  }
  if (d.run_id.empty()) {
    return InvalidArgumentError("run: a decision on a " + d.subject_kind + " names its run");
  }
  ASSIGN_OR_RETURN(const bool exists,
                   d.subject_kind == "handoff"
                       ? HandoffExists(ctx.txn, d.run_id, d.subject)
                       : TaskKeyExists(ctx.txn, d.run_id, d.subject_kind, d.subject));
  if (!exists) {
    return NotFoundError("subject: run " + d.run_id + " has no " + d.subject_kind + " \"" +
                         d.subject + "\"");
  }
  return Status();
}

Result<Json> Decide(OpContext& ctx, const Json& in, const char* decision) {
  DecisionInput d{.run_id = in.value("run", ""),
                  .subject_kind = in.value("subject_kind", "run"),
                  .subject = in.value("subject", ""),
                  .decision = decision,
                  .reviewer = in.value("reviewer", ""),
                  .note = in.value("note", "")};
  if (!d.run_id.empty()) {
    ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, d.run_id));
    if (d.subject.empty() && d.subject_kind == "run") d.subject = "execution";
    if (d.subject.empty()) {
      return InvalidArgumentError("subject: name the " + d.subject_kind + " decided on");
    }
    if (run.profile == "sinfonia") return SinfoniaApplyApproval(ctx, run, d);
    if (run.profile == "stigmergy") return StigmergyApplyApproval(ctx, run, d);
  } else if (d.subject.empty()) {
    return InvalidArgumentError("subject: say what is decided");
  }
  RETURN_IF_ERROR(CheckSubject(ctx, d));
  return RecordDecision(ctx, d);
}

Json DecisionIn() {
  return s::Input(
      {{"run", s::Id("the run decided on")},
       {"subject_kind", s::Enum("what kind of thing is decided (default run)",
                                {"run", "step", "handoff", "task", "story"})},
       {"subject", s::String("which one: a step key, a hand-off id, a task or story id; for "
                             "the run, what is approved (default \"execution\")",
                             200)},
       {"reviewer", s::Id("who decides (default: the caller)")},
       {"note", s::String("the reviewer's note or feedback", 10000)}});
}

}  // namespace

Status RegisterQuestionOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "question.ask",
      .summary = "Ask the human a question; the run waits in its profile's waiting state until "
                 "answered (asking the same thing again is the same question)",
      .input_schema = s::Input(
          {{"run", s::Id("the run the question stops")},
           {"project", s::Id("the project, for a question outside any run")},
           {"questions", QuestionItems()},
           {"work_gate", s::Boolean("sgai's work gate: \"may the build begin?\" (the fixed question "
                              "when questions are not given)")},
           {"message", s::String("free text for the human", 20000)},
           {"blocks", {{"type", "array"},
                       {"description", "ids of the tasks this question blocks"},
                       {"maxItems", 1000},
                       {"items", s::Id("a task id")}}}}),
      .output_schema = QuestionOut(),
      .roles = {"coordinator", "agent"},
      .mutating = true,
      .idempotent = true,
      .handler = AskQuestion,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "question.wait",
      .summary = "Wait for the answer to a question (returns at once if it is already answered; "
                 "an answer that came after a timeout is returned by the next wait)",
      .input_schema = QuestionRef(
          {{"timeout_ms", {{"type", "integer"},
                           {"minimum", 0},
                           {"maximum", 86400000},
                           {"description", "how long to wait (default 30000)"}}}}),
      .output_schema = QuestionOut(),
      .mutating = true,
      .positional = {"id"},
      .procedure = WaitForAnswer,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "question.answer",
      .summary = "Answer an open question (human only); the run returns to where it was",
      .input_schema = QuestionRef(
          {{"choices", Strings("the chosen choices (a question with one part)", 50)},
           {"answers", {{"type", "array"},
                        {"description", "one list of chosen choices per question part"},
                        {"maxItems", 20},
                        {"items", Strings("the chosen choices of one part", 50)}}},
           {"text", s::String("a free-text answer", 20000)}}),
      .output_schema = QuestionOut(),
      .roles = {"human"},
      .mutating = true,
      .positional = {"id"},
      .handler = AnswerQuestion,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "question.cancel",
      .summary = "Withdraw an open question; the run returns to where it was",
      .input_schema = QuestionRef({{"reason", s::String("why", 2000)}}),
      .output_schema = QuestionOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .positional = {"id"},
      .handler = CancelQuestion,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "question.show",
      .summary = "Show a question, its answer and the status of its run",
      .input_schema = QuestionRef({}),
      .output_schema = QuestionOut(),
      .positional = {"id"},
      .handler = ShowQuestion,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "question.list",
      .summary = "List questions (open ones unless a status is given)",
      .input_schema = s::Input(
          {{"run", s::Id("only this run's")},
           {"project", s::Id("only this project's (id or name)")},
           {"status", s::Enum("which (default open)", {"open", "answered", "cancelled", "all"})},
           {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100000}}}}),
      .output_schema = s::ListOf("questions", QuestionOut(/*with_run_status=*/false)),
      .handler = ListQuestions,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "question.mark_delivered",
      .summary = "Record that a question's outcome reached its asker (question.wait does this)",
      .input_schema = QuestionRef({}),
      .output_schema = QuestionOut(),
      .roles = {"admin"},
      .mutating = true,
      .handler = MarkAnswerDelivered,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "approval.approve",
      .summary = "Approve a step, a hand-off or a run's execution (Sinfonia: the workflow "
                 "advances; Stigmergy: a supervised project may execute)",
      .input_schema = DecisionIn(),
      .output_schema = DecisionOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .handler = [](OpContext& ctx, const Json& in) { return Decide(ctx, in, "approve"); },
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "approval.reject",
      .summary = "Reject a step, a hand-off or a run's execution (Sinfonia: the workflow is "
                 "blocked and a revision goes back to the producer)",
      .input_schema = DecisionIn(),
      .output_schema = DecisionOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .handler = [](OpContext& ctx, const Json& in) { return Decide(ctx, in, "reject"); },
  }));
  return r.Add({
      .name = "approval.list",
      .summary = "List the decisions on a run or a subject, oldest first",
      .input_schema = s::Input({{"run", s::Id("only this run's")},
                                {"subject_kind", s::String("only this kind of subject", 40)},
                                {"subject", s::String("only this subject", 200)}}),
      .output_schema = s::ListOf("decisions", DecisionOut()),
      .handler = [](OpContext& ctx, const Json& in) -> Result<Json> {
        ASSIGN_OR_RETURN(Json list, ListDecisions(ctx.txn, in.value("run", ""),
                                                  in.value("subject_kind", ""),
                                                  in.value("subject", "")));
        return Json{{"decisions", list}};
      },
  });
}

}  // namespace baton
