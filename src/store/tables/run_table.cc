#include "store/tables/run_table.h"

#include <utility>

#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {
namespace {

// "SELECT <columns> FROM runs WHERE ..." with every filter but the status,
// its parameters appended to "params".
std::string SelectFilteredRuns(const RunFilter& filter, std::vector<SqlValue>& params) {
  std::string sql = std::string("SELECT ") + kRunColumns + " FROM runs WHERE 1 = 1";
  if (filter.project_id) {
    sql += " AND project_id = ?";
    params.push_back(SqlText(*filter.project_id));
  }
  if (filter.profile) {
    sql += " AND profile = ?";
    params.push_back(SqlText(*filter.profile));
  }
  if (filter.text) {
    std::string pattern;
    for (char c : *filter.text) {
      if (c == '%' || c == '_' || c == '\\') pattern += '\\';
      pattern += c;
    }
    sql += " AND (id LIKE ? ESCAPE '\\' OR title LIKE ? ESCAPE '\\')";
    params.push_back(SqlText("%" + pattern + "%"));
    params.push_back(SqlText("%" + pattern + "%"));
  }
  return sql;
}

}  // namespace

const char kRunColumns[] =
    "id, project_id, profile, machine, status, title, cursor, cursor_index, "
    "context, meta, version, created_at, updated_at";

Run RunFromRow(const Row& r) {
  Run run;
  run.id = r.Str(0);
  run.project_id = TextOrNone(r, 1);
  run.profile = r.Str(2);
  run.machine = r.Str(3);
  run.status = r.Str(4);
  run.title = r.Str(5);
  run.cursor = TextOrNone(r, 6);
  if (!r.IsNull(7)) run.cursor_index = r.Int(7);
  run.context = JsonOr(r, 8, Json::object());
  run.meta = JsonOr(r, 9, Json::object());
  run.version = r.Int(10);
  run.created_at = r.Str(11);
  run.updated_at = r.Str(12);
  return run;
}

Result<Run> LoadRunRow(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?", {SqlText(id)}));
  if (rows.empty()) return NotFoundError("run: no run with id \"" + id + "\"");
  return RunFromRow(rows[0]);
}

Status InsertRunRow(Txn& txn, const Run& run) {
  return txn
      .Exec(
          "INSERT INTO runs (id, project_id, profile, machine, status, title, cursor, "
          "cursor_index, context, meta, version, created_at, updated_at) VALUES "
          "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
          {SqlText(run.id), SqlNullable(run.project_id),
           SqlText(run.profile), SqlText(run.machine), SqlText(run.status), SqlText(run.title),
           SqlNullable(run.cursor),
           SqlNullable(run.cursor_index),
           SqlText(CanonicalJson(run.context)), SqlText(CanonicalJson(run.meta)),
           SqlText(run.created_at), SqlText(run.updated_at)})
      .status();
}

Status StoreRunRow(Txn& txn, const std::string& id, const std::string& status, const Json& context,
                   const Json& meta, const std::string& now) {
  return txn
      .Exec(
          "UPDATE runs SET status = ?, context = ?, meta = ?, "
          "version = version + 1, updated_at = ? WHERE id = ?",
          {SqlText(status), SqlText(CanonicalJson(context)), SqlText(CanonicalJson(meta)),
           SqlText(now), SqlText(id)})
      .status();
}

Result<std::optional<int64_t>> BumpRunVersion(Txn& txn, const std::string& id,
                                              const std::string& now,
                                              std::optional<int64_t> expect_version) {
  std::string sql = "UPDATE runs SET version = version + 1, updated_at = ? WHERE id = ?";
  std::vector<SqlValue> params = {SqlText(now), SqlText(id)};
  if (expect_version) {
    sql += " AND version = ?";
    params.push_back(SqlInt(*expect_version));
  }
  sql += " RETURNING version";
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  if (rows.empty()) return std::optional<int64_t>();
  return std::optional<int64_t>(rows[0].Int(0));
}

Result<std::vector<Run>> ListRunRows(Txn& txn, const RunFilter& filter) {
  std::vector<SqlValue> params;
  std::string sql = SelectFilteredRuns(filter, params);
  if (filter.status) {
    sql += " AND status = ?";
    params.push_back(SqlText(*filter.status));
  }
  // Times are milliseconds: changes within one are told apart by version.
  sql += filter.by_activity ? " ORDER BY updated_at DESC, version DESC, created_at DESC, id LIMIT ?"
                            : " ORDER BY created_at, id LIMIT ?";
  params.push_back(SqlInt(filter.limit));
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  std::vector<Run> runs;
  runs.reserve(rows.size());
  for (const Row& r : rows) runs.push_back(RunFromRow(r));
  return runs;
}

Result<std::map<std::string, int64_t>> CountRunsByStatus(Txn& txn, const RunFilter& filter) {
  std::vector<SqlValue> params;
  const std::string sql = SelectFilteredRuns(filter, params);
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT status, COUNT(*) FROM (" + sql + ") GROUP BY status", params));
  std::map<std::string, int64_t> counts;
  for (const Row& r : rows) counts[r.Str(0)] = r.Int(1);
  return counts;
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

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

Status UpdateImportedRun(Txn& txn, const Run& run) {
  return txn
      .Exec(
          "UPDATE runs SET status = ?, title = ?, cursor = ?, cursor_index = ?, context = ?, "
          "meta = ?, version = version + 1, updated_at = ? WHERE id = ?",
          {SqlText(run.status), SqlText(run.title), SqlNullable(run.cursor),
           SqlNullable(run.cursor_index),
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

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

Result<std::vector<RunStatusForReplay>> ListRunStatusesForReplay(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT id, status FROM runs ORDER BY id", {}));
  std::vector<RunStatusForReplay> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Str(0), r.Str(1)});
  return out;
}

Status SetSinfoniaRunCursor(Txn& txn, const std::string& run_id, const std::string& step_key,
                            int64_t index, const std::string& now) {
  return txn
      .Exec(
          "UPDATE runs SET cursor = ?, cursor_index = ?, version = version + 1, "
          "updated_at = ? WHERE id = ?",
          {SqlTextOrNull(step_key), SqlInt(index), SqlText(now), SqlText(run_id)})
      .status();
}

// ---- What engine/graph asks ----

Status StoreGraphRunRow(Txn& txn, const std::string& id, const std::string& status,
                        const std::optional<std::string>& cursor,
                        std::optional<int64_t> cursor_index, const Json& context,
                        const Json& meta, const std::string& now) {
  return txn
      .Exec("UPDATE runs SET status = ?, cursor = ?, cursor_index = ?, context = ?, meta = ?, "
            "version = version + 1, updated_at = ? WHERE id = ?",
            {SqlText(status), SqlNullable(cursor),
             SqlNullable(cursor_index), SqlText(CanonicalJson(context)),
             SqlText(CanonicalJson(meta)), SqlText(now), SqlText(id)})
      .status();
}

Result<std::vector<std::string>> ListGraphForkMetaTexts(Txn& txn, const std::string& run_id) {
  // Runs store their meta as canonical JSON, so a fork's meta contains this
  // text; "_" in an id matches any character, which only widens.
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT meta FROM runs WHERE profile = 'graph' AND meta LIKE ?",
                             {SqlText("%\"forked_from\":{\"run\":" + CanonicalJson(run_id) +
                                      ",%")}));
  return FirstColumn(rows);
}

}  // namespace baton
