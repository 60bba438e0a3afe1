// File: board_columns.h
//
// Inside the boards service (not for other rooms): validation and
// normalisation of board columns, the built-in and user board templates, and
// the small helpers boards.cc shares with them. Split from boards.cc so each
// file stays readable; the contract is in boards.h.

#ifndef BATON_SRC_ENGINE_COORD_BOARD_COLUMNS_H_
#define BATON_SRC_ENGINE_COORD_BOARD_COLUMNS_H_

#ifndef BATON_ENGINE_BUILDING_COORD
#error "engine/coord/board_columns.h is private to engine/coord/ (src/engine/README.md)"
#endif

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton::boards_internal {

std::string Quote(std::string_view s);
std::string JoinNames(const std::vector<std::string>& names);
std::string ColumnNames(const Json& columns);
// Board and column names: letters, digits and . _ - (Genie's "closed-won").
bool ValidName(std::string_view s);
// InvalidArgument "<field>: must be <rule> (got <type> <value>)".
Status Invalid(const std::string& field, const std::string& rule, const Json& got);

// What happens to column ids given by the caller.
enum class IdMode { kDrop, kKeep, kNew };
// Every column in full form (defaults filled in, positions 0..n-1), or the
// first problem, named by "where(index)" (a column) or "field" (the list).
Result<Json> NormalizeColumns(const Json& columns, const std::function<std::string(size_t)>& where,
                              IdMode ids, const std::string& field);
// where(i) = "<field>[i]".
std::function<std::string(size_t)> IndexedField(const std::string& field);

struct BuiltinTemplates {
  Json list = Json::array();
  Status status;
};
// The embedded templates, parsed and normalised once.
const BuiltinTemplates& Builtins();
// Built-in templates, then the user's.
Result<Json> AllTemplates(Txn& txn);
// NotFound naming "field" and the templates there are.
Result<Json> FindTemplate(Txn& txn, const std::string& name, const char* field);

}  // namespace baton::boards_internal

#endif  // BATON_SRC_ENGINE_COORD_BOARD_COLUMNS_H_
