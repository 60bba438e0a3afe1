#include "store/tables/project_table.h"

namespace baton {

// h19-interchange:

Result<int64_t> CountAllProjectRows(Txn& txn) {
  ASSIGN_OR_RETURN(Row r, txn.QueryOne("SELECT COUNT(*) FROM projects", {}, "projects"));
  return r.Int(0);
}

}  // namespace baton
