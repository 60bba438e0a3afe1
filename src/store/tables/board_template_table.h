// File: board_template_table.h
//
// The board_templates table: the user's board templates, by name (Genie's
// built-ins are compiled in, never stored: engine/coord/boards.h). JSON
// remains where the row holds JSON: "columns". Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_BOARD_TEMPLATE_TABLE_H_
#define BATON_SRC_STORE_TABLES_BOARD_TEMPLATE_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

struct BoardTemplateRow {
  std::string name;
  std::string description;
  std::optional<std::string> icon;
  Json columns = Json::array();
};

// Every user template, by name.
Result<std::vector<BoardTemplateRow>> ListBoardTemplateRows(Txn& txn);

// Stores "row" created at "created_at"; AlreadyExists when the name is taken.
Status InsertBoardTemplateRow(Txn& txn, const BoardTemplateRow& row, const std::string& created_at);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_BOARD_TEMPLATE_TABLE_H_
