#include "store/tables/ledger_head_table.h"

namespace baton {

// h19-interchange:

Result<std::optional<OverviewLedgerHead>> FindLedgerHeadForOverview(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> head,
                   txn.Query("SELECT seq, hash FROM ledger_head WHERE id = 1", {}));
  if (head.empty()) return std::optional<OverviewLedgerHead>();
  return std::optional<OverviewLedgerHead>(
      OverviewLedgerHead{.seq = head[0].Int(0), .hash = head[0].Str(1)});
}

}  // namespace baton
