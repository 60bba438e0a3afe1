#include "model/yaml_scalar.h"

#include <charconv>
#include <cstdint>

namespace baton {

Json PlainYamlScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s.find_first_not_of("+-.0123456789eE") != std::string::npos ||
      s.find_first_of("0123456789") == std::string::npos) {
    return s;
  }
  const char* begin = s.data() + (s.size() > 1 && s[0] == '+' && s[1] != '-' ? 1 : 0);
  const char* end = s.data() + s.size();
  int64_t i = 0;
  if (auto [p, ec] = std::from_chars(begin, end, i); ec == std::errc() && p == end) return i;
  double d = 0;
  if (auto [p, ec] = std::from_chars(begin, end, d); ec == std::errc() && p == end) return d;
  return s;
}

}  // namespace baton
