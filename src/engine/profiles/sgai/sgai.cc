// The sgai profile's workflow rules: update_workflow_state with its
// completion gates, hand-offs between the agents of the flow, model statuses.
// See sgai.h and docs/profiles/sgai.md.

#include "engine/profiles/sgai/sgai.h"

#include <algorithm>
#include <optional>

#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "engine/core/questions.h"
#include "model/sgai_flow.h"
#include "store/tables/message_table.h"
#include "util/clock.h"
#include "util/subprocess.h"

namespace baton {
namespace sgai_internal {

namespace {

// sgai's defaults for the meta keys a run lacks (or holds as null).
void FillSgaiDefaults(Json& m) {
  const Json defaults = {{"currentAgent", "coordinator"},
                         {"visitCounts", Json::object()},
                         {"agentSequence", Json::array()},
                         {"modelStatuses", Json::object()},
                         {"currentModel", ""},
                         {"interactionMode", "brainstorming"},
                         {"sessionId", ""},
                         {"summary", ""},
                         {"summaryManual", false},
                         {"task", ""},
                         {"goalChecksum", ""},
                         {"completionGateScript", ""},
                         {"retrospective", true},
                         {"workdir", ""},
                         {"models", Json::object()}};
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    if (!m.contains(it.key()) || m[it.key()].is_null()) m[it.key()] = it.value();
  }
  if (m["currentAgent"] == "") m["currentAgent"] = "coordinator";
}

}  // namespace

Result<Run> LoadSgaiRun(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(Run run, LoadRun(txn, id));
  if (run.profile != "sgai") {
    return InvalidArgumentError("run: run " + id + " has profile " + run.profile + ", not sgai");
  }
  FillSgaiDefaults(run.meta);
  return run;
}

Result<std::string> FirstUnreadRecipient(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::optional<std::string> to, FirstUnreadSgaiRecipient(txn, run_id));
  if (!to) return std::string();
  return to->substr(0, to->find(':'));
}

Result<std::string> SendRunMessage(OpContext& ctx, const Run& run, const std::string& from,
                                   const std::string& to, const std::string& body) {
  const std::string id = NewId("msg");
  RETURN_IF_ERROR(InsertSgaiSystemMessage(ctx.txn, {.id = id,
                                                    .project_id = run.project_id.value_or(""),
                                                    .run_id = run.id,
                                                    .sender = from,
                                                    .recipient = to,
                                                    .body = body,
                                                    .created_at = ctx.now}));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run.id,
                                    .kind = "message.sent",
                                    .summary = "message " + id + " from " + from + " to " + to,
                                    .payload = {{"message", id},
                                                {"from", from},
                                                {"to", to},
                                                {"addressed_to", to},
                                                {"source", "system"}}})
                      .status());
  return id;
}

}  // namespace sgai_internal

namespace {

using namespace sgai_internal;

constexpr size_t kMaxGateOutput = 64 * 1024;

Result<SgaiFlow> FlowOf(const Run& run) {
  const Json flow = run.meta.value("flow", Json());
  if (!flow.is_object()) return SgaiFlow::FromDot("");
  return SgaiFlow::FromJson(flow);
}

Status CheckRunTransition(OpContext& ctx, const Run& run, const std::string& to,
                          const Actor& caller) {
  if (run.status == to) return Status();
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(run.machine));
  const std::string role = IsSgaiCoordinator(caller) ? "coordinator" : caller.role;
  return machine->Check(run.status, to, {ctx.op, role});
}

// Makes "to" the current agent: visit count, agent sequence (a new entry only
// when the agent changes), the previous agent's todos reset, model statuses
// cleared, retrospective mode on entering "retrospective". Edits run.meta.
Status EnterAgent(OpContext& ctx, Run& run, const std::string& to) {
  Json& m = run.meta;
  const std::string from = m["currentAgent"].get<std::string>();
  m["visitCounts"][to] = m["visitCounts"].value(to, int64_t{0}) + 1;
  Json& seq = m["agentSequence"];
  if (!seq.empty() && seq.back()["agent"] == to) {
    seq.back()["isCurrent"] = true;
  } else {
    for (Json& e : seq) e["isCurrent"] = false;
    seq.push_back({{"agent", to}, {"startTime", ctx.now}, {"isCurrent", true}});
  }
  if (from != to) {
    ASSIGN_OR_RETURN(std::vector<Task> todos, CurrentTodos(ctx.txn, run.id, from, false));
    for (const Task& t : todos) {
      RETURN_IF_ERROR(ArchiveTodo(ctx, t, "todos reset: " + from + " handed off to " + to));
    }
  }
  m["currentAgent"] = to;
  m["modelStatuses"] = Json::object();
  m["currentModel"] = "";
  if (to == "retrospective") m["interactionMode"] = "retrospective";
  return Status();
}

Status AppendProgress(OpContext& ctx, const std::string& run_id, const std::string& agent,
                      const std::string& description) {
  return AppendEvent(ctx, {.run_id = run_id,
                           .kind = "run.progress",
                           .summary = description,
                           .payload = {{"agent", agent}, {"description", description}}})
      .status();
}

// The open todos of "todos" as sgai lists them.
Json TodoList(const std::vector<Task>& todos) {
  Json list = Json::array();
  for (const Task& t : todos) {
    if (IsOpenTodo(t)) list.push_back(TodoToSgai(t));
  }
  return list;
}

std::string DescribeTodos(const Json& open) {
  std::string out;
  for (const Json& t : open) {
    if (!out.empty()) out += ", ";
    out += t["id"].get<std::string>() + " \"" + t["content"].get<std::string>() + "\" (" +
           t["status"].get<std::string>() + ")";
  }
  return out;
}

bool Falsish(const Json& v) {
  if (v.is_boolean()) return !v.get<bool>();
  return false;
}

std::string GateFailureMessage(const std::string& script, const std::string& output) {
  return "# Completion gate script failed.\nThe completionGateScript `" + script +
         "` failed, so the workflow cannot complete yet. Fix the problems and try again.\n\n"
         "Output:\n```\n" +
         output + "\n```\n";
}

// A completion gate that reverts "complete": which, why and to what.
struct Revert {
  std::string gate;
  std::string reason;
  std::string status;
  std::string message_to;  // empty: no message
  std::string message_from;
  std::string message_body;
  std::string redirect_to;  // unread messages: the agent who works next
};

struct GateCheck {
  bool needs_script = false;
  Revert revert;  // gate empty: complete may stand
};

// sgai-RICH's handleCompleteStatus after the downgrade, in its order.
Result<GateCheck> CheckCompletionGates(OpContext& ctx, const Run& run, const SgaiFlow& flow,
                                       const Json& in) {
  GateCheck check;
  const Json& m = run.meta;
  const std::string& run_id = run.id;
  ASSIGN_OR_RETURN(std::vector<Task> own, CurrentTodos(ctx.txn, run_id, "coordinator", false));
  ASSIGN_OR_RETURN(std::vector<Task> project, CurrentTodos(ctx.txn, run_id, "", true));
  Json open = TodoList(own);
  for (const Json& t : TodoList(project)) open.push_back(t);
  if (!open.empty()) {
    check.revert = {"open_todos",
                    std::to_string(open.size()) + " open todo(s): " + DescribeTodos(open),
                    "working",
                    "coordinator",
                    "environment",
                    "# Pending TODO items.\nYou have " + std::to_string(open.size()) +
                        " pending TODO items. Please complete them before marking workflow "
                        "complete.\n"};
    return check;
  }
  const std::string script = m.value("completionGateScript", "");
  if (!script.empty()) {
    // A result counts only for the script and folder the run has now (a
    // resume may have changed them while the script ran).
    const Json gate = in.value("gate", Json::object());
    if (!gate.is_object() || gate.value("script", "") != script ||
        gate.value("workdir", "") != m.value("workdir", "")) {
      check.needs_script = true;
      return check;
    }
    if (!gate.value("ok", false)) {
      const std::string output = gate.value("output", "");
      check.revert = {"completion_gate_script",
                      "completionGateScript `" + script + "` exited " +
                          std::to_string(gate.value("exit_code", -1)),
                      "working",
                      "coordinator",
                      "environment",
                      GateFailureMessage(script, output)};
      return check;
    }
  }
  const bool retrospective = !Falsish(m.value("retrospective", Json(true)));
  const Json& visits = m["visitCounts"];
  for (const char* agent : {"project-critic-council", "retrospective"}) {
    if (!retrospective || !flow.HasAgent(agent) || visits.value(agent, int64_t{0}) > 0) continue;
    const bool council = std::string(agent) == "project-critic-council";
    check.revert = {council ? "project_critic_council" : "retrospective",
                    std::string(agent) + " has not run yet",
                    "agent-done",
                    agent,
                    "coordinator",
                    council ? "All work is complete and verified. Please return your final "
                              "completion verdict before retrospective begins."
                            : "All work is complete and verified. Please run the retrospective "
                              "analysis."};
    return check;
  }
  ASSIGN_OR_RETURN(std::string pending, FirstUnreadRecipient(ctx.txn, run_id));
  if (!pending.empty()) {
    check.revert = {
        "unread_messages", "unread message(s) for " + pending, "working", "", "", "", pending};
  }
  return check;
}

Result<bool> HasUnreadFor(Txn& txn, const std::string& run_id, const std::string& agent) {
  ASSIGN_OR_RETURN(std::vector<std::string> recipients, ListUnreadSgaiRecipients(txn, run_id));
  for (const std::string& to : recipients) {
    if (to.substr(0, to.find(':')) == agent) return true;
  }
  return false;
}

// Applies a revert: message, redirect, ledger event. Edits "run".
Status ApplyRevert(OpContext& ctx, Run& run, const Revert& r) {
  const std::string run_id = run.id;
  if (!r.message_to.empty()) {
    // sgai does not pile up redirect messages an agent has not read yet.
    ASSIGN_OR_RETURN(bool unread, HasUnreadFor(ctx.txn, run_id, r.message_to));
    if (!unread || r.message_from == "environment") {
      RETURN_IF_ERROR(
          SendRunMessage(ctx, run, r.message_from, r.message_to, r.message_body).status());
    }
  }
  Json payload = {{"gate", r.gate}, {"reason", r.reason}, {"status", r.status}};
  if (!r.redirect_to.empty()) {
    const std::string from = run.meta["currentAgent"].get<std::string>();
    RETURN_IF_ERROR(EnterAgent(ctx, run, r.redirect_to));
    payload["redirect_to"] = r.redirect_to;
    RETURN_IF_ERROR(
        AppendEvent(
            ctx, {.run_id = run_id,
                  .kind = "sgai.handoff",
                  .summary = from + " -> " + r.redirect_to + " (unread messages before completion)",
                  .payload = {{"from", from},
                              {"to", r.redirect_to},
                              {"reason", "unread_message"},
                              {"visit_count", run.meta["visitCounts"][r.redirect_to]}}})
            .status());
  }
  return AppendEvent(ctx, {.run_id = run_id,
                           .kind = "sgai.gate",
                           .summary = "complete reverted to " + r.status + ": " + r.reason,
                           .payload = payload})
      .status();
}

Result<Json> ApplyAsCaller(OpContext& ctx, const Json& in, const Actor& caller) {
  ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, in.at("run").get<std::string>()));
  const std::string run_id = run.id;
  const std::string agent = SgaiAgentName(caller);
  const std::string from = run.status;
  const std::string requested = in.at("status").get<std::string>();
  const bool coordinator = IsSgaiCoordinator(caller);
  Json out = {{"run_id", run_id},    {"requested_status", requested},
              {"downgraded", false}, {"status_preserved", false},
              {"reverted", Json()},  {"gate_needed", false}};
  std::string status = requested;
  if (from == "waiting-for-human") {
    status = from;  // sgai: "status preserved" while a question is open
    out["status_preserved"] = true;
  } else {
    if (status == "complete" && !coordinator) {
      status = "agent-done";
      out["downgraded"] = true;
    }
    if ((status == "agent-done" || status == "complete") && !coordinator) {
      ASSIGN_OR_RETURN(std::vector<Task> todos, CurrentTodos(ctx.txn, run_id, agent, false));
      Json open = TodoList(todos);
      if (!open.empty()) {
        return Status(StatusCode::kFailedPrecondition,
                      "status: " + agent + " has " + std::to_string(open.size()) +
                          " open todo(s); complete or cancel them before " + status + ": " +
                          DescribeTodos(open),
                      Json{{"open_todos", open}});
      }
    }
  }
  std::optional<Revert> revert;
  if (status == "complete" && from == "complete") {
    out["status"] = status;
    out["task"] = run.meta.value("task", Json(""));
    return out;  // already complete: nothing to check, nothing to run
  }
  if (status == "complete") {
    RETURN_IF_ERROR(CheckRunTransition(ctx, run, status, caller).WithPrefix("status"));
    ASSIGN_OR_RETURN(SgaiFlow flow, FlowOf(run));
    ASSIGN_OR_RETURN(GateCheck check, CheckCompletionGates(ctx, run, flow, in));
    if (check.needs_script) {
      return Json{{"run_id", run_id},
                  {"gate_needed", true},
                  {"script", run.meta["completionGateScript"]},
                  {"workdir", run.meta["workdir"]}};
    }
    if (!check.revert.gate.empty()) {
      revert = check.revert;
      status = check.revert.status;
    }
  }
  RETURN_IF_ERROR(CheckRunTransition(ctx, run, status, caller).WithPrefix("status"));
  Json& m = run.meta;
  if (in.contains("task")) m["task"] = in["task"];
  if (!out["status_preserved"].get<bool>() && (status == "agent-done" || status == "complete")) {
    m["task"] = "";
  }
  run.status = status;
  if (revert) {
    RETURN_IF_ERROR(ApplyRevert(ctx, run, *revert));
    out["reverted"] = {
        {"gate", revert->gate}, {"reason", revert->reason}, {"status", revert->status}};
    if (!revert->redirect_to.empty()) out["reverted"]["redirect_to"] = revert->redirect_to;
  }
  RETURN_IF_ERROR(StoreRun(ctx, run));
  const std::string progress = in.value("add_progress", "");
  if (!progress.empty()) RETURN_IF_ERROR(AppendProgress(ctx, run_id, agent, progress));
  std::string summary = agent + ": " + from + " -> " + status;
  if (out["downgraded"].get<bool>())
    summary += " (complete downgraded: only the coordinator completes)";
  if (out["status_preserved"].get<bool>()) summary += " (status preserved while waiting)";
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "sgai.workflow_state",
                                    .summary = summary,
                                    .payload = {{"agent", agent},
                                                {"from", from},
                                                {"to", status},
                                                {"requested", requested},
                                                {"downgraded", out["downgraded"]},
                                                {"status_preserved", out["status_preserved"]},
                                                {"reverted", out["reverted"]},
                                                {"task", m["task"]}}})
                      .status());
  out["status"] = status;
  out["task"] = m["task"];
  return out;
}

}  // namespace

bool IsSgaiCoordinator(const Actor& actor) {
  // By role only: an agent calling itself "coordinator" is still an agent.
  return actor.role == "coordinator" || actor.role == "admin";
}

std::string SgaiAgentName(const Actor& actor) {
  return IsSgaiCoordinator(actor) ? "coordinator" : actor.id;
}

Status ApplySgaiWorkGate(OpContext& ctx, const Question& question, const Json& answer,
                         Json& payload) {
  if (!question.work_gate || !question.run_id) return Status();
  bool approved = false;
  for (const Json& choice : answer["answers"][0]) approved = approved || choice == kWorkGateApproval;
  if (!approved) return Status();
  ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, *question.run_id));
  if (run.profile != "sgai") return Status();
  run.meta["interactionMode"] = "building";
  payload["interaction_mode"] = "building";
  return StoreRun(ctx, run);
}

Result<Json> SgaiApplyWorkflowState(OpContext& ctx, const Json& in) {
  const Json& c = in.at("caller");
  const Actor caller{c.at("id").get<std::string>(), c.at("role").get<std::string>()};
  RETURN_IF_ERROR(CheckRole(caller.role).WithPrefix("caller.role"));
  // The change is the caller's: its events carry the caller, not baton.
  OpContext as_caller{.txn = ctx.txn,
                      .actor = caller,
                      .machines = ctx.machines,
                      .op = ctx.op,
                      .now = ctx.now,
                      .now_ms = ctx.now_ms,
                      .store = ctx.store,
                      .paths = ctx.paths,
                      .hooks = ctx.hooks};
  Result<Json> applied = ApplyAsCaller(as_caller, in, caller);
  // The runs it changed are the operation's: their mirrors are rewritten.
  ctx.touched_runs.insert(as_caller.touched_runs.begin(), as_caller.touched_runs.end());
  ctx.touched_runs_without_event.insert(as_caller.touched_runs_without_event.begin(),
                                       as_caller.touched_runs_without_event.end());
  return applied;
}

Result<Json> SgaiNextAgent(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, in.at("run").get<std::string>()));
  ASSIGN_OR_RETURN(SgaiFlow flow, FlowOf(run));
  ASSIGN_OR_RETURN(std::string unread, FirstUnreadRecipient(ctx.txn, run.id));
  const std::string current = run.meta["currentAgent"].get<std::string>();
  NextAgent next = PickNextAgent(flow, current, unread);
  return Json{{"run_id", run.id},
              {"agent", next.agent},
              {"reason", next.reason},
              {"current", current},
              {"first_unread_recipient", unread}};
}

Result<Json> SgaiHandoff(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, in.at("run").get<std::string>()));
  const std::string run_id = run.id;
  const std::string status = run.status;
  if (status != "agent-done" && status != "working") {
    return FailedPreconditionError("run: run " + run_id + " is " + status +
                                   "; hand-offs happen from agent-done or working");
  }
  ASSIGN_OR_RETURN(SgaiFlow flow, FlowOf(run));
  const std::string from = run.meta["currentAgent"].get<std::string>();
  std::string to;
  std::string reason = "explicit";
  if (in.contains("to")) {
    to = in["to"].get<std::string>();
    if (!flow.HasAgent(to)) {
      std::string agents;
      for (const std::string& a : flow.agents()) agents += (agents.empty() ? "" : ", ") + a;
      return InvalidArgumentError("to: \"" + to + "\" is not an agent of the flow (" + agents +
                                  ")");
    }
  } else {
    ASSIGN_OR_RETURN(std::string unread, FirstUnreadRecipient(ctx.txn, run_id));
    NextAgent next = PickNextAgent(flow, from, unread);
    to = next.agent;
    reason = next.reason;
  }
  RETURN_IF_ERROR(CheckRunTransition(ctx, run, "working", ctx.actor).WithPrefix("run"));
  RETURN_IF_ERROR(EnterAgent(ctx, run, to));
  run.status = "working";
  RETURN_IF_ERROR(StoreRun(ctx, run));
  const Json visits = run.meta["visitCounts"][to];
  RETURN_IF_ERROR(
      AppendEvent(ctx, {.run_id = run_id,
                        .kind = "sgai.handoff",
                        .summary = "Handing off to " + to + " (from " + from + ", " + reason + ")",
                        .payload = {{"from", from},
                                    {"to", to},
                                    {"reason", reason},
                                    {"visit_count", visits},
                                    {"status_before", status}}})
          .status());
  return Json{{"run_id", run_id}, {"from", from},          {"to", to},
              {"reason", reason}, {"visit_count", visits}, {"status", "working"}};
}

Result<Json> SgaiModelStatus(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, in.at("run").get<std::string>()));
  Json& m = run.meta;
  const std::string agent = in.value("agent", m["currentAgent"].get<std::string>());
  const std::string key = agent + ":" + in.at("model").get<std::string>();
  const std::string status = in.at("status").get<std::string>();
  m["modelStatuses"][key] = status;
  m["currentModel"] = key;
  RETURN_IF_ERROR(StoreRun(ctx, run));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run.id,
                                    .kind = "sgai.model_status",
                                    .summary = key + " " + status,
                                    .payload = {{"model", key}, {"status", status}}})
                      .status());
  return Json{{"run_id", run.id}, {"modelStatuses", m["modelStatuses"]}, {"currentModel", key}};
}

Result<Json> SgaiSet(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, in.at("run").get<std::string>()));
  Json& m = run.meta;
  Json changed = Json::object();
  if (in.contains("interaction_mode")) {
    // In sgai "building" comes only from the human approving the work gate
    // (question.answer); the coordinator may not skip it.
    if (ctx.actor.role != "human" && ctx.actor.role != "admin") {
      return PermissionDeniedError(
          "interaction_mode: only a human changes the interaction mode (the coordinator gets "
          "\"building\" from an approved work gate)");
    }
    changed["interactionMode"] = in["interaction_mode"];
  }
  if (in.contains("session_id")) changed["sessionId"] = in["session_id"];
  if (in.contains("summary")) {
    changed["summary"] = in["summary"];
    changed["summaryManual"] = in.value("summary_manual", ctx.actor.role == "human");
  }
  if (changed.empty()) {
    return InvalidArgumentError(
        "session_id: give at least one of session_id, interaction_mode, "
        "summary");
  }
  for (auto it = changed.begin(); it != changed.end(); ++it) m[it.key()] = it.value();
  RETURN_IF_ERROR(StoreRun(ctx, run));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run.id,
                                    .kind = "sgai.set",
                                    .summary = "set " + changed.dump(),
                                    .payload = changed})
                      .status());
  Json out = changed;
  out["run_id"] = run.id;
  return out;
}

SgaiGateResult RunCompletionGate(const std::string& script, const std::string& workdir,
                                 int64_t timeout_ms) {
  SubprocessOptions options;
  // $0 is the folder, $1 the script: no quoting of either is needed.
  options.argv = {"/bin/sh", "-c", "cd -- \"$0\" || exit 127; exec 2>&1; eval \"$1\"",
                  workdir.empty() ? "." : workdir, script};
  options.timeout_ms = timeout_ms;
  SgaiGateResult gate;
  Result<SubprocessResult> r = RunSubprocess(options);
  if (!r.ok()) {
    gate.output = r.status().message();
    return gate;
  }
  gate.exit_code = r->exit_code;
  gate.ok = r->exit_code == 0;
  gate.output = r->out + r->err;
  if (gate.output.size() > kMaxGateOutput) gate.output.resize(kMaxGateOutput);
  // Scripts may print anything; the store keeps valid UTF-8 only.
  gate.output = Json::parse(Json(gate.output).dump(-1, ' ', false, Json::error_handler_t::replace))
                    .get<std::string>();
  return gate;
}

}  // namespace baton
