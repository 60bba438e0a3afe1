// File: token_table.h
//
// The tokens table: bearer tokens for HTTP callers (engine/core/tokens.h),
// typed as model/token.h's Token. Only a secret's SHA-256 ("hash") is
// stored; it is written once and looked up, never read back. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_TOKEN_TABLE_H_
#define BATON_SRC_STORE_TABLES_TOKEN_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "model/token.h"
#include "store/store.h"

namespace baton {

// Inserts "token" (live) with the hash of its secret.
Status InsertTokenRow(Txn& txn, const Token& token, const std::string& hash);

// Every token, revoked ones too, by creation then id.
Result<std::vector<Token>> ListTokenRows(Txn& txn);

// Token "id", if there is one.
Result<std::optional<Token>> FindTokenRow(Txn& txn, const std::string& id);

// Token "id" is revoked at "now".
Status RevokeTokenRow(Txn& txn, const std::string& id, const std::string& now);

// Who a live token speaks for.
struct TokenHolder {
  std::string agent_id;
  std::string role;
  Json grants = Json::array();  // as Token::grants
};
// The holder of the live (not revoked) token whose secret hashes to "hash", if any.
Result<std::optional<TokenHolder>> FindLiveTokenHolder(Txn& txn, const std::string& hash);

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

// What `baton verify --deep` compares of a token with its events
// (engine/ledger/ledger_replay.h): holder, role, revoked or not.
struct TokenStateForReplay {
  std::string id;
  std::string agent_id;
  std::string role;
  bool revoked = false;
};
// Every token, by id.
Result<std::vector<TokenStateForReplay>> ListTokenStatesForReplay(Txn& txn);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_TOKEN_TABLE_H_
