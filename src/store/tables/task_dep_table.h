// File: task_dep_table.h
//
// The task_deps table: edges between tasks (a task depends on another, by
// dep_type). Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_TASK_DEP_TABLE_H_
#define BATON_SRC_STORE_TABLES_TASK_DEP_TABLE_H_

#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

// h19-interchange:

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

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_TASK_DEP_TABLE_H_
