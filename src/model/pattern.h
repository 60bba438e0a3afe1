// File: pattern.h
//
// A compiled JSON Schema "pattern". Most schema patterns are sequences of
// character classes with counts, such as baton's id pattern
// "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"; those are matched by a small
// linear-time matcher (no std::regex, which costs microseconds per match and
// every API call validates ids). Anything else falls back to std::regex.
// Matching is on bytes and searches anywhere unless anchored, as the JSON
// Schema spec says. Immutable after construction; thread-safe.

#ifndef BATON_SRC_MODEL_PATTERN_H_
#define BATON_SRC_MODEL_PATTERN_H_

#include <bitset>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

class Pattern {
 public:
  // nullopt when "pattern" does not compile (or uses back-references).
  static std::optional<Pattern> Compile(const std::string& pattern);

  // True when the pattern matches somewhere in "text".
  bool Search(std::string_view text) const;

  // True when the fast matcher handles this pattern (for tests).
  bool is_simple() const { return !items_.empty() || simple_empty_; }

 private:
  struct Item {
    std::bitset<256> chars;
    size_t min = 1;
    size_t max = 1;
  };

  static bool ParseSimple(const std::string& pattern, Pattern* out);
  bool SearchSimple(std::string_view text) const;

  std::vector<Item> items_;
  bool simple_empty_ = false;  // "" or "^$"-like with no items
  bool anchored_start_ = false;
  bool anchored_end_ = false;
  std::shared_ptr<const std::regex> regex_;
};

}  // namespace baton

#endif  // BATON_SRC_MODEL_PATTERN_H_
