#include "formats/sinfonia_envelope.h"

#include <cctype>
#include <cstdio>
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

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

// What a persona's file name (or a dispatch_id / return_id) says:
// "dispatch-01-amadeus.md" → dispatch, 1, amadeus; writer.ts's
// "003-maestro-to-coda.md" → 3, coda.
struct NameParts {
  std::string type;
  int64_t number = -1;
  std::string persona;
};

NameParts ParseEnvelopeName(std::string name) {
  NameParts out;
  if (name.ends_with(".md")) name.resize(name.size() - 3);
  for (const char* type : {"dispatch", "return", "revision", "direct"}) {
    const std::string prefix = std::string(type) + "-";
    if (!name.starts_with(prefix)) continue;
    size_t i = prefix.size(), j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j])) && j - i < 9) ++j;
    if (j == i || j >= name.size() || name[j] != '-') return out;
    out.type = type;
    out.number = std::stoll(name.substr(i, j - i));
    out.persona = name.substr(j + 1);
    return out;
  }
  size_t j = 0;
  while (j < name.size() && j < 9 && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
  if (j > 0 && j < name.size() && name[j] == '-') {
    out.number = std::stoll(name.substr(0, j));
    if (const size_t to = name.find("-to-", j); to != std::string::npos) out.persona = name.substr(to + 4);
  }
  return out;
}

// "`@sinfonica-libretto`" → "libretto".
std::string Persona(std::string v) {
  std::erase(v, '`');
  v = Trim(v);
  if (v.starts_with("@")) v.erase(0, 1);
  for (const char* prefix : {"sinfonica-", "sinfonia-"}) {
    if (v.starts_with(prefix)) v.erase(0, std::string(prefix).size());
  }
  return v;
}

// The envelopes Sinfonia's personas write by hand: a "# Dispatch Envelope"
// (or "# Return …") heading and "- Key: value" bullets, no front matter.
Result<Json> ReadBulletEnvelope(std::string_view text, const std::string& source,
                                const std::string& heading) {
  std::string lower = heading;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Json item = {{"type", lower.find("return") != std::string::npos ? "return" : "dispatch"},
               {"body", std::string(text)}};
  Json meta = Json::object();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    // The envelope's fields are the bullets of its head (and of a
    // "## Session" section); the task below them is body, not fields.
    if (line.starts_with("## ")) {
      std::string name = line.substr(3);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!name.starts_with("session")) break;
      continue;
    }
    if (!line.starts_with("- ")) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = Trim(line.substr(2, colon - 2));
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = Trim(line.substr(colon + 1));
    std::erase(value, '`');
    if ((key == "session" || key == "session id") && !item.contains("session_id")) {
      item["session_id"] = value;
    } else if ((key == "delegate" || key == "target") && !item.contains("target")) {
      item["target"] = Persona(value);
    } else if ((key == "from" || key == "source") && !item.contains("source")) {
      item["source"] = Persona(value);
    } else if (key == "date" && !item.contains("created_at")) {
      item["created_at"] = value;
    } else if (!key.empty() && key.size() <= 40 && !meta.contains(key)) {
      meta[key] = value;
    }
  }
  if (!item.contains("session_id")) {
    return LineError(source, 1, "a \"" + heading + "\" envelope names no \"- Session:\"");
  }
  item["meta"] = meta;
  return item;
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
  const std::string file = source.substr(source.find_last_of('/') + 1);
  const NameParts named = ParseEnvelopeName(file);
  std::string l;
  while (next_line(&l) && Trim(l).empty()) {
  }
  Json item;
  if (Trim(l) != "---") {
    const std::string first = Trim(l);
    std::string lower = first;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!lower.starts_with("# ") || (lower.find("dispatch") == std::string::npos &&
                                     lower.find("return") == std::string::npos)) {
      return LineError(source, line == 0 ? 1 : line,
                       "not a hand-off envelope: it has neither a \"---\" front matter nor a "
                       "\"# Dispatch Envelope\" heading");
    }
    ASSIGN_OR_RETURN(item, ReadBulletEnvelope(text, source, first.substr(2)));
    // dispatch-01-libretto.md: the persona a dispatch goes to, a return comes from.
    const char* side = item["type"] == "return" ? "source" : "target";
    if (!item.contains(side) && !named.persona.empty()) item[side] = Persona(named.persona);
    if (named.number < 0) {
      return LineError(source, 1, "no sequence: neither a front matter nor the file name (as "
                                  "dispatch-01-<persona>.md) numbers it");
    }
    item["sequence"] = nullptr;
    item["meta"]["file_number"] = named.number;
  } else {
    bool closed = false;
    while (next_line(&l)) {
      if (Trim(l) == "---") {
        closed = true;
        break;
      }
      if (Trim(l).empty() || Trim(l).starts_with("#")) continue;
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
    Json sequence = nullptr;
    Json meta = Json::object();
    if (const auto seq_it = fields.find("sequence"); seq_it != fields.end()) {
      const auto [seq_text, seq_line] = seq_it->second;
      int64_t n = 0;
      for (char c : seq_text) {
        if (!std::isdigit(static_cast<unsigned char>(c)) || n > 1000000000) {
          return LineError(source, seq_line, "sequence: \"" + seq_text + "\" is not a whole number");
        }
        n = n * 10 + (c - '0');
      }
      if (seq_text.empty()) return LineError(source, seq_line, "sequence: empty");
      fields.erase("sequence");
      sequence = n;
    }
    // Personas' own ids (dispatch_id: dispatch-01-coda) stand for handoff_id.
    std::string id = take("handoff_id");
    std::string own_id;
    for (const char* key : {"dispatch_id", "return_id"}) {
      if (auto it = fields.find(key); it != fields.end() && own_id.empty()) own_id = it->second.first;
    }
    NameParts parts = named;
    if (parts.number < 0 && !own_id.empty()) parts = ParseEnvelopeName(own_id);
    if (sequence.is_null()) {
      if (parts.number < 0) {
        return LineError(source, line,
                         "front matter: no sequence, and neither the file name nor a "
                         "dispatch_id/return_id numbers it");
      }
      meta["file_number"] = parts.number;
    }
    if (id.empty()) id = own_id;
    const std::string created = take("created_at");
    const std::string word_count = take("word_count");
    if (!word_count.empty()) meta["word_count"] = word_count;
    std::string type = take("handoff_type");
    if (type.empty()) type = parts.type;
    item = {{"id", id},
            {"session_id", take("session_id")},
            {"sequence", sequence},
            {"source", Persona(take("source_persona"))},
            {"target", Persona(take("target_persona"))},
            {"type", type},
            {"status", take("status")},
            {"body", body},
            {"created_at", created}};
    // approval, approved_by, approved_at and anything else: kept as they were,
    // except over what baton computed (file_number sorts; file is set below).
    for (const auto& [key, value] : fields) meta.emplace(key, value.first);
    item["meta"] = meta;
  }
  item["meta"]["file"] = file;
  for (const char* key : {"id", "session_id", "source", "target", "type", "status", "created_at"}) {
    if (!item.contains(key)) item[key] = "";
  }
  item["updated_at"] = item["created_at"];
  if (item["type"] == "") item["type"] = "dispatch";
  if (item["status"] == "") item["status"] = "pending";
  return item;
}

namespace {

int TypeRank(const std::string& type) {
  static constexpr const char* kOrder[] = {"dispatch", "return", "revision", "direct"};
  for (int i = 0; i < 4; ++i) {
    if (type == kOrder[i]) return i;
  }
  return 4;
}

}  // namespace

std::vector<std::string> AddSinfoniaEnvelopes(RunImage& image, const Json& envelopes) {
  std::vector<std::string> skipped;
  std::vector<Json> read;
  int64_t last = 0;
  for (const Json& h : image["handoffs"]) {
    if (h.is_object() && h["sequence"].is_number_integer()) last = std::max(last, h["sequence"].get<int64_t>());
  }
  for (const Json& e : envelopes) {
    const std::string name = e.at("name").get<std::string>();
    Result<Json> handoff = ReadSinfoniaEnvelope(e.at("content").get<std::string>(), name);
    if (!handoff.ok()) {
      // Sinfonia's recovery skips what it cannot number; so does baton, saying so.
      skipped.push_back("envelope skipped: " + handoff.status().message());
      continue;
    }
    if ((*handoff)["sequence"].is_number_integer()) {
      last = std::max(last, (*handoff)["sequence"].get<int64_t>());
    }
    read.push_back(*std::move(handoff));
  }
  // Envelopes numbered by their file names count stages, not hand-offs:
  // they follow the numbered ones, by (number, type, name).
  std::vector<Json*> unnumbered;
  for (Json& h : read) {
    if (h["sequence"].is_null()) unnumbered.push_back(&h);
  }
  std::stable_sort(unnumbered.begin(), unnumbered.end(), [](const Json* a, const Json* b) {
    const auto key = [](const Json* h) {
      return std::make_tuple(h->at("meta").value("file_number", int64_t{0}),
                             TypeRank(h->value("type", "")), h->at("meta").value("file", ""));
    };
    return key(a) < key(b);
  });
  for (Json* h : unnumbered) (*h)["sequence"] = ++last;
  // The index's Artifacts rows, by id: an envelope of the same id is that
  // row's hand-off, with the envelope's body and front matter.
  std::map<std::string, size_t> rows;
  for (size_t i = 0; i < image["handoffs"].size(); ++i) {
    const Json& h = image["handoffs"][i];
    if (h.is_object() && !h.value("id", "").empty()) rows.emplace(h.value("id", ""), i);
  }
  std::map<std::string, std::string> taken;  // id → the envelope file that has it
  for (Json& handoff : read) {
    const std::string file = handoff["meta"].value("file", "");
    std::string id = handoff.value("id", "");
    if (id.empty() && !handoff.value("session_id", "").empty()) {
      char nnn[24];
      std::snprintf(nnn, sizeof(nnn), "%03lld",
                    static_cast<long long>(handoff["sequence"].get<int64_t>()));
      id = handoff["session_id"].get<std::string>() + "-" + nnn;
    }
    if (id.empty()) id = file.ends_with(".md") ? file.substr(0, file.size() - 3) : file;
    handoff["id"] = id;
    if (auto [it, fresh] = taken.emplace(id, file); !fresh) {
      skipped.push_back("envelope skipped: " + file + ": its id " + id + " is already " +
                        it->second + "'s");
      continue;
    }
    auto row_at = rows.find(id);
    if (row_at == rows.end()) {
      image["handoffs"].push_back(std::move(handoff));
      continue;
    }
    Json& row = image["handoffs"][row_at->second];
    Json meta = row["meta"].is_object() ? row["meta"] : Json::object();
    meta.update(handoff["meta"]);
    for (const char* k : {"session_id", "sequence", "source", "target", "type", "body", "created_at"}) {
      row[k] = handoff[k];
    }
    row["meta"] = meta;
  }
  return skipped;
}

}  // namespace baton
