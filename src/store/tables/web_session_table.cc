#include "store/tables/web_session_table.h"

namespace baton {

Status InsertWebSession(Txn& txn, const WebSession& s) {
  return txn
      .Exec(
          "INSERT INTO web_sessions (id_hash, proof_hash, credential, agent_id, "
          "role, created_at, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
          {SqlText(s.id_hash), SqlText(s.proof_hash), SqlText(s.credential), SqlText(s.agent_id),
           SqlText(s.role), SqlText(s.created_at), SqlInt(s.expires_ms)})
      .status();
}

Result<std::optional<WebSession>> FindWebSession(Txn& txn, const std::string& id_hash) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT proof_hash, credential, agent_id, role, expires_ms FROM "
                             "web_sessions WHERE id_hash = ?",
                             {SqlText(id_hash)}));
  if (rows.empty()) return std::optional<WebSession>();
  const Row& r = rows[0];
  return std::optional<WebSession>(WebSession{.id_hash = id_hash,
                                              .proof_hash = r.Str(0),
                                              .credential = r.Str(1),
                                              .agent_id = r.Str(2),
                                              .role = r.Str(3),
                                              .expires_ms = r.Int(4)});
}

Result<std::vector<WebSession>> ListLiveWebSessions(Txn& txn, int64_t now_ms) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id_hash, agent_id, role, credential, created_at, "
                             "expires_ms FROM web_sessions WHERE expires_ms >= ? ORDER BY "
                             "created_at, id_hash",
                             {SqlInt(now_ms)}));
  std::vector<WebSession> sessions;
  sessions.reserve(rows.size());
  for (const Row& r : rows) {
    sessions.push_back({.id_hash = r.Str(0),
                        .credential = r.Str(3),
                        .agent_id = r.Str(1),
                        .role = r.Str(2),
                        .created_at = r.Str(4),
                        .expires_ms = r.Int(5)});
  }
  return sessions;
}

Result<bool> DeleteWebSession(Txn& txn, const std::string& id_hash) {
  ASSIGN_OR_RETURN(int64_t gone,
                   txn.Exec("DELETE FROM web_sessions WHERE id_hash = ?", {SqlText(id_hash)}));
  return gone > 0;
}

}  // namespace baton
