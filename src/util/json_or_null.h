// File: json_or_null.h
//
// An optional value as JSON: the value, or null when it is absent — how
// every typed row (model/) writes its nullable columns into the answers.

#ifndef BATON_SRC_UTIL_JSON_OR_NULL_H_
#define BATON_SRC_UTIL_JSON_OR_NULL_H_

#include <optional>

#include "util/json_util.h"

namespace baton {

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}

}  // namespace baton

#endif  // BATON_SRC_UTIL_JSON_OR_NULL_H_
