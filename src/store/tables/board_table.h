// File: board_table.h
//
// The boards table: kanban boards, per project, with their columns (and
// each column's gate and transitions) as JSON. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_BOARD_TABLE_H_
#define BATON_SRC_STORE_TABLES_BOARD_TABLE_H_

#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

// inbox.list: every board (only project "project_id"'s when it is not ""),
// by creation, then id, with its columns ([] when unset).
struct InboxBoard {
  std::string id;
  std::string name;
  Json columns;
};
Result<std::vector<InboxBoard>> ListBoardsForInbox(Txn& txn, const std::string& project_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_BOARD_TABLE_H_
