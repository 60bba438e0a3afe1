// File: json_util.h
//
// JSON helpers shared by every layer: parsing that reports where the text went
// wrong instead of throwing, reading files, and canonical serialisation (the
// form hashed into the ledger).

#ifndef BATON_SRC_UTIL_JSON_UTIL_H_
#define BATON_SRC_UTIL_JSON_UTIL_H_

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "baton/status.h"

namespace baton {

using Json = nlohmann::json;

// What ParseJson does with an object that names a key twice.
enum class DuplicateKeys {
  kRefuse,   // InvalidArgument naming the key (inputs to baton: read exactly)
  kLastWins  // as Go's encoding/json and JSON.parse do (seed files from the wild)
};

// Parses "text". On failure returns InvalidArgument "<source>: not valid JSON:
// line L, column C: <reason>". Nesting deeper than 256 levels is refused, and
// so, unless "duplicates" says otherwise, is a key named twice in one object
// ("<source>: not valid JSON: duplicate key \"k\" at /a/b").
Result<Json> ParseJson(std::string_view text, std::string_view source,
                       DuplicateKeys duplicates = DuplicateKeys::kRefuse);

// Reads the whole of a regular file of at most "max_bytes"; NotFound,
// InvalidArgument (not a regular file: a FIFO or device would block or never
// end), ResourceExhausted (too big) or Internal, each naming the path.
Result<std::string> ReadFile(const std::string& path, int64_t max_bytes = int64_t{64} << 20);

// Canonical form: keys sorted (nlohmann objects are ordered maps), no spaces,
// UTF-8 kept as is. Two equal values always give the same bytes.
std::string CanonicalJson(const Json& value);

// Appends "text" as a JSON string literal, escaped exactly as nlohmann's
// dump() escapes it (UTF-8 kept, control characters as \uXXXX).
void AppendJsonString(std::string_view text, std::string* out);

// Compact single-line dump that never throws on invalid UTF-8 (replaces it).
std::string DumpJson(const Json& value);

// Lenient readers of one field of a JSON object (an operation's answer read
// back, an image or file written elsewhere): the value when "key" holds one
// of that type, else "fallback" (or none).
std::string JsonText(const Json& j, std::string_view key, const std::string& fallback = "");
int64_t JsonInt(const Json& j, std::string_view key, int64_t fallback = 0);
std::optional<std::string> JsonTextOrNone(const Json& j, std::string_view key);
std::optional<int64_t> JsonIntOrNone(const Json& j, std::string_view key);

}  // namespace baton

#endif  // BATON_SRC_UTIL_JSON_UTIL_H_
