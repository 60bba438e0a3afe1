// File: token_table.h
//
// The tokens table: bearer tokens for HTTP callers, stored hashed, each
// with its holder (agent_id), role, grants and whether it was revoked.
// Portable SQL (? placeholders), so a second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_TOKEN_TABLE_H_
#define BATON_SRC_STORE_TABLES_TOKEN_TABLE_H_

#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

// h19-ledger-profiles:

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
