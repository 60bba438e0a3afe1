// File: event_table.h
//
// The events table: the ledger, one hash-chained row per event, in seq
// order. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_EVENT_TABLE_H_
#define BATON_SRC_STORE_TABLES_EVENT_TABLE_H_

#include "store/store.h"

namespace baton {

// h19-interchange:

// baton status: how many events the ledger holds.
Result<int64_t> CountAllEventRows(Txn& txn);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_EVENT_TABLE_H_
