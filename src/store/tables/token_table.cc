#include "store/tables/token_table.h"

namespace baton {

// h19-ledger-profiles:

Result<std::vector<TokenStateForReplay>> ListTokenStatesForReplay(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, agent_id, role, CASE WHEN revoked_at IS NULL THEN 0 "
                             "ELSE 1 END "
                             "FROM tokens "
                             "ORDER BY id",
                             {}));
  std::vector<TokenStateForReplay> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Str(0), r.Str(1), r.Str(2), r.Int(3) != 0});
  return out;
}

}  // namespace baton
