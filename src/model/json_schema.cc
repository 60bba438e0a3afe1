#include "model/json_schema.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>

#include "model/json_schema_internal.h"

namespace baton {
namespace {

using nlohmann::json;
using json_schema_internal::Allowed;
using json_schema_internal::AsCount;
using json_schema_internal::Chain;
using json_schema_internal::CodePoints;
using json_schema_internal::CompiledPattern;
using json_schema_internal::Count;
using json_schema_internal::Describe;
using json_schema_internal::FindDuplicate;
using json_schema_internal::InstancePath;
using json_schema_internal::IsDateTime;
using json_schema_internal::Keyword;
using json_schema_internal::kMaxDepth;
using json_schema_internal::Quote;
using json_schema_internal::ResolveRef;
using json_schema_internal::SchemaPath;
using json_schema_internal::Short;
using json_schema_internal::Step;
using json_schema_internal::TypeList;
using json_schema_internal::TypeMatches;

// allOf/anyOf/oneOf/not/$ref applied in a row without a step into the
// instance: real schemas stay far below this, a $ref loop does not.
constexpr int kMaxInPlaceHops = 64;

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

// -1, 0 or 1 as "a" is below, equal to or above "b", exactly for every pair
// of JSON numbers (nlohmann compares an unsigned above 2^63 with a signed
// integer by casting it negative, which let 2^63 pass a maximum).
int CompareNumbers(const json& a, const json& b) {
  const auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  const bool a_int = a.is_number_integer();
  const bool b_int = b.is_number_integer();
  if (a_int && b_int) {
    const bool a_neg = !a.is_number_unsigned() && a.get<int64_t>() < 0;
    const bool b_neg = !b.is_number_unsigned() && b.get<int64_t>() < 0;
    if (a_neg != b_neg) return a_neg ? -1 : 1;
    if (a_neg) return sign(a.get<int64_t>(), b.get<int64_t>());
    return sign(a.get<uint64_t>(), b.get<uint64_t>());
  }
  // long double holds every int64 exactly on the platforms baton builds on.
  return sign(a.get<long double>(), b.get<long double>());
}

constexpr Bound kBounds[] = {
    {"minimum", ">=", [](const json& v, const json& l) { return CompareNumbers(v, l) >= 0; }},
    {"exclusiveMinimum", ">", [](const json& v, const json& l) { return CompareNumbers(v, l) > 0; }},
    {"maximum", "<=", [](const json& v, const json& l) { return CompareNumbers(v, l) <= 0; }},
    {"exclusiveMaximum", "<", [](const json& v, const json& l) { return CompareNumbers(v, l) < 0; }},
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
    if (re != nullptr && re->Search(text)) return true;
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
