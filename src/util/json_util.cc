#include <cerrno>
#include <cstring>
#include "util/json_util.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace baton {
namespace {

constexpr int kMaxDepth = 256;

// Converts a byte offset into a 1-based line and column for messages.
std::string Position(std::string_view text, size_t offset) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace

Result<Json> ParseJson(std::string_view text, std::string_view source,
                       DuplicateKeys duplicates) {
  bool too_deep = false;
  // The keys of each object being read, innermost last, with its pointer.
  struct Open {
    std::string pointer;
    std::set<std::string> keys;
  };
  std::vector<Open> open;
  std::string last_key;
  std::string duplicate;  // the pointer of the first key named twice
  // The callback runs before each value is added, which lets a hostile input
  // be refused before it can exhaust the stack.
  Json::parser_callback_t guard = [&](int d, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (d >= kMaxDepth) too_deep = true;
        if (event == Json::parse_event_t::object_start && duplicates == DuplicateKeys::kRefuse) {
          open.push_back({open.empty() ? "" : open.back().pointer + "/" + last_key, {}});
        }
        break;
      case Json::parse_event_t::object_end:
        if (!open.empty() && duplicates == DuplicateKeys::kRefuse) open.pop_back();
        break;
      case Json::parse_event_t::key:
        if (duplicates == DuplicateKeys::kRefuse && !open.empty() && parsed.is_string()) {
          last_key = parsed.get<std::string>();
          if (!open.back().keys.insert(last_key).second && duplicate.empty()) {
            duplicate = "duplicate key \"" + last_key + "\" in the object at " +
                        (open.back().pointer.empty() ? "/" : open.back().pointer);
          }
        }
        break;
      default:
        break;
    }
    return !too_deep;
  };
  const auto refused = [&]() -> Status {
    if (too_deep) {
      return InvalidArgumentError(std::string(source) + ": not valid JSON: nesting deeper than " +
                                  std::to_string(kMaxDepth) + " levels");
    }
    return InvalidArgumentError(std::string(source) + ": not valid JSON: " + duplicate);
  };
  try {
    Json value = Json::parse(text.begin(), text.end(), guard);
    if (too_deep || !duplicate.empty()) return refused();
    return value;
  } catch (const Json::parse_error& e) {
    if (too_deep) return refused();
    std::string what = e.what();
    // nlohmann's message starts with "[json.exception.parse_error.101] parse
    // error at line 1, column 2: "; keep only the reason.
    const size_t colon = what.find(": ", what.find("parse error"));
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    return InvalidArgumentError(std::string(source) + ": not valid JSON: " +
                                Position(text, e.byte == 0 ? 0 : e.byte - 1) +
                                ": " + reason);
  } catch (const Json::exception& e) {
    return InvalidArgumentError(std::string(source) + ": not valid JSON: " + e.what());
  }
}

Result<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    // ENOENT says "no such file"; a loop of links, a name too long or a
    // folder one may not enter says what it is.
    if (!ec || ec == std::errc::no_such_file_or_directory) return NotFoundError(path + ": no such file");
    if (ec == std::errc::permission_denied) return PermissionDeniedError(path + ": " + ec.message());
    return InvalidArgumentError(path + ": " + ec.message());
  }
  if (!std::filesystem::is_regular_file(st)) {
    return InvalidArgumentError(path + " is not a regular file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && static_cast<int64_t>(size) > max_bytes) {
    return ResourceExhaustedError(path + " is " + std::to_string(size) + " bytes; at most " +
                                  std::to_string(max_bytes) + " are read");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open it (" + std::strerror(errno) + ")");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return UnavailableError(path + ": cannot read it (" + std::strerror(errno) + ")");
  return buf.str();
}

std::string CanonicalJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void AppendJsonString(std::string_view text, std::string* out) {
  out->reserve(out->size() + text.size() + 2);
  out->push_back('"');
  // What needs no escape is copied a run at a time: the ledger's hash and
  // verify build every event's text through here.
  size_t plain = 0;  // the start of the run not yet copied
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(text.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        *out += buf;
      }
    }
  }
  out->append(text.data() + plain, text.size() - plain);
  out->push_back('"');
}

std::string DumpJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<std::string> JsonTextOrNone(const Json& j, std::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<int64_t> JsonIntOrNone(const Json& j, std::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::string JsonText(const Json& j, std::string_view key, const std::string& fallback) {
  return JsonTextOrNone(j, key).value_or(fallback);
}

int64_t JsonInt(const Json& j, std::string_view key, int64_t fallback) {
  return JsonIntOrNone(j, key).value_or(fallback);
}

}  // namespace baton
