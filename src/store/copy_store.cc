#include "store/copy_store.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

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

// A table to copy, and its columns that refer to its own rows (a task's
// parent): copied empty, then set once every row is there, since a child
// may come before its parent in rowid order.
struct TablePlan {
  std::string name;
  std::vector<std::string> self_refs;
};

// The tables in an order where each comes after the tables it refers to
// (PostgreSQL checks a reference at each INSERT), else in the order the
// migrations made them: a column added later may refer to a later table.
// The target's migrations made its schema_migrations, and its triggers keep
// its row_counts as the rows arrive.
Result<std::vector<TablePlan>> PlanTables(Txn& source) {
  ASSIGN_OR_RETURN(std::vector<Row> made,
                   source.Query("SELECT name FROM sqlite_schema WHERE type = 'table' AND "
                                "name NOT LIKE 'sqlite%' AND "
                                "name NOT IN ('schema_migrations', 'row_counts') "
                                "ORDER BY rowid",
                                {}));
  std::vector<TablePlan> pending;
  std::map<std::string, std::set<std::string>> refers_to;
  for (const Row& m : made) {
    TablePlan plan{m.Str(0), {}};
    ASSIGN_OR_RETURN(std::vector<Row> keys,
                     source.Query("SELECT \"table\", \"from\" FROM pragma_foreign_key_list(?)",
                                  {plan.name}));
    for (const Row& k : keys) {
      if (k.Str(0) == plan.name) {
        plan.self_refs.push_back(k.Str(1));
      } else {
        refers_to[plan.name].insert(k.Str(0));
      }
    }
    pending.push_back(std::move(plan));
  }
  std::vector<TablePlan> ordered;
  std::set<std::string> placed;
  while (!pending.empty()) {
    auto ready = std::find_if(pending.begin(), pending.end(), [&](const TablePlan& p) {
      return std::all_of(refers_to[p.name].begin(), refers_to[p.name].end(),
                         [&](const std::string& t) { return placed.count(t) > 0; });
    });
    if (ready == pending.end()) {
      return FailedPreconditionError("from: table " + pending.front().name +
                                     " refers to a table that is missing or refers back to it");
    }
    placed.insert(ready->name);
    ordered.push_back(std::move(*ready));
    pending.erase(ready);
  }
  return ordered;
}

// Sets the columns of "plan" held back by CopyTable, row by row (by primary
// key), now that every row they may refer to is there.
Status SetSelfReferences(Txn& source, Txn& target, const TablePlan& plan,
                         const std::vector<std::string>& keys) {
  if (plan.self_refs.empty()) return Status();
  if (keys.empty()) {
    return FailedPreconditionError("from: table " + plan.name +
                                   " refers to itself but has no primary key");
  }
  std::string select = "SELECT ";
  std::string set;
  std::string where;
  std::string any;
  for (size_t i = 0; i < plan.self_refs.size(); ++i) {
    select += (i > 0 ? ", " : "") + Quoted(plan.self_refs[i]);
    set += (i > 0 ? ", " : "") + Quoted(plan.self_refs[i]) + " = ?";
    any += (i > 0 ? " OR " : "") + Quoted(plan.self_refs[i]) + " IS NOT NULL";
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    select += ", " + Quoted(keys[i]);
    where += (i > 0 ? " AND " : "") + Quoted(keys[i]) + " = ?";
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   source.Query(select + " FROM " + Quoted(plan.name) + " WHERE " + any, {}));
  const std::string update = "UPDATE " + Quoted(plan.name) + " SET " + set + " WHERE " + where;
  for (const Row& row : rows) {
    std::vector<SqlValue> params;
    for (size_t i = 0; i < row.size(); ++i) params.push_back(row.at(i));
    Result<int64_t> done = target.Exec(update, params);
    if (!done.ok()) return done.status().WithPrefix("copying table " + plan.name);
  }
  return Status();
}

// Copies one table; the number of rows copied.
Result<int64_t> CopyTable(Txn& source, Txn& target, const TablePlan& plan) {
  const std::string& table = plan.name;
  ASSIGN_OR_RETURN(std::vector<Row> info,
                   source.Query("SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", {table}));
  std::vector<std::string> columns;
  std::vector<bool> held_back;  // a self reference, set after every row is in
  std::vector<std::string> keys;
  std::string list;
  for (const Row& r : info) {
    columns.push_back(r.Str(0));
    held_back.push_back(std::find(plan.self_refs.begin(), plan.self_refs.end(), r.Str(0)) !=
                        plan.self_refs.end());
    if (r.Int(1) > 0) keys.push_back(r.Str(0));
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
        for (size_t c = 0; c < columns.size(); ++c) {
          params.push_back(held_back[c] ? SqlValue() : page[r].at(c + 1));
        }
      }
      Result<int64_t> done = target.Exec(InsertSql(table, columns, n), params);
      if (!done.ok()) return done.status().WithPrefix("copying table " + table);
    }
    copied += static_cast<int64_t>(page.size());
    after = page.back().Int(0);
  }
  RETURN_IF_ERROR(SetSelfReferences(source, target, plan, keys));
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
  ASSIGN_OR_RETURN(std::vector<TablePlan> tables, PlanTables(*source.txn));
  CopyReport report;
  for (const TablePlan& t : tables) {
    const std::string& table = t.name;
    Result<int64_t> there = CountRows(*target.txn, table);
    if (!there.ok()) return there.status().WithPrefix("to: table " + table);
    if (*there > 0) {
      return FailedPreconditionError("to: " + target_info.location + " already holds " +
                                     std::to_string(*there) + " rows in " + table +
                                     "; migrate into a database with an empty store");
    }
  }
  for (const TablePlan& t : tables) {
    const std::string& table = t.name;
    ASSIGN_OR_RETURN(int64_t copied, CopyTable(*source.txn, *target.txn, t));
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
