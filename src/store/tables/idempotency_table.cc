#include "store/tables/idempotency_table.h"

namespace baton {

Result<std::optional<IdempotentCall>> FindIdempotentCall(Txn& txn, const std::string& key) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT op, actor_id, request_hash, result, created_at "
                             "FROM idempotency WHERE key = ?",
                             {SqlText(key)}));
  if (rows.empty()) return std::optional<IdempotentCall>();
  const Row& r = rows[0];
  return std::optional<IdempotentCall>(IdempotentCall{.key = key,
                                                      .op = r.Str(0),
                                                      .actor_id = r.Str(1),
                                                      .request_hash = r.Str(2),
                                                      .result = r.Str(3),
                                                      .created_at = r.Str(4)});
}

Status InsertIdempotentCall(Txn& txn, const IdempotentCall& c) {
  return txn
      .Exec("INSERT INTO idempotency (key, op, actor_id, request_hash, result, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            {SqlText(c.key), SqlText(c.op), SqlText(c.actor_id), SqlText(c.request_hash),
             SqlText(c.result), SqlText(c.created_at)})
      .status();
}

}  // namespace baton
