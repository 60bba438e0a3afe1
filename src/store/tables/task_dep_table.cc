#include "store/tables/task_dep_table.h"

namespace baton {

// h19-interchange:

Result<std::vector<ExportedTaskDep>> ExportRunTaskDepRows(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT d.task_id, d.depends_on_id, d.dep_type FROM task_deps d "
                             "JOIN tasks t ON t.id = d.task_id WHERE t.run_id = ? "
                             "ORDER BY d.task_id, d.depends_on_id",
                             {SqlText(run_id)}));
  std::vector<ExportedTaskDep> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.task_id = r.Str(0), .depends_on_id = r.Str(1), .dep_type = r.Str(2)});
  }
  return out;
}

Status InsertImportedTaskDep(Txn& txn, const std::string& task_id,
                             const std::string& depends_on_id) {
  return txn
      .Exec(
          "INSERT INTO task_deps (task_id, depends_on_id, dep_type) "
          "VALUES (?, ?, 'depends_on') ON CONFLICT DO NOTHING",
          {SqlText(task_id), SqlText(depends_on_id)})
      .status();
}

}  // namespace baton
