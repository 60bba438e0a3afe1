#include "model/json_schema.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "baton/status.h"

// Every heap allocation in this binary is counted, so that a test can check
// that validating a conforming instance allocates nothing. The nothrow forms
// are replaced too because the sanitizers' own versions would not pair with
// these deletes; noinline keeps GCC from pairing new and free across inlining.
namespace {
std::atomic<long> g_allocations{0};
}  // namespace

__attribute__((noinline)) void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void* operator new(std::size_t size,
                                             const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
__attribute__((noinline)) void operator delete(void* p) noexcept {
  std::free(p);
}
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
__attribute__((noinline)) void operator delete(void* p,
                                               const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace baton {
namespace {

using nlohmann::json;

Status Validate(std::string_view schema, std::string_view instance) {
  return ValidateJson(json::parse(schema), json::parse(instance));
}

// A keyword case: "error" is the whole expected message, or null when the
// instance conforms.
struct Case {
  const char* schema;
  const char* instance;
  const char* error;
  const char* rule;
};

void ExpectCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    Status status = Validate(c.schema, c.instance);
    const std::string where =
        std::string("schema ") + c.schema + " instance " + c.instance;
    if (c.error == nullptr) {
      EXPECT_TRUE(status.ok()) << where << ": " << status.ToString();
      continue;
    }
    ASSERT_FALSE(status.ok()) << where;
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << where;
    EXPECT_EQ(status.message(), c.error) << where;
    EXPECT_EQ(status.details().value("rule", ""), c.rule) << where;
  }
}

// Builds "depth" arrays nested inside each other, innermost empty.
json NestedArrays(int depth) {
  json value = json::array();
  for (int i = 1; i < depth; ++i) {
    json outer = json::array();
    outer.push_back(std::move(value));
    value = std::move(outer);
  }
  return value;
}

std::string RepeatedPath(std::string_view step, int times) {
  std::string path = "$";
  for (int i = 0; i < times; ++i) path += step;
  return path;
}

TEST(JsonSchemaTest, RejectsWrongType) {
  ExpectCases({
      {R"({"properties": {"priority": {"type": "integer"}}})",
       R"({"priority": "high"})",
       R"($.priority: must be an integer (got string "high"))", "type"},
      {R"({"type": "integer"})", "5", nullptr, nullptr},
      {R"({"type": "integer"})", "5.5",
       "$: must be an integer (got number 5.5)", "type"},
      {R"({"type": "number"})", "-2.5", nullptr, nullptr},
      {R"({"type": "number"})", "true",
       "$: must be a number (got boolean true)", "type"},
      {R"({"type": "integer"})", "false",
       "$: must be an integer (got boolean false)", "type"},
      {R"({"type": "boolean"})", "0", "$: must be a boolean (got integer 0)",
       "type"},
      {R"({"type": "string"})", R"("x")", nullptr, nullptr},
      {R"({"type": "null"})", "{}", "$: must be null (got object)", "type"},
      {R"({"type": "object"})", "[]", "$: must be an object (got array)",
       "type"},
      {R"({"type": "array"})", "[1]", nullptr, nullptr},
      {R"({"type": ["string", "null"]})", "null", nullptr, nullptr},
      {R"({"type": ["string", "null"]})", "1",
       "$: must be a string or null (got integer 1)", "type"},
      {R"({"type": ["object", "array", "boolean"]})", R"("x")",
       R"($: must be an object, an array or a boolean (got string "x"))",
       "type"},
  });
}

TEST(JsonSchemaTest, AcceptsIntegerValuedDoubles) {
  ExpectCases({
      {R"({"type": "integer"})", "3.0", nullptr, nullptr},
      {R"({"type": "integer"})", "1e2", nullptr, nullptr},
      {R"({"type": "integer"})", "-0.0", nullptr, nullptr},
      {R"({"type": "integer"})", "1e300", nullptr, nullptr},
      {R"({"type": "integer"})", "3.000001",
       "$: must be an integer (got number 3.000001)", "type"},
      {R"({"minLength": 2.0})", R"("ab")", nullptr, nullptr},
      {R"({"minLength": 2.0})", R"("a")",
       "$: must have at least 2 characters (got 1)", "minLength"},
      {R"({"enum": [1, 2]})", "2.0", nullptr, nullptr},
      {R"({"const": 7.0})", "7", nullptr, nullptr},
      {R"({"uniqueItems": true})", "[1, 1.0]",
       "$: must have unique items ([0] and [1] are both 1)", "uniqueItems"},
  });
  EXPECT_TRUE(CheckSchema(json::parse(R"({"maxItems": 4.0})")).ok());
}

TEST(JsonSchemaTest, ChecksObjectKeywords) {
  const char* status_task =
      R"({"properties": {"status": {}, "task": {}},
          "additionalProperties": false})";
  ExpectCases({
      {R"({"properties": {"a": {"type": "string"}}})", R"({"a": "x", "b": 1})",
       nullptr, nullptr},
      {R"({"properties": {"a": {"type": "string"}}})", R"({"a": 1})",
       "$.a: must be a string (got integer 1)", "type"},
      {R"({"required": ["run_id"]})", R"({"run_id": null})", nullptr, nullptr},
      {R"({"required": ["run_id"]})", "{}",
       R"($: missing required property "run_id")", "required"},
      {R"({"required": ["a"]})", "5", nullptr, nullptr},
      {status_task, R"({"status": 1, "task": 2})", nullptr, nullptr},
      {status_task, R"({"statu": 1})",
       R"($: unknown property "statu" (allowed: status, task))",
       "additionalProperties"},
      {R"({"additionalProperties": false})", R"({"x": 1})",
       R"($: unknown property "x" (allowed: none))", "additionalProperties"},
      {R"({"additionalProperties": {"type": "integer"}})", R"({"x": 1})",
       nullptr, nullptr},
      {R"({"additionalProperties": {"type": "integer"}})", R"({"x": "y"})",
       R"($.x: must be an integer (got string "y"))", "type"},
      {R"({"minProperties": 1})", R"({"a": 1})", nullptr, nullptr},
      {R"({"minProperties": 1})", "{}",
       "$: must have at least 1 property (got 0)", "minProperties"},
      {R"({"maxProperties": 1})", R"({"a": 1, "b": 2})",
       "$: must have at most 1 property (got 2)", "maxProperties"},
      {R"({"maxProperties": 2})", R"({"a": 1, "b": 2})", nullptr, nullptr},
  });
}

TEST(JsonSchemaTest, ChecksValueKeywords) {
  ExpectCases({
      {R"({"enum": ["working", "agent-done"]})", R"("working")", nullptr,
       nullptr},
      {R"({"enum": ["working", "agent-done"]})", R"("done")",
       R"($: must be one of "working", "agent-done" (got "done"))", "enum"},
      {R"({"enum": [1, [1, 2]]})", "[1, 2]", nullptr, nullptr},
      {R"({"const": {"a": 1}})", R"({"a": 1.0})", nullptr, nullptr},
      {R"({"const": {"a": 1}})", R"({"a": 2})",
       R"($: must be {"a":1} (got {"a":2}))", "const"},
      {R"({"const": 1})", "true", "$: must be 1 (got true)", "const"},
  });
}

TEST(JsonSchemaTest, ChecksNumberKeywords) {
  ExpectCases({
      {R"({"minimum": 1})", "1", nullptr, nullptr},
      {R"({"minimum": 1})", "0", "$: must be >= 1 (got 0)", "minimum"},
      {R"({"minimum": 1})", R"("0")", nullptr, nullptr},
      {R"({"maximum": 1.5})", "1.5", nullptr, nullptr},
      {R"({"maximum": 1.5})", "2", "$: must be <= 1.5 (got 2)", "maximum"},
      {R"({"exclusiveMinimum": 0})", "0.1", nullptr, nullptr},
      {R"({"exclusiveMinimum": 0})", "0", "$: must be > 0 (got 0)",
       "exclusiveMinimum"},
      {R"({"exclusiveMaximum": 10})", "9", nullptr, nullptr},
      {R"({"exclusiveMaximum": 10})", "10.0", "$: must be < 10 (got 10.0)",
       "exclusiveMaximum"},
      {R"({"minimum": -5})", "-5", nullptr, nullptr},
      {R"({"maximum": 18446744073709551615})", "18446744073709551615", nullptr,
       nullptr},
  });
}

TEST(JsonSchemaTest, ChecksStringKeywords) {
  ExpectCases({
      {R"({"minLength": 2})", R"("ab")", nullptr, nullptr},
      {R"({"minLength": 2})", R"("a")",
       "$: must have at least 2 characters (got 1)", "minLength"},
      {R"({"maxLength": 3})", R"("abcd")",
       "$: must have at most 3 characters (got 4)", "maxLength"},
      {R"({"pattern": "b"})", R"("abc")", nullptr, nullptr},
      {R"({"pattern": "^b"})", R"("abc")",
       R"($: must match pattern "^b" (got "abc"))", "pattern"},
      {R"({"pattern": "^[a-z][a-z0-9_-]*$"})", R"("run_7")", nullptr, nullptr},
      {R"({"pattern": "^\\d+$"})", "12", nullptr, nullptr},
      {R"({"format": "date-time"})", R"("2024-05-01T12:30:00Z")", nullptr,
       nullptr},
      {R"({"format": "date-time"})", R"("2024-05-01")",
       R"($: must be an RFC 3339 date-time (got "2024-05-01"))", "format"},
      {R"({"format": "date-time"})", "5", nullptr, nullptr},
      {R"({"format": "email"})", R"("not an email")", nullptr, nullptr},
  });
}

TEST(JsonSchemaTest, CountsCodePointsNotBytes) {
  ExpectCases({
      {R"({"maxLength": 3})", R"("日本語")", nullptr, nullptr},
      {R"({"minLength": 3})", R"("日本語")", nullptr, nullptr},
      {R"({"maxLength": 3})", R"("日本語!")",
       "$: must have at most 3 characters (got 4)", "maxLength"},
      {R"({"maxLength": 1})", R"("😀")", nullptr, nullptr},
      {R"({"maxLength": 1})", R"("\ud83d\ude00")", nullptr, nullptr},
      {R"({"minLength": 2})", R"("é")",
       "$: must have at least 2 characters (got 1)", "minLength"},
      {R"({"maxLength": 5})", R"("héllo")", nullptr, nullptr},
  });
}

TEST(JsonSchemaTest, ChecksDateTimeShape) {
  const std::vector<std::pair<const char*, bool>> cases = {
      {"2024-05-01T12:30:00Z", true},
      {"2024-05-01t12:30:00z", true},
      {"2024-05-01T12:30:00.123456+02:00", true},
      {"1990-12-31T23:59:60-08:00", true},
      {"2024-05-01", false},
      {"2024-13-01T00:00:00Z", false},
      {"2024-05-00T00:00:00Z", false},
      {"2024-05-01T24:00:00Z", false},
      {"2024-05-01 12:30:00Z", false},
      {"2024-05-01T12:30:00", false},
      {"2024-05-01T12:30:00.Z", false},
      {"2024-05-01T12:30:00+0200", false},
      {"2024-05-01T12:30:00Zjunk", false},
      {"", false},
  };
  const json schema = {{"format", "date-time"}};
  for (const auto& [text, valid] : cases) {
    EXPECT_EQ(ValidateJson(schema, json(text)).ok(), valid) << text;
  }
}

TEST(JsonSchemaTest, ChecksArrayKeywords) {
  ExpectCases({
      {R"({"items": {"type": "integer"}})", "[1, 2]", nullptr, nullptr},
      {R"({"items": {"type": "integer"}})", R"([1, "x"])",
       R"($[1]: must be an integer (got string "x"))", "type"},
      {R"({"minItems": 1})", "[]", "$: must have at least 1 item (got 0)",
       "minItems"},
      {R"({"maxItems": 1})", "[1, 2]", "$: must have at most 1 item (got 2)",
       "maxItems"},
      {R"({"maxItems": 2})", "[1, 2]", nullptr, nullptr},
      {R"({"uniqueItems": true})", R"([1, "1", [1], {"a": 1}])", nullptr,
       nullptr},
      {R"({"uniqueItems": true})", R"([1, "a", {"b": [2]}, {"b": [2.0]}])",
       R"($: must have unique items ([2] and [3] are both {"b":[2]}))",
       "uniqueItems"},
      {R"({"uniqueItems": false})", "[1, 1]", nullptr, nullptr},
  });
}

TEST(JsonSchemaTest, FindsDuplicatesInLargeArrays) {
  json items = json::array();
  for (int i = 0; i < 40; ++i) items.push_back(i * 10);
  const json schema = {{"uniqueItems", true}};
  EXPECT_TRUE(ValidateJson(schema, items).ok());
  items[31] = 30.0;
  Status status = ValidateJson(schema, items);
  EXPECT_EQ(status.message(),
            "$: must have unique items ([3] and [31] are both 30)");
}

TEST(JsonSchemaTest, ChecksCombinators) {
  const char* any_of =
      R"({"anyOf": [{"type": "string"},
                    {"type": "object",
                     "properties": {"name": {"type": "string"}}}]})";
  ExpectCases({
      {R"({"anyOf": [{"type": "string"}, {"type": "null"}]})", "null", nullptr,
       nullptr},
      {R"({"anyOf": [{"type": "string"}, {"type": "null"}]})", "5",
       "$: must match at least one schema in anyOf (closest is #0: must be a "
       "string (got integer 5))",
       "anyOf"},
      {any_of, R"({"name": 5})",
       "$: must match at least one schema in anyOf (closest is #1: $.name: "
       "must be a string (got integer 5))",
       "anyOf"},
      {R"({"oneOf": [{"type": "integer"}, {"minimum": 0}]})", "true", nullptr,
       nullptr},
      {R"({"oneOf": [{"type": "integer"}, {"minimum": 0}]})", "1",
       "$: must match exactly one schema in oneOf (matches #0 and #1)",
       "oneOf"},
      {R"({"oneOf": [{"type": "integer"}, {"minimum": 0}]})", "-1.5",
       "$: must match exactly one schema in oneOf (closest is #1: must be >= "
       "0 (got -1.5))",
       "oneOf"},
      {R"({"allOf": [{"type": "integer"}, {"minimum": 3}]})", "3", nullptr,
       nullptr},
      {R"({"allOf": [{"type": "integer"}, {"minimum": 3}]})", "2",
       "$: must be >= 3 (got 2)", "minimum"},
      {R"({"not": {"type": "null"}})", "1", nullptr, nullptr},
      {R"({"not": {"type": "null"}})", "null",
       R"($: must not match the schema in "not")", "not"},
  });
}

TEST(JsonSchemaTest, ChecksRefsAndBooleanSchemas) {
  const char* ref =
      R"({"$defs": {"id": {"type": "string", "minLength": 1}},
          "properties": {"id": {"$ref": "#/$defs/id"}}})";
  ExpectCases({
      {ref, R"({"id": "x"})", nullptr, nullptr},
      {ref, R"({"id": ""})", "$.id: must have at least 1 character (got 0)",
       "minLength"},
      {"true", R"({"any": ["thing"]})", nullptr, nullptr},
      {"false", "1", "$: no value is allowed here", "false"},
      {R"({"properties": {"x": false}})", R"({"x": 1})",
       "$.x: no value is allowed here", "false"},
      {R"({"properties": {"x": false}})", R"({"y": 1})", nullptr, nullptr},
  });
  Status status = Validate(ref, R"({"id": ""})");
  EXPECT_EQ(status.details().value("schema_path", ""),
            "/properties/id/$ref/minLength");
}

TEST(JsonSchemaTest, IgnoresAnnotations) {
  const json schema = json::parse(R"({
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "urn:baton:test", "title": "t", "description": "d",
      "default": 1, "examples": [1, 2], "readOnly": true, "writeOnly": false,
      "deprecated": false, "x-baton-cli": {"flag": "--n"},
      "type": "integer"})");
  EXPECT_TRUE(CheckSchema(schema).ok());
  EXPECT_TRUE(ValidateJson(schema, 5).ok());
  EXPECT_FALSE(ValidateJson(schema, "5").ok());
}

TEST(JsonSchemaTest, ReportsPathRuleAndSchemaPathInDetails) {
  Status status = Validate(
      R"({"properties": {"status": {"enum": ["working", "agent-done"]}}})",
      R"({"status": "done"})");
  EXPECT_EQ(status.message(),
            R"($.status: must be one of "working", "agent-done" (got "done"))");
  EXPECT_EQ(status.details(), json::parse(R"({"path": "$.status",
      "rule": "enum", "schema_path": "/properties/status/enum"})"));
}

TEST(JsonSchemaTest, NamesNestedArrayPaths) {
  Status status = Validate(
      R"({"properties": {"items": {"type": "array", "items": {
          "type": "object", "properties": {"name": {"type": "string"}}}}}})",
      R"({"items": [{"name": "a"}, {"name": "b"}, {"name": 3}]})");
  EXPECT_EQ(status.message(),
            "$.items[2].name: must be a string (got integer 3)");
  EXPECT_EQ(status.details().value("path", ""), "$.items[2].name");
  EXPECT_EQ(status.details().value("schema_path", ""),
            "/properties/items/items/properties/name/type");
}

TEST(JsonSchemaTest, QuotesKeysThatAreNotIdentifiers) {
  Status status = Validate(R"({"properties": {"a/b~c": {"type": "string"}}})",
                           R"({"a/b~c": 1})");
  EXPECT_EQ(status.message(),
            R"($["a/b~c"]: must be a string (got integer 1))");
  EXPECT_EQ(status.details().value("schema_path", ""),
            "/properties/a~1b~0c/type");
}

TEST(JsonSchemaTest, CheckSchemaAcceptsEveryKeyword) {
  const json schema = json::parse(R"({
      "$defs": {"name": {"type": "string", "minLength": 1, "maxLength": 9,
                         "pattern": "^[a-z]+$", "format": "date-time"}},
      "type": ["object", "null"],
      "properties": {
        "n": {"type": "number", "minimum": 0, "maximum": 9,
              "exclusiveMinimum": -1, "exclusiveMaximum": 10},
        "l": {"type": "array", "items": {"$ref": "#/$defs/name"},
              "minItems": 0, "maxItems": 3, "uniqueItems": true},
        "e": {"enum": ["a", 1, null]}, "c": {"const": {"k": [1]}},
        "o": {"minProperties": 1, "maxProperties": 2,
              "additionalProperties": {"not": {"type": "null"}}},
        "x": {"anyOf": [true, {"oneOf": [{}, false]}], "allOf": [{}]}},
      "required": ["n"],
      "additionalProperties": false})");
  EXPECT_TRUE(CheckSchema(schema).ok()) << CheckSchema(schema).ToString();
  EXPECT_TRUE(CheckSchema(true).ok());
}

TEST(JsonSchemaTest, CheckSchemaRejectsUnknownAndMistypedKeywords) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"tpye": "string"})", R"(/tpye: unknown keyword "tpye")"},
      {R"({"properties": {"status": {"enm": ["a"]}}})",
       R"(/properties/status/enm: unknown keyword "enm")"},
      {R"({"properties": {"status": {"enum": "working"}}})",
       "/properties/status/enum: must be a non-empty array "
       R"((got string "working"))"},
      {R"({"enum": []})", "/enum: must be a non-empty array (got array)"},
      {R"({"type": "text"})",
       "/type: must be a type name or an array of distinct type names "
       R"((got string "text"))"},
      {R"({"type": ["string", "string"]})",
       "/type: must be a type name or an array of distinct type names (got "
       "array)"},
      {R"({"minLength": -1})",
       "/minLength: must be a non-negative integer (got integer -1)"},
      {R"({"maxItems": 1.5})",
       "/maxItems: must be a non-negative integer (got number 1.5)"},
      {R"({"required": "a"})",
       R"(/required: must be an array of distinct strings (got string "a"))"},
      {R"({"required": ["a", "a"]})",
       "/required: must be an array of distinct strings (got array)"},
      {R"({"minimum": "1"})", R"(/minimum: must be a number (got string "1"))"},
      {R"({"uniqueItems": "yes"})",
       R"(/uniqueItems: must be a boolean (got string "yes"))"},
      {R"({"title": 5})", "/title: must be a string (got integer 5)"},
      {R"({"examples": 5})", "/examples: must be an array (got integer 5)"},
      {R"({"items": [{}]})",
       "/items: must be an object or boolean schema (got array)"},
      {R"({"anyOf": []})",
       "/anyOf: must be a non-empty array of schemas (got array)"},
      {R"({"anyOf": [{}, 5]})",
       "/anyOf/1: must be an object or boolean schema (got integer 5)"},
      {R"({"properties": {"a": "string"}})",
       "/properties/a: must be an object or boolean schema "
       R"((got string "string"))"},
      {R"({"pattern": "("})",
       R"(/pattern: "(" is not an ECMAScript regular expression )"
       "without back-references"},
      {R"({"pattern": "(a)\\1"})",
       R"(/pattern: "(a)\\1" is not an ECMAScript regular expression )"
       "without back-references"},
      {R"({"$ref": "#/definitions/x"})",
       R"(/$ref: must name a definition as "#/$defs/NAME" )"
       R"(("#/definitions/x" does not resolve))"},
      {R"({"$defs": {"a": {}}, "$ref": "#/$defs/b"})",
       R"(/$ref: must name a definition as "#/$defs/NAME" )"
       R"(("#/$defs/b" does not resolve))"},
      {"5", "(root): must be an object or boolean schema (got integer 5)"},
  };
  for (const auto& [schema, error] : cases) {
    Status status = CheckSchema(json::parse(schema));
    ASSERT_FALSE(status.ok()) << schema;
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << schema;
    EXPECT_EQ(status.message(), error) << schema;
  }
  Status status = CheckSchema(json::parse(R"({"tpye": "string"})"));
  EXPECT_EQ(status.details(),
            json::parse(R"({"path": "/tpye", "rule": "schema"})"));
}

TEST(JsonSchemaTest, CheckSchemaRefusesDeepSchemas) {
  json schema = json::object();
  for (int i = 0; i < 200; ++i) schema = json{{"not", std::move(schema)}};
  Status status = CheckSchema(schema);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(": nesting deeper than 128 levels"),
            std::string::npos)
      << status.message();
}

TEST(JsonSchemaTest, RefusesDeeplyNestedInstance) {
  const json deep = NestedArrays(10000);
  for (const json& schema :
       {json::object(), json(true), json::parse(R"({"type": "array"})")}) {
    Status status = ValidateJson(schema, deep);
    ASSERT_FALSE(status.ok()) << schema;
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(),
              RepeatedPath("[0]", 128) + ": nesting deeper than 128 levels");
    EXPECT_EQ(status.details().value("rule", ""), "depth");
  }
}

TEST(JsonSchemaTest, AllowsExactly128Levels) {
  const json tree = json::parse(R"({
      "$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
      "$ref": "#/$defs/node"})");
  ASSERT_TRUE(CheckSchema(tree).ok());
  EXPECT_TRUE(ValidateJson(tree, NestedArrays(128)).ok());
  EXPECT_EQ(ValidateJson(tree, NestedArrays(129)).details().value("rule", ""),
            "depth");

  json object = json::object();
  for (int i = 0; i < 200; ++i) object = json{{"a", std::move(object)}};
  EXPECT_EQ(ValidateJson(json::object(), object).message(),
            RepeatedPath(".a", 128) + ": nesting deeper than 128 levels");
}

TEST(JsonSchemaTest, RefLoopFailsInsteadOfRecursingForever) {
  Status status = Validate(
      R"({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}},
          "$ref": "#/$defs/a"})",
      "1");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.details().value("rule", ""), "anyOf");
  status = Validate(R"({"$defs": {"a": {"$ref": "#/$defs/a"}},
                        "$ref": "#/$defs/a"})",
                    "1");
  EXPECT_EQ(status.details().value("rule", ""), "$ref") << status.ToString();
}

TEST(JsonSchemaTest, MalformedSchemaNeverThrows) {
  ExpectCases({
      {R"({"type": 5, "minimum": "x", "required": "a", "enum": 3})",
       R"({"b": 1})", nullptr, nullptr},
      {R"({"pattern": "("})", R"("a")", R"($: pattern "(" does not compile)",
       "pattern"},
      {R"({"$ref": "#/$defs/nope"})", "1",
       R"($: "#/$defs/nope" does not resolve)", "$ref"},
  });
}

TEST(JsonSchemaTest, LongStringDoesNotOverflowRegexStack) {
  const json schema = {{"pattern", "^(a|b)*$"}};
  EXPECT_TRUE(ValidateJson(schema, std::string(200000, 'a')).ok());
  EXPECT_FALSE(ValidateJson(schema, std::string(200000, 'a') + "c").ok());
}

TEST(JsonSchemaTest, ShortensLongValuesInMessages) {
  Status status =
      ValidateJson(json{{"type", "integer"}}, std::string(100, 'x'));
  EXPECT_EQ(status.message(), "$: must be an integer (got string \"" +
                                  std::string(59, 'x') + "...)");
}

TEST(JsonSchemaTest, SuccessPathDoesNotAllocate) {
  const json schema = json::parse(R"({
      "$defs": {"id": {"type": "string", "minLength": 1}},
      "type": "object",
      "properties": {
        "run_id": {"$ref": "#/$defs/id"},
        "status": {"enum": ["working", "agent-done"]},
        "priority": {"type": "integer", "minimum": 0, "maximum": 9},
        "at": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"type": "string"},
                 "uniqueItems": true, "maxItems": 8},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
      "required": ["run_id", "status"],
      "additionalProperties": false})");
  const json instance = json::parse(R"({"run_id": "r1", "status": "working",
      "priority": 3.0, "at": "2024-05-01T12:30:00Z", "tags": ["a", "b"],
      "note": null})");
  ASSERT_TRUE(ValidateJson(schema, instance).ok());
  const long before = g_allocations.load();
  for (int i = 0; i < 100; ++i) {
    if (!ValidateJson(schema, instance).ok()) FAIL();
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  // The counter does see allocations: a failure builds its message.
  EXPECT_FALSE(ValidateJson(schema, json::object()).ok());
  EXPECT_GT(g_allocations.load() - before, 0);
}

TEST(JsonSchemaTest, ValidatesConcurrentlyWithPatterns) {
  // Fresh patterns, so the threads race to compile and cache them too.
  std::vector<json> schemas;
  schemas.reserve(16);
  for (int i = 0; i < 16; ++i) {
    const std::string pattern = "^task-" + std::to_string(i) + "-[0-9]+$";
    const json id = {{"type", "string"}, {"pattern", pattern}};
    schemas.push_back(json{{"type", "object"}, {"properties", {{"id", id}}}});
  }
  auto worker = [&schemas](int seed) {
    int wrong = 0;
    for (int round = 0; round < 200; ++round) {
      const int i = (seed + round) % 16;
      const std::string good =
          "task-" + std::to_string(i) + "-" + std::to_string(round);
      wrong += !ValidateJson(schemas[i], {{"id", good}}).ok();
      wrong += ValidateJson(schemas[i], {{"id", good + "x"}}).ok();
    }
    return wrong;
  };
  std::vector<std::future<int>> results;
  results.reserve(8);
  for (int t = 0; t < 8; ++t) {
    results.push_back(std::async(std::launch::async, worker, t));
  }
  for (std::future<int>& result : results) {
    ASSERT_EQ(result.wait_for(std::chrono::seconds(60)),
              std::future_status::ready);
    EXPECT_EQ(result.get(), 0);
  }
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

// Regression: schemas built in C++ carry signed integers ({"maxLength", 200}),
// which CheckSchema once refused as "not a non-negative integer".
TEST(JsonSchemaTest, AcceptsSignedIntegerKeywordValuesFromCpp) {
  nlohmann::json schema = {{"type", "string"}, {"maxLength", 3}, {"minLength", 1}};
  ASSERT_TRUE(schema["maxLength"].is_number_integer());
  EXPECT_TRUE(CheckSchema(schema).ok()) << CheckSchema(schema).ToString();
  EXPECT_TRUE(ValidateJson(schema, "abc").ok());
  EXPECT_FALSE(ValidateJson(schema, "abcd").ok());
  EXPECT_FALSE(CheckSchema({{"maxLength", -1}}).ok());
}

}  // namespace
}  // namespace baton
