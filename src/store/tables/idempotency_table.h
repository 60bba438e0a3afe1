// File: idempotency_table.h
//
// The idempotency table: a write's result kept under the caller's key, so
// that the same request sent again is answered, not done twice
// (ops/api.cc). "key" is already scoped to the caller.

#ifndef BATON_SRC_STORE_TABLES_IDEMPOTENCY_TABLE_H_
#define BATON_SRC_STORE_TABLES_IDEMPOTENCY_TABLE_H_

#include <optional>
#include <string>

#include "store/store.h"

namespace baton {

struct IdempotentCall {
  std::string key;
  std::string op;
  std::string actor_id;
  std::string request_hash;
  std::string result;  // canonical JSON text
  std::string created_at;
};

// The call stored under "key", if any.
Result<std::optional<IdempotentCall>> FindIdempotentCall(Txn& txn, const std::string& key);
Status InsertIdempotentCall(Txn& txn, const IdempotentCall& call);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_IDEMPOTENCY_TABLE_H_
