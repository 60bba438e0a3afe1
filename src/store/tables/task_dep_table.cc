#include "store/tables/task_dep_table.h"

#include <algorithm>
#include "store/tables/row_values.h"

namespace baton {
namespace {

Result<std::vector<std::string>> QueryIds(Txn& txn, std::string_view sql, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, {SqlText(id)}));
  return FirstColumn(rows);
}

Result<std::vector<LinkedTask>> QueryLinked(Txn& txn, std::string_view sql, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, {SqlText(id)}));
  std::vector<LinkedTask> linked;
  linked.reserve(rows.size());
  for (const Row& r : rows) {
    linked.push_back({.id = r.Str(0), .type = r.Str(1), .status = r.Str(2)});
  }
  return linked;
}

}  // namespace

Result<std::vector<TaskDep>> ListTaskDepsOf(Txn& txn, const std::vector<std::string>& task_ids) {
  // Backends cap a statement's parameters (SQLite at 32766 by default).
  constexpr size_t kChunk = 500;
  std::vector<TaskDep> deps;
  for (size_t start = 0; start < task_ids.size(); start += kChunk) {
    std::string marks;
    std::vector<SqlValue> params;
    for (size_t i = start; i < std::min(task_ids.size(), start + kChunk); ++i) {
      marks += marks.empty() ? "?" : ", ?";
      params.push_back(SqlText(task_ids[i]));
    }
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     txn.Query("SELECT task_id, depends_on_id FROM task_deps WHERE task_id IN (" +
                                   marks + ") ORDER BY task_id, depends_on_id",
                               params));
    for (const Row& r : rows) deps.push_back({.task_id = r.Str(0), .depends_on_id = r.Str(1)});
  }
  return deps;
}

Result<std::vector<std::string>> GatingDependencyIds(Txn& txn, const std::string& task_id) {
  return QueryIds(txn,
                  "SELECT depends_on_id FROM task_deps WHERE task_id = ? AND "
                  "dep_type IN ('depends_on', 'blocks')",
                  task_id);
}

Result<std::vector<std::string>> GatingDependentIds(Txn& txn, const std::string& task_id) {
  return QueryIds(txn,
                  "SELECT task_id FROM task_deps WHERE depends_on_id = ? AND "
                  "dep_type IN ('depends_on', 'blocks')",
                  task_id);
}

Result<std::vector<TaskIdStatus>> GatingDependencyStatuses(Txn& txn, const std::string& task_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT t.id, t.status FROM task_deps d JOIN tasks t ON "
                             "t.id = d.depends_on_id WHERE d.task_id = ? AND "
                             "d.dep_type IN ('depends_on', 'blocks') ORDER BY t.id",
                             {SqlText(task_id)}));
  std::vector<TaskIdStatus> deps;
  deps.reserve(rows.size());
  for (const Row& r : rows) deps.push_back({.id = r.Str(0), .status = r.Str(1)});
  return deps;
}

Result<std::optional<std::string>> FindTaskDepType(Txn& txn, const std::string& task_id,
                                                   const std::string& depends_on_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT dep_type FROM task_deps WHERE task_id = ? AND "
                             "depends_on_id = ?",
                             {SqlText(task_id), SqlText(depends_on_id)}));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].Str(0));
}

Status InsertTaskDep(Txn& txn, const std::string& task_id, const std::string& depends_on_id,
                     const std::string& type) {
  return txn
      .Exec(
          "INSERT INTO task_deps (task_id, depends_on_id, dep_type) "
          "VALUES (?, ?, ?)",
          {SqlText(task_id), SqlText(depends_on_id), SqlText(type)})
      .status();
}

Result<bool> DeleteTaskDep(Txn& txn, const std::string& task_id, const std::string& depends_on_id,
                           const std::string& type) {
  ASSIGN_OR_RETURN(int64_t removed,
                   txn.Exec("DELETE FROM task_deps WHERE task_id = ? AND depends_on_id = ? "
                            "AND dep_type = ?",
                            {SqlText(task_id), SqlText(depends_on_id), SqlText(type)}));
  return removed > 0;
}

Result<std::vector<LinkedTask>> ListTaskDependencies(Txn& txn, const std::string& task_id) {
  return QueryLinked(txn,
                     "SELECT t.id, d.dep_type, t.status FROM task_deps d JOIN tasks t ON "
                     "t.id = d.depends_on_id WHERE d.task_id = ? ORDER BY t.id",
                     task_id);
}

Result<std::vector<LinkedTask>> ListTaskDependents(Txn& txn, const std::string& task_id) {
  return QueryLinked(txn,
                     "SELECT t.id, d.dep_type, t.status FROM task_deps d JOIN tasks t ON "
                     "t.id = d.task_id WHERE d.depends_on_id = ? ORDER BY t.id",
                     task_id);
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

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

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

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
