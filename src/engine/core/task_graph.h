// File: task_graph.h
//
// The work graph of DESIGN.md §3 and §6: dependency edges between tasks,
// readiness under trigger rules, and claims under leases with fencing.
//
// Edges. A task "depends_on" another, or "blocks" another (stored the other
// way round: the blocked task depends on the blocker), or "relates_to" it
// (informational, never gates). Self-edges, unknown tasks, tasks of another
// project and edges that would close a cycle (named in the error) are refused.
//
// Readiness. A task in `blocked` or `ready` is re-evaluated whenever one of its
// gating dependencies changes status — in the same transaction, visiting only
// that dependency's dependents. Its trigger rule decides:
//   all_success (default)  every dependency succeeded (done/completed);
//                          a failed or cancelled one keeps it blocked with
//                          blocked_reason "upstream_failed: <id> is <status>"
//   all_done               every dependency finished, however it ended
//   none_failed            every dependency succeeded or was cancelled;
//                          a failed one blocks it as upstream_failed
// A task blocked by hand (task.set_status) is left alone.
//
// Claims. task.claim moves a `ready` task to `in_progress` under a lease:
// owner, a new epoch (one more than any before on that task), expiry. A lease
// whose expiry has passed may be claimed by another agent. Heartbeat,
// complete, fail and release must present the epoch of the caller's lease;
// a caller whose lease was taken over gets Aborted and changes nothing.

#ifndef BATON_SRC_ENGINE_CORE_TASK_GRAPH_H_
#define BATON_SRC_ENGINE_CORE_TASK_GRAPH_H_

#ifndef BATON_ENGINE_ROOM_CORE
#error "engine/core/ is above this target: link baton_engine_core (src/engine/README.md)"
#endif

#include <string>
#include <string_view>

#include "engine/ledger/op_context.h"
#include "store/tables/task_table.h"

namespace baton {

inline constexpr int64_t kDefaultLeaseMillis = 600000;  // Genie's checkout_timeout_ms

// How a status ended, by its name across the machines' vocabularies.
enum class Outcome { kPending, kSuccess, kFailed, kCancelled };
Outcome OutcomeOf(std::string_view status);

// Edges. in: {task, on, type?}. Returns {task, on, type, task_status}.
Result<Json> AddDependency(OpContext& ctx, const Json& in);
Result<Json> RemoveDependency(OpContext& ctx, const Json& in);
// {task, depends_on[{id, type, status}], dependents[{id, type, status}]}
Result<Json> ListDependencies(OpContext& ctx, const Json& in);

// Adds one gating edge "task depends on dep" with the checks above, without
// re-evaluating "task". Used by task.create and wishes.
Status InsertDependency(OpContext& ctx, const std::string& task_id,
                        const std::string& dep_id, const std::string& type);
// Moves "task_id" between blocked and ready as its dependencies and trigger
// rule say (through its machine), recording the reason. No-op for tasks in
// other statuses or blocked by hand.
Status EvaluateReadiness(OpContext& ctx, const std::string& task_id);
// Call after any status change of "task_id": re-evaluates its dependents.
Status OnTaskStatusChanged(OpContext& ctx, const std::string& task_id,
                           const std::string& from, const std::string& to);

// Changes a task's status through its machine, bumps its version, appends
// "task.status" and re-evaluates dependents; the columns "also" names are
// written with the status.
Status ChangeTaskStatus(OpContext& ctx, const Task& task, const std::string& to,
                        const std::string& reason, const TaskAlsoSet& also = {});

// Claims.
Result<Json> ClaimTask(OpContext& ctx, const Json& in);
Result<Json> HeartbeatTask(OpContext& ctx, const Json& in);
Result<Json> CompleteTask(OpContext& ctx, const Json& in);
Result<Json> FailTask(OpContext& ctx, const Json& in);
Result<Json> ReleaseTask(OpContext& ctx, const Json& in);

// Returns an in-progress task to `ready` and clears its lease, whoever holds
// it (reconciler, team disband). The epoch is kept, so the old holder's
// later writes are refused.
Status ReturnTaskToReady(OpContext& ctx, const std::string& task_id,
                         const std::string& reason);
// ReturnTaskToReady for every task leased by "agent_id". Returns their ids.
Result<std::vector<std::string>> ReleaseLeasesOf(OpContext& ctx, const std::string& agent_id,
                                                 const std::string& reason);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_CORE_TASK_GRAPH_H_
