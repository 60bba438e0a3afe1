#include "engine/core/task_graph.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "engine/core/agent_rows.h"
#include "engine/core/core_services.h"
#include "engine/core/engine_hooks.h"
#include "engine/ledger/ledger.h"
#include "store/tables/task_dep_table.h"
#include "store/tables/task_table.h"
#include "util/clock.h"

namespace baton {
namespace {

constexpr char kReady[] = "ready";
constexpr char kBlocked[] = "blocked";
constexpr char kInProgress[] = "in_progress";
// blocked_reason prefixes set by EvaluateReadiness; any other reason is a
// block by hand, which readiness leaves alone.
constexpr std::string_view kWaiting = "waiting: ";
constexpr std::string_view kUpstreamFailed = "upstream_failed: ";

bool IsGating(std::string_view type) { return type == "depends_on" || type == "blocks"; }

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The path dep -> ... -> task along gating "depends on" edges, if any: adding
// "task depends on dep" would then close a cycle. Visits only dep's ancestors.
Result<std::vector<std::string>> PathToTask(Txn& txn, const std::string& dep,
                                            const std::string& task) {
  std::map<std::string, std::string> parent{{dep, ""}};
  std::vector<std::string> stack{dep};
  while (!stack.empty()) {
    const std::string cur = stack.back();
    stack.pop_back();
    ASSIGN_OR_RETURN(std::vector<std::string> deps, GatingDependencyIds(txn, cur));
    for (const std::string& next : deps) {
      if (parent.count(next) != 0) continue;
      parent[next] = cur;
      if (next == task) {
        std::vector<std::string> path{task};
        for (std::string at = cur; !at.empty(); at = parent[at]) path.push_back(at);
        std::reverse(path.begin(), path.end());
        return path;
      }
      stack.push_back(next);
    }
  }
  return std::vector<std::string>();
}

// The status a machine offers from "from" for an outcome ("done" for
// success on genie machines, "completed" on graph.node, ...).
Result<std::string> TargetFor(const OpContext& ctx, const Task& task, Outcome outcome,
                              const char* verb) {
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(task.machine));
  const std::string& from = task.status;
  for (const std::string& next : machine->AllowedNext(from, ctx.transition())) {
    if (OutcomeOf(next) == outcome) return next;
  }
  return Status(StatusCode::kFailedPrecondition,
                "task " + task.id + ": machine " + machine->name() + " has no way to " +
                    verb + " from " + from,
                Json{{"task", task.id}, {"status", from}});
}

// Aborted unless "agent" holds the lease on "task" at "epoch".
Status CheckLease(const Task& task, const std::string& agent, int64_t epoch) {
  const bool leased = task.status == kInProgress && task.lease.has_value();
  if (leased && task.lease->owner == agent && task.lease_epoch == epoch) return Status();
  std::string now = "the task is " + task.status;
  if (leased) {
    now += ", held by " + task.lease->owner + " at epoch " + std::to_string(task.lease_epoch);
  }
  return Status(StatusCode::kAborted,
                "task " + task.id + ": the lease of " + agent + " at epoch " +
                    std::to_string(epoch) + " is no longer valid (" + now +
                    "); stop work on it and claim another task",
                Json{{"task", task.id},
                     {"status", task.status},
                     {"lease", TaskLeaseToJson(task)},
                     {"agent", agent},
                     {"presented_epoch", epoch}});
}

// The acting agent: "agent" in the input (coordinators and admins may act for
// another), else the caller.
Result<std::string> ActingAgent(const OpContext& ctx, const Json& in) {
  const std::string agent = in.value("agent", ctx.actor.id);
  if (agent != ctx.actor.id && ctx.actor.role != "coordinator" && ctx.actor.role != "admin") {
    return PermissionDeniedError("agent: only a coordinator may act for another agent (" +
                                 ctx.actor.id + " asked to act as " + agent + ")");
  }
  return agent;
}

// The task named in "in", leased by the acting agent at in.epoch.
Result<Task> LeasedTask(OpContext& ctx, const Json& in, std::string* agent) {
  ASSIGN_OR_RETURN(*agent, ActingAgent(ctx, in));
  ASSIGN_OR_RETURN(Task task, LoadTaskRow(ctx.txn, in.at("task").get<std::string>()));
  RETURN_IF_ERROR(CheckLease(task, *agent, in.at("epoch").get<int64_t>()));
  return task;
}

// The claim's scope from "in": run, project (resolved), kind.
Result<TaskScope> ClaimScope(OpContext& ctx, const Json& in) {
  TaskScope scope;
  if (in.contains("run")) scope.run_id = in["run"].get<std::string>();
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(scope.project_id,
                     ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  if (in.contains("kind")) scope.kind = in["kind"].get<std::string>();
  return scope;
}


// Why a claim of the next task found nothing, for the agent that asked: the tasks in
// scope by status, and what would make one claimable.
Result<std::string> NothingClaimableReason(OpContext& ctx, const Json& in,
                                           const std::string& agent) {
  ASSIGN_OR_RETURN(const TaskScope scope, ClaimScope(ctx, in));
  std::string where;
  for (const auto& [key, value] : {std::pair{"run", &scope.run_id},
                                   {"project", &scope.project_id}, {"kind", &scope.kind}}) {
    if (!value->has_value()) continue;
    where += std::string(where.empty() ? " in " : ", ") + key + " " + **value;
  }
  ASSIGN_OR_RETURN(std::vector<TaskStatusCount> rows, CountTasksByStatus(ctx.txn, scope, agent));
  if (rows.empty()) return "no tasks" + (where.empty() ? std::string(" at all") : where);
  std::string counts;
  int64_t planned_elsewhere = 0;
  for (const TaskStatusCount& row : rows) {
    counts += (counts.empty() ? "" : ", ") + std::to_string(row.count) + " " + row.status;
    if (row.status == kReady) planned_elsewhere = row.assigned_elsewhere;
  }
  std::string reason = "no task is ready for " + agent + where + " (" + counts + ")";
  if (planned_elsewhere > 0) {
    reason += "; " + std::to_string(planned_elsewhere) + " ready task(s) are assigned to other "
              "agents";
  }
  return reason + ": a task becomes ready when the tasks it depends on are done, and one in "
                  "progress can be taken once its lease expires; claim again later, or list the "
                  "tasks to see what holds them";
}

}  // namespace

Outcome OutcomeOf(std::string_view status) {
  const std::string s = Lower(status);
  if (s == "done" || s == "completed" || s == "complete" || s == "success" ||
      s == "succeeded" || s == "verified") {
    return Outcome::kSuccess;
  }
  if (s == "failed" || s == "error" || s == "failure") return Outcome::kFailed;
  if (s == "cancelled" || s == "canceled" || s == "skipped" || s == "archived") {
    return Outcome::kCancelled;
  }
  return Outcome::kPending;
}

Status InsertDependency(OpContext& ctx, const std::string& task_id, const std::string& dep_id,
                        const std::string& type) {
  if (task_id == dep_id) {
    return InvalidArgumentError("on: task " + task_id + " cannot depend on itself");
  }
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, task_id));
  ASSIGN_OR_RETURN(Task dep, LoadTask(ctx.txn, dep_id));
  if (task.project_id && dep.project_id && task.project_id != dep.project_id) {
    return InvalidArgumentError("on: task " + dep_id + " belongs to project " +
                                *dep.project_id + " and task " + task_id +
                                " to project " + *task.project_id +
                                "; dependencies stay within one project");
  }
  if (IsGating(type)) {
    ASSIGN_OR_RETURN(std::vector<std::string> path, PathToTask(ctx.txn, dep_id, task_id));
    if (!path.empty()) {
      std::string cycle = task_id;
      for (const std::string& id : path) cycle += " -> " + id;
      return Status(StatusCode::kInvalidArgument,
                    "on: " + task_id + " depending on " + dep_id + " would close the cycle " +
                        cycle,
                    Json{{"cycle", path}});
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::string> existing,
                   FindTaskDepType(ctx.txn, task_id, dep_id));
  if (existing) {
    if (*existing == type) return Status();  // already there: nothing to do
    return AlreadyExistsError("on: task " + task_id + " already has a " + *existing +
                              " edge to " + dep_id + "; remove it first");
  }
  RETURN_IF_ERROR(InsertTaskDep(ctx.txn, task_id, dep_id, type));
  return AppendEvent(ctx, {.run_id = task.run_id.value_or(""),
                           .kind = "task.dependency_added",
                           .summary = task_id + " " + type + " " + dep_id,
                           .payload = {{"task_id", task_id},
                                       {"depends_on_id", dep_id},
                                       {"type", type}}})
      .status();
}

Result<Json> AddDependency(OpContext& ctx, const Json& in) {
  const std::string type = in.value("type", "depends_on");
  std::string waiter = in.at("task").get<std::string>();
  std::string blocker = in.at("on").get<std::string>();
  // "A blocks B" is stored as "B depends on A", so one query serves both.
  if (type == "blocks") std::swap(waiter, blocker);
  RETURN_IF_ERROR(InsertDependency(ctx, waiter, blocker, type));
  if (IsGating(type)) RETURN_IF_ERROR(EvaluateReadiness(ctx, waiter));
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, waiter));
  return Json{{"task", in["task"]}, {"on", in["on"]}, {"type", type},
              {"waiting_task", waiter}, {"waiting_task_status", task.status}};
}

Result<Json> RemoveDependency(OpContext& ctx, const Json& in) {
  const std::string type = in.value("type", "depends_on");
  std::string waiter = in.at("task").get<std::string>();
  std::string blocker = in.at("on").get<std::string>();
  if (type == "blocks") std::swap(waiter, blocker);
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, waiter));
  ASSIGN_OR_RETURN(const bool removed, DeleteTaskDep(ctx.txn, waiter, blocker, type));
  if (!removed) {
    return NotFoundError("on: task " + waiter + " has no " + type + " edge to " + blocker);
  }
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = task.run_id.value_or(""),
                                    .kind = "task.dependency_removed",
                                    .summary = waiter + " no longer " + type + " " + blocker,
                                    .payload = {{"task_id", waiter},
                                                {"depends_on_id", blocker},
                                                {"type", type}}})
                      .status());
  if (IsGating(type)) RETURN_IF_ERROR(EvaluateReadiness(ctx, waiter));
  ASSIGN_OR_RETURN(task, LoadTask(ctx.txn, waiter));
  return Json{{"task", in["task"]}, {"on", in["on"]}, {"type", type},
              {"waiting_task", waiter}, {"waiting_task_status", task.status}};
}

Result<Json> ListDependencies(OpContext& ctx, const Json& in) {
  const std::string id = in.at("task").get<std::string>();
  RETURN_IF_ERROR(LoadTask(ctx.txn, id).status());
  Json out{{"task", id}};
  for (auto [key, list_of] : {std::pair{"depends_on", &ListTaskDependencies},
                              std::pair{"dependents", &ListTaskDependents}}) {
    ASSIGN_OR_RETURN(std::vector<LinkedTask> rows, list_of(ctx.txn, id));
    Json list = Json::array();
    for (const LinkedTask& t : rows) {
      list.push_back({{"id", t.id}, {"type", t.type}, {"status", t.status}});
    }
    out[key] = list;
  }
  return out;
}

Status EvaluateReadiness(OpContext& ctx, const std::string& task_id) {
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, task_id));
  const std::string status = task.status;
  if (status != kReady && status != kBlocked) return Status();
  const std::string old_reason = task.blocked_reason.value_or("");
  const bool by_hand = status == kBlocked && !old_reason.empty() &&
                       !old_reason.starts_with(kWaiting) &&
                       !old_reason.starts_with(kUpstreamFailed);
  if (by_hand) return Status();
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(task.machine));
  if (!machine->HasState(kReady) || !machine->HasState(kBlocked)) return Status();

  ASSIGN_OR_RETURN(std::vector<TaskIdStatus> deps, GatingDependencyStatuses(ctx.txn, task_id));
  const std::string& rule = task.trigger_rule;
  std::string upstream_failed;
  std::vector<std::string> waiting;
  for (const TaskIdStatus& d : deps) {
    const Outcome outcome = OutcomeOf(d.status);
    const bool bad = (rule == "all_success" && (outcome == Outcome::kFailed ||
                                                outcome == Outcome::kCancelled)) ||
                     (rule == "none_failed" && outcome == Outcome::kFailed);
    if (bad && upstream_failed.empty()) upstream_failed = d.id + " is " + d.status;
    if (outcome == Outcome::kPending) waiting.push_back(d.id + " (" + d.status + ")");
  }
  std::string reason;
  if (!upstream_failed.empty()) {
    reason = std::string(kUpstreamFailed) + upstream_failed;
  } else if (!waiting.empty()) {
    reason = std::string(kWaiting) + "for ";
    for (size_t i = 0; i < waiting.size() && i < 5; ++i) reason += (i ? ", " : "") + waiting[i];
    if (waiting.size() > 5) reason += " and " + std::to_string(waiting.size() - 5) + " more";
  }
  const std::string want = reason.empty() ? kReady : kBlocked;
  if (want != status) {
    // Some machines never go back (genie.group has no ready -> blocked):
    // there the status stands.
    if (!machine->Check(status, want, ctx.transition()).ok()) return Status();
    return ChangeTaskStatus(ctx, task, want, reason);
  }
  if (reason == old_reason || want == kReady) return Status();
  // Still blocked, for a new reason (say, a dependency just failed).
  RETURN_IF_ERROR(UpdateTaskBlockedReason(ctx.txn, task_id, reason, ctx.now));
  return AppendEvent(ctx, {.run_id = task.run_id.value_or(""),
                           .kind = "task.blocked",
                           .summary = task_id + " blocked: " + reason,
                           .payload = {{"task_id", task_id}, {"reason", reason}}})
      .status();
}

Status OnTaskStatusChanged(OpContext& ctx, const std::string& task_id, const std::string& from,
                           const std::string& to) {
  // Dependents read only outcomes; ready -> in_progress changes none, and
  // archiving a finished task changes nothing it achieved.
  if (OutcomeOf(from) == OutcomeOf(to) || Lower(to) == "archived") return Status();
  // Rooms above react first (a board's card moves on when its work is done).
  if (OutcomeOf(to) == Outcome::kSuccess && ctx.hooks != nullptr) {
    for (const auto& hook : ctx.hooks->task_succeeded) RETURN_IF_ERROR(hook(ctx, task_id));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> dependents, GatingDependentIds(ctx.txn, task_id));
  for (const std::string& dependent : dependents) {
    RETURN_IF_ERROR(EvaluateReadiness(ctx, dependent));
  }
  return Status();
}

Status ChangeTaskStatus(OpContext& ctx, const Task& task, const std::string& to,
                        const std::string& reason, const TaskAlsoSet& also) {
  const std::string id = task.id;
  const std::string from = task.status;
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(task.machine));
  RETURN_IF_ERROR(machine->Check(from, to, ctx.transition()).WithPrefix("task " + id));
  // Only task.claim grants a lease. Any other way into in_progress leaves
  // the task unheld (so no old epoch comes back to life); leaving it ends
  // the lease, and only a success keeps its last holder, to recognise a
  // retried completion.
  TaskLeaseUpdate lease = TaskLeaseUpdate::kKeep;
  if (to == kInProgress) {
    lease = TaskLeaseUpdate::kClear;
  } else if (from == kInProgress) {
    lease = OutcomeOf(to) == Outcome::kSuccess ? TaskLeaseUpdate::kClearExpiry
                                               : TaskLeaseUpdate::kClear;
  }
  RETURN_IF_ERROR(UpdateTaskStatusRow(
      ctx.txn, id,
      {.to_status = to,
       .blocked_reason = to == kBlocked ? std::optional<std::string>(reason) : std::nullopt,
       .lease = lease,
       .also = also,
       .now = ctx.now}));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = task.run_id.value_or(""),
                                    .kind = "task.status",
                                    .summary = id + ": " + from + " -> " + to +
                                               (reason.empty() ? "" : ": " + reason),
                                    .payload = {{"task_id", id},
                                                {"from", from},
                                                {"to", to},
                                                {"reason", reason}}})
                      .status());
  RETURN_IF_ERROR(OnTaskStatusChanged(ctx, id, from, to));
  // Back to ready by hand, a release or a reset: its own dependencies decide.
  if (to == kReady) RETURN_IF_ERROR(EvaluateReadiness(ctx, id));
  return Status();
}

namespace {

// The ledger event and the answer of a claim of "before" (the row as the
// claim found it) that left it as "after".
Result<Json> RecordClaim(OpContext& ctx, const Task& before, Task after, bool took_over) {
  const Json previous_lease = TaskLeaseToJson(before);
  const int64_t epoch = after.lease_epoch;
  const std::string& agent = after.lease->owner;
  std::string summary =
      after.id + " claimed by " + agent + " (epoch " + std::to_string(epoch) + ")";
  if (took_over) summary += ", taking over the expired lease of " + before.lease->owner;
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = after.run_id.value_or(""),
                                    .kind = "task.claimed",
                                    .summary = summary,
                                    .payload = {{"task_id", after.id},
                                                {"agent", agent},
                                                {"epoch", epoch},
                                                {"expires_at",
                                                 FormatTime(*after.lease->expires_at_ms)},
                                                {"from", before.status},
                                                {"previous_lease", previous_lease}}})
                      .status());
  Json claimed = TaskToJson(after);
  Json held = claimed["lease"];
  return Json{{"claimed", true}, {"task", std::move(claimed)}, {"lease", std::move(held)}};
}

}  // namespace

Result<Json> ClaimTask(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(std::string agent, ActingAgent(ctx, in));
  RETURN_IF_ERROR(CheckAgentNotLost(ctx.txn, agent, "claim tasks"));
  RETURN_IF_ERROR(TouchAgent(ctx, agent));
  const int64_t lease_ms = in.value("lease_ms", kDefaultLeaseMillis);
  const int64_t expires = ctx.now_ms + lease_ms;
  std::string id;
  if (in.contains("task")) {
    id = in["task"].get<std::string>();
  } else {
    // Ready work first, by priority then position, skipping work planned
    // for someone else, found and claimed at once; then leases left to
    // expire, whoever held them.
    ASSIGN_OR_RETURN(const TaskScope scope, ClaimScope(ctx, in));
    ASSIGN_OR_RETURN(std::optional<ClaimedTaskRow> ready,
                     ClaimNextUnclaimedTaskRow(ctx.txn, kReady, scope,
                                               {.to_status = kInProgress,
                                                .owner = agent,
                                                .expires_at_ms = expires,
                                                .now = ctx.now}));
    if (ready) {
      // Checked after the UPDATE: a refusal fails the operation, and its
      // savepoint takes the claim back.
      ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(ready->before.machine));
      RETURN_IF_ERROR(machine->Check(kReady, kInProgress, ctx.transition())
                          .WithPrefix("task " + ready->before.id));
      return RecordClaim(ctx, ready->before, std::move(ready->after), /*took_over=*/false);
    }
    ASSIGN_OR_RETURN(std::optional<std::string> expired,
                     NextExpiredLeaseTaskId(ctx.txn, kInProgress, ctx.now_ms, scope));
    if (!expired) {
      ASSIGN_OR_RETURN(std::string reason, NothingClaimableReason(ctx, in, agent));
      return Json{{"claimed", false}, {"task", Json()}, {"lease", Json()}, {"reason", reason}};
    }
    id = *expired;
  }
  // The row is read once: the result is built from it and the UPDATE below.
  ASSIGN_OR_RETURN(Task task, LoadTaskRow(ctx.txn, id));
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(std::string pid, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
    if (task.project_id != pid) {
      return InvalidArgumentError("task: task " + id + " belongs to project " +
                                  task.project_id.value_or("(none)") + ", not " + pid);
    }
  }
  // The epoch column survives releases, so every new claim goes higher.
  const int64_t stored_epoch = task.lease_epoch;
  const std::string status = task.status;
  const bool leased = status == kInProgress && task.lease.has_value();
  const bool expired = leased && task.lease->expires_at_ms.has_value() &&
                       *task.lease->expires_at_ms < ctx.now_ms;
  const bool mine = leased && task.lease->owner == agent && !expired;
  if (leased && !expired && !mine) {
    const Json lease = TaskLeaseToJson(task);
    return Status(StatusCode::kFailedPrecondition,
                  "task " + id + " is held by " + task.lease->owner + " (epoch " +
                      std::to_string(stored_epoch) + ") until " +
                      (lease["expires_at"].is_string() ? lease["expires_at"].get<std::string>()
                                                       : std::string("it is released")),
                  Json{{"task", id}, {"lease", lease}});
  }
  if (!leased) {
    if (status != kReady) {
      const std::string why = task.blocked_reason ? " (" + *task.blocked_reason + ")" : "";
      return Status(StatusCode::kFailedPrecondition,
                    "task " + id + " is " + status + "; only ready tasks can be claimed" + why,
                    Json{{"task", id}, {"status", status}});
    }
    ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(task.machine));
    RETURN_IF_ERROR(
        machine->Check(status, kInProgress, ctx.transition()).WithPrefix("task " + id));
  }
  const Task before = task;
  ASSIGN_OR_RETURN(const bool claimed_row, ClaimTaskRow(ctx.txn, task,
                                                        {.to_status = kInProgress,
                                                         .owner = agent,
                                                         .epoch = mine ? stored_epoch
                                                                       : stored_epoch + 1,
                                                         .expires_at_ms = expires,
                                                         .new_attempt = !mine,
                                                         .now = ctx.now}));
  if (!claimed_row) {
    return AbortedError("task " + id + " changed while being claimed; retry the claim");
  }
  return RecordClaim(ctx, before, std::move(task), expired);
}

Result<Json> HeartbeatTask(OpContext& ctx, const Json& in) {
  std::string agent;
  ASSIGN_OR_RETURN(agent, ActingAgent(ctx, in));
  // A lost agent's leases were freed (or are about to be), not renewed.
  if (Status lost = CheckAgentNotLost(ctx.txn, agent, "renew leases");
      lost.code() == StatusCode::kFailedPrecondition) {
    return lost;
  }
  ASSIGN_OR_RETURN(Task task, LeasedTask(ctx, in, &agent));
  RETURN_IF_ERROR(TouchAgent(ctx, agent));
  const std::string id = task.id;
  const int64_t expires = ctx.now_ms + in.value("lease_ms", kDefaultLeaseMillis);
  RETURN_IF_ERROR(RenewTaskLease(ctx.txn, task, expires, ctx.now));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = task.run_id.value_or(""),
                                    .kind = "task.heartbeat",
                                    .summary = id + " lease renewed by " + agent + " until " +
                                               FormatTime(expires),
                                    .payload = {{"task_id", id},
                                                {"agent", agent},
                                                {"epoch", task.lease_epoch},
                                                {"expires_at", FormatTime(expires)}}})
                      .status());
  Json renewed = TaskToJson(task);
  Json held = renewed["lease"];
  return Json{{"task", std::move(renewed)}, {"lease", std::move(held)}};
}

namespace {

// complete / fail / release: a fenced move out of in_progress that drops the lease.
Result<Json> FinishLease(OpContext& ctx, const Json& in, Outcome outcome, const char* verb) {
  std::string agent;
  ASSIGN_OR_RETURN(agent, ActingAgent(ctx, in));
  ASSIGN_OR_RETURN(Task task, LoadTaskRow(ctx.txn, in.at("task").get<std::string>()));
  // Completing twice is a retry, not a conflict (Genie #1214): the same
  // agent presenting the epoch it finished under gets the task back.
  if (outcome == Outcome::kSuccess && OutcomeOf(task.status) == Outcome::kSuccess &&
      task.lease && task.lease->owner == agent &&
      task.lease_epoch == in.at("epoch").get<int64_t>()) {
    return TaskToJson(task);
  }
  RETURN_IF_ERROR(CheckLease(task, agent, in.at("epoch").get<int64_t>()));
  std::string to = kReady;
  if (outcome != Outcome::kPending) {
    ASSIGN_OR_RETURN(to, TargetFor(ctx, task, outcome, verb));
  }
  std::string reason = in.value("reason", "");
  reason = std::string(verb) + " by " + agent + (reason.empty() ? "" : ": " + reason);
  TaskAlsoSet also;
  if (in.contains("result")) also.result = in["result"];
  RETURN_IF_ERROR(ChangeTaskStatus(ctx, task, to, reason, also));
  RETURN_IF_ERROR(TouchAgent(ctx, agent));
  // Read again: a hook (a board's column) may have moved the task meanwhile.
  return AnswerTask(ctx.txn, task.id);
}

}  // namespace

Result<Json> CompleteTask(OpContext& ctx, const Json& in) {
  return FinishLease(ctx, in, Outcome::kSuccess, "completed");
}

Result<Json> FailTask(OpContext& ctx, const Json& in) {
  return FinishLease(ctx, in, Outcome::kFailed, "failed");
}

Result<Json> ReleaseTask(OpContext& ctx, const Json& in) {
  return FinishLease(ctx, in, Outcome::kPending, "released");
}

Status ReturnTaskToReady(OpContext& ctx, const std::string& task_id, const std::string& reason) {
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, task_id));
  if (task.status != kInProgress) return Status();
  return ChangeTaskStatus(ctx, task, kReady, reason);
}

Result<std::vector<std::string>> ReleaseLeasesOf(OpContext& ctx, const std::string& agent_id,
                                                 const std::string& reason) {
  ASSIGN_OR_RETURN(std::vector<std::string> ids, LeasedTaskIds(ctx.txn, agent_id, kInProgress));
  for (const std::string& id : ids) RETURN_IF_ERROR(ReturnTaskToReady(ctx, id, reason));
  return ids;
}

}  // namespace baton
