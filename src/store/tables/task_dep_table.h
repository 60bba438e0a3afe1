// File: task_dep_table.h
//
// The task_deps table: the edges of the work graph (engine/core/task_graph.h).
// A row says "task_id depends on depends_on_id" with its dep_type:
// "depends_on" and "blocks" gate readiness ("A blocks B" is stored as "B
// depends on A"), "relates_to" only informs. The reads that join tasks for
// the status of the task at the other end live here too. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_TASK_DEP_TABLE_H_
#define BATON_SRC_STORE_TABLES_TASK_DEP_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "store/tables/task_table.h"
#include "util/json_util.h"

namespace baton {

// One edge, as stored.
struct TaskDep {
  std::string task_id;
  std::string depends_on_id;
};

// The task at the other end of an edge: its id, the edge's type, its status.
struct LinkedTask {
  std::string id;
  std::string type;
  std::string status;
};

// The "depends_on" ids of every task in "task_ids" (any dep_type), by task
// id then dependency id; a statement per 500 ids.
Result<std::vector<TaskDep>> ListTaskDepsOf(Txn& txn, const std::vector<std::string>& task_ids);

// The tasks "task_id" depends on through a gating edge (depends_on, blocks).
Result<std::vector<std::string>> GatingDependencyIds(Txn& txn, const std::string& task_id);

// The tasks that depend on "task_id" through a gating edge.
Result<std::vector<std::string>> GatingDependentIds(Txn& txn, const std::string& task_id);

// The tasks "task_id" depends on through a gating edge, with their status, by id.
Result<std::vector<TaskIdStatus>> GatingDependencyStatuses(Txn& txn, const std::string& task_id);

// The type of the edge "task_id depends on depends_on_id", if there is one.
Result<std::optional<std::string>> FindTaskDepType(Txn& txn, const std::string& task_id,
                                                   const std::string& depends_on_id);

Status InsertTaskDep(Txn& txn, const std::string& task_id, const std::string& depends_on_id,
                     const std::string& type);

// Deletes the edge of "type"; false when there was none.
Result<bool> DeleteTaskDep(Txn& txn, const std::string& task_id, const std::string& depends_on_id,
                           const std::string& type);

// Every edge from "task_id" to what it depends on, and every edge to it from
// what depends on it, each with the other task's status, by that task's id.
Result<std::vector<LinkedTask>> ListTaskDependencies(Txn& txn, const std::string& task_id);
Result<std::vector<LinkedTask>> ListTaskDependents(Txn& txn, const std::string& task_id);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

// run.export: the edges from run "run_id"'s tasks, by task, then the task
// depended on.
struct ExportedTaskDep {
  std::string task_id;
  std::string depends_on_id;
  std::string dep_type;
};
Result<std::vector<ExportedTaskDep>> ExportRunTaskDepRows(Txn& txn, const std::string& run_id);

// run.import: task "task_id" depends on "depends_on_id" (kept when it
// already does).
Status InsertImportedTaskDep(Txn& txn, const std::string& task_id,
                             const std::string& depends_on_id);

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

// A Genie wish group's dependency: group task "task_id" depends on the task
// keyed "depends_on_key" (nullopt: a task without a key).
struct GenieGroupDependency {
  std::string task_id;
  std::optional<std::string> depends_on_key;
};
// The dependencies of run "run_id"'s tasks of "kind" (the wish's groups), by
// the position of the task depended on.
Result<std::vector<GenieGroupDependency>> ListGenieGroupDependencies(Txn& txn,
                                                                     const std::string& run_id,
                                                                     const std::string& kind);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_TASK_DEP_TABLE_H_
