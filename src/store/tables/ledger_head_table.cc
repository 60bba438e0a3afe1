#include "store/tables/ledger_head_table.h"

#include <vector>

namespace baton {

Result<std::optional<LedgerHeadRow>> LoadLedgerHeadRow(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT seq, hash FROM ledger_head WHERE id = 1", {}));
  if (rows.empty()) return std::optional<LedgerHeadRow>();
  return std::optional<LedgerHeadRow>(LedgerHeadRow{rows[0].Int(0), rows[0].Str(1)});
}

Status SaveLedgerHeadRow(Txn& txn, int64_t seq, const std::string& hash) {
  return txn.ExecLater(
      "INSERT INTO ledger_head (id, seq, hash) VALUES (1, ?, ?) "
      "ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, "
      "hash = excluded.hash",
      {SqlInt(seq), SqlText(hash)});
}

}  // namespace baton
