#include "store/postgres/postgres_store.h"

#include <algorithm>

#include "store/migrations/migrations.h"
#include "store/postgres/change_bell.h"
#include "store/postgres/libpq.h"
#include "store/postgres/pg_client.h"

namespace baton {
namespace {

// A write transaction, and the advisory lock every one takes (its key spells
// "baton"). One literal: GCC 12 warns, wrongly, of a std::string made from a
// literal and a constant (-Warray-bounds).
constexpr char kBeginWrite[] =
    "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE; SELECT pg_advisory_xact_lock(422827159406)";
// The session lock that is the lead (store.h Lead), the key after it.
constexpr char kTryLead[] = "SELECT pg_try_advisory_lock(422827159407)";

// The lead of a PostgreSQL store: a session advisory lock on a connection
// of its own, which the server releases when that connection ends — at
// once when the process dies, within about half a minute (the keepalives
// below) when its machine or network does.
class PostgresLead final : public Lead {
 public:
  PostgresLead(std::string location, std::string shown)
      : location_(std::move(location)), shown_(std::move(shown)) {}

  Result<bool> Hold() override {
    if (session_ != nullptr) {
      // A round trip tells whether the session, and the lock with it, lives.
      Result<std::vector<Row>> rows = session_->Run(held_ ? "SELECT 1" : kTryLead, {}, nullptr);
      if (rows.ok()) {
        if (!held_) held_ = rows->at(0).Int(0) == 1;
        return held_;
      }
      if (!IsStoreDisconnected(rows.status())) return rows.status();
      session_.reset();
      held_ = false;
    }
    ASSIGN_OR_RETURN(session_, PgSession::Connect(location_, shown_));
    RETURN_IF_ERROR(session_
                        ->Simple("SET tcp_keepalives_idle TO 10; SET tcp_keepalives_interval TO 5; "
                                 "SET tcp_keepalives_count TO 3")
                        .status());
    ASSIGN_OR_RETURN(std::vector<Row> rows, session_->Run(kTryLead, {}, nullptr));
    held_ = rows.at(0).Int(0) == 1;
    return held_;
  }

 private:
  const std::string location_;
  const std::string shown_;
  std::unique_ptr<PgSession> session_;
  bool held_ = false;
};

class PostgresConnection;

class PostgresTxn final : public Txn {
 public:
  using Txn::Exec;
  using Txn::ExecLater;

  // A read transaction's BEGIN may still be deferred (PgSession::Defer): it
  // travels with the first statement, and one that sends none costs nothing.
  explicit PostgresTxn(PgSession* session) : session_(session) {}
  ~PostgresTxn() override {
    // Destructors never fail (STYLE.md rule 10): a rollback that fails
    // leaves a broken connection, which the server rolls back itself.
    if (!done_) {
      session_->DropDeferred();
      if (session_->in_transaction()) (void)session_->Simple("ROLLBACK");
    }
  }

  Result<std::vector<Row>> Query(std::string_view sql, SqlParams params) override {
    return Step(sql, params, nullptr);
  }
  Result<int64_t> Exec(std::string_view sql, SqlParams params) override {
    int64_t changes = 0;
    RETURN_IF_ERROR(Step(sql, params, &changes).status());
    return changes;
  }
  bool holds_writes_back() const override { return true; }
  Status ExecLater(std::string_view sql, SqlParams params) override {
    RETURN_IF_ERROR(EarlierFailure());
    return Remember(session_->DeferRun(sql, params));
  }
  // A savepoint travels with the operation's first statement (PgSession::
  // Defer): a group-commit batch pays no round trip of its own for it.
  Status Savepoint(std::string_view name) override {
    RETURN_IF_ERROR(failed_);
    session_->Defer("SAVEPOINT " + std::string(name));
    return Status();
  }
  Status RollbackTo(std::string_view name) override {
    session_->DropDeferredAfterSavepoint(name);
    Status s = session_->Simple("ROLLBACK TO SAVEPOINT " + std::string(name)).status();
    if (s.ok()) failed_ = Status();
    return s;
  }
  // A release sends what was held back with it: a failure there is the
  // operation's, never the next one's.
  Status Release(std::string_view name) override {
    RETURN_IF_ERROR(failed_);
    return Remember(session_->Simple("RELEASE SAVEPOINT " + std::string(name)).status());
  }
  Status Commit() override {
    done_ = true;
    if (!session_->in_transaction()) {  // its BEGIN never left: nothing to end
      session_->DropDeferred();
      return Status();
    }
    if (!failed_.ok()) {
      session_->DropDeferred();
      (void)session_->Simple("ROLLBACK");
      return failed_;
    }
    Result<std::string> tag = session_->Simple("COMMIT");
    if (!tag.ok()) {
      // A statement held back until the commit failed: the transaction is
      // aborted, not ended.
      if (session_->healthy()) (void)session_->Simple("ROLLBACK");
      return tag.status();
    }
    // COMMIT of a transaction the server had aborted answers ROLLBACK.
    if (*tag != "COMMIT") return AbortedError("the transaction was rolled back: " + *tag);
    return Status();
  }
  SqlDialect dialect() const override { return SqlDialect::kPostgres; }
  // The server checks every key and constraint as it writes; it has no
  // whole-database check of its own without an extension (amcheck).
  std::string structure_check(bool) const override {
    return "PostgreSQL checks keys and constraints on every write";
  }

 private:
  Status EarlierFailure() const {
    if (failed_.ok()) return Status();
    return Status(failed_.code(),
                  "an earlier statement of this transaction failed: " + failed_.message(),
                  failed_.details());
  }
  Result<std::vector<Row>> Step(std::string_view sql, SqlParams params, int64_t* changes) {
    RETURN_IF_ERROR(EarlierFailure());
    Result<std::vector<Row>> rows = session_->Run(sql, params, changes);
    if (!rows.ok()) (void)Remember(rows.status());
    return rows;
  }
  Status Remember(Status s) {
    if (!s.ok() && failed_.ok()) failed_ = s;
    return s;
  }

  PgSession* session_;
  bool done_ = false;
  Status failed_;  // the first failure; the server ignores the rest
};

class PostgresConnection final : public Connection {
 public:
  explicit PostgresConnection(std::unique_ptr<PgSession> session)
      : session_(std::move(session)) {}

  Result<std::unique_ptr<Txn>> Begin(TxnMode mode) override {
    if (mode == TxnMode::kRead) {
      // Nothing can refuse it but a lost server, which the first statement
      // hears as well: it goes with that statement, one round trip fewer.
      session_->Defer("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      return std::unique_ptr<Txn>(new PostgresTxn(session_.get()));
    }
    // A write waits here for the write lock: a busy store is refused before
    // any operation of the batch runs.
    Status s = session_->Simple(kBeginWrite).status();
    if (!s.ok()) {
      // A lock wait that timed out leaves the transaction open and aborted.
      if (session_->healthy()) (void)session_->Simple("ROLLBACK");
      return s;
    }
    return std::unique_ptr<Txn>(new PostgresTxn(session_.get()));
  }
  bool broken() const override { return !session_->healthy(); }

 private:
  std::unique_ptr<PgSession> session_;
};

class PostgresStore final : public Store {
 public:
  explicit PostgresStore(StoreOptions options)
      : options_(std::move(options)), shown_(RedactedLocation(options_.location)) {}

  Result<std::unique_ptr<Connection>> Connect() override {
    ASSIGN_OR_RETURN(std::unique_ptr<PgSession> session, OpenSession());
    return std::unique_ptr<Connection>(new PostgresConnection(std::move(session)));
  }

  StoreInfo info() const override { return info_; }

  bool has_change_bell() const override { return true; }
  Result<std::unique_ptr<ChangeBell>> OpenChangeBell() override {
    ASSIGN_OR_RETURN(std::unique_ptr<PgSession> session,
                     PgSession::Connect(options_.location, shown_));
    return OpenPostgresChangeBell(std::move(session));
  }

  Result<std::unique_ptr<Lead>> OpenLead() override {
    return std::unique_ptr<Lead>(new PostgresLead(options_.location, shown_));
  }

  Status Init() {
    ASSIGN_OR_RETURN(std::unique_ptr<PgSession> session, OpenSession());
    if (!options_.create_if_missing) {
      ASSIGN_OR_RETURN(std::vector<Row> rows,
                       session->Run("SELECT to_regclass('schema_migrations') IS NOT NULL", {},
                                    nullptr));
      if (rows.empty() || rows[0].Int(0) == 0) {
        return NotFoundError("--store " + shown_ + ": no baton store in that database");
      }
    }
    const std::string server = session->server_version();
    PostgresConnection conn(std::move(session));
    ASSIGN_OR_RETURN(int version, Migrate(conn));
    info_.backend = "postgresql";
    info_.location = shown_;
    info_.durability = options_.durability;
    info_.schema_version = version;
    info_.detail = "server=PostgreSQL " + server + " synchronous_commit=" + SynchronousCommit() +
                   " writes=serialised (advisory lock)";
    return Status();
  }

 private:
  std::string SynchronousCommit() const {
    return options_.durability == Durability::kFull ? "on" : "off";
  }

  Result<std::unique_ptr<PgSession>> OpenSession() {
    ASSIGN_OR_RETURN(std::unique_ptr<PgSession> session,
                     PgSession::Connect(options_.location, shown_));
    // lock_timeout bounds the wait for the write lock: past the store's
    // busy deadline a writer hears Unavailable busy, as on SQLite.
    RETURN_IF_ERROR(session
                        ->Simple("SET synchronous_commit TO " + SynchronousCommit() +
                                 "; SET lock_timeout TO " +
                                 std::to_string(std::max(1, options_.busy_deadline_ms)) +
                                 "; SET TIME ZONE 'UTC'")
                        .status());
    return session;
  }

  StoreOptions options_;
  std::string shown_;
  StoreInfo info_;
};

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const StoreOptions& options) {
  auto store = std::make_unique<PostgresStore>(options);
  RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace baton
