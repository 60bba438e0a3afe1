#include "store/tables/run_table.h"

#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

std::string InboxScopeSql(const InboxScope& scope, const std::string& alias,
                          std::vector<SqlValue>& params) {
  std::string sql;
  if (!scope.project_id.empty()) {
    sql += " AND " + alias + ".project_id = ?";
    params.push_back(SqlText(scope.project_id));
  }
  if (!scope.run_id.empty()) {
    sql += " AND " + alias + ".id = ?";
    params.push_back(SqlText(scope.run_id));
  }
  return sql;
}

std::optional<RunLabel> RunLabelAt(const Row& r, size_t at) {
  if (r.IsNull(at)) return std::nullopt;
  return RunLabel{.id = r.Str(at), .title = r.Str(at + 1), .profile = r.Str(at + 2)};
}

Status InsertImportedRun(Txn& txn, const ImportedRun& run) {
  return txn
      .Exec(
          "INSERT INTO runs (id, project_id, profile, machine, status, title, cursor, "
          "cursor_index, context, meta, version, created_at, updated_at) VALUES "
          "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
          {SqlText(run.id), SqlTextOrNull(run.project_id), SqlText(run.profile),
           SqlText(run.machine), SqlText(run.status), SqlText(run.title),
           run.cursor ? SqlText(*run.cursor) : SqlNull(),
           run.cursor_index ? SqlInt(*run.cursor_index) : SqlNull(),
           SqlText(CanonicalJson(run.context)), SqlText(CanonicalJson(run.meta)),
           SqlText(run.created_at), SqlText(run.updated_at)})
      .status();
}

Status UpdateImportedRun(Txn& txn, const ImportedRun& run) {
  return txn
      .Exec(
          "UPDATE runs SET status = ?, title = ?, cursor = ?, cursor_index = ?, context = ?, "
          "meta = ?, version = version + 1, updated_at = ? WHERE id = ?",
          {SqlText(run.status), SqlText(run.title), run.cursor ? SqlText(*run.cursor) : SqlNull(),
           run.cursor_index ? SqlInt(*run.cursor_index) : SqlNull(),
           SqlText(CanonicalJson(run.context)), SqlText(CanonicalJson(run.meta)),
           SqlText(run.updated_at), SqlText(run.id)})
      .status();
}

Result<std::vector<ExecutionReadyRun>> ListRunsReadyForExecutionForInbox(Txn& txn,
                                                                         const InboxScope& scope) {
  std::vector<SqlValue> params;
  const std::string where = InboxScopeSql(scope, "r", params);
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT r.id, r.title, r.profile, r.updated_at, r.meta, "
                             "r.status, r.version FROM runs r WHERE r.profile = "
                             "'stigmergy' AND r.status = 'READY_FOR_EXECUTION'" +
                                 where + " ORDER BY r.updated_at",
                             params));
  std::vector<ExecutionReadyRun> runs;
  runs.reserve(rows.size());
  for (const Row& r : rows) {
    runs.push_back({.id = r.Str(0),
                    .title = r.Str(1),
                    .profile = r.Str(2),
                    .updated_at = r.Str(3),
                    .meta = JsonOr(r, 4, Json::object()),
                    .status = r.Str(5),
                    .version = r.Int(6)});
  }
  return runs;
}

Result<int64_t> CountAllRunRows(Txn& txn) {
  ASSIGN_OR_RETURN(Row r, txn.QueryOne("SELECT COUNT(*) FROM runs", {}, "runs"));
  return r.Int(0);
}

Result<std::vector<OverviewRun>> ListRecentRunsForOverview(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, profile, machine, status, title, updated_at "
                             "FROM runs ORDER BY updated_at DESC LIMIT 200",
                             {}));
  std::vector<OverviewRun> runs;
  runs.reserve(rows.size());
  for (const Row& r : rows) {
    runs.push_back({.id = r.Str(0),
                    .profile = r.Str(1),
                    .machine = r.Str(2),
                    .status = r.Str(3),
                    .title = r.Str(4),
                    .updated_at = r.Str(5)});
  }
  return runs;
}

}  // namespace baton
