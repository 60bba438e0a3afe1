// File: store.h
//
// The storage seam (DESIGN.md §2, STYLE.md rule 3). Everything above store/
// talks to a database only through these classes, with portable SQL ("?"
// placeholders, standard types, no backend-specific functions), so a second
// backend (PostgreSQL) implements the same three classes and the same test
// suite runs on both. No SQLite type appears in this header.
//
//   Store       one database; opened once per process; thread-safe.
//   Connection  one session; used by one thread at a time.
//   Txn         one transaction on a connection; rolled back on destruction
//               unless Commit() succeeded.
//
// Busy databases are retried inside the backend: callers see Unavailable only
// when the store stayed busy past its deadline, never "database is locked";
// that Unavailable has details.reason kStoreBusyReason and changed nothing.
// A disk that fails a read, write or fsync is Unavailable with reason
// kStoreIoErrorReason. When that failure is a transaction's own step (its
// commit, a savepoint, a rollback to one, a release), the connection's state
// is unknown and a Writer refuses writes until a new one is opened
// (engine/ledger/writer.h); an operation's statement that fails is rolled
// back to its savepoint like any other failure.

#ifndef BATON_SRC_STORE_STORE_H_
#define BATON_SRC_STORE_STORE_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "baton/status.h"
#include "util/store_location.h"

namespace baton {

// Which SQL a backend speaks, for the few statements whose text must differ
// (store/README.md: chosen inside the table function, never in the engine).
enum class SqlDialect { kSqlite, kPostgres };

// NULL, an integer, a real or text.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

inline SqlValue SqlNull() { return std::monostate{}; }
inline SqlValue SqlText(std::string_view s) { return std::string(s); }
inline SqlValue SqlInt(int64_t v) { return v; }
// NULL when "s" is empty.
inline SqlValue SqlTextOrNull(std::string_view s) {
  return s.empty() ? SqlValue() : SqlValue(std::string(s));
}
// NULL when "v" is absent: a typed row's nullable column.
inline SqlValue SqlNullable(const std::optional<std::string>& v) {
  return v ? SqlValue(*v) : SqlValue();
}
inline SqlValue SqlNullable(const std::optional<int64_t>& v) {
  return v ? SqlValue(*v) : SqlValue();
}

class Row {
 public:
  explicit Row(std::vector<SqlValue> values) : values_(std::move(values)) {}
  size_t size() const { return values_.size(); }
  bool IsNull(size_t i) const {
    return std::holds_alternative<std::monostate>(values_[i]);
  }
  // Text of column "i"; "" for NULL; integers and reals as decimal text.
  std::string Str(size_t i) const;
  // The same, moved out of the row (the row's text is left moved-from): for
  // a caller that reads each column once, as the ledger's walk does.
  std::string Take(size_t i);
  // Integer of column "i"; 0 for NULL.
  int64_t Int(size_t i) const;
  double Real(size_t i) const;
  const SqlValue& at(size_t i) const { return values_[i]; }

 private:
  std::vector<SqlValue> values_;
};

using SqlParams = std::span<const SqlValue>;

inline constexpr char kStoreBusyReason[] = "store_busy";
inline constexpr char kStoreIoErrorReason[] = "io_error";
// A database server that dropped the connection (a restart, a failover, a
// network cut) before the transaction committed: nothing it did was kept,
// and the connection is broken() for good.
inline constexpr char kStoreDisconnectedReason[] = "store_disconnected";

// Whether "s" is the Unavailable of a store that stayed busy (see above).
inline bool IsStoreBusy(const Status& s) {
  return s.code() == StatusCode::kUnavailable && s.details().is_object() &&
         s.details().value("reason", "") == kStoreBusyReason;
}
// Whether "s" is the Unavailable of a lost database connection.
inline bool IsStoreDisconnected(const Status& s) {
  return s.code() == StatusCode::kUnavailable && s.details().is_object() &&
         s.details().value("reason", "") == kStoreDisconnectedReason;
}

class Txn {
 public:
  virtual ~Txn() = default;

  // Runs "sql" with "params" bound to its "?" placeholders in order and
  // returns every row. A UNIQUE or PRIMARY KEY violation is AlreadyExists, a
  // foreign key or CHECK violation FailedPrecondition.
  virtual Result<std::vector<Row>> Query(std::string_view sql,
                                         SqlParams params) = 0;
  // Runs a statement that returns no rows; gives the number of rows changed.
  virtual Result<int64_t> Exec(std::string_view sql, SqlParams params) = 0;
  // Runs a write whose count nobody reads (a ledger event's INSERT). A
  // backend may hold it back and send it with the transaction's next
  // statement, Release or Commit, in one round trip (PostgreSQL's pipeline):
  // its failure then fails that call. Statements run in the order given
  // either way, so a later read sees it.
  virtual Status ExecLater(std::string_view sql, SqlParams params) {
    return Exec(sql, params).status();
  }
  // Whether ExecLater holds writes back: then a Release may fail for one of
  // them and leave the transaction usable once rolled back to the
  // savepoint. Otherwise a failed Release is the transaction's own.
  virtual bool holds_writes_back() const { return false; }

  // Named savepoints, for one operation inside a batch (DESIGN.md §6).
  virtual Status Savepoint(std::string_view name) = 0;
  virtual Status RollbackTo(std::string_view name) = 0;
  virtual Status Release(std::string_view name) = 0;

  // Makes the transaction durable (as the store's durability mode says).
  // After a failed Commit the transaction is rolled back.
  virtual Status Commit() = 0;

  // The database's own structural check (SQLite: PRAGMA quick_check, or
  // when "thorough" integrity_check, which also compares every index with
  // its table; and foreign_key_check): one line per problem the backend
  // reports, empty when the database is sound. A backend without such a
  // check returns an empty list.
  virtual Result<std::vector<std::string>> CheckStructure(bool thorough) {
    (void)thorough;
    return std::vector<std::string>();
  }
  // What CheckStructure(thorough) looks at, for the reader of its verdict.
  virtual std::string structure_check(bool thorough) const {
    (void)thorough;
    return "none";
  }

  // The backend's SQL dialect.
  virtual SqlDialect dialect() const { return SqlDialect::kSqlite; }

  // Convenience forms taking a braced list: txn.Query(sql, {a, b}).
  Result<std::vector<Row>> Query(std::string_view sql,
                                 std::initializer_list<SqlValue> params) {
    return Query(sql, SqlParams(params.begin(), params.size()));
  }
  Result<int64_t> Exec(std::string_view sql,
                       std::initializer_list<SqlValue> params) {
    return Exec(sql, SqlParams(params.begin(), params.size()));
  }
  Status ExecLater(std::string_view sql, std::initializer_list<SqlValue> params) {
    return ExecLater(sql, SqlParams(params.begin(), params.size()));
  }
  // The single row a query must return; NotFound with "what" otherwise.
  Result<Row> QueryOne(std::string_view sql, std::initializer_list<SqlValue> params,
                       std::string_view what);
};

enum class TxnMode { kRead, kWrite };

class Connection {
 public:
  virtual ~Connection() = default;
  // kWrite takes the write lock at once (SQLite BEGIN IMMEDIATE), retrying a
  // busy database until the store's busy deadline.
  virtual Result<std::unique_ptr<Txn>> Begin(TxnMode mode) = 0;
  // True once the connection can never work again (its server dropped it):
  // its owner drops it and connects anew. A file never breaks this way.
  virtual bool broken() const { return false; }
  // The database file this connection opened, or "" for a store without one
  // (in memory). Files kept beside the store (the ledger witness) derive
  // their names from it.
  virtual std::string file_path() const { return ""; }
};

enum class Durability { kFull, kNormal, kOff };
std::string_view DurabilityName(Durability d);
Result<Durability> ParseDurability(std::string_view name);

struct StoreOptions {
  // A file path for SQLite, or ":memory:" for a private in-memory database
  // (tests only). The file's folder must exist; it is never created. A
  // PostgreSQL URL (postgresql://..., postgres://...) or libpq connection
  // string ("host=... dbname=...") opens that database instead; the
  // database must exist, and its schema is made in it when it has none.
  std::string location;
  Durability durability = Durability::kFull;
  // How long a busy database is retried before Unavailable.
  int busy_deadline_ms = 60000;
  // Create the store when "location" has none (the CLI clears this for
  // every command but init, serve and mcp: cli/store_location.h).
  bool create_if_missing = true;
  // SQLite: open the file read-only, as it is (no migration, no change of
  // journal mode); its schema must be this baton's. For a copy's source.
  bool read_only = false;
};

struct StoreInfo {
  std::string backend;     // "sqlite" or "postgresql"
  std::string location;    // absolute path, or the server with its password hidden
  Durability durability;
  int schema_version;      // migrations applied
  std::string detail;      // e.g. "journal_mode=wal synchronous=FULL"
};

// How the processes sharing a database server tell each other that they
// committed, without reading the store to find out (PostgreSQL's LISTEN
// and NOTIFY). One per process, on a connection of its own; used by one
// thread, but Interrupt may be called from any.
class ChangeBell {
 public:
  virtual ~ChangeBell() = default;
  // Tells every other process listening on the database that the ledger
  // moved; they hear its head as it is now. Called after a commit, never
  // inside a write transaction.
  virtual Status Ring() = 0;
  // Waits up to "timeout_ms" for other processes' rings and gives the heads
  // they carried (empty after the timeout or an Interrupt). Its own rings
  // are never heard. Unavailable once the connection is lost: the owner
  // opens a new bell.
  virtual Result<std::vector<int64_t>> Listen(int timeout_ms) = 0;
  // Ends a Listen in progress (or the next one) at once.
  virtual void Interrupt() = 0;
};

// The right to run the work that must run in one process at a time (the
// agent reconciler, mail delivery): held by one process per store, until
// it lets go or dies, then taken by the next that asks. PostgreSQL: a
// session advisory lock on a connection of its own (the server releases it
// when that connection ends). SQLite: a lock on "<store>.lead" beside the
// file (the kernel releases it when the process dies). In memory: always
// held. Used by one thread.
class Lead {
 public:
  virtual ~Lead() = default;  // lets go
  // Whether this process holds the lead now: takes it when it is free,
  // checks that it still holds it otherwise. Never waits for a holder.
  virtual Result<bool> Hold() = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // Opens (creating if needed) and migrates the store at "options.location".
  // Safe when several processes open a new store at the same moment.
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);

  virtual Result<std::unique_ptr<Connection>> Connect() = 0;
  virtual StoreInfo info() const = 0;
  // Whether OpenChangeBell gives a bell: false for SQLite, whose processes
  // find each other's commits by reading the file.
  virtual bool has_change_bell() const { return false; }
  // A new connection's bell (above); null when has_change_bell() is false.
  virtual Result<std::unique_ptr<ChangeBell>> OpenChangeBell() {
    return std::unique_ptr<ChangeBell>();
  }
  // This process's claim on the lead (above), not yet taken.
  virtual Result<std::unique_ptr<Lead>> OpenLead();
};

}  // namespace baton

#endif  // BATON_SRC_STORE_STORE_H_
