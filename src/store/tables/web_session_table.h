// File: web_session_table.h
//
// The web_sessions table: the dashboard's sign-ins (engine/core/tokens.h).
// A row holds the SHA-256 of the session's two secrets (the cookie's "id"
// and the page's "proof"), never the secrets; how it was made (credential
// "human", or "token:<hash of the token's secret>", so that it dies with the
// token); who it acts as; and when it expires. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_WEB_SESSION_TABLE_H_
#define BATON_SRC_STORE_TABLES_WEB_SESSION_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

struct WebSession {
  std::string id_hash;
  std::string proof_hash;
  std::string credential;  // "human" | "token:<hash>"
  std::string agent_id;
  std::string role;
  std::string created_at;
  int64_t expires_ms = 0;
};

Status InsertWebSession(Txn& txn, const WebSession& session);

// The session whose id hashes to "id_hash", if any, expired or not (its
// created_at is not read).
Result<std::optional<WebSession>> FindWebSession(Txn& txn, const std::string& id_hash);

// The sessions that have not expired at "now_ms", by creation then id hash
// (their proof_hash is not read).
Result<std::vector<WebSession>> ListLiveWebSessions(Txn& txn, int64_t now_ms);

// Deletes the session whose id hashes to "id_hash"; false when there was none.
Result<bool> DeleteWebSession(Txn& txn, const std::string& id_hash);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_WEB_SESSION_TABLE_H_
