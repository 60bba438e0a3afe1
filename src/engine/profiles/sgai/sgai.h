// File: sgai.h
//
// The sgai profile (docs/profiles/sgai.md): sgai's workflow (.sgai/state.json
// at sgai-RICH) kept in baton's store. A run with profile "sgai" (machine
// sgai.run) is one workflow; its profile fields live in runs.meta with sgai's
// camelCase names (goalChecksum, flow, models, completionGateScript,
// retrospective, interactionMode, currentAgent, visitCounts, agentSequence,
// sessionId, summary, summaryManual, modelStatuses, currentModel, task,
// workdir). Todos are tasks of kind "todo" (assignee = the agent whose list it
// is) and "project_todo" (machine sgai.todo); a todo on the current list has
// key "todo:<agent>:<id>" / "project_todo:<id>", one taken off the list keeps
// its row with a NULL key and meta.archived. Progress is the run.progress
// ledger event; messages are the mailbox rows with the run's id; usage rows
// are the usage table.
//
// Callers map to sgai agent names: the coordinator is any caller with role
// coordinator or admin, or id "coordinator"; everyone else is the agent named
// by their id. Every function runs inside ctx.txn, appends its ledger events
// there and changes nothing when it fails.

#ifndef BATON_SRC_ENGINE_PROFILES_SGAI_SGAI_H_
#define BATON_SRC_ENGINE_PROFILES_SGAI_SGAI_H_

#ifndef BATON_ENGINE_ROOM_PROFILES_SGAI
#error "engine/profiles/sgai/ is above this target: link baton_engine_sgai (src/engine/README.md)"
#endif

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ledger/op_context.h"
#include "model/question.h"
#include "model/run.h"
#include "model/task.h"

namespace baton {

bool IsSgaiCoordinator(const Actor& actor);
// "coordinator" for the coordinator, else the caller's id.
std::string SgaiAgentName(const Actor& actor);

// sgai.start: {goal_file | goal, workdir?, project?, run?, fresh?,
// interaction_mode?}. Reads GOAL.md ("@file" flows resolved inside the
// GOAL.md folder), then resumes the run named by "run" or the latest sgai run
// of the same workdir and project when its goalChecksum equals the new body
// checksum and its status is working, agent-done or waiting-for-human;
// otherwise (or with "fresh") creates a new run, keeping only the old run's
// interactionMode. Returns {run, resumed, reason, previous_run}.
Result<Json> SgaiStart(OpContext& ctx, const Json& in);

// sgai.apply_workflow_state (internal, called by the update_workflow_state
// procedure as baton itself): {run, caller{id, role}, status, task?,
// add_progress?, gate?{ok, exit_code, output}}. Applies sgai-RICH's rules as
// the caller (events are the caller's). When the completion gate script must
// run and "gate" is missing, changes nothing and returns {gate_needed: true,
// script, workdir}. Otherwise returns {run_id, status, requested_status,
// downgraded, status_preserved, reverted: null | {gate, reason, status}, task}.
Result<Json> SgaiApplyWorkflowState(OpContext& ctx, const Json& in);

// The hook on question.answered (engine/core/engine_hooks.h): approving an sgai
// run's work gate moves its workflow to building, and says so in the
// question.answered event ("interaction_mode").
Status ApplySgaiWorkGate(OpContext& ctx, const Question& question, const Json& answer,
                         Json& payload);

// sgai.next_agent: {run} -> {agent, reason, current, first_unread_recipient}.
Result<Json> SgaiNextAgent(OpContext& ctx, const Json& in);
// sgai.handoff: {run, to?} -> {run_id, from, to, reason, visit_count, status}.
Result<Json> SgaiHandoff(OpContext& ctx, const Json& in);
// sgai.model_status: {run, model, status, agent?}.
Result<Json> SgaiModelStatus(OpContext& ctx, const Json& in);
// sgai.set: {run, session_id?, interaction_mode?, summary?, summary_manual?}.
Result<Json> SgaiSet(OpContext& ctx, const Json& in);

// sgai_state.cc
// sgai.todo_write: {run, todos[{id, content, status, priority}], project?}.
Result<Json> SgaiTodoWrite(OpContext& ctx, const Json& in);
// sgai.todo_read: {run, project?, agent?} -> {todos}.
Result<Json> SgaiTodoRead(OpContext& ctx, const Json& in);
// sgai.usage_add: one usage row -> {run_id, seq, agent, cost}.
Result<Json> SgaiUsageAdd(OpContext& ctx, const Json& in);
// sgai.state: the workflow in .sgai/state.json's shape.
Result<Json> SgaiState(OpContext& ctx, const Json& in);

// What the completion gate script did (RunCompletionGate).
struct SgaiGateResult {
  bool ok = false;
  int exit_code = -1;
  std::string output;  // stdout and stderr interleaved, at most 64 KiB
};
// Runs `sh -c script` in "workdir" with stdout and stderr merged; a script
// past "timeout_ms" is killed and fails. Blocks: call outside transactions.
SgaiGateResult RunCompletionGate(const std::string& script, const std::string& workdir,
                                 int64_t timeout_ms);

// Helpers shared by sgai.cc and sgai_state.cc.
namespace sgai_internal {

// The run, NotFound / InvalidArgument unless it exists with profile sgai.
// Its meta gets sgai's defaults for missing keys.
Result<Run> LoadSgaiRun(Txn& txn, const std::string& id);
// Todos on the current list of "agent" (kind todo) or the project list
// (project = true), in list order.
Result<std::vector<Task>> CurrentTodos(Txn& txn, const std::string& run_id,
                                       const std::string& agent, bool project);
bool IsOpenTodo(const Task& todo);
// {id, content, status, priority} of a todo, as sgai's todo lists show it.
Json TodoToSgai(const Task& todo);
// Takes "todo" off its list: cancels it if open, clears its key.
Status ArchiveTodo(OpContext& ctx, const Task& todo, const std::string& reason);
// The agent part ("a" of "a:model") of the first unread message's recipient
// in the run, or "".
Result<std::string> FirstUnreadRecipient(Txn& txn, const std::string& run_id);
// Inserts a message of "run" from "from" to "to" (no registration needed:
// sgai agents are names in the flow), with its message.sent event.
Result<std::string> SendRunMessage(OpContext& ctx, const Run& run, const std::string& from,
                                   const std::string& to, const std::string& body);

}  // namespace sgai_internal
}  // namespace baton

#endif  // BATON_SRC_ENGINE_PROFILES_SGAI_SGAI_H_
