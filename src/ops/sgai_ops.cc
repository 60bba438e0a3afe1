// Operations of the sgai profile (engine/profiles/sgai/sgai.h, docs/profiles/sgai.md):
// start from GOAL.md, update_workflow_state with its completion gates, todo
// lists, hand-offs, usage, model statuses and the state document.

#include "engine/profiles/sgai/sgai.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

constexpr int64_t kDefaultGateTimeoutMillis = 600000;
constexpr int kMaxApplyAttempts = 3;

Json Run() { return s::Id("the sgai run"); }

Json Mode(const char* description) {
  return s::Enum(description,
                 {"brainstorming", "self-drive", "building", "retrospective", "continuous"});
}

// Bounded so that sums over a run's whole usage cannot overflow.
Json NonNegative(const char* type, const char* description) {
  return {{"type", type}, {"minimum", 0}, {"maximum", 1e12}, {"description", description}};
}

Json Todos() {
  Json item = s::Input({{"id", s::String("the todo's id in the list", 200)},
                        {"content", s::String("what to do", 10000)},
                        {"status", s::Enum("pending | in_progress | completed | cancelled",
                                           {"pending", "in_progress", "completed", "cancelled"})},
                        {"priority", s::Enum("high | medium | low", {"high", "medium", "low"})}},
                       {"id", "content", "status"});
  item["properties"]["id"]["minLength"] = 1;
  return {{"type", "array"},
          {"maxItems", 1000},
          {"items", item},
          {"description", "the whole list (items left out come off it)"}};
}

Json Tokens() {
  return s::Input({{"input", NonNegative("integer", "input tokens")},
                   {"output", NonNegative("integer", "output tokens")},
                   {"reasoning", NonNegative("integer", "reasoning tokens")},
                   {"cacheRead", NonNegative("integer", "cache read tokens")},
                   {"cacheWrite", NonNegative("integer", "cache write tokens")}});
}

// sgai.update_workflow_state: the rules run in one transaction
// (sgai.apply_workflow_state); when complete needs the completion gate
// script, it runs here, outside any transaction, and the result goes back in.
Result<Json> UpdateWorkflowState(OpRunner& runner, const Json& in) {
  Json call = {{"run", in.at("run")},
               {"caller", {{"id", runner.actor().id}, {"role", runner.actor().role}}},
               {"status", in.at("status")}};
  for (const char* key : {"task", "add_progress"}) {
    if (in.contains(key)) call[key] = in[key];
  }
  Json gate_run;
  for (int attempt = 0; attempt < kMaxApplyAttempts; ++attempt) {
    ASSIGN_OR_RETURN(Json out, runner.CallAsSystem("sgai.apply_workflow_state", call));
    if (!out.value("gate_needed", false)) {
      out["gate_script"] = gate_run;
      return out;
    }
    const std::string script = out.value("script", "");
    // The gate is a shell script from GOAL.md, run as baton's user.
    if (!runner.actor().Has(kGrantCommands)) {
      return PermissionDeniedError("status: completing run " + in.at("run").get<std::string>() +
                                   " runs its completion gate script `" + script +
                                   "`; running it needs the grant \"commands\"");
    }
    SgaiGateResult gate = RunCompletionGate(script, out.value("workdir", ""),
                                            in.value("gate_timeout_ms", kDefaultGateTimeoutMillis));
    call["gate"] = {{"ok", gate.ok},
                    {"exit_code", gate.exit_code},
                    {"output", gate.output},
                    {"script", script},
                    {"workdir", out.value("workdir", "")}};
    gate_run = {{"script", script},
                {"ok", gate.ok},
                {"exit_code", gate.exit_code},
                {"output", gate.output}};
  }
  return AbortedError("status: the run kept changing while its completion gate ran; retry");
}

Status AddWorkflowOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "sgai.start",
      .summary = "Start or resume an sgai workflow from GOAL.md (resumes when the goal body is "
                 "unchanged and the run is still going; otherwise a new run, the old one kept)",
      .input_schema =
          s::Input({{"goal_file", s::Path("path of the GOAL.md, under the server's roots")},
                    {"goal", s::String("GOAL.md text (instead of goal_file)", 1 << 20)},
                    {"workdir", s::Path("the workspace folder (default: the GOAL.md folder), under the "
                                        "server's roots; the completion gate script runs here "
                                        "(completing needs the grant \"commands\" then)")},
                    {"project", s::Id("project id or name")},
                    {"run", s::Id("resume this run rather than the latest of the workdir")},
                    {"fresh", s::Boolean("start a new run even when the old one could resume")},
                    {"auto", s::Boolean("self-drive: start in interaction mode self-drive")},
                    {"interaction_mode", Mode("interaction mode (default: the old run's, else "
                                              "brainstorming; continuous when GOAL.md has "
                                              "continuousModePrompt)")}}),
      .output_schema = s::AnyObject(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .positional = {"goal_file"},
      .handler = SgaiStart,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "sgai.update_workflow_state",
      .summary = "sgai's update_workflow_state: working / agent-done / complete (coordinator), "
                 "the current task and a progress note; complete passes the completion gates",
      .input_schema =
          s::Input({{"run", Run()},
                    {"status", s::Enum("working | agent-done | complete (only the coordinator "
                                       "completes; anyone else's complete is agent-done)",
                                       {"working", "agent-done", "complete"})},
                    {"task", s::String("what the caller is doing now", 10000)},
                    {"add_progress", s::String("a progress note to append", 10000)},
                    {"gate_timeout_ms",
                     {{"type", "integer"},
                      {"minimum", 1},
                      {"maximum", 86400000},
                      {"description",
                       "how long the completion gate script may run "
                       "(default 600000)"}}}},
                   {"run", "status"}),
      .output_schema = s::AnyObject(),
      // Its changes are the internal operation it calls, one transaction.
      .mutating = true,
      .positional = {"run", "status"},
      .procedure = UpdateWorkflowState,
  }));
  return r.Add({
      .name = "sgai.apply_workflow_state",
      .summary = "Internal: the rules of sgai.update_workflow_state in one transaction, as the "
                 "caller named in the input",
      .input_schema = s::Input(
          {{"run", Run()},
           {"caller",
            s::Input({{"id", s::Id("caller id")}, {"role", s::Id("caller role")}}, {"id", "role"})},
           {"status", s::Enum("requested status", {"working", "agent-done", "complete"})},
           {"task", s::String("task", 10000)},
           {"add_progress", s::String("progress note", 10000)},
           {"gate", s::Object("what the completion gate script did: {ok, exit_code, output}")}},
          {"run", "caller", "status"}),
      .output_schema = s::AnyObject(),
      .roles = {"admin"},
      .mutating = true,
      .handler = SgaiApplyWorkflowState,
  });
}

Status AddTodoOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "sgai.todo_write",
      .summary = "Replace the caller's todo list (or, coordinator only, the project list)",
      .input_schema = s::Input({{"run", Run()},
                                {"todos", Todos()},
                                {"project", s::Boolean("the project todo list (coordinator only)")}},
                               {"run", "todos"}),
      .output_schema = s::AnyObject(),
      .mutating = true,
      .positional = {"run"},
      .handler = SgaiTodoWrite,
  }));
  return r.Add({
      .name = "sgai.todo_read",
      .summary = "An agent's todo list (default the caller's) or the project list",
      .input_schema = s::Input({{"run", Run()},
                                {"project", s::Boolean("the project todo list")},
                                {"agent", s::Id("whose list (default: the caller's)")}},
                               {"run"}),
      .output_schema = s::AnyObject(),
      .positional = {"run"},
      .handler = SgaiTodoRead,
  });
}

Status AddAgentOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "sgai.next_agent",
      .summary = "Who works next and why: the first unread message's recipient, else the flow",
      .input_schema = s::Input({{"run", Run()}}, {"run"}),
      .output_schema = s::AnyObject(),
      .positional = {"run"},
      .handler = SgaiNextAgent,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "sgai.handoff",
      .summary = "Hand the workflow to the next agent (default: sgai.next_agent's choice)",
      .input_schema = s::Input({{"run", Run()}, {"to", s::Id("the agent to hand to")}}, {"run"}),
      .output_schema = s::AnyObject(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .positional = {"run", "to"},
      .handler = SgaiHandoff,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "sgai.model_status",
      .summary = "Record a model's status for a multi-model agent (key agent:model)",
      .input_schema = s::Input(
          {{"run", Run()},
           {"model", s::String("the model spec", 500)},
           {"status", s::Enum("model status", {"model-working", "model-done", "model-error"})},
           {"agent", s::Id("the agent (default: the current agent)")}},
          {"run", "model", "status"}),
      .output_schema = s::AnyObject(),
      .mutating = true,
      .positional = {"run", "model", "status"},
      .handler = SgaiModelStatus,
  }));
  return r.Add({
      .name = "sgai.set",
      .summary = "Set the workflow's session id, interaction mode or summary",
      .input_schema = s::Input({{"run", Run()},
                                {"session_id", s::String("the agent session", 500)},
                                {"interaction_mode", Mode("interaction mode")},
                                {"summary", s::String("one-line goal summary", 2000)},
                                {"summary_manual", s::Boolean("the summary was written by hand "
                                                        "(default: true for humans)")}},
                               {"run"}),
      .output_schema = s::AnyObject(),
      .mutating = true,
      .positional = {"run"},
      .handler = SgaiSet,
  });
}

Status AddUsageOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "sgai.usage_add",
      .summary = "Record one step's cost and tokens",
      .input_schema = s::Input({{"run", Run()},
                                {"agent", s::Id("the agent (default: the caller)")},
                                {"model", s::String("the model", 500)},
                                {"step_id", s::String("the step", 500)},
                                {"session_id", s::String("the session", 500)},
                                {"cost", NonNegative("number", "cost in dollars")},
                                {"tokens", Tokens()}},
                               {"run", "model"}),
      .output_schema = s::AnyObject(),
      .mutating = true,
      .positional = {"run"},
      .handler = SgaiUsageAdd,
  }));
  return r.Add({
      .name = "sgai.state",
      .summary = "The workflow as sgai's .sgai/state.json",
      .input_schema = s::Input({{"run", Run()}}, {"run"}),
      .output_schema = s::AnyObject(),
      .positional = {"run"},
      .handler = SgaiState,
  });
}

}  // namespace

void AddSgaiHooks(EngineHooks& hooks) {
  // An answer to a work gate's question moves the sgai run on.
  hooks.question_answered.push_back(ApplySgaiWorkGate);
}

Status RegisterSgaiOps(Registry& registry) {
  RETURN_IF_ERROR(AddWorkflowOps(registry));
  RETURN_IF_ERROR(AddTodoOps(registry));
  RETURN_IF_ERROR(AddAgentOps(registry));
  return AddUsageOps(registry);
}

}  // namespace baton
