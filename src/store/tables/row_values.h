// File: row_values.h
//
// Column readers the tables share: text that may be NULL, JSON the store
// wrote (NULL or text that does not parse reads as a fallback), and a
// one-column answer as a list of text.

#ifndef BATON_SRC_STORE_TABLES_ROW_VALUES_H_
#define BATON_SRC_STORE_TABLES_ROW_VALUES_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

inline std::optional<std::string> TextOrNone(const Row& r, size_t i) {
  if (r.IsNull(i)) return std::nullopt;
  return r.Str(i);
}

// The first column of each of "rows", as text: the answer of a statement
// that selects one column (ids, paths, stored payloads).
inline std::vector<std::string> FirstColumn(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(r.Str(0));
  return out;
}

// "SELECT <each element>" of a JSON array of texts bound as one parameter:
// "col IN (" + this + ")" reads any number of ids in one statement (a
// statement's parameters are bounded; the lists that ask are not).
inline const char* JsonArrayElementsSql(SqlDialect dialect) {
  return dialect == SqlDialect::kPostgres ? "SELECT json_array_elements_text(CAST(? AS json))"
                                          : "SELECT value FROM json_each(?)";
}

inline Json JsonOr(const Row& r, size_t i, Json fallback) {
  if (r.IsNull(i)) return fallback;
  Json j = Json::parse(r.Str(i), nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_ROW_VALUES_H_
