// File: optional_text.h
//
// A text that may be missing where the input says "missing" with "": none
// for "", else the text — how an operation's optional fields and a format's
// empty strings become a row's NULL columns (model/, store/tables/).

#ifndef BATON_SRC_UTIL_OPTIONAL_TEXT_H_
#define BATON_SRC_UTIL_OPTIONAL_TEXT_H_

#include <optional>
#include <string>

namespace baton {

inline std::optional<std::string> NoneIfEmpty(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

}  // namespace baton

#endif  // BATON_SRC_UTIL_OPTIONAL_TEXT_H_
