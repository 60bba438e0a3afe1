// File: ledger_head_table.h
//
// The ledger_head table: one row (id 1) holding the seq and hash of the
// ledger's last event. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_LEDGER_HEAD_TABLE_H_
#define BATON_SRC_STORE_TABLES_LEDGER_HEAD_TABLE_H_

#include <optional>
#include <string>

#include "store/store.h"

namespace baton {

// h19-interchange:

// baton status: the ledger's head as stored; none before the first event.
struct OverviewLedgerHead {
  int64_t seq = 0;
  std::string hash;
};
Result<std::optional<OverviewLedgerHead>> FindLedgerHeadForOverview(Txn& txn);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_LEDGER_HEAD_TABLE_H_
