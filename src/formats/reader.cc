#include "formats/reader.h"

#include <cstdio>

namespace baton {
namespace {

// Length of the well-formed UTF-8 sequence at text[i], or 0 (Unicode 15,
// table 3-7).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

template <typename J>
void RestoreInto(const Json& kept, J& doc) {
  if (!kept.is_object()) return;
  for (const auto& [pointer, value] : kept.items()) {
    try {
      typename J::json_pointer ptr(pointer);
      if (ptr.empty() || doc.contains(ptr)) continue;
      typename J::json_pointer parent = ptr.parent_pointer();
      if (!doc.contains(parent)) continue;
      J& target = doc[parent];
      if (!target.is_object()) continue;  // array slots are the writer's
      target[ptr.back()] = J(value);
    } catch (const std::exception&) {
      // A pointer that does not fit this document is left out.
    }
  }
}

}  // namespace

Status CheckUtf8(std::string_view text, const std::string& source) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02X", static_cast<unsigned char>(text[i]));
      return InvalidArgumentError(source + ": line " + std::to_string(line) + ", column " +
                                  std::to_string(column) + ": not valid UTF-8 (byte " + hex +
                                  ")");
    }
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += n;
  }
  return Status();
}

Result<Json> ReadJsonObject(std::string_view text, const std::string& source) {
  if (text.size() > kMaxFormatInputBytes) {
    return ResourceExhaustedError(source + ": " + std::to_string(text.size()) +
                                  " bytes; at most " + std::to_string(kMaxFormatInputBytes) +
                                  " are read");
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return InvalidArgumentError(source + ": the file is empty; a JSON object was expected");
  }
  RETURN_IF_ERROR(CheckUtf8(text, source));
  // Tolerant: the seed systems' own readers keep the last of a repeated key.
  ASSIGN_OR_RETURN(Json doc, ParseJson(text, source, DuplicateKeys::kLastWins));
  if (!doc.is_object()) {
    return InvalidArgumentError(source + ": the top level must be a JSON object, not " +
                                TypeName(doc));
  }
  return doc;
}

Status FieldError(const std::string& source, const std::string& pointer, std::string_view reason) {
  return InvalidArgumentError(source + ": " + (pointer.empty() ? "/" : pointer) + ": " +
                              std::string(reason));
}

std::string PointerAppend(const std::string& pointer, std::string_view key) {
  std::string out = pointer + "/";
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PointerAppend(const std::string& pointer, size_t index) {
  return pointer + "/" + std::to_string(index);
}

std::string TypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    default: return "an unknown value";
  }
}

Result<ObjectReader> ObjectReader::Make(const Json& value, std::string source,
                                        std::string pointer) {
  if (!value.is_object()) {
    return FieldError(source, pointer, "must be an object, not " + TypeName(value));
  }
  return ObjectReader(value, std::move(source), std::move(pointer));
}

Status ObjectReader::Error(std::string_view key, std::string_view reason) const {
  return FieldError(source_, Path(key), reason);
}

bool ObjectReader::Has(std::string_view key) const {
  auto it = value_->find(key);
  return it != value_->end() && !it->is_null();
}

Result<const Json*> ObjectReader::Get(std::string_view key, bool (Json::*is)() const noexcept,
                                      std::string_view want) {
  read_.emplace(key);
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return static_cast<const Json*>(nullptr);
  if (!((*it).*is)()) {
    return Error(key, "must be " + std::string(want) + ", not " + TypeName(*it));
  }
  return &*it;
}

Result<std::string> ObjectReader::String(std::string_view key) {
  ASSIGN_OR_RETURN(const Json* v, Get(key, &Json::is_string, "a string"));
  if (v == nullptr) return Error(key, "is required");
  return v->get<std::string>();
}

Result<std::optional<std::string>> ObjectReader::OptString(std::string_view key) {
  ASSIGN_OR_RETURN(const Json* v, Get(key, &Json::is_string, "a string"));
  if (v == nullptr) return std::optional<std::string>();
  return std::optional<std::string>(v->get<std::string>());
}

Result<int64_t> ObjectReader::Int(std::string_view key) {
  ASSIGN_OR_RETURN(std::optional<int64_t> v, OptInt(key));
  if (!v) return Error(key, "is required");
  return *v;
}

Result<std::optional<int64_t>> ObjectReader::OptInt(std::string_view key) {
  ASSIGN_OR_RETURN(const Json* v, Get(key, &Json::is_number, "an integer"));
  if (v == nullptr) return std::optional<int64_t>();
  if (v->is_number_float()) {
    const double d = v->get<double>();
    // The range first: casting a double outside int64_t's is undefined.
    if (!(d >= -9.0e18 && d <= 9.0e18) || d != static_cast<double>(static_cast<int64_t>(d))) {
      return Error(key, "must be an integer, not " + v->dump());
    }
    return std::optional<int64_t>(static_cast<int64_t>(d));
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
    return Error(key, "is too large: " + v->dump());
  }
  return std::optional<int64_t>(v->get<int64_t>());
}

Result<std::optional<double>> ObjectReader::OptNumber(std::string_view key) {
  ASSIGN_OR_RETURN(const Json* v, Get(key, &Json::is_number, "a number"));
  if (v == nullptr) return std::optional<double>();
  return std::optional<double>(v->get<double>());
}

Result<std::optional<bool>> ObjectReader::OptBool(std::string_view key) {
  ASSIGN_OR_RETURN(const Json* v, Get(key, &Json::is_boolean, "a boolean"));
  if (v == nullptr) return std::optional<bool>();
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<Json>> ObjectReader::OptArray(std::string_view key) {
  ASSIGN_OR_RETURN(const Json* v, Get(key, &Json::is_array, "an array"));
  if (v == nullptr) return std::optional<Json>();
  return std::optional<Json>(*v);
}

Result<std::optional<Json>> ObjectReader::OptObject(std::string_view key) {
  ASSIGN_OR_RETURN(const Json* v, Get(key, &Json::is_object, "an object"));
  if (v == nullptr) return std::optional<Json>();
  return std::optional<Json>(*v);
}

std::optional<Json> ObjectReader::OptAny(std::string_view key) {
  read_.emplace(key);
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return *it;
}

void ObjectReader::KeepRest(Json& kept) const {
  if (!kept.is_object()) kept = Json::object();
  for (const auto& [key, value] : value_->items()) {
    if (!read_.contains(key)) kept[PointerAppend(pointer_, key)] = value;
  }
}

void RestoreKept(const Json& kept, Json& doc) { RestoreInto(kept, doc); }
void RestoreKept(const Json& kept, nlohmann::ordered_json& doc) { RestoreInto(kept, doc); }

}  // namespace baton
