// Operations of the work graph (dependencies, claims under leases) and the
// agent registry.

#include "engine/core/agents.h"
#include "engine/core/task_graph.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

Json LeaseMillis() {
  return {{"type", "integer"},
          {"minimum", 1},
          {"maximum", 86400000},
          {"description", "lease length in milliseconds (default 600000, Genie's checkout timeout)"}};
}

Json Epoch() {
  return {{"type", "integer"},
          {"minimum", 0},
          {"description", "the epoch of your lease, as task.claim returned it"}};
}

Json ClaimOut() {
  return {{"type", "object"},
          {"properties",
           {{"claimed", {{"type", "boolean"}}},
            {"task", {{"anyOf", {s::TaskOut(), {{"type", "null"}}}}}},
            {"lease", s::Nullable("object")},
            {"reason", {{"type", "string"},
                        {"description", "when claimed is false: why nothing could be "
                                        "claimed, by status, and what to do"}}}}},
          {"required", {"task", "lease"}}};
}

Json EdgeOut() {
  return s::Entity({{"task", {{"type", "string"}}},
                    {"on", {{"type", "string"}}},
                    {"type", {{"type", "string"}}},
                    {"waiting_task", {{"type", "string"}}},
                    {"waiting_task_status", {{"type", "string"}}}});
}

Json EdgeIn() {
  return s::Input({{"task", s::Id("task id")},
                   {"on", s::Id("the other task")},
                   {"type", s::Enum("depends_on: task waits for on; blocks: on waits for task; "
                                    "relates_to: a link that never gates",
                                    {"depends_on", "blocks", "relates_to"})}},
                  {"task", "on"});
}

Json FencedIn(std::initializer_list<std::pair<const char*, Json>> extra) {
  Json in = s::Input({{"task", s::Id("task id")},
                      {"epoch", Epoch()},
                      {"agent", s::Id("the lease holder (default: the caller)")}},
                     {"task", "epoch"});
  for (const auto& [name, schema] : extra) in["properties"][name] = schema;
  return in;
}

Status AddDependencyOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "task.add_dependency",
      .summary = "Add an edge between two tasks; cycles, self-edges and cross-project edges are refused",
      .input_schema = EdgeIn(),
      .output_schema = EdgeOut(),
      .mutating = true,
      .idempotent = true,
      .positional = {"task", "on"},
      .handler = AddDependency,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "task.remove_dependency",
      .summary = "Remove an edge between two tasks and re-evaluate the waiting one",
      .input_schema = EdgeIn(),
      .output_schema = EdgeOut(),
      .mutating = true,
      .positional = {"task", "on"},
      .handler = RemoveDependency,
  }));
  return r.Add({
      .name = "task.dependencies",
      .summary = "Show what a task waits for and what waits for it",
      .input_schema = s::Input({{"task", s::Id("task id")}}, {"task"}),
      .output_schema = s::AnyObject(),
      .positional = {"task"},
      .handler = ListDependencies,
  });
}

Status AddClaimOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "task.claim",
      .summary = "Claim a task, or the next ready one by priority then position, under a lease",
      .input_schema = s::Input({{"task", s::Id("the task to claim (default: the next ready one)")},
                                {"agent", s::Id("the claiming agent (default: the caller)")},
                                {"run", s::Id("only tasks of this run")},
                                {"project", s::Id("only tasks of this project (id or name)")},
                                {"kind", s::Id("only tasks of this kind")},
                                {"lease_ms", LeaseMillis()}}),
      .output_schema = ClaimOut(),
      .mutating = true,
      .handler = ClaimTask,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "task.heartbeat",
      .summary = "Renew the lease on a claimed task",
      .input_schema = FencedIn({{"lease_ms", LeaseMillis()}}),
      .output_schema = ClaimOut(),
      .mutating = true,
      .positional = {"task", "epoch"},
      .handler = HeartbeatTask,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "task.complete",
      .summary = "Complete a claimed task (fenced by the lease epoch); its dependents become ready",
      .input_schema = FencedIn({{"result", {{"description", "result JSON to store on the task"}}},
                                {"reason", s::String("a note for the ledger", 2000)}}),
      .output_schema = s::TaskOut(),
      .mutating = true,
      .positional = {"task", "epoch"},
      .handler = CompleteTask,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "task.fail",
      .summary = "Fail a claimed task (fenced by the lease epoch); dependents follow their trigger rule",
      .input_schema = FencedIn({{"result", {{"description", "result JSON to store on the task"}}},
                                {"reason", s::String("what went wrong", 2000)}}),
      .output_schema = s::TaskOut(),
      .mutating = true,
      .positional = {"task", "epoch"},
      .handler = FailTask,
  }));
  return r.Add({
      .name = "task.release",
      .summary = "Give a claimed task back: it returns to ready (fenced by the lease epoch)",
      .input_schema = FencedIn({{"reason", s::String("why, for the ledger", 2000)}}),
      .output_schema = s::TaskOut(),
      .mutating = true,
      .positional = {"task", "epoch"},
      .handler = ReleaseTask,
  });
}

Status AddAgentOps(Registry& r) {
  Json session_ids = {{"type", "array"}, {"items", s::String("session id", 500)}, {"maxItems", 100}};
  RETURN_IF_ERROR(r.Add({
      .name = "agent.register",
      .summary = "Register an agent, or update its registration (id defaults to the caller)",
      .input_schema = s::Input(
          {{"id", s::Id("agent id (default: the caller's)")},
           {"role", s::Id("the agent's role in the team: mail to a role reaches it")},
           {"kind", s::Enum("permanent agents are resumed whatever their assignment",
                            {"permanent", "task"})},
           {"provider", s::Id("claude, codex, ...")},
           {"model", s::String("model name", 200)},
           {"team", s::Id("team name")},
           {"project", s::Id("project id or name")},
           {"session_id", s::String("the current session id (appended to session_ids)", 500)},
           {"session_ids", session_ids},
           {"auto_resume", s::Boolean("resume after a crash (default true)")},
           {"delivery_command",
            s::String("shell command that pushes a message into the agent (e.g. tmux send-keys); "
                      "it gets the message in $BATON_MESSAGE_BODY and on stdin", 4000)},
           {"status", s::String("initial or new lifecycle status (machine genie.agent)", 200)},
           {"meta", s::Object("free-form metadata")}}),
      .output_schema = s::AgentOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"id"},
      .handler = RegisterAgent,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "agent.heartbeat",
      .summary = "Say the agent is alive, optionally with its lifecycle status (idle, working, ...)",
      .input_schema = s::Input({{"id", s::Id("agent id (default: the caller's)")},
                                {"status", s::String("new lifecycle status", 200)},
                                {"reason", s::String("why, for the ledger", 2000)}}),
      .output_schema = s::AgentOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"id"},
      .handler = AgentHeartbeat,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "agent.set_status",
      .summary = "Move an agent through its lifecycle machine (genie.agent)",
      .input_schema = s::Input({{"id", s::Id("agent id")},
                                {"status", s::String("the new status", 200)},
                                {"reason", s::String("why, for the ledger", 2000)}},
                               {"id", "status"}),
      .output_schema = s::AgentOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"id", "status"},
      .handler = SetAgentStatus,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "agent.show",
      .summary = "Show one agent (default: the caller)",
      .input_schema = s::Input({{"id", s::Id("agent id")}}),
      .output_schema = s::AgentOut(),
      .positional = {"id"},
      .handler = ShowAgent,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "agent.list",
      .summary = "List agents by role, team, status or project",
      .input_schema = s::Input({{"role", s::Id("role")},
                                {"team", s::Id("team")},
                                {"status", s::String("status", 200)},
                                {"project", s::Id("project id or name")}}),
      .output_schema = s::ListOf("agents", s::AgentOut()),
      .handler = ListAgents,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "agent.reconcile",
      .summary = "Mark agents without a recent heartbeat lost and return their leased tasks to ready",
      .input_schema = s::Input({{"lost_after_ms",
                                 {{"type", "integer"},
                                  {"minimum", 0},
                                  {"description", "heartbeat age that makes an agent lost (default 300000)"}}}}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"lost", {{"type", "array"}}},
                                        {"lost_after_ms", {{"type", "integer"}}}}},
                        {"required", {"lost"}}},
      .roles = {"coordinator", "human"},
      .mutating = true,
      .handler = ReconcileAgents,
  }));
  return r.Add({
      .name = "agent.resume_decision",
      .summary = "Should this agent be resumed after a crash? Genie's shouldResume with its reason codes",
      .input_schema = s::Input({{"id", s::Id("agent id (default: the caller's)")}}),
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"resume", {{"type", "boolean"}}},
                          {"reason", {{"enum", {"ok", "unknown_agent", "auto_resume_disabled",
                                                "assignment_closed", "no_session_id"}}}},
                          {"session_id", {{"type", "string"}}},
                          {"rehydrate", {{"enum", {"eager", "lazy"}}}}}},
                        {"required", {"resume", "reason"}}},
      .positional = {"id"},
      .handler = ResumeDecision,
  });
}

}  // namespace

Status RegisterTaskCoordinationOps(Registry& registry) {
  RETURN_IF_ERROR(AddDependencyOps(registry));
  return AddClaimOps(registry);
}

Status RegisterAgentOps(Registry& registry) { return AddAgentOps(registry); }

}  // namespace baton
