// File: ledger_head_table.h
//
// The ledger_head table: one row (id 1) holding the seq and hash of the
// ledger's last event (engine/ledger/ledger.h), so that removing the newest
// events is detected too. The ledger reads and moves it on every write (a
// hot path: one fixed statement text each); verify, the witness and the
// writer's accept-loss check read it. Portable SQL (? placeholders,
// ON CONFLICT), so a second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_LEDGER_HEAD_TABLE_H_
#define BATON_SRC_STORE_TABLES_LEDGER_HEAD_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "store/store.h"

namespace baton {

struct LedgerHeadRow {
  int64_t seq = 0;
  std::string hash;
};

// The head; nullopt while the ledger has no event.
Result<std::optional<LedgerHeadRow>> LoadLedgerHeadRow(Txn& txn);

// Makes "seq" and "hash" the head (creating the row the first time).
Status SaveLedgerHeadRow(Txn& txn, int64_t seq, const std::string& hash);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_LEDGER_HEAD_TABLE_H_
