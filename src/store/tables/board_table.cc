#include "store/tables/board_table.h"

#include "store/tables/row_values.h"

namespace baton {

// h19-interchange:

Result<std::vector<InboxBoard>> ListBoardsForInbox(Txn& txn, const std::string& project_id) {
  std::string where = " WHERE 1 = 1";
  std::vector<SqlValue> params;
  if (!project_id.empty()) {
    where += " AND b.project_id = ?";
    params.push_back(SqlText(project_id));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT b.id, b.name, b.columns FROM boards b" +
                                                        where + " ORDER BY b.created_at, b.id",
                                                    params));
  std::vector<InboxBoard> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0), .name = r.Str(1), .columns = JsonOr(r, 2, Json::array())});
  }
  return out;
}

}  // namespace baton
