// The Sinfonia profile's moves: completeStep, the approval gate and the
// failure actions (retry / skip / abort). Each move goes through the
// workflow's and the step's machines; each decision is one RecordDecision.

#include <cctype>

#include "engine/core/approvals.h"
#include "engine/core/core_services.h"
#include "engine/core/questions.h"
#include "engine/ledger/ledger.h"
#include "engine/profiles/sinfonia/sinfonia.h"
#include "store/tables/handoff_table.h"
#include "store/tables/task_table.h"
#include "util/json_or_null.h"

namespace baton {
namespace {

using namespace sinfonia_internal;

// Where a workflow stands: the run, its steps and the current one.
struct Position {
  Run run;
  std::vector<Task> steps;
  int64_t index = 0;  // cursor_index, 1-based
  int64_t total = 0;
  std::optional<Task> step;  // steps[index - 1], or none when out of range

  const std::string& run_id() const { return run.id; }
  const std::string& status() const { return run.status; }
  std::string key() const { return step ? step->key.value_or("") : ""; }
};

Result<Position> LoadPosition(OpContext& ctx, const std::string& run_id) {
  Position p;
  ASSIGN_OR_RETURN(p.run, LoadWorkflow(ctx.txn, run_id));
  ASSIGN_OR_RETURN(p.steps, LoadSteps(ctx, run_id));
  p.index = p.run.cursor_index.value_or(0);
  p.total = static_cast<int64_t>(p.steps.size());
  if (p.index >= 1 && p.index <= p.total) p.step = p.steps[p.index - 1];
  return p;
}

Status RequireCurrentStep(const Position& p) {
  if (p.step) return Status();
  return FailedPreconditionError("run: " + p.run_id() + " has no current step (index " +
                                 std::to_string(p.index) + " of " + std::to_string(p.total) + ")");
}

// The state after a move, with what the caller needs on top.
Result<Json> StateWith(OpContext& ctx, const std::string& run_id, Json extra) {
  ASSIGN_OR_RETURN(Json state, SinfoniaState(ctx, {{"run", run_id}}));
  for (auto it = extra.begin(); it != extra.end(); ++it) state[it.key()] = it.value();
  return state;
}

// Brings the current step to in-progress (from pending, blocked or failed).
Result<Task> StartStep(OpContext& ctx, const Task& step, const std::string& reason) {
  if (step.status == "in-progress") return step;
  return MoveStep(ctx, step, "in-progress", reason);
}

// completeStep / approve / skip: the current step is completed and the next
// one becomes current (in-progress); after the last one the workflow is
// complete and the index stays at the last step (completeStep's rule, also
// for approve and skip: Sinfonia wrote total+1 there).
Status Advance(OpContext& ctx, const Position& p, const std::string& reason,
               const std::string& note, bool skip) {
  RETURN_IF_ERROR(RequireCurrentStep(p));
  const std::string& status = p.status();
  if (status == "failed") {
    return FailedPreconditionError("run: workflow " + p.run_id() +
                                   " failed (aborted); sinfonia.retry brings it back first");
  }
  RETURN_IF_ERROR(CheckNoOpenQuestion(ctx.txn, p.run_id()));
  // created (and a held workflow being released) first moves to in-progress.
  if (status == "created" || status == "blocked") {
    RETURN_IF_ERROR(MoveWorkflow(ctx, p.run_id(), "in-progress", reason));
  }
  Task step = *p.step;
  // The step machine lets a skip take pending -> completed directly.
  if (!(skip && step.status == "pending")) {
    ASSIGN_OR_RETURN(step, StartStep(ctx, step, reason));
  }
  RETURN_IF_ERROR(MoveStep(ctx, step, "completed", reason, note).status());
  if (p.index >= p.total) {
    RETURN_IF_ERROR(MoveWorkflow(ctx, p.run_id(), "complete", reason));
  } else {
    RETURN_IF_ERROR(MoveWorkflow(ctx, p.run_id(), "in-progress", reason));
    const Task& next = p.steps[p.index];
    RETURN_IF_ERROR(StartStep(ctx, next, reason).status());
    ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, p.run_id()));
    RETURN_IF_ERROR(SetCursor(ctx, run, next.key.value_or(""), p.index + 1));
  }
  return TouchSession(ctx, p.run_id());
}

// Stamps Sinfonia's approval fields on a reviewed envelope.
Status StampHandoff(OpContext& ctx, const HandoffRow& handoff, const std::string& status,
                    const std::string& decision, const std::string& reviewer) {
  Json meta = handoff.meta;
  meta["approval"] = decision;
  meta["approved_by"] = reviewer;
  meta["approved_at"] = ctx.now;
  return StampSinfoniaHandoff(ctx.txn, handoff.id, status, meta, ctx.now);
}

std::string RevisionBody(const Task& step, const std::string& note) {
  return "## Revision Required\n" + step.key.value_or("") + ": " + step.title +
         "\n\n## Feedback\n" + (note.empty() ? std::string("Rejected by reviewer") : note) +
         "\n\n## Next Steps\nAddress the feedback and send a new return envelope.";
}

// The subject of an approval: its step, and the envelope when it is one.
struct Subject {
  Task step;
  std::optional<HandoffRow> handoff;  // none for a step subject
};

Result<Subject> ResolveSubject(OpContext& ctx, const Position& p, const DecisionInput& in) {
  Subject s;
  std::string key = in.subject;
  if (in.subject_kind == "handoff") {
    ASSIGN_OR_RETURN(s.handoff, LoadHandoff(ctx.txn, p.run_id(), in.subject));
    key = s.handoff->meta.value("step", "");
    if (key.empty()) key = p.key();
  } else if (in.subject_kind != "step") {
    return InvalidArgumentError(
        "subject_kind: a Sinfonia workflow decides on a \"step\" or a "
        "\"handoff\", not a " +
        in.subject_kind);
  }
  const Task* found = nullptr;
  for (const Task& step : p.steps) {
    if (step.key == key) found = &step;
  }
  if (found == nullptr) {
    return NotFoundError("subject: run " + p.run_id() + " has no step \"" + key + "\"");
  }
  s.step = *found;
  return s;
}

Status CheckDecidable(const Position& p, const Subject& s) {
  if (p.status() == "complete") {
    return FailedPreconditionError("run: workflow " + p.run_id() +
                                   " is complete; nothing to decide");
  }
  if (p.status() == "failed") {
    return FailedPreconditionError("run: workflow " + p.run_id() +
                                   " failed (aborted); sinfonia.retry brings it back first");
  }
  if (s.step.key != p.key()) {
    return FailedPreconditionError("subject: step " + s.step.key.value_or("") +
                                   " is not the current step (" + p.key() + ", index " +
                                   std::to_string(p.index) + ")");
  }
  return Status();
}

// reject: the workflow and the step are blocked, and a revision envelope goes
// back to whoever produced the work. Returns the revision.
Result<HandoffRow> Reject(OpContext& ctx, const Position& p, const Subject& s,
                          const DecisionInput& in, const std::string& reviewer) {
  const std::string reason = "rejected by " + reviewer + (in.note.empty() ? "" : ": " + in.note);
  RETURN_IF_ERROR(MoveWorkflow(ctx, p.run_id(), "blocked", reason));
  if (s.step.status != "blocked") {
    RETURN_IF_ERROR(MoveStep(ctx, s.step, "blocked", reason, "rejected: " + in.note).status());
  }
  const std::string producer = s.handoff ? s.handoff->source : s.step.assignee.value_or("maestro");
  const std::string sender = s.handoff ? s.handoff->target : "maestro";
  ASSIGN_OR_RETURN(HandoffRow revision,
                   RecordHandoff(ctx, p.run, "revision", sender, producer,
                                 RevisionBody(s.step, in.note), &s.step, "note"));
  if (s.handoff) RETURN_IF_ERROR(StampHandoff(ctx, *s.handoff, "blocked", "reject", reviewer));
  RETURN_IF_ERROR(TouchSession(ctx, p.run_id()));
  return revision;
}

std::string Reviewer(OpContext& ctx, const Json& in) { return in.value("reviewer", ctx.actor.id); }

// One failure action's decision on the current step.
Result<Json> Decide(OpContext& ctx, const Position& p, const std::string& decision, const Json& in,
                    Json meta) {
  return RecordDecision(ctx, {.run_id = p.run_id(),
                              .subject_kind = "step",
                              .subject = p.key(),
                              .decision = decision,
                              .reviewer = Reviewer(ctx, in),
                              .note = in.value("note", ""),
                              .meta = std::move(meta)});
}

std::string FirstWords(const std::string& text, int n) {
  std::string out;
  int words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space && !in_word && ++words > n) {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      return out + " ...";
    }
    in_word = !space;
    out += space ? ' ' : c;
  }
  return out;
}

}  // namespace

Result<Json> SinfoniaCompleteStep(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Position p, LoadPosition(ctx, in.at("run").get<std::string>()));
  const int64_t index = in.at("index").get<int64_t>();
  // completeStep is idempotent: another index, or a finished workflow, is
  // left as it is (and nothing is written).
  if (index != p.index || p.status() == "complete") {
    return StateWith(ctx, p.run_id(), {{"changed", false}});
  }
  RETURN_IF_ERROR(Advance(ctx, p, "step " + p.key() + " completed", "", /*skip=*/false));
  return StateWith(ctx, p.run_id(), {{"changed", true}, {"completed_step", p.key()}});
}

Result<Json> SinfoniaApplyApproval(OpContext& ctx, const Run& run, const DecisionInput& in) {
  if (in.decision != "approve" && in.decision != "reject") {
    return InvalidArgumentError("decision: a Sinfonia approval is approve or reject, not " +
                                in.decision);
  }
  ASSIGN_OR_RETURN(Position p, LoadPosition(ctx, run.id));
  ASSIGN_OR_RETURN(Subject s, ResolveSubject(ctx, p, in));
  RETURN_IF_ERROR(CheckDecidable(p, s));
  const std::string reviewer = in.reviewer.empty() ? ctx.actor.id : in.reviewer;
  DecisionInput d = in;
  d.meta["step"] = p.key();
  Json revision;
  if (in.decision == "approve") {
    RETURN_IF_ERROR(Advance(ctx, p, "approved by " + reviewer, in.note, /*skip=*/false));
    if (s.handoff) {
      RETURN_IF_ERROR(StampHandoff(ctx, *s.handoff, "completed", "approve", reviewer));
    }
    d.meta["outcome"] = "advanced";
  } else {
    RETURN_IF_ERROR(CheckNoOpenQuestion(ctx.txn, p.run_id()));
    ASSIGN_OR_RETURN(HandoffRow sent, Reject(ctx, p, s, in, reviewer));
    revision = HandoffToJson(sent);
    d.meta["outcome"] = "revision-sent";
    d.meta["revision_handoff"] = sent.id;
  }
  // One decision, one row and one ledger event (Sinfonia wrote "rejected"
  // from the coordinator and "reject" from the approval module).
  ASSIGN_OR_RETURN(Json decision, RecordDecision(ctx, d));
  ASSIGN_OR_RETURN(Run after, LoadRun(ctx.txn, p.run_id()));
  decision["outcome"] = d.meta["outcome"];
  decision["workflow_status"] = after.status;
  decision["current_step"] = OrNull(after.cursor);
  decision["current_step_index"] = OrNull(after.cursor_index);
  decision["revision_handoff"] = revision;
  return decision;
}

Result<Json> SinfoniaRetry(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Position p, LoadPosition(ctx, in.at("run").get<std::string>()));
  RETURN_IF_ERROR(RequireCurrentStep(p));
  RETURN_IF_ERROR(CheckNoOpenQuestion(ctx.txn, p.run_id()));
  const std::string note = in.value("note", "");
  RETURN_IF_ERROR(MoveWorkflow(ctx, p.run_id(), "in-progress", "retry: " + note));
  ASSIGN_OR_RETURN(Task step, StartStep(ctx, *p.step, "retry"));
  RETURN_IF_ERROR(CountSinfoniaStepAttempt(ctx.txn, step.id, ctx.now));
  // handleFailure('retry'): the step is dispatched again with the failure
  // notes appended to its context.
  const std::string persona = step.assignee.value_or("maestro");
  const std::string body =
      "## Task\n" + step.title + " (step " + std::to_string(p.index) + " of " +
      std::to_string(p.total) +
      ")\n\n## Context\nGoal: " + FirstWords(p.run.meta.value("goal", ""), 35) +
      "\n\n## Previous Attempt Failure Notes\n" + (note.empty() ? "none given" : note);
  ASSIGN_OR_RETURN(HandoffRow dispatch,
                   RecordHandoff(ctx, p.run, "dispatch", "maestro", persona, body, &step, "note"));
  ASSIGN_OR_RETURN(Json decision, Decide(ctx, p, "retry", in, {{"handoff", dispatch.id}}));
  RETURN_IF_ERROR(TouchSession(ctx, p.run_id()));
  return StateWith(
      ctx, p.run_id(),
      {{"changed", true}, {"decision", decision}, {"handoff", HandoffToJson(dispatch)}});
}

Result<Json> SinfoniaSkip(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Position p, LoadPosition(ctx, in.at("run").get<std::string>()));
  RETURN_IF_ERROR(RequireCurrentStep(p));
  if (p.status() == "complete") {
    return FailedPreconditionError("run: workflow " + p.run_id() + " is complete; nothing to skip");
  }
  const std::string note = in.value("note", "");
  RETURN_IF_ERROR(Advance(ctx, p, "step " + p.key() + " skipped",
                          "skipped" + (note.empty() ? "" : ": " + note), /*skip=*/true));
  ASSIGN_OR_RETURN(Json decision, Decide(ctx, p, "skipped", in, Json::object()));
  return StateWith(ctx, p.run_id(), {{"changed", true}, {"decision", decision}});
}

Result<Json> SinfoniaAbort(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Position p, LoadPosition(ctx, in.at("run").get<std::string>()));
  if (p.status() == "complete") {
    return FailedPreconditionError("run: workflow " + p.run_id() +
                                   " is complete; a complete workflow cannot be aborted");
  }
  // The Pi surface's abort leaves an already failed workflow as it is.
  if (p.status() == "failed") return StateWith(ctx, p.run_id(), {{"changed", false}});
  RETURN_IF_ERROR(CheckNoOpenQuestion(ctx.txn, p.run_id()));
  const std::string note = in.value("note", "");
  RETURN_IF_ERROR(MoveWorkflow(ctx, p.run_id(), "failed", "aborted: " + note));
  if (p.step && p.step->status == "in-progress") {
    RETURN_IF_ERROR(MoveStep(ctx, *p.step, "failed", "aborted", "aborted: " + note).status());
  }
  ASSIGN_OR_RETURN(Json decision, Decide(ctx, p, "aborted", in, Json::object()));
  RETURN_IF_ERROR(TouchSession(ctx, p.run_id()));
  return StateWith(ctx, p.run_id(), {{"changed", true}, {"decision", decision}});
}

}  // namespace baton
