#include "store/tables/task_dep_table.h"

#include "store/tables/row_values.h"

namespace baton {

// h19-ledger-profiles:

Result<std::vector<GenieGroupDependency>> ListGenieGroupDependencies(Txn& txn,
                                                                     const std::string& run_id,
                                                                     const std::string& kind) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT a.id, b.key FROM task_deps d "
                             "JOIN tasks a ON a.id = d.task_id "
                             "JOIN tasks b ON b.id = d.depends_on_id "
                             "WHERE a.run_id = ? AND a.kind = ? ORDER BY b.position",
                             {SqlText(run_id), SqlText(kind)}));
  std::vector<GenieGroupDependency> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Str(0), TextOrNone(r, 1)});
  return out;
}

}  // namespace baton
