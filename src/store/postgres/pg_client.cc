#include "store/postgres/pg_client.h"

#include <cstdio>
#include <cstdlib>

#include "baton/error_table.h"
#include "store/postgres/libpq.h"

namespace baton {
namespace {

// pg_type OIDs of the columns we read as numbers (catalog/pg_type_d.h).
constexpr Oid kBoolOid = 16;
constexpr Oid kInt8Oid = 20;
constexpr Oid kInt2Oid = 21;
constexpr Oid kInt4Oid = 23;
constexpr Oid kOidOid = 26;
constexpr Oid kFloat4Oid = 700;
constexpr Oid kFloat8Oid = 701;
constexpr Oid kNumericOid = 1700;

// Statements with more parameters than this are prepared for one run only.
constexpr size_t kMaxKeptParams = 256;

void IgnoreNotice(void*, const char*) {}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

SqlValue ColumnValue(PGresult* res, int row, int col) {
  if (Pq().PQgetisnull(res, row, col)) return SqlValue();
  const char* text = Pq().PQgetvalue(res, row, col);
  const auto length = static_cast<size_t>(Pq().PQgetlength(res, row, col));
  switch (Pq().PQftype(res, col)) {
    case kInt8Oid:
    case kInt4Oid:
    case kInt2Oid:
    case kOidOid:
      return static_cast<int64_t>(std::strtoll(text, nullptr, 10));
    case kBoolOid:
      return static_cast<int64_t>(text[0] == 't' ? 1 : 0);
    case kFloat4Oid:
    case kFloat8Oid:
      return std::strtod(text, nullptr);
    case kNumericOid:
      // sum() of a bigint column is numeric: a whole number stays exact.
      if (std::string_view(text, length).find_first_of(".eE") == std::string_view::npos) {
        return static_cast<int64_t>(std::strtoll(text, nullptr, 10));
      }
      return std::strtod(text, nullptr);
    default:
      return std::string(text, length);
  }
}

}  // namespace

std::string NumberPlaceholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {
      // A quoted string or identifier, its quote doubled inside.
      size_t end = i + 1;
      while (end < sql.size()) {
        if (sql[end] == c) {
          if (end + 1 < sql.size() && sql[end + 1] == c) {
            end += 2;
            continue;
          }
          break;
        }
        ++end;
      }
      out.append(sql.substr(i, end - i + 1));
      i = end;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      const size_t end = sql.find("*/", i + 2);
      const size_t stop = end == std::string_view::npos ? sql.size() : end + 2;
      out.append(sql.substr(i, stop - i));
      i = stop - 1;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      const size_t end = sql.find('\n', i);
      const size_t stop = end == std::string_view::npos ? sql.size() : end;
      out.append(sql.substr(i, stop - i));
      i = stop - 1;
    } else if (c == '?') {
      out += '$';
      out += std::to_string(++n);
    } else {
      out += c;
    }
  }
  return out;
}

Status PgError(PGconn* conn, PGresult* res, std::string_view what) {
  const char* state = res != nullptr ? Pq().PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = res != nullptr ? Pq().PQresultErrorMessage(res) : Pq().PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const std::string msg = std::string(what) + ": " + message;
  const std::string code = state != nullptr ? state : "";
  // libpq's own errors carry no SQLSTATE: a broken connection is one of
  // them, a bad statement (too many parameters, an empty one) another.
  if (StartsWith(code, "08") || code == "57P01" || code == "57P02" || code == "57P03" ||
      Pq().PQstatus(conn) == CONNECTION_BAD) {
    return Status(StatusCode::kUnavailable, "lost the PostgreSQL server: " + msg,
                  nlohmann::json{{"reason", kStoreDisconnectedReason}});
  }
  if (code == "23505") return AlreadyExistsError(msg);
  if (StartsWith(code, "23")) return FailedPreconditionError(msg);
  if (code == "40001" || code == "40P01" || code == "55P03") {
    return Status(StatusCode::kUnavailable, "store is busy, retry: " + msg,
                  nlohmann::json{{"reason", kStoreBusyReason}, {"sqlstate", code}});
  }
  if (code == "53100") {
    return Status(StatusCode::kResourceExhausted, "the PostgreSQL server's disk is full: " + msg,
                  nlohmann::json{{"reason", kStorageFull}});
  }
  if (StartsWith(code, "53")) {
    return Status(StatusCode::kUnavailable, "the PostgreSQL server is out of resources: " + msg,
                  nlohmann::json{{"reason", kStoreBusyReason}, {"sqlstate", code}});
  }
  if (code == "22021" || code == "22P05") {
    return InvalidArgumentError("text that PostgreSQL cannot store (a NUL byte or invalid "
                                "UTF-8): " + msg);
  }
  if (code == "58030" || code == "XX001" || code == "XX002") {
    return Status(StatusCode::kUnavailable, "the PostgreSQL server's disk failed: " + msg,
                  nlohmann::json{{"reason", kStoreIoErrorReason}, {"sqlstate", code}});
  }
  return Status(StatusCode::kInternal, msg, nlohmann::json{{"sqlstate", code}});
}

Result<std::unique_ptr<PgSession>> PgSession::Connect(const std::string& conninfo,
                                                      const std::string& shown) {
  // Ours first, so the caller's own connect_timeout or application_name
  // wins; the text must be UTF-8 whatever the caller's locale says.
  // TCP keepalives and a user timeout: a connection whose peer vanished
  // without a word (a machine gone, a network cut) fails within about half
  // a minute instead of the kernel's quarter of an hour.
  const char* keys[] = {"connect_timeout", "application_name", "keepalives_idle",
                        "keepalives_interval", "keepalives_count", "tcp_user_timeout",
                        "dbname", "client_encoding", nullptr};
  const char* values[] = {"10", "baton", "10", "5", "3", "30000", conninfo.c_str(), "UTF8",
                          nullptr};
  RETURN_IF_ERROR(LoadLibpq());
  PGconn* conn = Pq().PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) return UnavailableError("connecting to " + shown + ": out of memory");
  if (Pq().PQstatus(conn) != CONNECTION_OK) {
    std::string message = Pq().PQerrorMessage(conn);
    Pq().PQfinish(conn);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return Status(StatusCode::kUnavailable, "cannot connect to PostgreSQL at " + shown + ": " +
                                                message,
                  nlohmann::json{{"reason", kStoreDisconnectedReason}});
  }
  Pq().PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  return std::unique_ptr<PgSession>(new PgSession(conn, shown));
}

PgSession::~PgSession() { Pq().PQfinish(conn_); }

bool PgSession::healthy() const { return !broken_ && Pq().PQstatus(conn_) == CONNECTION_OK; }

bool PgSession::in_transaction() const { return Pq().PQtransactionStatus(conn_) != PQTRANS_IDLE; }

std::string PgSession::server_version() const {
  const int v = Pq().PQserverVersion(conn_);
  return std::to_string(v / 10000) + "." + std::to_string(v % 10000);
}

Status PgSession::ResultStatus(PGresult* res, std::string_view what) {
  const ExecStatusType st = res != nullptr ? Pq().PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Status();
  return PgError(conn_, res, what);
}

Result<std::string> PgSession::Prepare(std::string_view sql, SqlParams params) {
  // The server infers a type for each text or NULL parameter from where it
  // stands; integers and reals say theirs, so "? + 1" stays 64-bit.
  std::string key;
  std::vector<Oid> types;
  types.reserve(params.size());
  for (const SqlValue& v : params) {
    const Oid t = std::holds_alternative<int64_t>(v)  ? kInt8Oid
                  : std::holds_alternative<double>(v) ? kFloat8Oid
                                                      : 0;
    types.push_back(t);
    key += t == kInt8Oid ? 'i' : t == kFloat8Oid ? 'd' : 'u';
  }
  key += '|';
  key += sql;
  auto it = prepared_.find(key);
  if (it != prepared_.end()) return it->second;
  // What was deferred goes first, in order: a prepare that fails aborts the
  // transaction, and the savepoint it would roll back to must exist by
  // then; and a deferred command would replace the unnamed statement.
  RETURN_IF_ERROR(Flush());
  // A statement with many parameters (a copy's multi-row INSERT) is seldom
  // run twice with the same types: the unnamed statement, replaced by the
  // next one, so the server does not keep each for the session's life.
  const bool once = params.size() > kMaxKeptParams;
  std::string name = once ? "" : "s" + std::to_string(prepared_.size() + 1);
  const std::string numbered = NumberPlaceholders(sql);
  PGresult* res = Pq().PQprepare(conn_, name.c_str(), numbered.c_str(),
                                 static_cast<int>(types.size()), types.data());
  Status s = ResultStatus(res, "preparing \"" + std::string(sql.substr(0, 80)) + "\"");
  Pq().PQclear(res);
  if (!s.ok()) return s;
  if (!once) prepared_.emplace(std::move(key), name);
  return name;
}

Result<PgSession::Bound> PgSession::Bind(std::string_view sql, SqlParams params) {
  Bound bound;
  bound.values.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const SqlValue& v = params[i];
    if (const auto* n = std::get_if<int64_t>(&v)) {
      bound.values[i] = std::to_string(*n);
    } else if (const auto* d = std::get_if<double>(&v)) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", *d);
      bound.values[i] = buf;
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      if (s->find('\0') != std::string::npos) {
        return InvalidArgumentError("parameter " + std::to_string(i + 1) +
                                    ": text with a NUL byte, which PostgreSQL cannot store");
      }
      bound.values[i] = *s;
    }  // else NULL
  }
  ASSIGN_OR_RETURN(bound.name, Prepare(sql, params));
  bound.text = std::string(sql.substr(0, 80));
  return bound;
}

Status PgSession::DeferRun(std::string_view sql, SqlParams params) {
  // The unnamed statement is replaced by the next one prepared: run now.
  if (params.size() > kMaxKeptParams) return Run(sql, params, nullptr).status();
  ASSIGN_OR_RETURN(Bound bound, Bind(sql, params));
  deferred_.push_back(std::move(bound));
  return Status();
}

namespace {

std::vector<const char*> ValuePointers(const std::vector<std::optional<std::string>>& values) {
  std::vector<const char*> out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(v ? v->c_str() : nullptr);
  return out;
}

}  // namespace

Status PgSession::Flush() {
  if (deferred_.empty()) return Status();
  Bound last = std::move(deferred_.back());
  deferred_.pop_back();
  ASSIGN_OR_RETURN(PGresult* res, SendPipelined(last));
  Status s = ResultStatus(res, last.text);
  Pq().PQclear(res);
  return s;
}

void PgSession::DropDeferredAfterSavepoint(std::string_view name) {
  const std::string savepoint = "SAVEPOINT " + std::string(name);
  size_t keep = 0;  // the savepoint not yet sent, and what came before it
  for (size_t i = deferred_.size(); i > 0; --i) {
    if (deferred_[i - 1].command && deferred_[i - 1].text == savepoint) {
      keep = i;
      break;
    }
  }
  deferred_.resize(keep);
}

Result<PGresult*> PgSession::Send(const Bound& last) {
  if (!deferred_.empty()) return SendPipelined(last);
  if (last.command) return Pq().PQexec(conn_, last.text.c_str());  // may hold several
  const std::vector<const char*> values = ValuePointers(last.values);
  return Pq().PQexecPrepared(conn_, last.name.c_str(), static_cast<int>(values.size()),
                             values.data(), nullptr, nullptr, 0);
}

Result<PGresult*> PgSession::SendPipelined(const Bound& last) {
  std::vector<Bound> queue;
  queue.swap(deferred_);
  if (Pq().PQenterPipelineMode(conn_) != 1) {
    return PgError(conn_, nullptr, "entering pipeline mode");
  }
  bool sent = true;
  auto send = [&](const Bound& b) {
    if (b.command) {
      return Pq().PQsendQueryParams(conn_, b.text.c_str(), 0, nullptr, nullptr, nullptr,
                                    nullptr, 0) == 1;
    }
    const std::vector<const char*> values = ValuePointers(b.values);
    return Pq().PQsendQueryPrepared(conn_, b.name.c_str(), static_cast<int>(values.size()),
                                    values.data(), nullptr, nullptr, 0) == 1;
  };
  for (const Bound& b : queue) sent = sent && send(b);
  sent = sent && send(last) && Pq().PQpipelineSync(conn_) == 1;
  // Each statement answers a result and then a null; the sync answers last.
  // A statement after a failed one answers PGRES_PIPELINE_ABORTED.
  Status failed = sent ? Status() : PgError(conn_, nullptr, "sending a pipeline");
  PGresult* answer = nullptr;
  for (size_t i = 0; sent && i <= queue.size(); ++i) {
    PGresult* res = Pq().PQgetResult(conn_);
    if (res == nullptr) {
      if (failed.ok()) failed = PgError(conn_, nullptr, "pipeline");
      break;
    }
    if (i < queue.size()) {
      if (failed.ok()) failed = ResultStatus(res, queue[i].text);
      Pq().PQclear(res);
    } else {
      answer = res;
    }
    for (PGresult* more; (more = Pq().PQgetResult(conn_)) != nullptr;) Pq().PQclear(more);
  }
  for (int i = 0; sent && i < 4; ++i) {  // what remains is the sync
    PGresult* res = Pq().PQgetResult(conn_);
    if (res == nullptr) continue;
    const bool sync = Pq().PQresultStatus(res) == PGRES_PIPELINE_SYNC;
    Pq().PQclear(res);
    if (sync) break;
  }
  // A session libpq cannot take out of pipeline mode is never used again:
  // healthy() says so and the pool drops it.
  if (Pq().PQexitPipelineMode(conn_) != 1) broken_ = true;
  if (!failed.ok() || answer == nullptr) {
    Pq().PQclear(answer);
    return failed.ok() ? PgError(conn_, nullptr, "pipeline") : failed;
  }
  return answer;
}

Result<std::vector<Row>> PgSession::Run(std::string_view sql, SqlParams params,
                                        int64_t* changes) {
  ASSIGN_OR_RETURN(Bound bound, Bind(sql, params));
  ASSIGN_OR_RETURN(PGresult* res, Send(bound));
  struct Clear {
    PGresult* r;
    ~Clear() { Pq().PQclear(r); }
  } clear{res};
  RETURN_IF_ERROR(ResultStatus(res, "statement"));
  std::vector<Row> rows;
  const int nrows = Pq().PQntuples(res);
  const int ncols = Pq().PQnfields(res);
  rows.reserve(static_cast<size_t>(nrows));
  for (int r = 0; r < nrows; ++r) {
    std::vector<SqlValue> row;
    row.reserve(static_cast<size_t>(ncols));
    for (int c = 0; c < ncols; ++c) row.push_back(ColumnValue(res, r, c));
    rows.emplace_back(std::move(row));
  }
  if (changes != nullptr) {
    const char* tuples = Pq().PQcmdTuples(res);
    *changes = tuples[0] == '\0' ? 0 : std::strtoll(tuples, nullptr, 10);
  }
  return rows;
}

Result<std::string> PgSession::Simple(const std::string& sql) {
  ASSIGN_OR_RETURN(PGresult* res, Send(Bound{true, "", sql, {}}));
  Status s = ResultStatus(res, sql.substr(0, 60));
  std::string tag = res != nullptr ? Pq().PQcmdStatus(res) : "";
  Pq().PQclear(res);
  if (!s.ok()) return s;
  return tag;
}

}  // namespace baton
