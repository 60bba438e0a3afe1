// File: json_schema_internal.h
//
// Private to src/model: the helpers that CheckSchema (json_schema_check.cc)
// and ValidateJson (json_schema.cc) share — paths, keyword lookup, the type
// table, quoting values in messages, the date-time format and the pattern
// cache. Nothing outside those two files may include it; the interface is
// json_schema.h. All functions are thread-safe.

#ifndef BATON_SRC_MODEL_JSON_SCHEMA_INTERNAL_H_
#define BATON_SRC_MODEL_JSON_SCHEMA_INTERNAL_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <regex>

#include "model/pattern.h"
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace baton::json_schema_internal {

using nlohmann::json;

inline constexpr int kMaxDepth = 128;

// One link of a path. Links live on the stack of the recursion that walks the
// path, so a path costs nothing until a failure renders it.
struct Step {
  const Step* parent;
  std::string_view key;  // unless is_index
  size_t index = 0;
  bool is_index = false;
};

// The links from the root down to "last".
std::vector<const Step*> Chain(const Step* last);

// "$", "$.status", "$.items[2].name", "$[\"odd key\"]".
std::string InstancePath(const Step* last);

// A JSON pointer (RFC 6901).
std::string SchemaPath(const Step* last);

// Never throws, even for strings built in code with invalid UTF-8.
std::string Dump(const json& value);

std::string Quote(std::string_view text);

// The value's JSON text, cut to about 60 bytes.
std::string Short(const json& value);

// "integer 3", "string \"x\"", "object".
std::string Describe(const json& value);

// Goes to the std::map underneath: nlohmann's iterators cost more than the
// lookup itself.
inline const json* Keyword(const json& schema, std::string_view name) {
  if (!schema.is_object()) return nullptr;
  const auto& members = schema.get_ref<const json::object_t&>();
  auto it = members.find(name);
  return it == members.end() ? nullptr : &it->second;
}

inline bool IsIntegral(const json& value) {
  if (value.is_number_integer()) return true;
  const double d = value.is_number_float() ? value.get<double>() : 0.5;
  return std::isfinite(d) && std::floor(d) == d;
}

// A count may be written 3 or 3.0, as the spec allows.
std::optional<uint64_t> AsCount(const json& value);

struct TypeSpec {
  std::string_view name;
  bool (*has)(const json&);
};

inline constexpr TypeSpec kTypes[] = {
    {"object", [](const json& v) { return v.is_object(); }},
    {"array", [](const json& v) { return v.is_array(); }},
    {"string", [](const json& v) { return v.is_string(); }},
    {"integer", IsIntegral},
    {"number", [](const json& v) { return v.is_number(); }},
    {"boolean", [](const json& v) { return v.is_boolean(); }},
    {"null", [](const json& v) { return v.is_null(); }},
};

// The entry of kTypes that "name" names, or null.
const TypeSpec* FindType(const json& name);

// A malformed "type" matches everything; CheckSchema is where it is reported.
bool TypeMatches(const json& type, const json& value);

// "an integer", "a string or null", "an object, an array or a boolean".
std::string TypeList(const json& type);

// "1 item", "3 items".
std::string Count(uint64_t n, std::string_view one, std::string_view many);

size_t CodePoints(const std::string& text);

// The indices, lower first, of two equal items of "array", if it has any.
std::optional<std::pair<size_t, size_t>> FindDuplicate(const json& array);

// The names "properties" defines, for a message: "a, b, c", or "none".
std::string Allowed(const json* properties);

// RFC 3339 section 5.6 by shape and field ranges; days per month are not
// checked, the looseness the format keyword allows.
bool IsDateTime(std::string_view s);

// Compiled patterns by their text, kept for the life of the process; null
// for a pattern that does not compile.
std::shared_ptr<const Pattern> CompiledPattern(const std::string& pattern);

// The definition "#/$defs/NAME" names in "root", or null.
const json* ResolveRef(const json& root, std::string_view ref);

}  // namespace baton::json_schema_internal

#endif  // BATON_SRC_MODEL_JSON_SCHEMA_INTERNAL_H_
