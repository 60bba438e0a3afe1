// File: reader.h
//
// What every seed-format reader shares: checking that text is UTF-8, parsing
// a JSON document, and reading an object's fields so that each failure names
// the source and the field's JSON pointer ("state.json: /messages/2/id: must
// be an integer, not a string") and the keys nobody read are kept, to be
// written back (see format.h).

#ifndef BATON_SRC_FORMATS_READER_H_
#define BATON_SRC_FORMATS_READER_H_

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "baton/status.h"
#include "util/json_util.h"

namespace baton {

// Readers refuse larger inputs (ResourceExhausted) before parsing.
inline constexpr size_t kMaxFormatInputBytes = size_t{32} << 20;

// InvalidArgument "<source>: line L, column C: not valid UTF-8 (byte 0xNN)"
// at the first byte that is not part of well-formed UTF-8 (overlong forms,
// surrogates and code points past U+10FFFF included).
Status CheckUtf8(std::string_view text, const std::string& source);

// Parses a JSON document whose top level must be an object; refuses empty,
// oversized, non-UTF-8, truncated and too deeply nested input, naming the
// line and column.
Result<Json> ReadJsonObject(std::string_view text, const std::string& source);

// InvalidArgument "<source>: <pointer>: <reason>".
Status FieldError(const std::string& source, const std::string& pointer, std::string_view reason);

// "/a/b" + "c" → "/a/b/c", escaping "~" and "/" as RFC 6901 says.
std::string PointerAppend(const std::string& pointer, std::string_view key);
std::string PointerAppend(const std::string& pointer, size_t index);

// The JSON type's name as a reader's message says it: "a string", "null".
std::string TypeName(const Json& value);

// Reads one JSON object's fields. Each getter marks its key as read; absent
// optional keys give std::nullopt, and a JSON null counts as absent.
class ObjectReader {
 public:
  // InvalidArgument unless "value" is an object.
  static Result<ObjectReader> Make(const Json& value, std::string source, std::string pointer);

  Result<std::string> String(std::string_view key);
  Result<std::optional<std::string>> OptString(std::string_view key);
  Result<int64_t> Int(std::string_view key);
  Result<std::optional<int64_t>> OptInt(std::string_view key);
  Result<std::optional<double>> OptNumber(std::string_view key);
  Result<std::optional<bool>> OptBool(std::string_view key);
  // Any JSON value but null (a missing array gives std::nullopt).
  Result<std::optional<Json>> OptArray(std::string_view key);
  Result<std::optional<Json>> OptObject(std::string_view key);
  // Any value at all, unchecked, or std::nullopt when the key is absent.
  std::optional<Json> OptAny(std::string_view key);

  bool Has(std::string_view key) const;
  const Json& value() const { return *value_; }
  const std::string& source() const { return source_; }
  // The pointer of a key of this object.
  std::string Path(std::string_view key) const { return PointerAppend(pointer_, key); }
  Status Error(std::string_view key, std::string_view reason) const;

  // Adds every key not read, as pointer → value, to "kept" (an object).
  void KeepRest(Json& kept) const;

 private:
  ObjectReader(const Json& value, std::string source, std::string pointer)
      : value_(&value), source_(std::move(source)), pointer_(std::move(pointer)) {}
  Result<const Json*> Get(std::string_view key, bool (Json::*is)() const noexcept,
                          std::string_view want);

  const Json* value_;
  std::string source_;
  std::string pointer_;
  std::set<std::string, std::less<>> read_;
};

// Puts each kept pointer → value back into "doc" where its parent exists and
// the key is not already there (the writer's own fields win).
void RestoreKept(const Json& kept, Json& doc);
void RestoreKept(const Json& kept, nlohmann::ordered_json& doc);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_READER_H_
