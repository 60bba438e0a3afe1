// File: pg_client.h
//
// A small RAII wrapper over libpq for the PostgreSQL backend: one PgSession
// owns one PGconn (PQfinish on destruction) and answers in Status/Result,
// never a libpq pointer. Statements keep the store's portable form ("?"
// placeholders, store.h); the session numbers them ($1, $2, ...), prepares
// each text once per parameter-type signature and runs it in the extended
// protocol, values as text. A server error becomes a Status by its SQLSTATE
// (PgError). Thread-compatible: one thread uses a session at a time.

#ifndef BATON_SRC_STORE_POSTGRES_PG_CLIENT_H_
#define BATON_SRC_STORE_POSTGRES_PG_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/store.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace baton {

// "sql" with each "?" outside '...' strings, "..." identifiers, -- and /* */
// comments replaced by $1, $2, ... Our statements use no E'...' strings with
// \' escapes, no $$ quoting and no jsonb "?" operators: each would need
// its own rule here.
std::string NumberPlaceholders(std::string_view sql);

class PgSession {
 public:
  // Connects with "conninfo" (a URL or key=value string); "shown" names the
  // server in errors (the location with its password hidden).
  static Result<std::unique_ptr<PgSession>> Connect(const std::string& conninfo,
                                                    const std::string& shown);
  ~PgSession();
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;

  // Runs one statement with "params"; every row, and the count of rows it
  // changed in "*changes" when that is not null.
  Result<std::vector<Row>> Run(std::string_view sql, SqlParams params, int64_t* changes);
  // Runs "sql" (one or more statements, no parameters) in the simple
  // protocol; gives the command tag of the last ("COMMIT", "ROLLBACK", ...).
  Result<std::string> Simple(const std::string& sql);

  // Sends "sql" (one statement without parameters or rows: SAVEPOINT) with
  // the next Run or Simple instead of on its own: they go together in
  // libpq's pipeline mode, one round trip. A deferred statement that fails
  // fails that call, and the ones after it in the pipeline are not run.
  void Defer(std::string sql) { deferred_.push_back({true, "", std::move(sql), {}}); }
  // The same for a statement with parameters whose answer nobody reads (a
  // ledger event's INSERT). Its values are checked, and it is prepared, now:
  // InvalidArgument for text with a NUL byte, as Run.
  Status DeferRun(std::string_view sql, SqlParams params);
  // Forgets what was deferred (the transaction is being rolled back).
  void DropDeferred() { deferred_.clear(); }
  // Forgets what was deferred after savepoint "name", which a rollback to it
  // undoes anyway (a write that would fail must not fail the rollback); a
  // deferred SAVEPOINT "name" itself stays, to be sent with the rollback.
  void DropDeferredAfterSavepoint(std::string_view name);

  // Whether the connection is still good (false once the server went away).
  bool healthy() const;
  // Whether the server has a transaction open on it (or cannot say: a lost
  // connection). A BEGIN still deferred has opened none.
  bool in_transaction() const;
  // The server's version, e.g. "15.18".
  std::string server_version() const;
  PGconn* raw() { return conn_; }

 private:
  explicit PgSession(PGconn* conn, std::string shown) : conn_(conn), shown_(std::move(shown)) {}
  // A statement ready to send: a command in "text" (no parameters), or a
  // prepared statement's name ("" for the unnamed one) and its values as
  // text (nullopt for NULL), "text" then naming it in errors.
  struct Bound {
    bool command = false;
    std::string name;
    std::string text;
    std::vector<std::optional<std::string>> values;
  };
  Result<std::string> Prepare(std::string_view sql, SqlParams params);
  Result<Bound> Bind(std::string_view sql, SqlParams params);
  // Runs "last" after whatever was deferred: its result (the caller clears
  // it) or the first failure.
  Result<PGresult*> Send(const Bound& last);
  // Sends what was deferred, alone.
  Status Flush();
  Result<PGresult*> SendPipelined(const Bound& last);
  Status ResultStatus(PGresult* res, std::string_view what);

  PGconn* conn_;
  std::string shown_;
  std::vector<Bound> deferred_;
  bool broken_ = false;  // a pipeline ended in a state libpq could not leave
  // Statement name by "types|sql".
  std::unordered_map<std::string, std::string> prepared_;
};

// The Status for a failed "res" (or a broken connection when "res" is
// null): 23505 AlreadyExists, other integrity violations FailedPrecondition,
// serialization failures, deadlocks and lock timeouts Unavailable busy
// (kStoreBusyReason), a lost server Unavailable kStoreDisconnectedReason, a
// full disk ResourceExhausted, text PostgreSQL cannot hold InvalidArgument.
Status PgError(PGconn* conn, PGresult* res, std::string_view what);

}  // namespace baton

#endif  // BATON_SRC_STORE_POSTGRES_PG_CLIENT_H_
