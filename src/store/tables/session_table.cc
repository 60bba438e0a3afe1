#include "store/tables/session_table.h"

#include <vector>
#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {

Result<bool> SessionIdTaken(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT 1 FROM sessions WHERE id = ?", {SqlText(id)}));
  return !rows.empty();
}

Result<std::optional<std::string>> FindSessionRunId(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT run_id FROM sessions WHERE id = ?", {SqlText(id)}));
  if (rows.empty() || rows[0].IsNull(0)) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].Str(0));
}

Result<std::optional<std::string>> FindActiveSessionId(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id FROM sessions WHERE run_id = ? AND status = 'active' "
                             "ORDER BY started_at DESC, id DESC LIMIT 1",
                             {SqlText(run_id)}));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].Str(0));
}

Status EndActiveSessions(Txn& txn, const std::string& run_id, const std::string& now) {
  return txn
      .Exec(
          "UPDATE sessions SET status = 'ended', last_active_at = ? "
          "WHERE run_id = ? AND status = 'active'",
          {SqlText(now), SqlText(run_id)})
      .status();
}

Status InsertActiveSession(Txn& txn, const std::string& id, const std::string& run_id,
                           const std::string& now) {
  return txn
      .Exec(
          "INSERT INTO sessions (id, run_id, status, started_at, "
          "last_active_at, meta) VALUES (?, ?, 'active', ?, ?, '{}')",
          {SqlText(id), SqlText(run_id), SqlText(now), SqlText(now)})
      .status();
}

Status TouchActiveSessions(Txn& txn, const std::string& run_id, const std::string& now) {
  return txn
      .Exec("UPDATE sessions SET last_active_at = ? WHERE run_id = ? AND status = 'active'",
            {SqlText(now), SqlText(run_id)})
      .status();
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

Result<std::vector<ExportedSession>> ExportRunSessionRows(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, status, started_at, last_active_at, meta FROM sessions "
                             "WHERE run_id = ? ORDER BY started_at, id",
                             {SqlText(run_id)}));
  std::vector<ExportedSession> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0),
                   .status = r.Str(1),
                   .started_at = r.Str(2),
                   .last_active_at = r.Str(3),
                   .meta = JsonOr(r, 4, Json::object())});
  }
  return out;
}

Result<bool> InsertImportedSession(Txn& txn, const std::string& run_id, const ExportedSession& s) {
  ASSIGN_OR_RETURN(
      int64_t n, txn.Exec("INSERT INTO sessions (id, run_id, status, started_at, "
                          "last_active_at, meta) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                          {SqlText(s.id), SqlText(run_id), SqlText(s.status), SqlText(s.started_at),
                           SqlText(s.last_active_at), SqlText(CanonicalJson(s.meta))}));
  return n != 0;
}

}  // namespace baton
