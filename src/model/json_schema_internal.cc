#include "model/json_schema_internal.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <numeric>
#include <shared_mutex>
#include <unordered_map>

namespace baton::json_schema_internal {
namespace {

constexpr size_t kMaxCachedPatterns = 1024;
constexpr size_t kMaxShown = 60;  // bytes of a value quoted in a message
constexpr size_t kSmallArray = 16;  // uniqueItems scans smaller ones pairwise

bool IsIdentifier(std::string_view key) {
  auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  return !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0])) &&
         std::all_of(key.begin(), key.end(), word);
}

}  // namespace

std::vector<const Step*> Chain(const Step* last) {
  std::vector<const Step*> chain;
  for (; last != nullptr; last = last->parent) chain.push_back(last);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Quote(std::string_view text) {
  return Dump(json(std::string(text)));
}

std::string Short(const json& value) {
  std::string text = Dump(value);
  if (text.size() <= kMaxShown) return text;
  size_t cut = kMaxShown;  // back up to the start of a UTF-8 sequence
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return text.substr(0, cut) + "...";
}

std::string Describe(const json& value) {
  std::string type = value.is_number_integer() ? "integer" : value.type_name();
  if (!value.is_primitive() || value.is_null()) return type;
  return type + " " + Short(value);
}

std::string InstancePath(const Step* last) {
  std::string out = "$";
  for (const Step* s : Chain(last)) {
    if (s->is_index) {
      out += "[" + std::to_string(s->index) + "]";
    } else if (IsIdentifier(s->key)) {
      out += "." + std::string(s->key);
    } else {
      out += "[" + Quote(s->key) + "]";
    }
  }
  return out;
}

std::string SchemaPath(const Step* last) {
  std::string out;
  for (const Step* s : Chain(last)) {
    out += "/";
    if (s->is_index) out += std::to_string(s->index);
    for (char c : s->key) {
      out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    }
  }
  return out;
}

std::optional<uint64_t> AsCount(const json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  // Schemas built in C++ hold signed integers ({"maxLength", 200}).
  if (value.is_number_integer()) {
    const int64_t i = value.get<int64_t>();
    if (i < 0) return std::nullopt;
    return static_cast<uint64_t>(i);
  }
  if (!value.is_number_float() || !IsIntegral(value)) return std::nullopt;
  const double d = value.get<double>();
  if (d < 0 || d >= 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(d);
}

const TypeSpec* FindType(const json& name) {
  if (!name.is_string()) return nullptr;
  for (const TypeSpec& t : kTypes) {
    if (t.name == name.get_ref<const std::string&>()) return &t;
  }
  return nullptr;
}

bool TypeMatches(const json& type, const json& value) {
  if (!type.is_array()) {
    const TypeSpec* spec = FindType(type);
    return spec == nullptr || spec->has(value);
  }
  return std::any_of(type.begin(), type.end(), [&](const json& name) {
    const TypeSpec* spec = FindType(name);
    return spec != nullptr && spec->has(value);
  });
}

std::string TypeList(const json& type) {
  std::string out;
  const size_t n = type.is_array() ? type.size() : 1;
  for (size_t i = 0; i < n; ++i) {
    const json& t = type.is_array() ? type[i] : type;
    const std::string name = t.is_string() ? t.get<std::string>() : Dump(t);
    if (i > 0) out += i + 1 == n ? " or " : ", ";
    if (name != "null") out += name.find_first_of("aeiou") == 0 ? "an " : "a ";
    out += name;
  }
  return out;
}

std::string Count(uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

size_t CodePoints(const std::string& text) {
  return std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
}

// Small arrays are scanned pairwise so that the common case allocates nothing.
std::optional<std::pair<size_t, size_t>> FindDuplicate(const json& array) {
  const size_t n = array.size();
  if (n <= kSmallArray) {
    for (size_t j = 1; j < n; ++j) {
      for (size_t i = 0; i < j; ++i) {
        if (array[i] == array[j]) return std::make_pair(i, j);
      }
    }
    return std::nullopt;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return array[a] < array[b]; });
  for (size_t k = 1; k < n; ++k) {
    if (array[order[k - 1]] == array[order[k]]) {
      return std::minmax(order[k - 1], order[k]);
    }
  }
  return std::nullopt;
}

std::string Allowed(const json* properties) {
  if (properties == nullptr || properties->empty()) return "none";
  std::string out;
  for (auto it = properties->begin(); it != properties->end(); ++it) {
    out += (out.empty() ? "" : ", ") + it.key();
  }
  return out;
}

namespace {

// "d" in "shape" stands for a digit; other characters match themselves,
// letters in either case.
bool HasShape(std::string_view s, std::string_view shape) {
  if (s.size() != shape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (shape[i] == 'd' ? !std::isdigit(c) : std::toupper(c) != shape[i]) {
      return false;
    }
  }
  return true;
}

int TwoDigits(std::string_view s, size_t at) {
  return (s[at] - '0') * 10 + (s[at + 1] - '0');
}

}  // namespace

bool IsDateTime(std::string_view s) {
  if (s.size() < 20 || !HasShape(s.substr(0, 19), "dddd-dd-ddTdd:dd:dd") ||
      TwoDigits(s, 5) < 1 || TwoDigits(s, 5) > 12 || TwoDigits(s, 8) < 1 ||
      TwoDigits(s, 8) > 31 || TwoDigits(s, 11) > 23 || TwoDigits(s, 14) > 59 ||
      TwoDigits(s, 17) > 60) {
    return false;
  }
  size_t end = 19;
  if (s[end] == '.') {
    end = std::min(s.find_first_not_of("0123456789", 20), s.size());
    if (end == 20) return false;  // a dot needs digits
  }
  const std::string_view zone = s.substr(end);
  if (zone.size() == 1) return HasShape(zone, "Z");
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') &&
         HasShape(zone.substr(1), "dd:dd") && TwoDigits(zone, 1) <= 23 &&
         TwoDigits(zone, 4) <= 59;
}

std::shared_ptr<const Pattern> CompiledPattern(const std::string& pattern) {
  static auto* const mu = new std::shared_mutex();
  static auto* const cache =  // guarded by *mu
      new std::unordered_map<std::string, std::shared_ptr<const Pattern>>();
  {  // lookups share the lock
    std::shared_lock lock(*mu);
    auto it = cache->find(pattern);
    if (it != cache->end()) return it->second;
  }
  // Compiling under the writer lock keeps compilations from racing on the
  // table std::ctype<char>::narrow fills lazily (harmless, but ThreadSanitizer
  // reports it), and compiles each pattern once.
  std::unique_lock lock(*mu);
  auto it = cache->find(pattern);
  if (it != cache->end()) return it->second;
  std::shared_ptr<const Pattern> compiled;
  // Stays null when it does not compile: CheckSchema reports it, ValidateJson
  // fails the value.
  if (std::optional<Pattern> p = Pattern::Compile(pattern)) {
    compiled = std::make_shared<const Pattern>(std::move(*p));
  }
  if (cache->size() < kMaxCachedPatterns) cache->emplace(pattern, compiled);
  return compiled;
}

const json* ResolveRef(const json& root, std::string_view ref) {
  constexpr std::string_view kPrefix = "#/$defs/";
  if (!ref.starts_with(kPrefix) || !root.is_object()) return nullptr;
  const std::string_view name = ref.substr(kPrefix.size());
  // Escaped or nested pointers are outside the subset: refuse, not misread.
  if (name.find_first_of("/~%") != std::string_view::npos) return nullptr;
  const json* defs = Keyword(root, "$defs");
  return defs != nullptr && defs->is_object() ? Keyword(*defs, name) : nullptr;
}

}  // namespace baton::json_schema_internal
