#include "store/copy_store.h"

#include <algorithm>
#include <limits>

namespace baton {
namespace {

// Rows read from the source at a time.
constexpr int64_t kPageRows = 500;
// Parameters one INSERT binds at most (PostgreSQL allows 65,535).
constexpr size_t kMaxParams = 30000;

struct Session {
  std::unique_ptr<Connection> conn;
  std::unique_ptr<Txn> txn;
};

Result<Session> Begin(Store& store, TxnMode mode) {
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, store.Connect());
  ASSIGN_OR_RETURN(std::unique_ptr<Txn> txn, conn->Begin(mode));
  return Session{std::move(conn), std::move(txn)};
}

std::string Quoted(const std::string& name) { return "\"" + name + "\""; }

Result<int64_t> CountRows(Txn& txn, const std::string& table) {
  ASSIGN_OR_RETURN(Row row, txn.QueryOne("SELECT count(*) FROM " + Quoted(table), {}, table));
  return row.Int(0);
}

// "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)" for "rows" rows.
std::string InsertSql(const std::string& table, const std::vector<std::string>& columns,
                      size_t rows) {
  std::string sql = "INSERT INTO " + Quoted(table) + " (";
  std::string one = "(";
  for (size_t i = 0; i < columns.size(); ++i) {
    sql += (i > 0 ? ", " : "") + Quoted(columns[i]);
    one += i > 0 ? ", ?" : "?";
  }
  sql += ") VALUES ";
  one += ")";
  for (size_t r = 0; r < rows; ++r) sql += (r > 0 ? ", " : "") + one;
  return sql;
}

// Copies one table; the number of rows copied.
Result<int64_t> CopyTable(Txn& source, Txn& target, const std::string& table) {
  ASSIGN_OR_RETURN(std::vector<Row> info,
                   source.Query("SELECT name FROM pragma_table_info(?) ORDER BY cid", {table}));
  std::vector<std::string> columns;
  std::string list;
  for (const Row& r : info) {
    columns.push_back(r.Str(0));
    list += ", " + Quoted(r.Str(0));
  }
  const std::string page_sql = "SELECT rowid" + list + " FROM " + Quoted(table) +
                               " WHERE rowid > ? ORDER BY rowid LIMIT " +
                               std::to_string(kPageRows);
  const size_t per_insert = std::max<size_t>(1, kMaxParams / columns.size());
  int64_t copied = 0;
  int64_t after = std::numeric_limits<int64_t>::min();
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<Row> page, source.Query(page_sql, {after}));
    if (page.empty()) break;
    for (size_t start = 0; start < page.size(); start += per_insert) {
      const size_t n = std::min(per_insert, page.size() - start);
      std::vector<SqlValue> params;
      params.reserve(n * columns.size());
      for (size_t r = start; r < start + n; ++r) {
        for (size_t c = 0; c < columns.size(); ++c) params.push_back(page[r].at(c + 1));
      }
      Result<int64_t> done = target.Exec(InsertSql(table, columns, n), params);
      if (!done.ok()) return done.status().WithPrefix("copying table " + table);
    }
    copied += static_cast<int64_t>(page.size());
    after = page.back().Int(0);
  }
  return copied;
}

// PostgreSQL: each identity column's sequence goes on after the highest id
// copied, so the next row made there gets a new one.
Status AdvanceIdentities(Txn& target) {
  ASSIGN_OR_RETURN(std::vector<Row> identities,
                   target.Query("SELECT table_name, column_name FROM information_schema.columns "
                                "WHERE table_schema = current_schema() AND is_identity = 'YES'",
                                {}));
  for (const Row& id : identities) {
    const std::string table = Quoted(id.Str(0));
    const std::string column = Quoted(id.Str(1));
    RETURN_IF_ERROR(target
                        .Query("SELECT setval(pg_get_serial_sequence(?, ?), (SELECT coalesce(max(" +
                                   column + "), 0) FROM " + table + ") + 1, false)",
                               {id.Str(0), id.Str(1)})
                        .status());
  }
  return Status();
}

}  // namespace

Result<CopyReport> CopyStore(Store& from, Store& to, const CopyCheck& check) {
  const StoreInfo source_info = from.info();
  const StoreInfo target_info = to.info();
  if (source_info.backend != "sqlite") {
    return InvalidArgumentError("from: " + source_info.location + " is not a SQLite store");
  }
  if (source_info.schema_version != target_info.schema_version) {
    return FailedPreconditionError(
        "the stores' schemas differ (from: version " + std::to_string(source_info.schema_version) +
        ", to: version " + std::to_string(target_info.schema_version) +
        "); open both with this baton first");
  }
  ASSIGN_OR_RETURN(Session source, Begin(from, TxnMode::kRead));
  ASSIGN_OR_RETURN(Session target, Begin(to, TxnMode::kWrite));
  // The order the migrations made the tables in (their rowids in the
  // schema table): a table's references are made before it.
  ASSIGN_OR_RETURN(std::vector<Row> tables,
                   source.txn->Query("SELECT name FROM sqlite_schema WHERE type = 'table' AND "
                                     "name NOT LIKE 'sqlite%' AND name <> 'schema_migrations' "
                                     "ORDER BY rowid",
                                     {}));
  CopyReport report;
  for (const Row& t : tables) {
    const std::string table = t.Str(0);
    Result<int64_t> there = CountRows(*target.txn, table);
    if (!there.ok()) return there.status().WithPrefix("to: table " + table);
    if (*there > 0) {
      return FailedPreconditionError("to: " + target_info.location + " already holds " +
                                     std::to_string(*there) + " rows in " + table +
                                     "; migrate into a database with an empty store");
    }
  }
  for (const Row& t : tables) {
    const std::string table = t.Str(0);
    ASSIGN_OR_RETURN(int64_t copied, CopyTable(*source.txn, *target.txn, table));
    ASSIGN_OR_RETURN(int64_t in_source, CountRows(*source.txn, table));
    ASSIGN_OR_RETURN(int64_t in_target, CountRows(*target.txn, table));
    if (copied != in_source || in_target != in_source) {
      return DataLossError("copying table " + table + ": the source holds " +
                           std::to_string(in_source) + " rows, the target " +
                           std::to_string(in_target) + "; nothing was kept");
    }
    report.tables.push_back({table, copied});
    report.rows += copied;
  }
  if (target.txn->dialect() == SqlDialect::kPostgres) {
    RETURN_IF_ERROR(AdvanceIdentities(*target.txn));
  }
  RETURN_IF_ERROR(check(*source.txn, *target.txn));
  RETURN_IF_ERROR(target.txn->Commit());
  return report;
}

}  // namespace baton
