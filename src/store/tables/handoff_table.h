// File: handoff_table.h
//
// The handoffs table (Sinfonia's hand-offs of a run; engine/profiles/
// sinfonia writes them): the reads other rooms need.

#ifndef BATON_SRC_STORE_TABLES_HANDOFF_TABLE_H_
#define BATON_SRC_STORE_TABLES_HANDOFF_TABLE_H_

#include <string>

#include "store/store.h"

namespace baton {

// Whether run "run_id" has a hand-off "id".
Result<bool> HandoffExists(Txn& txn, const std::string& run_id, const std::string& id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_HANDOFF_TABLE_H_
