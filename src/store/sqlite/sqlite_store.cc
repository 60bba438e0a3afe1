#include "store/sqlite/sqlite_store.h"

#include "baton/error_table.h"

#include <sqlite3.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>
#include <unordered_map>

#include "store/migrations/migrations.h"
#include "util/atomic_file.h"
#include "util/mutex.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

// How long SQLite's own busy handler waits before we see SQLITE_BUSY and
// decide ourselves whether to keep trying (until the store's deadline).
constexpr int kBusyHandlerMs = 2000;

bool IsBusy(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  const int primary = rc & 0xff;
  std::string msg = std::string(what) + ": " +
                    (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status(StatusCode::kUnavailable, "store is busy, retry: " + msg,
                    nlohmann::json{{"reason", kStoreBusyReason}});
    case SQLITE_IOERR:
      // Any SQLITE_IOERR_* (a failed read, write, fsync, truncate, lock):
      // the disk, not the request. Retrying is right once the store has been
      // reopened; a writer refuses writes until then (engine/writer.h).
      return Status(StatusCode::kUnavailable, "the store's disk failed: " + msg,
                    nlohmann::json{{"reason", kStoreIoErrorReason}, {"sqlite_code", rc}});
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return AlreadyExistsError(msg);
      }
      return FailedPreconditionError(msg);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return DataLossError(msg);
    case SQLITE_FULL:
      return Status(StatusCode::kResourceExhausted, "the disk is full: " + msg,
                    nlohmann::json{{"reason", kStorageFull}});
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return FailedPreconditionError(msg);
    default:
      return InternalError(msg);
  }
}

void SleepJitter(int attempt) {
  thread_local std::mt19937 gen{std::random_device{}()};
  const int cap = std::min(50, 1 << std::min(attempt, 5));
  std::uniform_int_distribution<int> dist(1, cap);
  std::this_thread::sleep_for(std::chrono::milliseconds(dist(gen)));
}

class SqliteConnection;

class SqliteTxn final : public Txn {
 public:
  explicit SqliteTxn(SqliteConnection* conn) : conn_(conn) {}
  ~SqliteTxn() override;

  Result<std::vector<Row>> Query(std::string_view sql, SqlParams params) override;
  Result<int64_t> Exec(std::string_view sql, SqlParams params) override;
  Status Savepoint(std::string_view name) override;
  Status RollbackTo(std::string_view name) override;
  Status Release(std::string_view name) override;
  Status Commit() override;
  Result<std::vector<std::string>> CheckStructure(bool thorough) override;
  std::string structure_check(bool thorough) const override {
    return thorough ? "SQLite integrity_check, foreign_key_check"
                    : "SQLite quick_check, foreign_key_check";
  }

 private:
  SqliteConnection* conn_;
  bool done_ = false;
};

class SqliteConnection final : public Connection {
 public:
  SqliteConnection(sqlite3* db, int busy_deadline_ms, std::string file_path)
      : db_(db), busy_deadline_ms_(busy_deadline_ms), file_path_(std::move(file_path)) {}
  ~SqliteConnection() override {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  Result<std::unique_ptr<Txn>> Begin(TxnMode mode) override {
    const char* sql = mode == TxnMode::kWrite ? "BEGIN IMMEDIATE" : "BEGIN";
    RETURN_IF_ERROR(ExecRetrying(sql));
    return std::unique_ptr<Txn>(new SqliteTxn(this));
  }

  // Runs a statement without parameters, retrying while the database is
  // busy until the deadline. Used for BEGIN and the pragmas.
  Status ExecRetrying(const char* sql) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(busy_deadline_ms_);
    for (int attempt = 0;; ++attempt) {
      int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) return Status();
      if (!IsBusy(rc) || Clock::now() >= deadline) return SqliteError(db_, rc, sql);
      SleepJitter(attempt);
    }
  }

  Status ExecPlain(const char* sql) {
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Status() : SqliteError(db_, rc, sql);
  }

  Result<std::vector<Row>> Run(std::string_view sql, SqlParams params,
                               int64_t* changes);

  sqlite3* db() { return db_; }
  std::string file_path() const override { return file_path_; }

 private:
  Result<sqlite3_stmt*> Prepare(std::string_view sql);
  Status Bind(sqlite3_stmt* stmt, SqlParams params);

  sqlite3* db_;
  int busy_deadline_ms_;
  std::string file_path_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

Result<sqlite3_stmt*> SqliteConnection::Prepare(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it != cache_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return SqliteError(db_, rc, "preparing \"" + std::string(sql.substr(0, 80)) + "\"");
  }
  cache_.emplace(std::string(sql), stmt);
  return stmt;
}

Status SqliteConnection::Bind(sqlite3_stmt* stmt, SqlParams params) {
  if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(stmt)) {
    // The SQL and its caller disagree: a programming error, reported loudly.
    return InternalError("statement expects " +
                         std::to_string(sqlite3_bind_parameter_count(stmt)) +
                         " parameters, got " + std::to_string(params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const int idx = static_cast<int>(i) + 1;
    const SqlValue& v = params[i];
    int rc = SQLITE_OK;
    if (const auto* n = std::get_if<int64_t>(&v)) {
      rc = sqlite3_bind_int64(stmt, idx, *n);
    } else if (const auto* d = std::get_if<double>(&v)) {
      rc = sqlite3_bind_double(stmt, idx, *d);
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      // SQLITE_STATIC: "params" outlive the statement's use (Run resets and
      // clears the bindings before returning), so SQLite need not copy.
      rc = sqlite3_bind_text(stmt, idx, s->data(), static_cast<int>(s->size()),
                             SQLITE_STATIC);
    } else {
      rc = sqlite3_bind_null(stmt, idx);
    }
    if (rc != SQLITE_OK) return SqliteError(db_, rc, "binding parameter");
  }
  return Status();
}

SqlValue ColumnValue(sqlite3_stmt* stmt, int i) {
  switch (sqlite3_column_type(stmt, i)) {
    case SQLITE_INTEGER:
      return static_cast<int64_t>(sqlite3_column_int64(stmt, i));
    case SQLITE_FLOAT:
      return sqlite3_column_double(stmt, i);
    case SQLITE_NULL:
      return SqlValue();
    default: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
      return std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt, i)));
    }
  }
}

Result<std::vector<Row>> SqliteConnection::Run(std::string_view sql,
                                               SqlParams params,
                                               int64_t* changes) {
  ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepare(sql));
  // Reset on every exit so a cached statement never holds a read open.
  struct Resetter {
    sqlite3_stmt* s;
    ~Resetter() {
      sqlite3_reset(s);
      sqlite3_clear_bindings(s);
    }
  } resetter{stmt};
  RETURN_IF_ERROR(Bind(stmt, params));
  std::vector<Row> rows;
  const int columns = sqlite3_column_count(stmt);
  for (;;) {
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      // sqlite3_step returns the generic code; the extended one says which
      // constraint failed.
      return SqliteError(db_, sqlite3_extended_errcode(db_), "statement");
    }
    std::vector<SqlValue> values;
    values.reserve(static_cast<size_t>(columns));
    for (int i = 0; i < columns; ++i) values.push_back(ColumnValue(stmt, i));
    rows.emplace_back(std::move(values));
  }
  if (changes != nullptr) *changes = sqlite3_changes64(db_);
  return rows;
}

SqliteTxn::~SqliteTxn() {
  if (!done_) {
    // Destructors never fail (STYLE.md rule 10): a failed rollback leaves the
    // connection to SQLite's own cleanup when it closes.
    (void)conn_->ExecPlain("ROLLBACK");
  }
}

Result<std::vector<Row>> SqliteTxn::Query(std::string_view sql, SqlParams params) {
  return conn_->Run(sql, params, nullptr);
}

Result<int64_t> SqliteTxn::Exec(std::string_view sql, SqlParams params) {
  int64_t changes = 0;
  RETURN_IF_ERROR(conn_->Run(sql, params, &changes).status());
  return changes;
}

// Savepoints run once per operation in a batch: they go through the
// prepared-statement cache instead of being parsed each time.
Status SqliteTxn::Savepoint(std::string_view name) {
  return conn_->Run("SAVEPOINT " + std::string(name), {}, nullptr).status();
}

Status SqliteTxn::RollbackTo(std::string_view name) {
  return conn_->Run("ROLLBACK TO " + std::string(name), {}, nullptr).status();
}

Status SqliteTxn::Release(std::string_view name) {
  return conn_->Run("RELEASE " + std::string(name), {}, nullptr).status();
}

Status SqliteTxn::Commit() {
  Status s = conn_->ExecPlain("COMMIT");
  if (!s.ok()) {
    (void)conn_->ExecPlain("ROLLBACK");
  }
  done_ = true;
  return s;
}

namespace {

// Every row "sql" gives, as text, and then the error that ended it, if one
// did: on a damaged file integrity_check reports its findings and then
// stops with SQLITE_CORRUPT, and the findings are what the caller needs.
std::vector<std::string> PragmaLines(sqlite3* db, const char* sql) {
  std::vector<std::string> lines;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  while (rc == SQLITE_OK) {
    const int step = sqlite3_step(stmt);
    if (step == SQLITE_DONE) break;
    if (step != SQLITE_ROW) {
      rc = step;
      break;
    }
    std::string line;
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
      if (i > 0) line += " ";
      line += text == nullptr ? "NULL" : text;
    }
    lines.push_back(std::move(line));
  }
  if (rc != SQLITE_OK) lines.push_back(std::string(sql) + " stopped: " + sqlite3_errmsg(db));
  sqlite3_finalize(stmt);
  return lines;
}

}  // namespace

Result<std::vector<std::string>> SqliteTxn::CheckStructure(bool thorough) {
  std::vector<std::string> problems;
  // Both read every page of every b-tree and index and answer one row "ok"
  // when they found nothing; integrity_check also checks that each index
  // holds exactly its table's rows (4x the time on a store of events).
  // Neither looks at foreign keys. A row may hold several lines, the first
  // naming the database.
  const char* check = thorough ? "PRAGMA integrity_check(100)" : "PRAGMA quick_check(100)";
  for (const std::string& row : PragmaLines(conn_->db(), check)) {
    size_t start = 0;
    while (start <= row.size()) {
      size_t end = row.find('\n', start);
      if (end == std::string::npos) end = row.size();
      std::string line = row.substr(start, end - start);
      if (!line.empty() && line != "ok" && line.rfind("*** in database", 0) != 0) {
        problems.push_back(std::move(line));
      }
      start = end + 1;
    }
  }
  // Rows: table, rowid, parent table, constraint index.
  for (std::string& line : PragmaLines(conn_->db(), "PRAGMA foreign_key_check")) {
    problems.push_back("foreign key: " + line);
  }
  return problems;
}

// "PRAGMA synchronous=FULL" and friends, from the durability's name.
std::string SynchronousPragma(Durability d) {
  std::string level(DurabilityName(d));
  for (char& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "PRAGMA synchronous=" + level;
}

// The lead of a SQLite file (store.h): an flock on "<store>.lead", which
// the kernel releases when the descriptor closes or the process dies.
class FileLead final : public Lead {
 public:
  explicit FileLead(std::string path) : path_(std::move(path)) {}
  ~FileLead() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Result<bool> Hold() override {
    // Held while the descriptor is open — and while the file is still the
    // one at the path: a newcomer would lock a file put in its place.
    if (held_ && SameFileAtPath(fd_, path_)) return true;
    if (held_) {
      ::close(fd_);
      fd_ = -1;
      held_ = false;
    }
    if (fd_ < 0) {
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd_ < 0) return UnavailableError(path_ + ": " + std::strerror(errno));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
      held_ = true;
    } else if (errno != EWOULDBLOCK) {
      return UnavailableError(path_ + ": " + std::strerror(errno));
    }
    return held_;
  }

 private:
  const std::string path_;
  int fd_ = -1;
  bool held_ = false;
};

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(StoreOptions options) : options_(std::move(options)) {}

  Result<std::unique_ptr<Connection>> Connect() override {
    {
      // The connection Init opened, configured and read the schema with:
      // the first caller's (opening one costs a tenth of a one-shot
      // command's CPU, most of it SQLite parsing the schema).
      MutexLock lock(&spare_mu_);
      if (spare_ != nullptr) return std::move(spare_);
    }
    return Open();
  }

  // A new connection, configured; the journal mode it found in
  // "journal_mode" when one is given (Init's: other threads may be opening
  // connections too).
  Result<std::unique_ptr<Connection>> Open(std::string* journal_mode = nullptr) {
    sqlite3* db = nullptr;
    const int flags = (options_.read_only ? SQLITE_OPEN_READONLY
                                          : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                      SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
    int rc = sqlite3_open_v2(options_.location.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
      Status s = SqliteError(db, rc, "opening store " + options_.location);
      sqlite3_close_v2(db);
      return s;
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, std::min(kBusyHandlerMs, options_.busy_deadline_ms));
    const bool in_memory = options_.location.find("vfs=memdb") != std::string::npos;
    auto conn = std::make_unique<SqliteConnection>(db, options_.busy_deadline_ms,
                                                   in_memory ? "" : options_.location);
    Status s = Configure(*conn, journal_mode);
    if (!s.ok()) return s.WithPrefix("store " + options_.location);
    return std::unique_ptr<Connection>(std::move(conn));
  }

  StoreInfo info() const override { return info_; }

  Result<std::unique_ptr<Lead>> OpenLead() override {
    if (keepalive_ != nullptr) return Store::OpenLead();  // in memory: this process's alone
    // Beside the file itself, however the path to it was spelled (a
    // symlink), so every process on the file locks the same one.
    std::error_code ec;
    const std::filesystem::path file = std::filesystem::weakly_canonical(options_.location, ec);
    return std::unique_ptr<Lead>(new FileLead((ec ? options_.location : file.string()) + ".lead"));
  }

  Status Init() {
    ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Open(&journal_mode_));
    ASSIGN_OR_RETURN(int version, options_.read_only ? CurrentVersion(*conn) : Migrate(*conn));
    // A memdb database lives while one connection to it is open.
    if (options_.location.find("vfs=memdb") != std::string::npos) {
      keepalive_ = std::move(conn);
    } else {
      MutexLock lock(&spare_mu_);
      spare_ = std::move(conn);
    }
    info_.backend = "sqlite";
    info_.location = options_.location;
    info_.durability = options_.durability;
    info_.schema_version = version;
    // "synchronous=FULL": the pragma without its "PRAGMA " prefix.
    info_.detail = "journal_mode=" + journal_mode_ + " " +
                   SynchronousPragma(options_.durability).substr(7) + " foreign_keys=ON";
    return Status();
  }

 private:
  // A store opened read-only is read as it is: its schema must be this
  // baton's, since migrating it would write.
  Result<int> CurrentVersion(Connection& conn) {
    ASSIGN_OR_RETURN(std::unique_ptr<Txn> txn, conn.Begin(TxnMode::kRead));
    Result<std::vector<Row>> rows =
        txn->Query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", {});
    if (!rows.ok() || rows->empty()) {
      return NotFoundError(options_.location + ": no baton store in it");
    }
    const int version = static_cast<int>((*rows)[0].Int(0));
    if (version != LatestSchemaVersion()) {
      return FailedPreconditionError(
          options_.location + ": its schema is version " + std::to_string(version) +
          " and this baton's is " + std::to_string(LatestSchemaVersion()) +
          "; open it once with this baton (baton --store FILE status) to bring it up to date");
    }
    return version;
  }

  Status Configure(SqliteConnection& conn, std::string* journal_mode) {
    // Reading the schema first turns "file is not a database" into a clear
    // error before any pragma could try to write to the file.
    RETURN_IF_ERROR(conn.ExecRetrying("SELECT count(*) FROM sqlite_schema"));
    // Switching a new file to WAL needs a moment of exclusive access, and
    // SQLite reports SQLITE_BUSY here without calling the busy handler when
    // several processes open a new store at once: retry like a BEGIN.
    Result<std::vector<Row>> mode = UnavailableError("not run");
    const auto deadline = Clock::now() + std::chrono::milliseconds(options_.busy_deadline_ms);
    for (int attempt = 0;; ++attempt) {
      // Read-only: the mode the file has, unchanged.
      mode = conn.Run(options_.read_only ? "PRAGMA journal_mode" : "PRAGMA journal_mode=WAL", {},
                      nullptr);
      // Only busy is retried: an I/O error is Unavailable too, and waiting
      // a minute on a failing disk helps no one.
      if (mode.ok() || !IsStoreBusy(mode.status()) || Clock::now() >= deadline) {
        break;
      }
      SleepJitter(attempt);
    }
    if (!mode.ok()) return mode.status();
    if (journal_mode != nullptr) *journal_mode = mode->empty() ? "unknown" : (*mode)[0].Str(0);
    RETURN_IF_ERROR(conn.ExecRetrying("PRAGMA foreign_keys=ON"));
    RETURN_IF_ERROR(conn.ExecRetrying(SynchronousPragma(options_.durability).c_str()));
    return Status();
  }

  StoreOptions options_;
  StoreInfo info_;
  std::unique_ptr<Connection> keepalive_;
  Mutex spare_mu_;
  std::unique_ptr<Connection> spare_ GUARDED_BY(spare_mu_);  // Init's, until taken
  std::string journal_mode_;  // written by Init alone
};

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const StoreOptions& options) {
  StoreOptions opts = options;
  if (opts.location.empty()) return InvalidArgumentError("store: no location given");
  if (opts.location != ":memory:") {
    std::error_code ec;
    std::filesystem::path path = std::filesystem::absolute(opts.location, ec);
    if (std::filesystem::is_directory(path, ec)) {
      return InvalidArgumentError("--store " + opts.location +
                                  ": is a folder; give the database file path");
    }
    // A missing folder is a mistyped path far more often than a wish for
    // new folders: it is never created.
    if (path.has_parent_path() && !std::filesystem::is_directory(path.parent_path(), ec)) {
      return NotFoundError("--store " + opts.location + ": folder " +
                           path.parent_path().string() + " does not exist");
    }
    if (!opts.create_if_missing && !std::filesystem::exists(path, ec)) {
      return NotFoundError("--store " + opts.location + ": no baton store there");
    }
    opts.location = path.string();
  } else {
    // A named database in SQLite's memdb VFS: every connection of this
    // store sees the same data and ordinary locking applies (unlike
    // shared-cache mode, whose table locks bypass the busy handler).
    static std::atomic<int> counter{0};
    opts.location = "file:/baton-mem-" + std::to_string(getpid()) + "-" +
                    std::to_string(counter++) + "?vfs=memdb";
  }
  auto store = std::make_unique<SqliteStore>(opts);
  Status s = store->Init();
  if (!s.ok()) {
    if (s.code() == StatusCode::kDataLoss) {
      return DataLossError("--store " + options.location +
                           " is not a baton store (not a SQLite database, or "
                           "corrupt): " + s.message());
    }
    return s;
  }
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace baton
