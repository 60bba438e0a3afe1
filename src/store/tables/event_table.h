// File: event_table.h
//
// The events table (the run ledger: engine/ledger/ledger.h appends and
// reads it). Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_EVENT_TABLE_H_
#define BATON_SRC_STORE_TABLES_EVENT_TABLE_H_

#include <cstdint>
#include <string>

#include "store/store.h"

namespace baton {

// h19-core-runs:

// How many progress notes (events of kind run.progress) run "run_id" has.
Result<int64_t> CountRunProgressEvents(Txn& txn, const std::string& run_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_EVENT_TABLE_H_
