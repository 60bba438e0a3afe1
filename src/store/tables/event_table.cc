#include "store/tables/event_table.h"

namespace baton {

// h19-core-runs:

Result<int64_t> CountRunProgressEvents(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(Row count, txn.QueryOne("SELECT COUNT(*) FROM events WHERE run_id = ? AND "
                                           "kind = 'run.progress'",
                                           {SqlText(run_id)}, "progress count"));
  return count.Int(0);
}

}  // namespace baton
