// File: board_table.h
//
// The boards table (engine/coord/boards.h): a named, ordered list of
// columns, unique by name within a project (project_key: the project id, or
// '' for none). Read as a Board (model/board.h); JSON remains where the
// row holds JSON: "columns" and "config". The cards on a board are tasks
// (task_table.h ListBoardCards). Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_BOARD_TABLE_H_
#define BATON_SRC_STORE_TABLES_BOARD_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/board.h"
#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// NotFound "board <id>" when there is none.
Result<Board> LoadBoardRow(Txn& txn, const std::string& id);

// The boards whose id or name is "key" (only in "project_key" when given),
// by project_key.
Result<std::vector<Board>> FindBoardRows(Txn& txn, const std::string& key,
                                         const std::optional<std::string>& project_key);

// The id of the board named "name" in "project_key" ('' for none), if any.
Result<std::optional<std::string>> FindBoardIdByName(Txn& txn, const std::string& project_key,
                                                     const std::string& name);

// board.list: every board (only those of "project_key" when given), by
// project_key and name, with how many tasks are on each.
struct BoardListing {
  Board board;
  int64_t task_count = 0;
};
Result<std::vector<BoardListing>> ListBoardRows(Txn& txn,
                                                const std::optional<std::string>& project_key);

// A new board at version 1 with config {}; an empty "project_id" is no
// project (project_key '').
struct NewBoardRow {
  std::string id, name, project_id, description;
  std::optional<std::string> template_name;
  Json columns = Json::array();
  std::string now;
};
Status InsertBoardRow(Txn& txn, const NewBoardRow& board);

// Replaces board "id"'s columns, bumping its version.
Status UpdateBoardColumns(Txn& txn, const std::string& id, const Json& columns,
                          const std::string& now);

Status DeleteBoardRow(Txn& txn, const std::string& id);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

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
