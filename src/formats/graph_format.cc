// Reading and writing @sys/graph's `.graph-state/{id}.json` (graph_format.h).

#include "formats/graph_format.h"

#include <charconv>
#include <cmath>

#include "formats/lifecycle.h"
#include "formats/reader.h"

namespace baton {
namespace {

using OJson = nlohmann::ordered_json;

constexpr char kFormat[] = "graph";
constexpr char kMachine[] = "graph.run";
constexpr const char* kStatuses[] = {"pending", "running", "completed", "failed", "paused"};
constexpr char kSuffix[] = ".json";
constexpr char kHex[] = "0123456789ABCDEF";

bool SafeByte(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // lower case too: one spelling per byte keeps names unique
}

const Json& Field(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

// A number as JavaScript's Number.prototype.toString prints it (ECMA-262
// Number::toString): shortest round-trip digits, exponent only below 1e-6 or
// from 1e21; NaN and infinities as JSON.stringify does ("null").
void AppendNumber(const OJson& v, std::string* out) {
  // Integers JavaScript holds exactly print as they are; larger ones as the
  // double JavaScript would read them as.
  constexpr int64_t kSafe = int64_t{1} << 53;
  if (v.is_number_unsigned() && v.get<uint64_t>() <= uint64_t{kSafe}) {
    *out += v.dump();
    return;
  }
  if (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() >= -kSafe &&
      v.get<int64_t>() <= kSafe) {
    *out += v.dump();
    return;
  }
  const double d = v.get<double>();
  if (!std::isfinite(d)) {
    *out += "null";
    return;
  }
  if (d == 0) {
    *out += "0";  // -0 too
    return;
  }
  char buf[64];
  const auto result =
      std::to_chars(buf, buf + sizeof(buf), std::fabs(d), std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(result.ptr - buf));  // "d.ddde+XX"
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exponent = 0;
  std::string_view exp_text = sci.substr(e + 1);
  if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  if (d < 0) *out += '-';
  if (k <= n && n <= 21) {
    *out += digits + std::string(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    *out += digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    *out += "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  } else {
    *out += digits.substr(0, 1);
    if (k > 1) *out += "." + digits.substr(1);
    *out += (n - 1 >= 0 ? "e+" : "e-") + std::to_string(std::abs(n - 1));
  }
}

// A key JavaScript orders first, by value: an array index ("0" … "4294967294").
bool ArrayIndex(const std::string& key, uint64_t* value) {
  if (key.empty() || key.size() > 10 || (key.size() > 1 && key[0] == '0')) return false;
  if (key.find_first_not_of("0123456789") != std::string::npos) return false;
  *value = std::stoull(key);
  return *value < 4294967295ull;
}

// JSON.stringify(value, null, 2).
void AppendPretty(const OJson& v, int indent, std::string* out) {
  const std::string inner(static_cast<size_t>(indent + 2), ' ');
  if (v.is_object() && !v.empty()) {
    std::vector<std::pair<uint64_t, const std::string*>> indexes;
    std::vector<const std::string*> names;
    for (auto it = v.begin(); it != v.end(); ++it) {
      uint64_t index = 0;
      if (ArrayIndex(it.key(), &index)) {
        indexes.emplace_back(index, &it.key());
      } else {
        names.push_back(&it.key());
      }
    }
    std::sort(indexes.begin(), indexes.end());
    std::vector<const std::string*> keys;
    keys.reserve(v.size());
    for (const auto& [index, key] : indexes) keys.push_back(key);
    keys.insert(keys.end(), names.begin(), names.end());
    *out += "{\n";
    for (size_t i = 0; i < keys.size(); ++i) {
      *out += inner;
      AppendJsonString(*keys[i], out);
      *out += ": ";
      AppendPretty(v.at(*keys[i]), indent + 2, out);
      *out += i + 1 < keys.size() ? ",\n" : "\n";
    }
    *out += std::string(static_cast<size_t>(indent), ' ') + "}";
  } else if (v.is_array() && !v.empty()) {
    *out += "[\n";
    for (size_t i = 0; i < v.size(); ++i) {
      *out += inner;
      AppendPretty(v[i], indent + 2, out);
      *out += i + 1 < v.size() ? ",\n" : "\n";
    }
    *out += std::string(static_cast<size_t>(indent), ' ') + "]";
  } else if (v.is_object()) {
    *out += "{}";
  } else if (v.is_array()) {
    *out += "[]";
  } else if (v.is_string()) {
    AppendJsonString(v.get_ref<const std::string&>(), out);
  } else if (v.is_number()) {
    AppendNumber(v, out);
  } else if (v.is_boolean()) {
    *out += v.get<bool>() ? "true" : "false";
  } else {
    *out += "null";  // null, and what JSON cannot hold
  }
}

// The machine of the run's status, for an image that does not name it.
std::string RunMachine(const Json& run) {
  const Json& machine = Field(run, "machine");
  if (machine.is_string()) return machine.get<std::string>();
  const Json& profile = Field(run, "profile");
  return profile == "graph"       ? kMachine
         : profile == "sgai"      ? "sgai.run"
         : profile == "stigmergy" ? "stigmergy.project"
         : profile == "sinfonia"  ? "sinfonia.workflow"
                                  : "baton.run";
}

// Notes for what a checkpoint cannot hold.
void NoteUnwritten(const Json& image, std::vector<std::string>& notes) {
  static constexpr std::pair<const char*, const char*> kLists[] = {
      {"tasks", "tasks"},        {"messages", "messages"},  {"approvals", "decisions"},
      {"sessions", "sessions"},  {"handoffs", "hand-offs"}, {"usage", "usage records"},
      {"questions", "questions"}};
  for (const auto& [key, what] : kLists) {
    const Json& list = Field(image, key);
    if (list.is_array() && !list.empty()) {
      notes.push_back(std::string(key) + ": " + std::to_string(list.size()) + " " + what +
                      " not written (a .graph-state checkpoint holds only the current node, its "
                      "context and the conversation)");
    }
  }
  size_t events = 0;
  const Json& history = Field(image, "history");
  if (history.is_array()) {
    for (const Json& e : history) {
      const Json& kind = Field(e, "kind");
      events += kind == "graph.node" || kind == "run.progress" || kind == "sgai.handoff" ||
                kind == "stigmergy.signal";
    }
  }
  if (events > 0) {
    notes.push_back("history: " + std::to_string(events) +
                    " history events not written (a checkpoint keeps no history)");
  }
}

}  // namespace

std::string GraphStateFileName(std::string_view id) {
  std::string out;
  out.reserve(id.size() + sizeof(kSuffix));
  for (char ch : id) {
    const auto c = static_cast<unsigned char>(ch);
    if (SafeByte(c)) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out + kSuffix;
}

Result<std::string> GraphIdFromFileName(std::string_view name) {
  const size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  const std::string shown(name);
  const std::string_view suffix = kSuffix;
  if (name.size() < suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
    return InvalidArgumentError("graph: \"" + shown +
                                "\" is not a checkpoint file name (<id>.json)");
  }
  const std::string_view stem = name.substr(0, name.size() - suffix.size());
  std::string id;
  for (size_t i = 0; i < stem.size(); ++i) {
    const auto c = static_cast<unsigned char>(stem[i]);
    if (SafeByte(c)) {
      id += stem[i];
      continue;
    }
    const int hi = c == '%' && i + 2 < stem.size() ? HexValue(stem[i + 1]) : -1;
    const int lo = hi >= 0 ? HexValue(stem[i + 2]) : -1;
    if (c != '%' || hi < 0 || lo < 0 || SafeByte(static_cast<unsigned char>(hi * 16 + lo))) {
      return InvalidArgumentError(
          "graph: \"" + shown + "\": offset " + std::to_string(i) +
          ": not a checkpoint file name (bytes other than A-Z a-z 0-9 _ - are written %XX, "
          "upper-case, and only those)");
    }
    id += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return id;
}

Result<RunImage> ReadGraphState(std::string_view text, const std::string& source) {
  ASSIGN_OR_RETURN(Json doc, ReadJsonObject(text, source));
  ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(doc, source, ""));
  ASSIGN_OR_RETURN(std::string node, r.String("currentNode"));
  ASSIGN_OR_RETURN(std::string status, r.String("status"));
  if (!PhaseOf(kMachine, status)) {
    std::string allowed;
    for (const char* s : kStatuses) allowed += (allowed.empty() ? "" : ", ") + std::string(s);
    return r.Error("status", "unknown graph.run status \"" + status + "\"; allowed: " + allowed);
  }
  ASSIGN_OR_RETURN(std::optional<std::string> updated, r.OptString("updatedAt"));
  ASSIGN_OR_RETURN(std::optional<Json> history, r.OptArray("conversationHistory"));
  ASSIGN_OR_RETURN(std::optional<Json> context, r.OptObject("context"));
  Json kept = Json::object();
  r.KeepRest(kept);
  Json meta = {{"conversationHistory", history.value_or(Json::array())}};
  if (!kept.empty()) meta["kept"][kFormat] = kept;
  Result<std::string> id = GraphIdFromFileName(source);
  if (id.ok()) meta["workflow_id"] = *id;
  Json run = {{"profile", "graph"},
              {"machine", kMachine},
              {"status", status},
              {"title", id.ok() ? *id : std::string()},
              {"cursor", node},
              {"cursor_index", nullptr},
              {"context", context.value_or(Json::object())},
              {"meta", meta},
              {"updated_at", updated ? Json(*updated) : Json()}};
  return Json{{"image", 1},
              {"source", {{"format", kFormat}, {"name", source}}},
              {"run", run},
              {"tasks", Json::array()},
              {"history", Json::array()}};
}

Result<FormatOutput> WriteGraphState(const RunImage& image) {
  const Json& run = Field(image, "run");
  if (!run.is_object()) {
    return FailedPreconditionError("graph: the image has no run; there is nothing to write");
  }
  FormatOutput out;
  const std::string machine = RunMachine(run);
  const std::string given =
      Field(run, "status").is_string() ? Field(run, "status").get<std::string>() : "";
  std::string status = given;
  if (machine != kMachine || !PhaseOf(kMachine, status)) {
    status = StatusFor(kMachine, PhaseOf(machine, given).value_or(Phase::kActive));
    out.notes.push_back("status: " + machine + " status \"" + given + "\" written as " + status);
  }
  std::string node;
  if (Field(run, "cursor").is_string()) {
    node = Field(run, "cursor").get<std::string>();
  } else {
    // The engine's own names for where a finished workflow stopped.
    node = status == "completed" ? "END" : status == "failed" ? "ERROR" : "";
    out.notes.push_back("currentNode: the run has no cursor; written as \"" + node + "\"");
  }
  OJson doc;
  doc["currentNode"] = node;
  doc["status"] = status;
  if (Field(run, "updated_at").is_string()) doc["updatedAt"] = Field(run, "updated_at");
  const Json& meta = Field(run, "meta");
  const Json& history = Field(meta, "conversationHistory");
  doc["conversationHistory"] = history.is_array() ? OJson(history) : OJson::array();
  const Json& context = Field(run, "context");
  doc["context"] = context.is_object() ? OJson(context) : OJson::object();
  const Json& kept = Field(Field(meta, "kept"), kFormat);
  if (kept.is_object()) RestoreKept(kept, doc);
  NoteUnwritten(image, out.notes);
  AppendPretty(doc, 0, &out.text);
  return out;
}

}  // namespace baton
