#include "engine/profiles/stigmergy/stigmergy.h"

#include <set>

#include "engine/core/approvals.h"
#include "engine/core/core_services.h"
#include "engine/interchange/imports.h"
#include "engine/ledger/ledger.h"
#include "engine/core/questions.h"
#include "engine/core/task_graph.h"
#include "formats/stigmergy_format.h"
#include "store/tables/approval_table.h"
#include "store/tables/task_table.h"

namespace baton {
namespace {

constexpr char kProfile[] = "stigmergy";
constexpr char kHistoryKind[] = "stigmergy.signal";
constexpr const char* kSignals[] = {"INIT",          "STORY_CREATED",       "STORY_COMPLETE",
                                    "EPIC_COMPLETE", "ESCALATION_REQUIRED", "MILESTONE_APPROVED"};
constexpr char kExecuting[] = "EXECUTION_IN_PROGRESS";
constexpr char kReady[] = "READY_FOR_EXECUTION";
constexpr char kHalted[] = "EXECUTION_HALTED";

// epic_id is a number in v2.0; a key that is not one (an epic made with
// task.create) is shown as it is rather than refused.
Json EpicId(const std::string& key) {
  if (key.empty() || key.size() > 18 || key.find_first_not_of("0123456789") != std::string::npos) {
    return key;
  }
  return std::stoll(key);
}

// An item's epic_id, story_id or issue_id ("" when the task has no key).
std::string Key(const Task& item) { return item.key.value_or(""); }
std::string Mode(const Run& run) { return run.meta.value("autonomy_mode", "supervised"); }
std::string Signal(const Run& run) { return run.meta.value("system_signal", ""); }

Status CheckProject(const Run& run) {
  if (run.profile != kProfile) {
    return InvalidArgumentError("run: run " + run.id + " has profile " + run.profile +
                                "; stigmergy operations need a stigmergy run");
  }
  return Status();
}

Result<Run> LoadProject(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(Run run, LoadRun(txn, id));
  RETURN_IF_ERROR(CheckProject(run));
  return run;
}

// Changes the project_status of "run" (stored by StoreRun) through the machine.
Status MoveProject(OpContext& ctx, Run& run, const std::string& to, const std::string& reason) {
  return MoveRunStatus(ctx, run, to, reason).WithPrefix("status");
}

// One history entry: what an agent's turn did and the signal it left.
struct Turn {
  std::string signal;  // empty: the turn leaves the system_signal as it was
  std::string summary;
  Json files = Json::array();
  Json payload = Json::object();
};

// Appends the turn's history event and, when it emits a signal, records it in
// the run's meta (stored later by StoreRun). Returns the event's seq.
Result<int64_t> AppendTurn(OpContext& ctx, Run& run, const Turn& turn) {
  Json payload = turn.payload;
  payload["agent_id"] = ctx.actor.id;
  payload["signal"] = turn.signal.empty() ? Json() : Json(turn.signal);
  payload["system_signal"] = turn.signal.empty() ? Signal(run) : turn.signal;
  payload["files_modified"] = turn.files;
  ASSIGN_OR_RETURN(int64_t seq, AppendEvent(ctx, {.run_id = run.id,
                                                  .kind = kHistoryKind,
                                                  .summary = turn.summary,
                                                  .payload = payload,
                                                  .files = turn.files}));
  if (!turn.signal.empty()) {
    run.meta["system_signal"] = turn.signal;
    run.meta["signal_seq"] = seq;
  }
  return seq;
}

Json Compact(const Run& run, int64_t history_seq) {
  return Json{{"run_id", run.id},
              {"project_status", run.status},
              {"system_signal", Signal(run)},
              {"autonomy_mode", Mode(run)},
              {"history_seq", history_seq}};
}

// Stores the run after a turn and answers with the compact form plus "extra".
Result<Json> Finish(OpContext& ctx, Run& run, const Turn& turn, Json extra = Json::object()) {
  ASSIGN_OR_RETURN(int64_t seq, AppendTurn(ctx, run, turn));
  RETURN_IF_ERROR(StoreRun(ctx, run));
  Json out = Compact(run, seq);
  out.update(extra);
  return out;
}

Result<Task> MustFindItem(Txn& txn, const std::string& run_id, const std::string& kind,
                          const std::string& key, const std::string& field) {
  ASSIGN_OR_RETURN(std::optional<Task> item, FindStigmergyTask(txn, run_id, kind, key));
  if (!item) {
    return NotFoundError(field + ": no " + kind + " \"" + key + "\" in run " + run_id);
  }
  return std::move(*item);
}

// Why the approval "latest" does not open the gate, or "".
std::string ApprovalRefused(const Decision& latest) {
  const std::string& who = latest.reviewer;
  if (latest.decision != "approve") {
    return "the latest decision is " + latest.decision + " by " + who;
  }
  const std::string role = latest.meta.value("reviewer_role", "");
  if (role != "human" && role != "admin") {
    return "the approval by " + who + " (" + (role.empty() ? "unknown role" : role) +
           ") is not a human's";
  }
  return std::string();
}

// Why the supervised gate is closed, or "" when a human approved execution
// after the latest (re)planning.
Result<std::string> GateClosedBecause(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::optional<Decision> latest,
                   LatestDecisionRow(txn, {.run_id = run_id,
                                           .subject_kind = "run",
                                           .subject = "execution"}));
  if (!latest) return std::string("no decision on execution yet");
  const std::string refused = ApprovalRefused(*latest);
  if (!refused.empty()) return refused;
  ASSIGN_OR_RETURN(Json moves, ListEvents(txn, {.run_id = run_id,
                                                .kind = "run.status",
                                                .since_seq = latest->event_seq,
                                                .limit = 1000000}));
  for (const Json& e : moves) {
    if (e["payload"].value("to", "") == "NEEDS_PLANNING") {
      return "the approval by " + latest->reviewer + " predates the replanning at seq " +
             std::to_string(e["seq"].get<int64_t>());
    }
  }
  return std::string();
}

// Into EXECUTION_IN_PROGRESS (from ready or halted), through the supervised
// gate: supervised execution runs only under a standing human approval.
Status StartExecution(OpContext& ctx, Run& run, const std::string& reason) {
  if (Mode(run) == "supervised") {
    ASSIGN_OR_RETURN(std::string closed, GateClosedBecause(ctx.txn, run.id));
    if (!closed.empty()) {
      return FailedPreconditionError(
          "status: supervised: a human must approve execution (baton approval approve --run " +
          run.id + " --subject-kind run --subject execution) before " + run.status + " -> " +
          kExecuting + "; " + closed);
    }
  }
  return MoveProject(ctx, run, kExecuting, reason);
}

Status CheckProjectRule(Txn& txn, const Run& run, const std::string& to) {
  const std::string& from = run.status;
  if (to == "PROJECT_COMPLETE") {
    ASSIGN_OR_RETURN(std::vector<Task> epics, ListStigmergyTasks(txn, run.id, "epic"));
    if (epics.empty()) {
      return FailedPreconditionError("status: PROJECT_COMPLETE needs a manifest; it has no epics");
    }
    for (const Task& e : epics) {
      if (e.status != "COMPLETE") {
        return FailedPreconditionError("status: PROJECT_COMPLETE needs every epic COMPLETE; epic " +
                                       Key(e) + " is " + e.status);
      }
    }
  } else if (to == kReady && from == "NEEDS_PLANNING") {
    ASSIGN_OR_RETURN(std::vector<Task> stories, ListStigmergyTasks(txn, run.id, "story"));
    if (stories.empty()) {
      return FailedPreconditionError(
          "status: READY_FOR_EXECUTION needs a project manifest with at least one story "
          "(stigmergy.manifest)");
    }
  } else if (to == kExecuting && from == kHalted) {
    ASSIGN_OR_RETURN(std::vector<Task> issues, ListStigmergyTasks(txn, run.id, "issue"));
    for (const Task& i : issues) {
      if (i.status != "RESOLVED") {
        return FailedPreconditionError("status: execution resumes when every issue is RESOLVED; " +
                                       Key(i) + " is " + i.status);
      }
    }
  }
  return Status();
}

// Story changes happen while the project executes; starting one while ready
// starts execution.
Status EnsureExecuting(OpContext& ctx, Run& run, const std::string& story_id, bool starting) {
  const std::string status = run.status;
  if (status == kExecuting) return Status();
  if (starting && status == kReady) {
    return StartExecution(ctx, run, "story " + story_id + " starts");
  }
  return FailedPreconditionError(
      "story_id: story " + story_id + " cannot change while the project is " + status +
      (starting ? "; stories start from " + std::string(kReady) + " or " + kExecuting
                : "; story work is recorded while " + std::string(kExecuting)));
}

Status ChangeItem(OpContext& ctx, const Task& item, const std::string& to, const std::string& why,
                  const TaskAlsoSet& also = {}) {
  return ChangeTaskStatus(ctx, item, to, why, also).WithPrefix(item.kind + " " + Key(item));
}

// Moves a story and its epic; fills "turn" with the signals and summary.
Status ChangeStory(OpContext& ctx, const Run& run, const Task& story, const std::string& to,
                   const std::string& note, Turn& turn) {
  const std::string key = Key(story);
  const std::string from = story.status;
  RETURN_IF_ERROR(ChangeItem(ctx, story, to, note));
  turn.summary = "story " + key + ": " + from + " -> " + to + (note.empty() ? "" : ": " + note);
  turn.payload["story_id"] = key;
  ASSIGN_OR_RETURN(Task epic, LoadTask(ctx.txn, story.parent_id.value_or("")));
  const std::string epic_key = Key(epic);
  if (to == "IN_PROGRESS") {
    if (from == "PENDING") turn.signal = "STORY_CREATED";
    if (epic.status == "PENDING") {
      RETURN_IF_ERROR(ChangeItem(ctx, epic, "IN_PROGRESS", "story " + key + " started"));
      turn.summary += "; epic " + epic_key + " IN_PROGRESS";
    }
  } else if (to == "COMPLETE") {
    turn.signal = "STORY_COMPLETE";
    ASSIGN_OR_RETURN(int64_t open, CountOpenStigmergyStories(ctx.txn, run.id, epic.id));
    if (open == 0) {
      RETURN_IF_ERROR(ChangeItem(ctx, epic, "COMPLETE", "every story is COMPLETE"));
      turn.signal = "EPIC_COMPLETE";
      turn.summary += " (STORY_COMPLETE); epic " + epic_key + " COMPLETE";
      turn.payload["epic_id"] = EpicId(epic_key);
    }
  }
  return Status();
}

// Opens an issue; returns its issue_id.
Result<std::string> OpenIssue(OpContext& ctx, const Run& run, const std::string& summary,
                              const Json& history_ref, int64_t opened_seq) {
  ASSIGN_OR_RETURN(int64_t issues, CountStigmergyIssues(ctx.txn, run.id));
  const int64_t number = issues + 1;
  const std::string issue_id = "ISS-" + std::to_string(number);
  RETURN_IF_ERROR(
      CreateTask(ctx, {{"run", run.id},
                       {"kind", "issue"},
                       {"key", issue_id},
                       {"title", summary},
                       {"position", number},
                       {"meta", {{"history_ref", history_ref}, {"opened_seq", opened_seq}}}})
          .status());
  return issue_id;
}

}  // namespace

std::span<const char* const> StigmergySignals() { return kSignals; }

Result<Json> StigmergyInit(OpContext& ctx, const Json& in) {
  const std::string name = in.value("project_name", "New Stigmergy Project");
  Json create = {{"profile", kProfile},
                 {"title", name},
                 {"meta",
                  {{"schema_version", "2.0"},
                   {"project_name", name},
                   {"autonomy_mode", in.value("autonomy_mode", "supervised")},
                   {"system_signal", ""}}}};
  if (in.contains("run")) create["id"] = in["run"];
  if (in.contains("project")) create["project"] = in["project"];
  ASSIGN_OR_RETURN(Run run, MakeRun(ctx, create));
  return Finish(ctx, run, {.signal = "INIT", .summary = "Project initialized."});
}

Result<Json> StigmergySetAutonomy(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadProject(ctx.txn, in.at("run").get<std::string>()));
  const std::string mode = in.at("mode").get<std::string>();
  const std::string from = Mode(run);
  if (mode == "autonomous" && from != mode && ctx.actor.role != "human" &&
      ctx.actor.role != "admin") {
    return PermissionDeniedError(
        "mode: only a human may make a project autonomous (it lifts the "
        "human approval before execution); caller " +
        ctx.actor.id + " is " + ctx.actor.role);
  }
  run.meta["autonomy_mode"] = mode;
  return Finish(
      ctx, run,
      {.summary = "autonomy_mode " + from + " -> " + mode, .payload = {{"autonomy_mode", mode}}});
}

namespace {

// Checks one manifest entry's ids; returns the story's minor number.
Result<int64_t> StoryMinor(const std::string& story_id, int64_t epic_id, const std::string& field) {
  const std::string prefix = std::to_string(epic_id) + ".";
  const bool digits = story_id.size() > prefix.size() &&
                      story_id.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
  if (story_id.compare(0, prefix.size(), prefix) != 0 || !digits || story_id.size() > 18) {
    return InvalidArgumentError(field + ": \"" + story_id + "\" is not a story of epic " +
                                std::to_string(epic_id) + " (expected \"" + prefix + "<n>\")");
  }
  return std::stoll(story_id.substr(prefix.size()));
}

// Creates the item, or updates its title; appends a line to "changes".
Result<std::string> UpsertItem(OpContext& ctx, const Run& run, const std::string& kind,
                               const std::string& key, const std::string& title, int64_t position,
                               const std::string& parent_id, const std::string& field,
                               Json& changes) {
  ASSIGN_OR_RETURN(std::optional<Task> item, FindStigmergyTask(ctx.txn, run.id, kind, key));
  if (!item) {
    if (!parent_id.empty()) {
      ASSIGN_OR_RETURN(Task epic, LoadTask(ctx.txn, parent_id));
      if (epic.status == "COMPLETE") {
        return FailedPreconditionError(field + ": epic " + Key(epic) +
                                       " is COMPLETE; a new story cannot be added to it");
      }
    }
    Json create = {{"run", run.id},
                   {"kind", kind},
                   {"key", key},
                   {"title", title},
                   {"position", position}};
    if (!parent_id.empty()) create["parent"] = parent_id;
    ASSIGN_OR_RETURN(Task created, MakeTask(ctx, create));
    changes.push_back(kind + " " + key + " created");
    return created.id;
  }
  if (item->title != title) {
    RETURN_IF_ERROR(RetitleStigmergyItem(ctx.txn, item->id, title, ctx.now));
    changes.push_back(kind + " " + key + " retitled");
  }
  return item->id;
}

}  // namespace

Result<Json> StigmergyManifest(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadProject(ctx.txn, in.at("run").get<std::string>()));
  if (run.status == "PROJECT_COMPLETE") {
    return FailedPreconditionError("run: the project is PROJECT_COMPLETE; its manifest is final");
  }
  const Json& epics = in.at("epics");
  std::set<int64_t> epic_ids;
  std::set<std::string> story_ids;
  Json changes = Json::array();
  for (size_t e = 0; e < epics.size(); ++e) {
    const std::string field = "epics[" + std::to_string(e) + "]";
    const int64_t epic_id = epics[e].at("epic_id").get<int64_t>();
    if (!epic_ids.insert(epic_id).second) {
      return InvalidArgumentError(field + ".epic_id: epic " + std::to_string(epic_id) +
                                  " appears twice");
    }
    ASSIGN_OR_RETURN(std::string epic_task, UpsertItem(ctx, run, "epic", std::to_string(epic_id),
                                                       epics[e].at("title").get<std::string>(),
                                                       epic_id, "", field, changes));
    const Json stories = epics[e].value("stories", Json::array());
    for (size_t s = 0; s < stories.size(); ++s) {
      const std::string sfield = field + ".stories[" + std::to_string(s) + "]";
      const std::string story_id = stories[s].at("story_id").get<std::string>();
      ASSIGN_OR_RETURN(int64_t minor, StoryMinor(story_id, epic_id, sfield + ".story_id"));
      if (!story_ids.insert(story_id).second) {
        return InvalidArgumentError(sfield + ".story_id: story " + story_id + " appears twice");
      }
      RETURN_IF_ERROR(UpsertItem(ctx, run, "story", story_id,
                                 stories[s].at("title").get<std::string>(), minor, epic_task,
                                 sfield, changes)
                          .status());
    }
  }
  std::string summary = "project manifest: " + std::to_string(epic_ids.size()) + " epics, " +
                        std::to_string(story_ids.size()) + " stories";
  if (!changes.empty()) summary += " (" + std::to_string(changes.size()) + " changes)";
  return Finish(ctx, run, {.summary = summary, .payload = {{"changes", changes}}},
                {{"changes", changes}});
}

Result<Json> StigmergySetStatus(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadProject(ctx.txn, in.at("run").get<std::string>()));
  const std::string from = run.status;
  const std::string to = in.at("status").get<std::string>();
  const std::string note = in.value("summary", "");
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(run.machine));
  RETURN_IF_ERROR(machine->Check(from, to, ctx.transition()).WithPrefix("status"));
  RETURN_IF_ERROR(CheckProjectRule(ctx.txn, run, to));
  if (to == kExecuting) {
    RETURN_IF_ERROR(StartExecution(ctx, run, note));
  } else {
    RETURN_IF_ERROR(MoveProject(ctx, run, to, note));
  }
  return Finish(
      ctx, run,
      {.summary = "project_status " + from + " -> " + to + (note.empty() ? "" : ": " + note),
       .payload = {{"from", from}, {"to", to}}});
}

Result<Json> StigmergyStory(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadProject(ctx.txn, in.at("run").get<std::string>()));
  const std::string story_id = in.at("story_id").get<std::string>();
  const std::string to = in.at("status").get<std::string>();
  if (to == "FAILED") {
    return InvalidArgumentError(
        "status: record a failure with stigmergy.story_failed, which "
        "counts it for LAW V");
  }
  ASSIGN_OR_RETURN(Task story, MustFindItem(ctx.txn, run.id, "story", story_id, "story_id"));
  RETURN_IF_ERROR(EnsureExecuting(ctx, run, story_id, to == "IN_PROGRESS"));
  Turn turn;
  turn.files = in.value("files_modified", Json::array());
  RETURN_IF_ERROR(ChangeStory(ctx, run, story, to, in.value("summary", ""), turn));
  ASSIGN_OR_RETURN(Task epic, LoadTask(ctx.txn, story.parent_id.value_or("")));
  return Finish(ctx, run, turn,
                {{"story", {{"story_id", story_id}, {"status", to}}},
                 {"epic", {{"epic_id", EpicId(Key(epic))}, {"status", epic.status}}}});
}

Result<Json> StigmergyStoryFailed(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadProject(ctx.txn, in.at("run").get<std::string>()));
  const std::string story_id = in.at("story_id").get<std::string>();
  const std::string reason = in.at("reason").get<std::string>();
  ASSIGN_OR_RETURN(Task story, MustFindItem(ctx.txn, run.id, "story", story_id, "story_id"));
  RETURN_IF_ERROR(EnsureExecuting(ctx, run, story_id, /*starting=*/false));
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(story.machine));
  RETURN_IF_ERROR(machine->Check(story.status, "FAILED", ctx.transition())
                      .WithPrefix("story " + story_id));
  const int64_t attempts = story.attempts + 1;
  const bool escalate = attempts >= 2;  // LAW V: the second failure escalates
  Json failures = story.meta.value("failure_seqs", Json::array());
  Turn turn{.summary = "story " + story_id + " failed (failure " + std::to_string(attempts) +
                       "): " + reason,
            .payload = {{"story_id", story_id}, {"failure", attempts}, {"reason", reason}}};
  if (escalate) {
    turn.signal = "ESCALATION_REQUIRED";
    turn.summary += "; LAW V: ESCALATION_REQUIRED, execution halted";
  }
  ASSIGN_OR_RETURN(int64_t seq, AppendTurn(ctx, run, turn));
  failures.push_back(seq);
  Json meta = story.meta;
  meta["failure_seqs"] = failures;
  RETURN_IF_ERROR(ChangeItem(ctx, story, "FAILED", reason,
                             {.meta = std::move(meta), .attempts = attempts}));
  Json out = Compact(run, seq);
  out["story"] = {{"story_id", story_id}, {"status", "FAILED"}, {"attempts", attempts}};
  out["issue_id"] = Json();
  if (escalate) {
    const Json refs = {failures[failures.size() - 2], failures.back()};
    ASSIGN_OR_RETURN(
        std::string issue_id,
        OpenIssue(ctx, run,
                  "story " + story_id + " failed " + std::to_string(attempts) + " times: " + reason,
                  refs, seq));
    RETURN_IF_ERROR(MoveProject(ctx, run, kHalted, "LAW V: " + issue_id + " opened"));
    out["issue_id"] = issue_id;
    out["project_status"] = kHalted;
  }
  RETURN_IF_ERROR(StoreRun(ctx, run));
  return out;
}

Result<Json> StigmergySignal(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadProject(ctx.txn, in.at("run").get<std::string>()));
  const std::string signal = in.at("signal").get<std::string>();
  bool known = false;
  std::string allowed;
  for (const char* s : kSignals) {
    known = known || signal == s;
    allowed += (allowed.empty() ? "" : ", ") + std::string(s);
  }
  if (!known) {
    return InvalidArgumentError("signal: unknown signal \"" + signal + "\"; allowed: " + allowed);
  }
  return Finish(ctx, run,
                {.signal = signal,
                 .summary = in.value("summary", "signal " + signal),
                 .files = in.value("files_modified", Json::array())});
}

Result<Json> StigmergyOpenIssue(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadProject(ctx.txn, in.at("run").get<std::string>()));
  const Json refs = in.value("history_ref", Json::array());
  for (size_t i = 0; i < refs.size(); ++i) {
    const int64_t seq = refs[i].get<int64_t>();
    ASSIGN_OR_RETURN(
        Json events,
        ListEvents(ctx.txn,
                   {.run_id = run.id, .kind = kHistoryKind, .since_seq = seq - 1, .limit = 1}));
    if (events.empty() || events[0]["seq"].get<int64_t>() != seq) {
      return InvalidArgumentError("history_ref[" + std::to_string(i) + "]: seq " +
                                  std::to_string(seq) + " is not a history event of run " +
                                  run.id);
    }
  }
  const std::string summary = in.at("summary").get<std::string>();
  // The issue's own event comes first so that it is "opened" at that seq.
  Turn turn{.summary = "issue opened: " + summary};
  ASSIGN_OR_RETURN(int64_t seq, AppendTurn(ctx, run, turn));
  ASSIGN_OR_RETURN(std::string issue_id, OpenIssue(ctx, run, summary, refs, seq));
  RETURN_IF_ERROR(StoreRun(ctx, run));
  Json out = Compact(run, seq);
  out["issue_id"] = issue_id;
  return out;
}

Result<Json> StigmergyResolveIssue(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadProject(ctx.txn, in.at("run").get<std::string>()));
  const std::string issue_id = in.at("issue_id").get<std::string>();
  const std::string resolution = in.value("resolution", "");
  ASSIGN_OR_RETURN(Task issue, MustFindItem(ctx.txn, run.id, "issue", issue_id, "issue_id"));
  RETURN_IF_ERROR(ChangeItem(ctx, issue, "RESOLVED", resolution,
                             {.result = Json{{"resolution", resolution}}}));
  return Finish(
      ctx, run,
      {.summary = "issue " + issue_id + " RESOLVED" + (resolution.empty() ? "" : ": " + resolution),
       .payload = {{"issue_id", issue_id}}},
      {{"issue", {{"issue_id", issue_id}, {"status", "RESOLVED"}}}});
}

Result<Json> StigmergyApplyApproval(OpContext& ctx, const Run& run_in, const DecisionInput& in) {
  // The caller loaded the run in this transaction: it is not read again.
  RETURN_IF_ERROR(CheckProject(run_in));
  Run run = run_in;
  if (in.decision != "approve" && in.decision != "reject") {
    return InvalidArgumentError("decision: a Stigmergy project takes approve or reject, not " +
                                in.decision);
  }
  // An answer would return the project to where the question found it,
  // around whatever this decision changed.
  RETURN_IF_ERROR(CheckNoOpenQuestion(ctx.txn, run.id));
  const bool approve = in.decision == "approve";
  const std::string who = in.reviewer.empty() ? ctx.actor.id : in.reviewer;
  DecisionInput decision = in;
  decision.meta["reviewer_role"] = ctx.actor.role;
  Turn turn;
  if (in.subject_kind == "run") {
    if (in.subject != "execution") {
      return InvalidArgumentError(
          "subject: a Stigmergy run's approvable subject is \"execution\", "
          "not \"" +
          in.subject + "\"");
    }
    if (approve && ctx.actor.role != "human" && ctx.actor.role != "admin") {
      return PermissionDeniedError(
          "subject: only a human may approve execution of a Stigmergy "
          "project; caller " +
          ctx.actor.id + " is " + ctx.actor.role);
    }
    turn.summary = "execution " + std::string(approve ? "approved" : "rejected") + " by " + who;
    if (approve) {
      turn.signal = "MILESTONE_APPROVED";
    } else if (run.status == kExecuting) {
      RETURN_IF_ERROR(MoveProject(ctx, run, kHalted, "execution rejected by " + who));
      turn.summary += "; execution halted";
    }
  } else if (in.subject_kind == "story") {
    ASSIGN_OR_RETURN(Task story, MustFindItem(ctx.txn, run.id, "story", in.subject, "subject"));
    if (story.status != "AWAITING_VERIFICATION") {
      return FailedPreconditionError(
          "subject: story " + in.subject + " is " + story.status +
          "; only a story AWAITING_VERIFICATION is approved or rejected");
    }
    RETURN_IF_ERROR(EnsureExecuting(ctx, run, in.subject, /*starting=*/false));
    RETURN_IF_ERROR(ChangeStory(
        ctx, run, story, approve ? "COMPLETE" : "IN_PROGRESS",
        "verification " + std::string(approve ? "approved" : "rejected") + " by " + who, turn));
  } else {
    return InvalidArgumentError(
        "subject_kind: a Stigmergy run takes approvals of \"run\" "
        "(subject \"execution\") or \"story\" (a story_id), not \"" +
        in.subject_kind + "\"");
  }
  ASSIGN_OR_RETURN(Json recorded, RecordDecision(ctx, decision));
  ASSIGN_OR_RETURN(Json out, Finish(ctx, run, turn));
  recorded["project_status"] = out["project_status"];
  recorded["system_signal"] = out["system_signal"];
  return recorded;
}

namespace {

// What the dispatcher reads, loaded once.
struct Snapshot {
  Run run;
  std::vector<Task> epics;    // in manifest order
  std::vector<Task> stories;  // in manifest order
  std::vector<Task> issues;   // the issue_log
};

Result<Snapshot> LoadSnapshot(Txn& txn, const std::string& run_id) {
  Snapshot snap;
  ASSIGN_OR_RETURN(snap.run, LoadProject(txn, run_id));
  ASSIGN_OR_RETURN(snap.epics, ListStigmergyTasks(txn, run_id, "epic"));
  ASSIGN_OR_RETURN(snap.stories, ListStigmergyTasks(txn, run_id, "story"));
  ASSIGN_OR_RETURN(snap.issues, ListStigmergyTasks(txn, run_id, "issue"));
  return snap;
}

struct Dispatch {
  int rule;
  const char* name;
  const char* agent;  // nullptr: nobody is dispatched
  const char* action;
  std::string reason;
  std::string story;
};

// Rule 4: bob creates the next story, the first PENDING or FAILED one in
// manifest order (epic by epic).
Dispatch NextStory(const Snapshot& snap) {
  Dispatch d{4, "ready_for_execution", "@bob", "create the next story",
             "project_status is READY_FOR_EXECUTION"};
  for (const Task& e : snap.epics) {
    for (const Task& s : snap.stories) {
      if (s.parent_id != e.id) continue;
      if (d.story.empty() && (s.status == "PENDING" || s.status == "FAILED")) {
        d.story = Key(s);
        d.reason += "; next story " + d.story + " is " + s.status;
      }
    }
  }
  return d;
}

// Rule 7 holds back while an issue was opened at or after the signal.
bool EscalationLogged(const Snapshot& snap) {
  const int64_t signal_seq = snap.run.meta.value("signal_seq", int64_t{0});
  bool logged = false;
  for (const Task& i : snap.issues) {
    logged = logged || i.meta.value("opened_seq", int64_t{0}) >= signal_seq;
  }
  return logged;
}

Dispatch Evaluate(const Snapshot& snap) {
  const std::string& status = snap.run.status;
  const std::string signal = Signal(snap.run);
  const bool autonomous = Mode(snap.run) == "autonomous";
  if (status == "HUMAN_INPUT_REQUIRED") {
    return {9, "otherwise", nullptr, "wait for the user",
            "project_status is HUMAN_INPUT_REQUIRED: a question to the human is open"};
  }
  for (const Task& i : snap.issues) {
    if (i.status == "OPEN") {
      return {1, "open_issue", "@dexter", "resolve the issue", "issue " + Key(i) + " is OPEN"};
    }
  }
  if (status == "NEEDS_BRIEFING")
    return {2, "needs_briefing", "@mary", "write the brief", "project_status is NEEDS_BRIEFING"};
  if (status == "NEEDS_PLANNING")
    return {3, "needs_planning", "@john", "write the PRD, architecture and manifest",
            "project_status is NEEDS_PLANNING"};
  if (status == kReady) return NextStory(snap);
  if (signal == "STORY_CREATED" && autonomous) {
    return {5, "story_created_autonomous", "@olivia", "execute the story",
            "system_signal is STORY_CREATED and autonomy_mode is autonomous"};
  }
  if (signal == "EPIC_COMPLETE")
    return {6, "epic_complete", "@metis", "audit the epic", "system_signal is EPIC_COMPLETE"};
  if (signal == "ESCALATION_REQUIRED" && !EscalationLogged(snap)) {
    return {7, "escalation_required", "@dexter", "append to issue_log, then resolve",
            "system_signal is ESCALATION_REQUIRED and no issue was logged since"};
  }
  bool all_complete = !snap.epics.empty();
  for (const Task& e : snap.epics) all_complete = all_complete && e.status == "COMPLETE";
  if (all_complete)
    return {8, "all_epics_complete", nullptr, "report completion",
            "all " + std::to_string(snap.epics.size()) + " epics are COMPLETE"};
  std::string why = "no rule matched (project_status " + status + ", system_signal " + signal + ")";
  if (signal == "STORY_CREATED") why += "; supervised: STORY_CREATED waits for the user";
  return {9, "otherwise", nullptr, "wait for the user", why};
}

}  // namespace

Result<Json> StigmergyNext(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Snapshot snap, LoadSnapshot(ctx.txn, in.at("run").get<std::string>()));
  const Dispatch d = Evaluate(snap);
  return Json{{"agent", d.agent == nullptr ? Json() : Json(d.agent)},
              {"rule", d.rule},
              {"rule_name", d.name},
              {"action", d.action},
              {"reason", d.reason},
              {"story", d.story.empty() ? Json() : Json(d.story)},
              {"project_status", snap.run.status},
              {"system_signal", Signal(snap.run)},
              {"autonomy_mode", Mode(snap.run)}};
}

Result<Json> StigmergyState(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  RETURN_IF_ERROR(LoadProject(ctx.txn, run_id).status());
  ASSIGN_OR_RETURN(RunImage image, ExportImage(ctx.txn, run_id));
  // One renderer of .ai/state.json: the stigmergy format's.
  return Json(StigmergyDocument(image, nullptr));
}

}  // namespace baton

namespace baton {

Result<std::string> StigmergyExecutionGateClosed(Txn& txn, const std::string& run_id) {
  return GateClosedBecause(txn, run_id);
}

}  // namespace baton
