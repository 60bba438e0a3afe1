#include "store/tables/mirror_table.h"

#include "store/tables/row_values.h"

namespace baton {
namespace {

constexpr char kMirrorColumns[] = "path, run_id, format, last_error, failed_at, created_at";

MirrorRow MirrorFromRow(const Row& r) {
  return MirrorRow{.path = r.Str(0),
                   .run_id = r.Str(1),
                   .format = r.Str(2),
                   .last_error = TextOrNone(r, 3),
                   .failed_at = TextOrNone(r, 4),
                   .created_at = r.Str(5)};
}

Result<std::vector<MirrorRow>> QueryMirrors(Txn& txn, const std::string& rest, SqlParams params) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query(std::string("SELECT ") + kMirrorColumns + " FROM mirrors" + rest, params));
  std::vector<MirrorRow> mirrors;
  mirrors.reserve(rows.size());
  for (const Row& r : rows) mirrors.push_back(MirrorFromRow(r));
  return mirrors;
}

}  // namespace

Result<std::optional<MirrorRow>> LoadMirrorRow(Txn& txn, const std::string& path) {
  const SqlValue params[] = {SqlText(path)};
  ASSIGN_OR_RETURN(std::vector<MirrorRow> rows, QueryMirrors(txn, " WHERE path = ?", params));
  if (rows.empty()) return std::optional<MirrorRow>();
  return std::optional<MirrorRow>(std::move(rows[0]));
}

Result<std::vector<MirrorRow>> ListRunMirrorRows(Txn& txn, const std::string& run_id,
                                                 const std::optional<std::string>& path) {
  std::string where = " WHERE run_id = ?";
  std::vector<SqlValue> params = {SqlText(run_id)};
  if (path) {
    where += " AND path = ?";
    params.push_back(SqlText(*path));
  }
  return QueryMirrors(txn, where, params);
}

Result<std::vector<MirrorRow>> ListMirrorRows(Txn& txn, const std::optional<std::string>& run_id,
                                              std::optional<int64_t> limit) {
  std::string rest;
  std::vector<SqlValue> params;
  if (run_id) {
    rest += " WHERE run_id = ?";
    params.push_back(SqlText(*run_id));
  }
  rest += " ORDER BY created_at, path";
  if (limit) {
    rest += " LIMIT ?";
    params.push_back(SqlInt(*limit));
  }
  return QueryMirrors(txn, rest, params);
}

Result<std::vector<MirrorRow>> ListMirrorRowsOfRuns(Txn& txn,
                                                    const std::vector<std::string>& run_ids) {
  if (run_ids.empty()) return std::vector<MirrorRow>();
  std::string where = " WHERE run_id IN (";
  std::vector<SqlValue> params;
  for (size_t i = 0; i < run_ids.size(); ++i) {
    where += i == 0 ? "?" : ", ?";
    params.push_back(SqlText(run_ids[i]));
  }
  return QueryMirrors(txn, where + ") ORDER BY path", params);
}

Result<std::vector<std::string>> ListMirrorPaths(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT path FROM mirrors ORDER BY path", {}));
  return FirstColumn(rows);
}

Status UpsertMirrorRow(Txn& txn, const std::string& path, const std::string& run_id,
                       const std::string& format, const std::string& now) {
  return txn
      .Exec(
          "INSERT INTO mirrors (path, run_id, format, created_at) "
          "VALUES (?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET format = "
          "excluded.format, last_error = NULL, failed_at = NULL",
          {SqlText(path), SqlText(run_id), SqlText(format), SqlText(now)})
      .status();
}

Status DeleteMirrorRow(Txn& txn, const std::string& path) {
  return txn.Exec("DELETE FROM mirrors WHERE path = ?", {SqlText(path)}).status();
}

Status ClearMirrorError(Txn& txn, const std::string& path) {
  return txn
      .Exec(
          "UPDATE mirrors SET last_error = NULL, failed_at = NULL "
          "WHERE path = ?",
          {SqlText(path)})
      .status();
}

Status SetMirrorError(Txn& txn, const std::string& path, const std::string& error,
                      const std::string& failed_at) {
  return txn
      .Exec("UPDATE mirrors SET last_error = ?, failed_at = ? WHERE path = ?",
            {SqlText(error), SqlText(failed_at), SqlText(path)})
      .status();
}

Result<std::vector<FailedMirrorItem>> ListFailedMirrorsForInbox(Txn& txn, const InboxScope& scope) {
  std::vector<SqlValue> params;
  const std::string where = InboxScopeSql(scope, "r", params);
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT m.path, m.format, m.last_error, m.failed_at, m.run_id, "
                             "r.title, r.profile FROM mirrors m JOIN runs r ON r.id = "
                             "m.run_id WHERE m.last_error IS NOT NULL" +
                                 where + " ORDER BY m.failed_at",
                             params));
  std::vector<FailedMirrorItem> items;
  items.reserve(rows.size());
  for (const Row& r : rows) {
    items.push_back({.path = r.Str(0),
                     .format = r.Str(1),
                     .last_error = r.Str(2),
                     .failed_at = r.Str(3),
                     .run = RunLabelAt(r, 4)});
  }
  return items;
}

}  // namespace baton
