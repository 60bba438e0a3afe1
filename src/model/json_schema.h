// File: json_schema.h
//
// The JSON Schema (2020-12) subset that every operation's input and output
// passes through (docs/impl.md, "Operations").
//
// Supported keywords: type, properties, required, additionalProperties, enum,
// const, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength,
// maxLength, pattern, items, minItems, maxItems, uniqueItems, minProperties,
// maxProperties, anyOf, oneOf, allOf, not, $ref (only "#/$defs/NAME"), and
// format (only "date-time" is checked; other formats are ignored). The
// annotations $schema, $id, $defs, title, description, default, examples,
// readOnly, writeOnly, deprecated and any "x-..." keyword are accepted and
// ignored. Boolean schemas (true, false) are allowed wherever a schema is.
//
// Semantics follow the spec: an integer-valued number such as 3.0 is an
// "integer"; a boolean is never a number; 1 and 1.0 are equal for enum, const
// and uniqueItems; minLength and maxLength count UTF-8 code points; pattern is
// an ECMAScript regex (std::regex) searched anywhere in the string unless it is
// anchored. Two limits differ from full ECMAScript: patterns match bytes, not
// code points (so "." matches one byte of a multi-byte character), and
// back-references are refused, because the only libstdc++ matcher that does
// not overflow the stack on long strings cannot run them. An unanchored
// pattern costs time quadratic in the string's length, so pair pattern with
// maxLength on untrusted input.
//
// Both functions are thread-safe and may run concurrently on shared schemas.
// Compiled patterns are cached process-wide; past 1024 distinct patterns the
// extra ones are compiled on every use.

#ifndef BATON_SRC_MODEL_JSON_SCHEMA_H_
#define BATON_SRC_MODEL_JSON_SCHEMA_H_

#include <nlohmann/json.hpp>

#include "baton/status.h"

namespace baton {

// Checks that "schema" uses only the supported keywords, each with a value of
// the right type (a non-negative integer for minLength, a compilable pattern,
// a $ref that resolves, ...), so that a typo in an operation's schema is
// caught at start-up. Subschemas nested deeper than 128 levels are refused.
// On failure returns InvalidArgument whose message starts with the JSON
// pointer of the offending keyword ("/properties/status/enum: must be a
// non-empty array (got string \"x\")", "(root)" for the schema itself) and
// whose details() is {"path": POINTER, "rule": "schema"}.
Status CheckSchema(const nlohmann::json& schema);

// Validates "instance" against "schema" and returns OK when it conforms.
// Otherwise returns InvalidArgument for the first violation found, with a
// message naming the instance path ("$" for the root, "$.status",
// "$.items[2].name", "$[\"odd key\"]") and the rule that failed:
//   $.priority: must be an integer (got string "high")
//   $: missing required property "run_id"
//   $.status: must be one of "working", "agent-done" (got "done")
//   $: unknown property "statu" (allowed: status, task)
// and whose details() is {"path": "$.status", "rule": "enum", "schema_path":
// "/properties/status/enum"}. The rule is the keyword that failed, except
// "false" for a false schema and "depth" for an instance nested deeper than
// 128 levels ("$[0]...[0]: nesting deeper than 128 levels"), which is refused
// whatever the schema. For anyOf and oneOf the message quotes the failure of
// the alternative that got furthest. schema_path follows $ref through
// "/$ref/...".
//
// REQUIRES: CheckSchema(schema) is OK. A schema that fails it never makes
// ValidateJson crash or throw: malformed keywords are skipped, except that an
// unresolvable $ref, an invalid pattern or a $ref loop that consumes no input
// fail validation.
//
// Runs on every API call, so the success path copies nothing and allocates
// nothing beyond what std::regex needs for a pattern; paths are built only
// when reporting a failure.
Status ValidateJson(const nlohmann::json& schema,
                    const nlohmann::json& instance);

}  // namespace baton

#endif  // BATON_SRC_MODEL_JSON_SCHEMA_H_
