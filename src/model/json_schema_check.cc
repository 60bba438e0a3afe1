#include "model/json_schema.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include "model/json_schema_internal.h"

namespace baton {
namespace {

using nlohmann::json;
using json_schema_internal::AsCount;
using json_schema_internal::CompiledPattern;
using json_schema_internal::Describe;
using json_schema_internal::FindType;
using json_schema_internal::kMaxDepth;
using json_schema_internal::Quote;
using json_schema_internal::ResolveRef;
using json_schema_internal::SchemaPath;
using json_schema_internal::Short;
using json_schema_internal::Step;

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

}  // namespace

Status CheckSchema(const json& schema) {
  return CheckSubschema(schema, schema, nullptr, 0);
}

}  // namespace baton
