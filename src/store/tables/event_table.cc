#include "store/tables/event_table.h"

namespace baton {

// h19-interchange:

Result<int64_t> CountAllEventRows(Txn& txn) {
  ASSIGN_OR_RETURN(Row r, txn.QueryOne("SELECT COUNT(*) FROM events", {}, "events"));
  return r.Int(0);
}

}  // namespace baton
