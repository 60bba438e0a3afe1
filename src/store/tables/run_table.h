// File: run_table.h
//
// The runs table: one row per run (a profile's workflow: its machine and
// status, cursor, context and meta). Portable SQL (? placeholders), so a
// second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_RUN_TABLE_H_
#define BATON_SRC_STORE_TABLES_RUN_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

// h19-ledger-profiles:

// A run's id and status, as `baton verify --deep` compares them with the
// status its events imply (engine/ledger/ledger_replay.h).
struct RunStatusForReplay {
  std::string id;
  std::string status;
};
// Every run, by id.
Result<std::vector<RunStatusForReplay>> ListRunStatusesForReplay(Txn& txn);

// Sinfonia's cursor: run "run_id"'s current step is "step_key" (NULL when
// "" — no current step) at "index"; the version is bumped.
Status SetSinfoniaRunCursor(Txn& txn, const std::string& run_id, const std::string& step_key,
                            int64_t index, const std::string& now);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_RUN_TABLE_H_
