// File: row_values.h
//
// Column readers the tables share: text that may be NULL, and JSON the
// store wrote (NULL or text that does not parse reads as a fallback).

#ifndef BATON_SRC_STORE_TABLES_ROW_VALUES_H_
#define BATON_SRC_STORE_TABLES_ROW_VALUES_H_

#include <optional>
#include <string>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

inline std::optional<std::string> TextOrNone(const Row& r, size_t i) {
  if (r.IsNull(i)) return std::nullopt;
  return r.Str(i);
}

inline Json JsonOr(const Row& r, size_t i, Json fallback) {
  if (r.IsNull(i)) return fallback;
  Json j = Json::parse(r.Str(i), nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_ROW_VALUES_H_
