// File: board.h
//
// One row of the boards table, typed (store/tables/board_table.h reads it):
// a named, ordered list of columns, optionally of a project
// (engine/coord/boards.h). BoardToJson gives the shape every board operation
// returns; JSON remains where the row holds JSON: "columns" and "config".

#ifndef BATON_SRC_MODEL_BOARD_H_
#define BATON_SRC_MODEL_BOARD_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct Board {
  std::string id;
  std::string name;
  std::optional<std::string> project_id;
  std::string description;
  std::optional<std::string> template_name;
  Json columns = Json::array();
  Json config = Json::object();
  int64_t version = 0;
  std::string created_at;
  std::string updated_at;
};

// {id, name, project_id | null, description, template | null, columns,
// config, version, created_at, updated_at}.
Json BoardToJson(const Board& board);

}  // namespace baton

#endif  // BATON_SRC_MODEL_BOARD_H_
