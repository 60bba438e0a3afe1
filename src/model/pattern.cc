#include "model/pattern.h"

namespace baton {
namespace {

// libstdc++'s default regex matcher recurses once per character and overflows
// the stack on long strings; the breadth-first mode does not, but it cannot
// do back-references, so those patterns are refused.
#if defined(__GLIBCXX__)
constexpr auto kRegexFlags = std::regex::ECMAScript | std::regex_constants::__polynomial;
#else
constexpr auto kRegexFlags = std::regex::ECMAScript;
#endif

// Parses one bracket class starting after '['; returns the index after ']'
// or npos when the class uses something the fast matcher does not handle.
size_t ParseClass(const std::string& p, size_t i, std::bitset<256>* set) {
  // Negation, and ECMAScript's empty class "[]", fall back to std::regex.
  if (i < p.size() && (p[i] == '^' || p[i] == ']')) return std::string::npos;
  while (i < p.size() && p[i] != ']') {
    unsigned char c = static_cast<unsigned char>(p[i]);
    if (c == '\\' || c == '[') return std::string::npos;
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      unsigned char hi = static_cast<unsigned char>(p[i + 2]);
      if (hi < c || hi == '\\') return std::string::npos;
      for (unsigned v = c; v <= hi; ++v) set->set(v);
      i += 3;
    } else {
      set->set(c);
      ++i;
    }
  }
  return i < p.size() ? i + 1 : std::string::npos;
}

// Parses a quantifier at "i" into min/max; returns the index after it.
size_t ParseQuantifier(const std::string& p, size_t i, size_t* min, size_t* max) {
  if (i >= p.size()) return i;
  switch (p[i]) {
    case '*': *min = 0; *max = SIZE_MAX; return i + 1;
    case '+': *min = 1; *max = SIZE_MAX; return i + 1;
    case '?': *min = 0; *max = 1; return i + 1;
    case '{': {
      size_t close = p.find('}', i);
      if (close == std::string::npos) return std::string::npos;
      std::string body = p.substr(i + 1, close - i - 1);
      size_t comma = body.find(',');
      try {
        *min = std::stoul(body.substr(0, comma));
        *max = comma == std::string::npos ? *min
               : comma + 1 == body.size() ? SIZE_MAX
                                          : std::stoul(body.substr(comma + 1));
      } catch (...) {
        return std::string::npos;
      }
      return *max < *min ? std::string::npos : close + 1;
    }
    default:
      return i;
  }
}

}  // namespace

bool Pattern::ParseSimple(const std::string& p, Pattern* out) {
  size_t i = 0;
  if (i < p.size() && p[i] == '^') {
    out->anchored_start_ = true;
    ++i;
  }
  const std::string specials = "\\()|.^$*+?{}";
  while (i < p.size()) {
    if (p[i] == '$' && i + 1 == p.size()) {
      out->anchored_end_ = true;
      break;
    }
    Item item;
    if (p[i] == '[') {
      i = ParseClass(p, i + 1, &item.chars);
      if (i == std::string::npos) return false;
    } else if (specials.find(p[i]) != std::string::npos || p[i] == ']') {
      return false;
    } else {
      item.chars.set(static_cast<unsigned char>(p[i]));
      ++i;
    }
    i = ParseQuantifier(p, i, &item.min, &item.max);
    if (i == std::string::npos) return false;
    // A quantifier followed by another ('a*?', 'a{2}+') is not plain.
    if (i < p.size() && std::string("*+?{").find(p[i]) != std::string::npos) return false;
    out->items_.push_back(item);
  }
  out->simple_empty_ = out->items_.empty();
  return true;
}

std::optional<Pattern> Pattern::Compile(const std::string& pattern) {
  Pattern out;
  if (ParseSimple(pattern, &out)) return out;
  Pattern fallback;
  try {
    fallback.regex_ = std::make_shared<const std::regex>(pattern, kRegexFlags);
  } catch (const std::regex_error&) {
    return std::nullopt;
  }
  return fallback;
}

bool Pattern::Search(std::string_view text) const {
  if (regex_ != nullptr) return std::regex_search(text.begin(), text.end(), *regex_);
  return SearchSimple(text);
}

// reach[pos] says the items so far can end at byte "pos". Each item extends
// every reachable position by min..max bytes of its class: O(n * items * n)
// at worst, with n bounded by the string and tiny for real schemas.
bool Pattern::SearchSimple(std::string_view text) const {
  const size_t n = text.size();
  std::vector<char> reach(n + 1, 0);
  for (size_t s = 0; s <= n; ++s) reach[s] = anchored_start_ ? s == 0 : 1;
  for (const Item& item : items_) {
    std::vector<char> next(n + 1, 0);
    for (size_t s = 0; s <= n; ++s) {
      if (!reach[s]) continue;
      size_t run = 0;  // bytes of the class available from s
      if (item.min == 0) next[s] = 1;
      while (s + run < n && run < item.max &&
             item.chars.test(static_cast<unsigned char>(text[s + run]))) {
        ++run;
        if (run >= item.min) next[s + run] = 1;
      }
    }
    reach.swap(next);
  }
  if (anchored_end_) return reach[n];
  for (char r : reach) {
    if (r) return true;
  }
  return false;
}

}  // namespace baton
