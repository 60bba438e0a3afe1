#include "model/json_schema.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <regex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace baton {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 128;
// allOf/anyOf/oneOf/not/$ref applied in a row without a step into the
// instance: real schemas stay far below this, a $ref loop does not.
constexpr int kMaxInPlaceHops = 64;
constexpr size_t kMaxCachedPatterns = 1024;
constexpr size_t kSmallArray = 16;  // uniqueItems scans smaller ones pairwise
constexpr size_t kMaxShown = 60;    // bytes of a value quoted in a message

// libstdc++'s default regex matcher recurses once per character and overflows
// the stack near 100k characters; the breadth-first one does not, but cannot
// run back-references.
#if defined(__GLIBCXX__)
constexpr auto kRegexFlags =
    std::regex::ECMAScript | std::regex_constants::__polynomial;
#else
constexpr auto kRegexFlags = std::regex::ECMAScript;
#endif

// One link of a path. Links live on the stack of the recursion that walks the
// path, so a path costs nothing until a failure renders it.
struct Step {
  const Step* parent;
  std::string_view key;  // unless is_index
  size_t index = 0;
  bool is_index = false;
};

std::vector<const Step*> Chain(const Step* last) {
  std::vector<const Step*> chain;
  for (; last != nullptr; last = last->parent) chain.push_back(last);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// Never throws, even for strings built in code with invalid UTF-8.
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

bool IsIdentifier(std::string_view key) {
  auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  return !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0])) &&
         std::all_of(key.begin(), key.end(), word);
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

// A JSON pointer (RFC 6901).
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

// Goes to the std::map underneath: nlohmann's iterators cost more than the
// lookup itself.
const json* Keyword(const json& schema, std::string_view name) {
  if (!schema.is_object()) return nullptr;
  const auto& members = schema.get_ref<const json::object_t&>();
  auto it = members.find(name);
  return it == members.end() ? nullptr : &it->second;
}

bool IsIntegral(const json& value) {
  if (value.is_number_integer()) return true;
  const double d = value.is_number_float() ? value.get<double>() : 0.5;
  return std::isfinite(d) && std::floor(d) == d;
}

// A count may be written 3 or 3.0, as the spec allows.
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

struct TypeSpec {
  std::string_view name;
  bool (*has)(const json&);
};

constexpr TypeSpec kTypes[] = {
    {"object", [](const json& v) { return v.is_object(); }},
    {"array", [](const json& v) { return v.is_array(); }},
    {"string", [](const json& v) { return v.is_string(); }},
    {"integer", IsIntegral},
    {"number", [](const json& v) { return v.is_number(); }},
    {"boolean", [](const json& v) { return v.is_boolean(); }},
    {"null", [](const json& v) { return v.is_null(); }},
};

const TypeSpec* FindType(const json& name) {
  if (!name.is_string()) return nullptr;
  for (const TypeSpec& t : kTypes) {
    if (t.name == name.get_ref<const std::string&>()) return &t;
  }
  return nullptr;
}

// A malformed "type" matches everything; CheckSchema is where it is reported.
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

// "an integer", "a string or null", "an object, an array or a boolean".
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

// RFC 3339 section 5.6 by shape and field ranges; days per month are not
// checked, the looseness the format keyword allows.
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

// Compiled patterns by their text, kept for the life of the process; null
// for a pattern that does not compile. Lookups share the lock.
std::shared_ptr<const std::regex> CompiledPattern(const std::string& pattern) {
  static auto* const mu = new std::shared_mutex();
  static auto* const cache =  // GUARDED_BY(*mu)
      new std::unordered_map<std::string, std::shared_ptr<const std::regex>>();
  {
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
  std::shared_ptr<const std::regex> compiled;
  try {
    compiled = std::make_shared<const std::regex>(pattern, kRegexFlags);
  } catch (const std::regex_error&) {
    // Stays null: CheckSchema reports it, ValidateJson fails the value.
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

// ---- CheckSchema ----

enum class Kind {
  kSchema,
  kSchemaMap,
  kSchemaList,
  kType,
  kNames,
  kEnum,
  kArray,
  kAny,
  kNumber,
  kCount,
  kBool,
  kString,
};

constexpr std::pair<std::string_view, Kind> kKeywords[] = {
    {"type", Kind::kType},           {"properties", Kind::kSchemaMap},
    {"required", Kind::kNames},      {"additionalProperties", Kind::kSchema},
    {"enum", Kind::kEnum},           {"const", Kind::kAny},
    {"minimum", Kind::kNumber},      {"exclusiveMinimum", Kind::kNumber},
    {"maximum", Kind::kNumber},      {"exclusiveMaximum", Kind::kNumber},
    {"minLength", Kind::kCount},     {"maxLength", Kind::kCount},
    {"pattern", Kind::kString},      {"format", Kind::kString},
    {"items", Kind::kSchema},        {"minItems", Kind::kCount},
    {"maxItems", Kind::kCount},      {"uniqueItems", Kind::kBool},
    {"minProperties", Kind::kCount}, {"maxProperties", Kind::kCount},
    {"anyOf", Kind::kSchemaList},    {"oneOf", Kind::kSchemaList},
    {"allOf", Kind::kSchemaList},    {"not", Kind::kSchema},
    {"$ref", Kind::kString},         {"$defs", Kind::kSchemaMap},
    {"$schema", Kind::kString},      {"$id", Kind::kString},
    {"title", Kind::kString},        {"description", Kind::kString},
    {"default", Kind::kAny},         {"examples", Kind::kArray},
    {"readOnly", Kind::kBool},       {"writeOnly", Kind::kBool},
    {"deprecated", Kind::kBool},
};

bool AllDistinct(const json& array, bool (*ok)(const json&)) {
  for (size_t i = 0; i < array.size(); ++i) {
    if (!ok(array[i])) return false;
    for (size_t j = 0; j < i; ++j) {
      if (array[i] == array[j]) return false;
    }
  }
  return true;
}

// Returns what a value of "kind" must be, or "" when "v" is one.
std::string_view Mismatch(Kind kind, const json& v) {
  auto unless = [](bool ok, std::string_view need) { return ok ? "" : need; };
  auto is_type = [](const json& t) { return FindType(t) != nullptr; };
  auto is_string = [](const json& s) { return s.is_string(); };
  switch (kind) {
    case Kind::kSchema:
      return unless(v.is_object() || v.is_boolean(),
                    "an object or boolean schema");
    case Kind::kSchemaMap:
      return unless(v.is_object(), "an object of schemas");
    case Kind::kSchemaList:
      return unless(v.is_array() && !v.empty(), "a non-empty array of schemas");
    case Kind::kType:
      return unless(
          is_type(v) || (v.is_array() && !v.empty() && AllDistinct(v, is_type)),
          "a type name or an array of distinct type names");
    case Kind::kNames:
      return unless(v.is_array() && AllDistinct(v, is_string),
                    "an array of distinct strings");
    case Kind::kEnum:
      return unless(v.is_array() && !v.empty(), "a non-empty array");
    case Kind::kArray:
      return unless(v.is_array(), "an array");
    case Kind::kAny:
      return "";
    case Kind::kNumber:
      return unless(v.is_number(), "a number");
    case Kind::kCount:
      return unless(AsCount(v).has_value(), "a non-negative integer");
    case Kind::kBool:
      return unless(v.is_boolean(), "a boolean");
    case Kind::kString:
      return unless(v.is_string(), "a string");
  }
  return "";
}

Status SchemaError(const Step* at, const std::string& problem) {
  const std::string path = SchemaPath(at);
  return Status(StatusCode::kInvalidArgument,
                (path.empty() ? "(root)" : path) + ": " + problem,
                json{{"path", path}, {"rule", "schema"}});
}

Status CheckSubschema(const json& root, const json& schema, const Step* at,
                      int depth);

Status CheckKeyword(const json& root, std::string_view name, Kind kind,
                    const json& v, const Step* at, int depth) {
  if (std::string_view need = Mismatch(kind, v); !need.empty()) {
    return SchemaError(
        at, "must be " + std::string(need) + " (got " + Describe(v) + ")");
  }
  if (name == "pattern" && CompiledPattern(v.get<std::string>()) == nullptr) {
    return SchemaError(at, Short(v) +
                               " is not an ECMAScript regular "
                               "expression without back-references");
  }
  if (name == "$ref" && ResolveRef(root, v.get<std::string>()) == nullptr) {
    return SchemaError(at, "must name a definition as \"#/$defs/NAME\" (" +
                               Short(v) + " does not resolve)");
  }
  if (kind == Kind::kSchema) return CheckSubschema(root, v, at, depth + 1);
  if (kind != Kind::kSchemaMap && kind != Kind::kSchemaList) return Status();
  size_t i = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++i) {
    const Step step = v.is_array() ? Step{at, {}, i, true} : Step{at, it.key()};
    RETURN_IF_ERROR(CheckSubschema(root, *it, &step, depth + 1));
  }
  return Status();
}

Status CheckSubschema(const json& root, const json& schema, const Step* at,
                      int depth) {
  if (depth >= kMaxDepth) {
    return SchemaError(at, "nesting deeper than 128 levels");
  }
  if (std::string_view need = Mismatch(Kind::kSchema, schema); !need.empty()) {
    return SchemaError(
        at, "must be " + std::string(need) + " (got " + Describe(schema) + ")");
  }
  if (schema.is_boolean()) return Status();
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    const Step step{at, it.key()};
    if (it.key().starts_with("x-")) continue;
    const auto* spec = std::find_if(
        std::begin(kKeywords), std::end(kKeywords),
        [&](const auto& keyword) { return keyword.first == it.key(); });
    if (spec == std::end(kKeywords)) {
      return SchemaError(&step, "unknown keyword " + Quote(it.key()));
    }
    RETURN_IF_ERROR(
        CheckKeyword(root, spec->first, spec->second, *it, &step, depth));
  }
  return Status();
}

// ---- ValidateJson ----

struct Failure {
  std::string path;
  std::string schema_path;
  std::string rule;
  std::string message;  // without the path
  int depth = -1;       // steps from the root to the failing value
};

// Where a schema is applied: both paths, and how many in-place applicators
// ran since the last step into the instance.
struct Where {
  const Step* instance;
  const Step* schema;
  int hops;
};

struct Bound {
  std::string_view keyword;
  std::string_view op;
  bool (*ok)(const json& value, const json& limit);
};

constexpr Bound kBounds[] = {
    {"minimum", ">=", [](const json& v, const json& l) { return !(v < l); }},
    {"exclusiveMinimum", ">",
     [](const json& v, const json& l) { return l < v; }},
    {"maximum", "<=", [](const json& v, const json& l) { return !(l < v); }},
    {"exclusiveMaximum", "<",
     [](const json& v, const json& l) { return v < l; }},
};

// minLength/maxLength, minItems/maxItems, minProperties/maxProperties.
struct SizeRule {
  std::string_view min;
  std::string_view max;
  std::string_view one;
  std::string_view many;
};

constexpr SizeRule kLength{"minLength", "maxLength", "character", "characters"};
constexpr SizeRule kItems{"minItems", "maxItems", "item", "items"};
constexpr SizeRule kProperties{"minProperties", "maxProperties", "property",
                               "properties"};

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

// A schema object plus the set of its keys' first characters, so that most
// of the dozen keyword lookups per node end in one bit test.
class Node {
 public:
  explicit Node(const json::object_t& members) : members_(members) {
    for (const auto& member : members) mask_ |= Bit(member.first);
  }

  const json* operator[](std::string_view name) const {
    if ((mask_ & Bit(name)) == 0) return nullptr;
    auto it = members_.find(name);
    return it == members_.end() ? nullptr : &it->second;
  }

 private:
  static uint64_t Bit(std::string_view key) {
    return key.empty() ? 1 : uint64_t{1} << (key[0] & 63);
  }

  const json::object_t& members_;
  uint64_t mask_ = 0;
};

// Walks one schema over one instance and stops at the first violation. With a
// null "failure" it only answers pass or fail and never builds a message,
// which is how anyOf, oneOf and not probe their subschemas.
class Validator {
 public:
  Validator(const json& root, Failure* failure)
      : root_(root), failure_(failure) {}

  bool Check(const json& schema, const json& value, const Where& at) const {
    if (schema.is_boolean()) {
      return schema.get<bool>() ||
             Fail(at, "false", [] { return "no value is allowed here"; });
    }
    if (!schema.is_object()) return true;
    if (at.hops > kMaxInPlaceHops) {
      return Fail(at, "$ref",
                  [] { return "schema loops without consuming input"; });
    }
    const Node node(schema.get_ref<const json::object_t&>());
    return CheckType(node, value, at) && CheckValue(node, value, at) &&
           CheckByType(node, value, at) && CheckRef(node, value, at) &&
           CheckAllOf(node, value, at) &&
           CheckAlternatives(node, value, at, "anyOf") &&
           CheckAlternatives(node, value, at, "oneOf") &&
           CheckNot(node, value, at);
  }

 private:
  bool CheckType(const Node& schema, const json& value, const Where& at) const {
    const json* type = schema["type"];
    if (type == nullptr || TypeMatches(*type, value)) return true;
    return Fail(at, "type", [&] {
      return "must be " + TypeList(*type) + " (got " + Describe(value) + ")";
    });
  }

  bool CheckValue(const Node& schema, const json& value,
                  const Where& at) const {
    const json* expected = schema["const"];
    if (expected != nullptr && *expected != value) {
      return Fail(at, "const", [&] {
        return "must be " + Short(*expected) + " (got " + Short(value) + ")";
      });
    }
    const json* options = schema["enum"];
    if (options == nullptr || !options->is_array()) return true;
    if (std::find(options->begin(), options->end(), value) != options->end()) {
      return true;
    }
    return Fail(at, "enum", [&] {
      std::string list;
      for (const json& option : *options) {
        list += (list.empty() ? "" : ", ") + Short(option);
      }
      return "must be one of " + list + " (got " + Short(value) + ")";
    });
  }

  bool CheckByType(const Node& schema, const json& value,
                   const Where& at) const {
    if (value.is_number()) return CheckNumber(schema, value, at);
    if (value.is_string()) return CheckString(schema, value, at);
    if (value.is_array()) return CheckArray(schema, value, at);
    if (!value.is_object()) return true;
    return CheckSize(schema, at, kProperties, value.size()) &&
           CheckMembers(schema, value, at) && CheckRequired(schema, value, at);
  }

  bool CheckNumber(const Node& schema, const json& value,
                   const Where& at) const {
    for (const Bound& b : kBounds) {
      const json* limit = schema[b.keyword];
      if (limit == nullptr || !limit->is_number() || b.ok(value, *limit))
        continue;
      return Fail(at, b.keyword, [&] {
        return "must be " + std::string(b.op) + " " + Short(*limit) + " (got " +
               Short(value) + ")";
      });
    }
    return true;
  }

  bool CheckSize(const Node& schema, const Where& at, const SizeRule& rule,
                 uint64_t size) const {
    const json* min = schema[rule.min];
    const json* max = schema[rule.max];
    const auto lo = min != nullptr ? AsCount(*min) : std::nullopt;
    const auto hi = max != nullptr ? AsCount(*max) : std::nullopt;
    if (lo && size < *lo) {
      return Fail(at, rule.min, [&] {
        return "must have at least " + Count(*lo, rule.one, rule.many) +
               " (got " + std::to_string(size) + ")";
      });
    }
    if (!hi || size <= *hi) return true;
    return Fail(at, rule.max, [&] {
      return "must have at most " + Count(*hi, rule.one, rule.many) + " (got " +
             std::to_string(size) + ")";
    });
  }

  bool CheckString(const Node& schema, const json& value,
                   const Where& at) const {
    const std::string& text = value.get_ref<const std::string&>();
    if (!CheckSize(schema, at, kLength, CodePoints(text))) return false;
    const json* format = schema["format"];
    if (format != nullptr && format->is_string() &&
        format->get_ref<const std::string&>() == "date-time" &&
        !IsDateTime(text)) {
      return Fail(at, "format", [&] {
        return "must be an RFC 3339 date-time (got " + Short(value) + ")";
      });
    }
    const json* pattern = schema["pattern"];
    if (pattern == nullptr || !pattern->is_string()) return true;
    const auto re = CompiledPattern(pattern->get_ref<const std::string&>());
    if (re != nullptr && std::regex_search(text, *re)) return true;
    return Fail(at, "pattern", [&] {
      return re == nullptr ? "pattern " + Short(*pattern) + " does not compile"
                           : "must match pattern " + Short(*pattern) +
                                 " (got " + Short(value) + ")";
    });
  }

  bool CheckArray(const Node& schema, const json& value,
                  const Where& at) const {
    if (!CheckSize(schema, at, kItems, value.size())) return false;
    const json* unique = schema["uniqueItems"];
    const auto dup = unique != nullptr && *unique == true ? FindDuplicate(value)
                                                          : std::nullopt;
    if (dup) {
      return Fail(at, "uniqueItems", [&] {
        return "must have unique items ([" + std::to_string(dup->first) +
               "] and [" + std::to_string(dup->second) + "] are both " +
               Short(value[dup->first]) + ")";
      });
    }
    const json* items = schema["items"];
    const Step schema_step{at.schema, "items"};
    for (size_t i = 0; items != nullptr && i < value.size(); ++i) {
      const Step step{at.instance, {}, i, true};
      if (!Check(*items, value[i], {&step, &schema_step, 0})) return false;
    }
    return true;
  }

  // One pass over the members serves properties and additionalProperties.
  // Unknown names are reported before missing ones: a typo causes both, and
  // "allowed: ..." shows the fix.
  bool CheckMembers(const Node& schema, const json& value,
                    const Where& at) const {
    const json* props = schema["properties"];
    if (props != nullptr && !props->is_object()) props = nullptr;
    const json* extra = schema["additionalProperties"];
    const Step props_step{at.schema, "properties"};
    const Step extra_step{at.schema, "additionalProperties"};
    for (auto it = value.begin(); it != value.end(); ++it) {
      const json* sub = props != nullptr ? Keyword(*props, it.key()) : nullptr;
      if (sub == nullptr && extra == nullptr) continue;
      if (sub == nullptr && *extra == false) {
        return Fail(at, "additionalProperties", [&] {
          return "unknown property " + Quote(it.key()) +
                 " (allowed: " + Allowed(props) + ")";
        });
      }
      const Step step{at.instance, it.key()};
      const Step name_step{&props_step, it.key()};
      const Where where{&step, sub != nullptr ? &name_step : &extra_step, 0};
      if (!Check(sub != nullptr ? *sub : *extra, *it, where)) return false;
    }
    return true;
  }

  bool CheckRequired(const Node& schema, const json& value,
                     const Where& at) const {
    const json* required = schema["required"];
    if (required == nullptr || !required->is_array()) return true;
    for (const json& name : *required) {
      if (!name.is_string() ||
          value.contains(name.get_ref<const std::string&>())) {
        continue;
      }
      return Fail(at, "required",
                  [&] { return "missing required property " + Short(name); });
    }
    return true;
  }

  bool CheckRef(const Node& schema, const json& value, const Where& at) const {
    const json* ref = schema["$ref"];
    if (ref == nullptr || !ref->is_string()) return true;
    const json* target = ResolveRef(root_, ref->get_ref<const std::string&>());
    if (target == nullptr) {
      return Fail(at, "$ref",
                  [&] { return Short(*ref) + " does not resolve"; });
    }
    const Step step{at.schema, "$ref"};
    return Check(*target, value, {at.instance, &step, at.hops + 1});
  }

  bool CheckAllOf(const Node& schema, const json& value,
                  const Where& at) const {
    const json* all = schema["allOf"];
    if (all == nullptr || !all->is_array()) return true;
    const Step keyword{at.schema, "allOf"};
    for (size_t i = 0; i < all->size(); ++i) {
      const Step step{&keyword, {}, i, true};
      if (!Check((*all)[i], value, {at.instance, &step, at.hops + 1})) {
        return false;
      }
    }
    return true;
  }

  bool CheckNot(const Node& schema, const json& value, const Where& at) const {
    const json* negated = schema["not"];
    if (negated == nullptr) return true;
    const Step step{at.schema, "not"};
    const Where where{at.instance, &step, at.hops + 1};
    if (!Validator(root_, nullptr).Check(*negated, value, where)) return true;
    return Fail(at, "not",
                [] { return "must not match the schema in \"not\""; });
  }

  // Alternatives are probed silently; a message is built only once all of
  // them have failed.
  bool CheckAlternatives(const Node& schema, const json& value, const Where& at,
                         std::string_view keyword) const {
    const json* list = schema[keyword];
    if (list == nullptr || !list->is_array() || list->empty()) return true;
    const Step keyword_step{at.schema, keyword};
    std::optional<size_t> match;
    for (size_t i = 0; i < list->size(); ++i) {
      const Step step{&keyword_step, {}, i, true};
      const Where where{at.instance, &step, at.hops + 1};
      if (!Validator(root_, nullptr).Check((*list)[i], value, where)) continue;
      if (keyword == "anyOf") return true;
      if (match) {
        return Fail(at, keyword, [&] {
          return "must match exactly one schema in oneOf (matches #" +
                 std::to_string(*match) + " and #" + std::to_string(i) + ")";
        });
      }
      match = i;
    }
    return match.has_value() || Fail(at, keyword, [&] {
             return NoMatch(*list, value, at, keyword_step);
           });
  }

  // Tells why no alternative matched through the one that got furthest into
  // the instance (on a tie, one that at least had the right type).
  std::string NoMatch(const json& list, const json& value, const Where& at,
                      const Step& keyword_step) const {
    Failure best;
    size_t best_index = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      Failure failure;
      const Step step{&keyword_step, {}, i, true};
      (void)Validator(root_, &failure)
          .Check(list[i], value, {at.instance, &step, at.hops + 1});
      if (failure.depth > best.depth ||
          (failure.depth == best.depth && best.rule == "type" &&
           failure.rule != "type")) {
        best = std::move(failure);
        best_index = i;
      }
    }
    std::string out = std::string("must match ") +
                      (keyword_step.key == "oneOf" ? "exactly" : "at least") +
                      " one schema in " + std::string(keyword_step.key) +
                      " (closest is #" + std::to_string(best_index) + ": ";
    if (best.path != InstancePath(at.instance)) out += best.path + ": ";
    return out + best.message + ")";
  }

  // Returns false so that checks can end with `return Fail(...)`; "make"
  // builds the message only when someone will read it.
  template <typename MakeMessage>
  bool Fail(const Where& at, std::string_view rule, MakeMessage make) const {
    if (failure_ == nullptr) return false;
    // A false schema fails where it stands; every other rule is a keyword.
    const Step keyword{at.schema, rule};
    failure_->schema_path = SchemaPath(rule == "false" ? at.schema : &keyword);
    failure_->path = InstancePath(at.instance);
    failure_->rule = rule;
    failure_->message = make();
    failure_->depth = static_cast<int>(Chain(at.instance).size());
    return false;
  }

  const json& root_;
  Failure* failure_;
};

// Runs before validation, so that no later recursion (ours, or nlohmann's in
// comparisons and dumps) goes deeper than kMaxDepth.
bool TooDeep(const json& value, int depth, const Step* at, std::string* path) {
  if (!value.is_structured()) return false;
  if (depth == kMaxDepth) {
    *path = InstancePath(at);
    return true;
  }
  size_t i = 0;
  for (auto it = value.begin(); it != value.end(); ++it, ++i) {
    const Step step =
        value.is_array() ? Step{at, {}, i, true} : Step{at, it.key()};
    if (TooDeep(*it, depth + 1, &step, path)) return true;
  }
  return false;
}

Status ValidationError(const Failure& f) {
  return Status(
      StatusCode::kInvalidArgument, f.path + ": " + f.message,
      json{{"path", f.path}, {"rule", f.rule}, {"schema_path", f.schema_path}});
}

}  // namespace

Status CheckSchema(const json& schema) {
  return CheckSubschema(schema, schema, nullptr, 0);
}

Status ValidateJson(const json& schema, const json& instance) {
  Failure failure;
  if (TooDeep(instance, 0, nullptr, &failure.path)) {
    failure.rule = "depth";
    failure.message = "nesting deeper than 128 levels";
    return ValidationError(failure);
  }
  const Validator validator(schema, &failure);
  if (validator.Check(schema, instance, {nullptr, nullptr, 0})) return Status();
  return ValidationError(failure);
}

}  // namespace baton
