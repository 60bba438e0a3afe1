#include "formats/sinfonia_envelope.h"

#include <cctype>
#include <cstdio>
#include <map>

#include "formats/reader.h"

namespace baton {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

Status LineError(const std::string& source, int line, std::string_view reason) {
  return InvalidArgumentError(source + ": line " + std::to_string(line) + ": " +
                              std::string(reason));
}

}  // namespace

Result<Json> ReadSinfoniaEnvelope(std::string_view text, const std::string& source) {
  if (text.size() > kMaxFormatInputBytes) {
    return ResourceExhaustedError(source + ": too large for a hand-off envelope");
  }
  RETURN_IF_ERROR(CheckUtf8(text, source));
  // Front matter: "---", flat "key: value" lines, "---".
  std::map<std::string, std::pair<std::string, int>> fields;  // key → value, line
  size_t pos = 0;
  int line = 0;
  auto next_line = [&](std::string* out) {
    if (pos >= text.size()) return false;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    *out = std::string(text.substr(pos, end - pos));
    if (!out->empty() && out->back() == '\r') out->pop_back();
    pos = end + 1;
    ++line;
    return true;
  };
  std::string l;
  if (!next_line(&l) || Trim(l) != "---") {
    return LineError(source, 1, "a hand-off envelope starts with a \"---\" front matter");
  }
  bool closed = false;
  while (next_line(&l)) {
    if (Trim(l) == "---") {
      closed = true;
      break;
    }
    if (Trim(l).empty()) continue;
    const size_t colon = l.find(':');
    if (colon == std::string::npos) {
      return LineError(source, line, "front matter lines are \"key: value\", not \"" + l + "\"");
    }
    fields[Trim(l.substr(0, colon))] = {Trim(l.substr(colon + 1)), line};
  }
  if (!closed) return LineError(source, line, "the front matter is never closed with \"---\"");
  std::string body(pos < text.size() ? text.substr(pos) : std::string_view());
  while (!body.empty() && body.front() == '\n') body.erase(0, 1);

  auto take = [&](const char* key) {
    auto it = fields.find(key);
    if (it == fields.end()) return std::string();
    std::string v = it->second.first;
    fields.erase(it);
    return v;
  };
  const auto seq_it = fields.find("sequence");
  if (seq_it == fields.end()) return LineError(source, line, "front matter: sequence is missing");
  const auto [seq_text, seq_line] = seq_it->second;
  int64_t sequence = 0;
  for (char c : seq_text) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || sequence > 1000000000) {
      return LineError(source, seq_line, "sequence: \"" + seq_text + "\" is not a whole number");
    }
    sequence = sequence * 10 + (c - '0');
  }
  if (seq_text.empty()) return LineError(source, seq_line, "sequence: empty");
  fields.erase("sequence");
  const std::string created = take("created_at");
  Json meta = Json::object();
  const std::string word_count = take("word_count");
  if (!word_count.empty()) meta["word_count"] = word_count;
  Json item = {{"id", take("handoff_id")},
               {"session_id", take("session_id")},
               {"sequence", sequence},
               {"source", take("source_persona")},
               {"target", take("target_persona")},
               {"type", take("handoff_type")},
               {"status", take("status")},
               {"body", body},
               {"created_at", created},
               {"updated_at", created}};
  // approval, approved_by, approved_at and anything else: kept as they were.
  for (const auto& [key, value] : fields) meta[key] = value.first;
  meta["file"] = source.substr(source.find_last_of('/') + 1);
  item["meta"] = meta;
  if (item["type"] == "") item["type"] = "dispatch";
  if (item["status"] == "") item["status"] = "pending";
  if (item["id"] == "" && item["session_id"] != "") {
    char nnn[24];
    std::snprintf(nnn, sizeof(nnn), "%03lld", static_cast<long long>(sequence));
    item["id"] = item["session_id"].get<std::string>() + "-" + nnn;
  }
  return item;
}

}  // namespace baton
