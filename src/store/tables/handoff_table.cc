#include "store/tables/handoff_table.h"

namespace baton {

Result<bool> HandoffExists(Txn& txn, const std::string& run_id, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT 1 FROM handoffs WHERE run_id = ? AND id = ?",
                             {SqlText(run_id), SqlText(id)}));
  return !rows.empty();
}

}  // namespace baton
