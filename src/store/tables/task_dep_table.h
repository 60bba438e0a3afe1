// File: task_dep_table.h
//
// The task_deps table: one row per dependency of a task on another (its
// type, "depends_on" unless said). Portable SQL (? placeholders), so a
// second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_TASK_DEP_TABLE_H_
#define BATON_SRC_STORE_TABLES_TASK_DEP_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// h19-ledger-profiles:

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
