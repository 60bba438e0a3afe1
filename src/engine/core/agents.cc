#include "engine/core/agents.h"

#include "engine/core/agent_rows.h"
#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "engine/core/task_graph.h"
#include "store/tables/agent_table.h"
#include "store/tables/task_table.h"
#include "util/clock.h"

namespace baton {
namespace {

constexpr char kAgentMachine[] = "genie.agent";
constexpr int64_t kDefaultLostAfterMillis = 300000;  // Genie's orphan reconcile: 5 min

// The fields agent.register may set; absent fields are left out so
// re-registering keeps what was there. The caller sets the session ids.
AgentRegistration RegisterFields(OpContext& ctx, const Json& in, const std::string& project_id) {
  AgentRegistration fields;
  for (auto [key, value] :
       {std::pair{"role", &fields.role}, {"kind", &fields.kind}, {"provider", &fields.provider},
        {"model", &fields.model}, {"team", &fields.team},
        {"delivery_command", &fields.delivery_command}}) {
    if (in.contains(key)) *value = in[key].get<std::string>();
  }
  if (!project_id.empty()) fields.project_id = project_id;
  if (in.contains("auto_resume")) fields.auto_resume = in["auto_resume"].get<bool>();
  if (in.contains("meta")) fields.meta = in["meta"];
  fields.last_heartbeat_ms = ctx.now_ms;
  return fields;
}

// Session ids: the stored ones plus "session_id"/"session_ids" from the
// input, oldest first, without repeats. The newest is the one to resume.
Json MergeSessionIds(Json stored, const Json& in) {
  Json added = in.value("session_ids", Json::array());
  if (in.contains("session_id")) added.push_back(in["session_id"]);
  for (const Json& id : added) {
    auto it = std::find(stored.begin(), stored.end(), id);
    if (it != stored.end()) stored.erase(it);
    stored.push_back(id);
  }
  return stored;
}

Status MoveAgent(OpContext& ctx, const Agent& agent, const std::string& to,
                 const std::string& reason, const std::string& kind) {
  const std::string& id = agent.id;
  const std::string& from = agent.status;
  if (from == to) return Status();
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(agent.machine));
  RETURN_IF_ERROR(machine->Check(from, to, ctx.transition()).WithPrefix("agent " + id));
  RETURN_IF_ERROR(UpdateAgentStatusRow(ctx.txn, id, to, ctx.now));
  return AppendEvent(ctx, {.kind = kind,
                           .summary = "agent " + id + ": " + from + " -> " + to +
                                      (reason.empty() ? "" : ": " + reason),
                           .payload = {{"agent", id}, {"from", from}, {"to", to},
                                       {"reason", reason}}})
      .status();
}

// Agents speak only for themselves: otherwise one could re-register another
// with its own delivery command, or change its role and take its mail.
Status CheckSelf(const OpContext& ctx, const std::string& id) {
  if (ctx.actor.role != "agent" || id == ctx.actor.id) return Status();
  return PermissionDeniedError("id: an agent may change only its own registration (" +
                               ctx.actor.id + " asked to change " + id + ")");
}

// The stored agent as every operation answers it.
Result<Json> AnswerAgent(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(Agent agent, LoadAgent(txn, id));
  return AgentToJson(agent);
}

}  // namespace

Result<Json> RegisterAgent(OpContext& ctx, const Json& in) {
  const std::string id = in.value("id", ctx.actor.id);
  RETURN_IF_ERROR(CheckSelf(ctx, id));
  // A delivery command is a shell command baton runs later, for whoever
  // delivers: setting one is running it (docs/security-paths.md).
  if (in.contains("delivery_command") && !in["delivery_command"].get<std::string>().empty() &&
      !ctx.actor.Has(kGrantCommands)) {
    return PermissionDeniedError("delivery_command: a delivery command runs as baton's user; "
                                 "setting one needs the grant \"commands\"");
  }
  std::string project_id;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  AgentRegistration fields = RegisterFields(ctx, in, project_id);
  Result<Agent> existing = LoadAgent(ctx.txn, id);
  if (existing.ok()) {
    RETURN_IF_ERROR(CheckExpectedVersion(in, "agent", id, existing->version));
    fields.session_ids = MergeSessionIds(existing->session_ids, in);
    RETURN_IF_ERROR(UpdateAgentRegistration(ctx.txn, id, fields, ctx.now));
    RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "agent.registered",
                                      .summary = "agent " + id + " registered again",
                                      .payload = {{"agent", id}, {"input", in}}})
                        .status());
  } else if (existing.status().code() == StatusCode::kNotFound) {
    ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(kAgentMachine));
    fields.session_ids = MergeSessionIds(Json::array(), in);
    RETURN_IF_ERROR(
        InsertAgentRow(ctx.txn, id, kAgentMachine, machine->initial(), fields, ctx.now));
    RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "agent.registered",
                                      .summary = "agent " + id + " registered as " +
                                                 in.value("role", std::string("agent")),
                                      .payload = {{"agent", id}, {"input", in}}})
                        .status());
  } else {
    return existing.status();
  }
  // Registering again is how a lost agent comes back: as it says, else working.
  const bool was_lost = existing.ok() && existing->status == kLost;
  if (in.contains("status") || was_lost) {
    ASSIGN_OR_RETURN(Agent agent, LoadAgent(ctx.txn, id));
    RETURN_IF_ERROR(MoveAgent(ctx, agent, in.value("status", std::string("working")),
                              was_lost ? "registered again" : "", "agent.status"));
  }
  return AnswerAgent(ctx.txn, id);
}

Status RegisterOnFirstCall(OpContext& ctx) {
  ASSIGN_OR_RETURN(const bool registered, AgentExists(ctx.txn, ctx.actor.id));
  if (registered) return Status();
  return RegisterAgent(ctx, Json{{"id", ctx.actor.id}, {"role", ctx.actor.role}}).status();
}

Result<Json> AgentHeartbeat(OpContext& ctx, const Json& in) {
  const std::string id = in.value("id", ctx.actor.id);
  RETURN_IF_ERROR(CheckSelf(ctx, id));
  ASSIGN_OR_RETURN(Agent agent, LoadAgent(ctx.txn, id));
  RETURN_IF_ERROR(CheckNotLostAgent(agent, "heartbeat"));
  RETURN_IF_ERROR(CheckExpectedVersion(in, "agent", id, agent.version));
  RETURN_IF_ERROR(RecordAgentHeartbeat(ctx.txn, id, ctx.now_ms, ctx.now));
  std::string to = in.value("status", "");
  if (to == agent.status) to.clear();  // no change of status: a plain heartbeat
  if (!to.empty()) {
    RETURN_IF_ERROR(MoveAgent(ctx, agent, to, in.value("reason", ""), "agent.status"));
  } else {
    RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "agent.heartbeat",
                                      .summary = "agent " + id + " heartbeat",
                                      .payload = {{"agent", id}}})
                        .status());
  }
  return AnswerAgent(ctx.txn, id);
}

Result<Json> SetAgentStatus(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  RETURN_IF_ERROR(CheckSelf(ctx, id));
  ASSIGN_OR_RETURN(Agent agent, LoadAgent(ctx.txn, id));
  // An agent does not talk itself out of lost; a coordinator may close it.
  if (ctx.actor.role == "agent") RETURN_IF_ERROR(CheckNotLostAgent(agent, "change its status"));
  RETURN_IF_ERROR(CheckExpectedVersion(in, "agent", id, agent.version));
  const std::string to = in.at("status").get<std::string>();
  RETURN_IF_ERROR(MoveAgent(ctx, agent, to, in.value("reason", ""), "agent.status"));
  // Lost by hand holds nothing either.
  if (to == kLost && agent.status != kLost) {
    RETURN_IF_ERROR(ReleaseLeasesOf(ctx, id, "agent " + id + " set lost by " + ctx.actor.id)
                        .status());
  }
  return AnswerAgent(ctx.txn, id);
}

Result<Json> ShowAgent(OpContext& ctx, const Json& in) {
  return AnswerAgent(ctx.txn, in.value("id", ctx.actor.id));
}

Result<Json> ListAgents(OpContext& ctx, const Json& in) {
  AgentFilter filter;
  for (auto [field, value] : {std::pair{"role", &filter.role}, {"team", &filter.team},
                              {"status", &filter.status}}) {
    if (in.contains(field)) *value = in[field].get<std::string>();
  }
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(filter.project_id,
                     ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  ASSIGN_OR_RETURN(std::vector<Agent> rows, ListAgentRows(ctx.txn, filter));
  Json list = Json::array();
  for (const Agent& a : rows) list.push_back(AgentToJson(a));
  return Json{{"agents", list}};
}

Result<Json> ReconcileAgents(OpContext& ctx, const Json& in) {
  const int64_t threshold = in.value("lost_after_ms", kDefaultLostAfterMillis);
  const int64_t cutoff = ctx.now_ms - threshold;
  ASSIGN_OR_RETURN(std::vector<Agent> silent, SilentAgentRows(ctx.txn, kLost, cutoff));
  Json lost = Json::array();
  for (const Agent& agent : silent) {
    const std::string& id = agent.id;
    ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(agent.machine));
    // Only states that expect heartbeats can be lost (not done, suspended...).
    if (!machine->Check(agent.status, kLost, ctx.transition()).ok()) continue;
    const Json last_heartbeat = AgentLastHeartbeatJson(agent);
    const std::string last =
        last_heartbeat.is_null() ? std::string("never") : last_heartbeat.get<std::string>();
    const std::string reason = "no heartbeat since " + last + " (threshold " +
                               std::to_string(threshold) + " ms)";
    RETURN_IF_ERROR(MoveAgent(ctx, agent, kLost, reason, "agent.lost"));
    ASSIGN_OR_RETURN(std::vector<std::string> released,
                     ReleaseLeasesOf(ctx, id, "agent " + id + " lost: " + reason));
    lost.push_back({{"id", id}, {"last_heartbeat_at", last_heartbeat},
                    {"released_tasks", released}});
  }
  // Agents already lost hold nothing either: leases they took while lost
  // (before claims were refused to them) go back too.
  ASSIGN_OR_RETURN(std::vector<std::string> holders,
                   LeaseOwnersInStatus(ctx.txn, kLost, "in_progress"));
  for (const std::string& id : holders) {
    ASSIGN_OR_RETURN(std::vector<std::string> released,
                     ReleaseLeasesOf(ctx, id, "agent " + id + " is lost"));
    if (released.empty()) continue;
    ASSIGN_OR_RETURN(Agent agent, LoadAgent(ctx.txn, id));
    lost.push_back({{"id", id}, {"last_heartbeat_at", AgentLastHeartbeatJson(agent)},
                    {"released_tasks", released}, {"already_lost", true}});
  }
  return Json{{"lost", lost}, {"lost_after_ms", threshold}};
}

Result<Json> ResumeDecision(OpContext& ctx, const Json& in) {
  const std::string id = in.value("id", ctx.actor.id);
  auto decide = [&](bool resume, const char* reason, Json extra = Json::object()) {
    extra["agent"] = id;
    extra["resume"] = resume;
    extra["reason"] = reason;
    return extra;
  };
  Result<Agent> loaded = LoadAgent(ctx.txn, id);
  if (loaded.status().code() == StatusCode::kNotFound) return decide(false, "unknown_agent");
  RETURN_IF_ERROR(loaded.status());
  const Agent& agent = *loaded;
  if (!agent.auto_resume) return decide(false, "auto_resume_disabled");
  // A task agent exists for its assignment: once that is finished there is
  // nothing to resume. A permanent agent is resumed regardless.
  const bool permanent = agent.kind == "permanent";
  if (!permanent) {
    ASSIGN_OR_RETURN(std::vector<TaskIdStatus> held, TasksHeldOrAssigned(ctx.txn, id));
    std::string open_task;
    for (const TaskIdStatus& t : held) {
      if (OutcomeOf(t.status) == Outcome::kPending) {
        open_task = t.id;
        break;
      }
    }
    if (open_task.empty()) return decide(false, "assignment_closed");
  }
  const Json& sessions = agent.session_ids;
  if (sessions.empty()) return decide(false, "no_session_id");
  return decide(true, "ok",
                {{"session_id", sessions.back()}, {"rehydrate", permanent ? "eager" : "lazy"}});
}

}  // namespace baton
