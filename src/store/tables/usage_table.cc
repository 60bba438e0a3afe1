#include "store/tables/usage_table.h"

#include <vector>

namespace baton {

// h19-ledger-profiles:

Result<int64_t> InsertSgaiUsageRow(Txn& txn, const SgaiUsage& u) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query(
          "INSERT INTO usage (run_id, agent, model, step_id, session_id, cost, input_tokens, "
          "output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
          {SqlText(u.run_id), SqlText(u.agent), SqlText(u.model), SqlText(u.step_id),
           SqlText(u.session_id), SqlValue(u.cost), SqlInt(u.input_tokens), SqlInt(u.output_tokens),
           SqlInt(u.reasoning_tokens), SqlInt(u.cache_read_tokens), SqlInt(u.cache_write_tokens),
           SqlText(u.created_at)}));
  return rows.at(0).Int(0);
}

}  // namespace baton
