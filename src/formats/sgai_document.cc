// The state.json document of a run image — what the sgai.state operation
// returns for a run — and the sgai format's writer, which prints it as sgai's
// Go code does (json.MarshalIndent). See sgai_format.h.

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "formats/lifecycle.h"
#include "formats/reader.h"
#include "formats/sgai_format.h"

namespace baton {
namespace {

using OJson = nlohmann::ordered_json;

constexpr const char* kTokenKeys[] = {"input", "output", "reasoning", "cacheRead", "cacheWrite"};

const Json& Get(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string Str(const Json& obj, const char* key, const std::string& fallback = "") {
  const Json& v = Get(obj, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

// An integer field, saturated to int64; 0 for anything else.
int64_t Int(const Json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    return u > uint64_t{INT64_MAX} ? INT64_MAX : static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return d >= -9.2e18 && d <= 9.2e18 ? static_cast<int64_t>(d) : 0;
  }
  return 0;
}

bool Truthy(const Json& v) { return v.is_boolean() ? v.get<bool>() : Int(v) != 0; }

int64_t AddSaturated(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

bool IsEmpty(const Json& v) {
  if (v.is_null()) return true;
  if (v.is_string()) return v.get<std::string>().empty();
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_array() || v.is_object()) return v.empty();
  return false;
}

// The image's list "key" in seq order when every row has a seq (the store's
// order), else as listed.
std::vector<const Json*> Rows(const Json& image, const char* key) {
  std::vector<const Json*> rows;
  const Json& list = Get(image, key);
  if (!list.is_array()) return rows;
  bool all_seq = true;
  for (const Json& row : list) {
    rows.push_back(&row);
    all_seq = all_seq && Get(row, "seq").is_number_integer();
  }
  if (all_seq) {
    std::stable_sort(rows.begin(), rows.end(), [](const Json* a, const Json* b) {
      return Int(Get(*a, "seq")) < Int(Get(*b, "seq"));
    });
  }
  return rows;
}

// "status" of "machine" in sgai's machine "to"; a status its own machine
// does not know counts as active.
std::string ToSgai(const std::string& machine, const std::string& status, const char* to) {
  if (machine == to && PhaseOf(to, status)) return status;
  return ConvertStatus(machine == to ? "" : machine, status, to);
}

// "obj" with the keys "first" in that order (sgai's struct order), then the
// rest; anything but an object as it is.
OJson InOrder(const Json& obj, std::initializer_list<const char*> first) {
  if (!obj.is_object()) return OJson(obj);
  OJson out = OJson::object();
  for (const char* key : first) {
    if (obj.contains(key)) out[key] = OJson(obj[key]);
  }
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!out.contains(it.key())) out[it.key()] = OJson(it.value());
  }
  return out;
}

OJson ListInOrder(const Json& list, std::initializer_list<const char*> first) {
  OJson out = OJson::array();
  for (const Json& item : list) out.push_back(InOrder(item, first));
  return out;
}

OJson Tokens(const int64_t (&t)[5]) {
  OJson out = OJson::object();
  for (size_t i = 0; i < 5; ++i) out[kTokenKeys[i]] = t[i];
  return out;
}

struct OpenQuestion {
  std::string message;
  Json questions = Json::array();
  bool work_gate = false;
};

class DocumentWriter {
 public:
  DocumentWriter(const Json& image, std::vector<std::string>* notes)
      : image_(image), run_(Get(image, "run")), meta_(Get(run_, "meta")), notes_(notes) {
    profile_ = Str(run_, "profile");
    sgai_ = profile_ == "sgai";
    machine_ = Str(run_, "machine", profile_ + ".run");
    const Json& keys = Get(meta_, "sgaiFileKeys");
    if (sgai_ && keys.is_array()) {
      from_file_ = true;
      for (const Json& k : keys) {
        if (k.is_string()) file_keys_.insert(k.get<std::string>());
      }
    }
    if (sgai_) current_ = Str(meta_, "currentAgent");
    if (current_.empty()) current_ = "coordinator";
  }

  OJson Build();

 private:
  void Note(std::string note) {
    if (notes_ != nullptr) notes_->push_back(std::move(note));
  }
  // A run of the sgai operations shows every key (sgai.state's shape); a run
  // read from a file shows the keys the file had and any that hold something.
  bool Wanted(const char* key, bool has_content) const {
    return !from_file_ || file_keys_.contains(key) || has_content;
  }
  void MetaField(OJson& doc, const char* key, const Json& fallback);
  std::string RunStatus();
  OJson Progress();
  OJson Messages();
  OJson Todos(bool project);
  OJson ForeignTodos();
  OJson TodoItem(const Json& task, const std::string& id, const std::string& machine);
  OJson Cost();
  OpenQuestion Question();
  void NoteUnwritten();

  const Json& image_;
  const Json& run_;
  const Json& meta_;
  std::vector<std::string>* notes_;
  std::string profile_;
  std::string machine_;
  bool sgai_ = false;
  bool from_file_ = false;
  std::set<std::string> file_keys_;
  std::string current_;
};

std::string DocumentWriter::RunStatus() {
  const std::string status = Str(run_, "status");
  const std::string to = ToSgai(machine_, status, "sgai.run");
  if (to != status) {
    Note("status: " + machine_ + " status \"" + status + "\" written as \"" + to + "\"");
  }
  return to;
}

// run.meta[key] as sgai.state reads it: sgai's default when it is missing, or
// of the wrong type (with a note). Another profile's meta is not sgai's.
void DocumentWriter::MetaField(OJson& doc, const char* key, const Json& fallback) {
  Json value = sgai_ ? Get(meta_, key) : Json();
  if (!sgai_ && std::string(key) == "summary") value = Get(run_, "title");
  if (!value.is_null() && value.type() != fallback.type()) {
    Note(std::string(key) + ": run.meta holds " + TypeName(value) + ", not " + TypeName(fallback) +
         "; sgai's default written");
    value = Json();
  }
  const bool present = !value.is_null();
  if (!present) value = fallback;
  if (std::string(key) == "currentAgent" && value == "") value = "coordinator";
  const bool counts = std::string(key) == "visitCounts";
  if (counts || std::string(key) == "modelStatuses") {
    // Only the values state.json can hold: counts, and model statuses.
    for (auto it = value.begin(); it != value.end();) {
      const bool ok = counts ? it.value().is_number_integer() : it.value().is_string();
      if (ok) {
        ++it;
        continue;
      }
      Note(std::string(key) + "." + it.key() + ": " + TypeName(it.value()) + " not written");
      it = value.erase(it);
    }
  }
  if (!Wanted(key, present && !IsEmpty(value))) return;
  doc[key] = std::string(key) == "agentSequence"
                 ? ListInOrder(value, {"agent", "startTime", "isCurrent"})
                 : OJson(value);
}

OJson DocumentWriter::Progress() {
  OJson list = OJson::array();
  int64_t borrowed = 0;
  for (const Json* e : Rows(image_, "history")) {
    const std::string kind = Str(*e, "kind");
    const Json& payload = Get(*e, "payload");
    std::string actor = Str(*e, "agent", Str(Get(*e, "actor"), "id"));
    if (kind == "run.progress") {
      if (Get(payload, "agent").is_string()) actor = Str(payload, "agent");
      list.push_back({{"timestamp", Str(*e, "time")},
                      {"agent", actor},
                      {"description", Str(payload, "description")}});
    } else if (kind == "sgai.handoff") {
      // sgai's runner logs each hand-off as progress of agent "sgai".
      list.push_back({{"timestamp", Str(*e, "time")},
                      {"agent", "sgai"},
                      {"description", "Handing off to " + Str(payload, "to")}});
    } else if (!sgai_ && (kind == "stigmergy.signal" || kind == "graph.node")) {
      list.push_back(
          {{"timestamp", Str(*e, "time")}, {"agent", actor}, {"description", Str(*e, "summary")}});
      ++borrowed;
    }
  }
  if (borrowed > 0) {
    Note("history: " + std::to_string(borrowed) + " " + profile_ +
         " history event(s) written as progress entries (their payloads are not)");
  }
  return list;
}

OJson DocumentWriter::Messages() {
  std::vector<const Json*> rows = Rows(image_, "messages");
  // sgai numbers messages max(id)+1; ids read from a file are kept.
  int64_t last = 0;
  for (const Json* m : rows) {
    const Json& id = Get(Get(*m, "meta"), "sgai_id");
    if (id.is_number_integer()) last = std::max(last, Int(id));
  }
  OJson list = OJson::array();
  for (const Json* m : rows) {
    const Json& given = Get(Get(*m, "meta"), "sgai_id");
    const int64_t id = given.is_number_integer() ? Int(given) : (last = AddSaturated(last, 1));
    OJson out = {{"id", id},
                 {"fromAgent", Str(*m, "from")},
                 {"toAgent", Str(*m, "to")},
                 {"body", Str(*m, "body")},
                 {"read", Truthy(Get(*m, "read"))}};
    for (auto [field, key] :
         {std::pair{"read_at", "readAt"}, {"read_by", "readBy"}, {"created_at", "createdAt"}}) {
      if (Get(*m, field).is_string()) out[key] = Str(*m, field);
    }
    list.push_back(std::move(out));
  }
  return list;
}

OJson DocumentWriter::TodoItem(const Json& task, const std::string& id,
                               const std::string& machine) {
  std::string status = Str(task, "status");
  const std::string to = ToSgai(machine, status, "sgai.todo");
  if (sgai_ && to != status) {
    Note("todo " + id + ": status \"" + status + "\" written as \"" + to + "\"");
  }
  status = to;
  std::string priority = Str(Get(task, "meta"), "priority");
  if (priority.empty() || !sgai_) {
    const int64_t rank = Int(Get(task, "priority"));
    priority = sgai_ ? "medium" : rank >= 2 ? "high" : rank < 0 ? "low" : "medium";
  }
  return {{"id", id}, {"content", Str(task, "title")}, {"status", status}, {"priority", priority}};
}

// The current agent's todos (or the project's) that are on the list — a todo
// taken off it keeps its task with a null key — in list order.
OJson DocumentWriter::Todos(bool project) {
  const char* kind = project ? "project_todo" : "todo";
  std::vector<const Json*> rows;
  int64_t elsewhere = 0;
  for (const Json* t : Rows(image_, "tasks")) {
    if (Str(*t, "kind") != kind || Get(*t, "key").is_null()) continue;
    if (!project && Str(*t, "assignee") != current_) {
      ++elsewhere;
      continue;
    }
    rows.push_back(t);
  }
  if (elsewhere > 0) {
    Note("todos: " + std::to_string(elsewhere) + " todo(s) of agents other than the current (" +
         current_ + ") not written; sgai keeps one agent's list");
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Json* a, const Json* b) {
    const auto key = [](const Json* t) {
      return std::tuple(Int(Get(*t, "position")), Str(*t, "created_at"), Str(*t, "id"));
    };
    return key(a) < key(b);
  });
  OJson list = OJson::array();
  for (const Json* t : rows) {
    list.push_back(TodoItem(*t, Str(Get(*t, "meta"), "todo_id"), "sgai.todo"));
  }
  return list;
}

// Another profile's tasks, as the project's todo list: sgai has no other.
OJson DocumentWriter::ForeignTodos() {
  OJson list = OJson::array();
  std::map<std::string, int64_t> kinds;
  std::set<std::string> ids;
  for (const Json* t : Rows(image_, "tasks")) {
    std::string id = Str(*t, "key", Str(*t, "ref", Str(*t, "id")));
    if (id.empty()) id = std::to_string(list.size() + 1);
    for (int n = 2; ids.contains(id); ++n) id = id + "-" + std::to_string(n);
    ids.insert(id);
    const std::string kind = Str(*t, "kind");
    ++kinds[kind];
    list.push_back(TodoItem(*t, id, Str(*t, "machine", profile_ + "." + kind)));
  }
  for (const auto& [kind, n] : kinds) {
    Note("tasks: " + std::to_string(n) + " " + profile_ + " " + kind +
         " task(s) written as projectTodos with statuses converted to sgai's todo statuses; "
         "bodies, parents and dependencies are not written");
  }
  return list;
}

OJson DocumentWriter::Cost() {
  int64_t total_tokens[5] = {};
  OJson cost = {{"totalCost", 0.0}, {"totalTokens", Tokens(total_tokens)}, {"byAgent", nullptr}};
  std::vector<const Json*> rows = Rows(image_, "usage");
  if (rows.empty()) return cost;
  OJson by_agent = OJson::array();
  std::map<std::string, size_t> index;
  std::vector<std::array<int64_t, 5>> agent_tokens;
  double total = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Json& u = *rows[i];
    const std::string agent = Str(u, "agent");
    const double c = Get(u, "cost").is_number() ? Get(u, "cost").get<double>() : 0.0;
    int64_t tokens[5] = {};
    for (size_t k = 0; k < 5; ++k) tokens[k] = Int(Get(Get(u, "tokens"), kTokenKeys[k]));
    std::string step_id = Str(u, "step_id");
    if (step_id.empty()) {
      const Json& seq = Get(u, "seq");
      step_id = "usage-" + std::to_string(seq.is_number_integer() ? Int(seq) : int64_t(i + 1));
    }
    OJson step = {{"stepId", step_id}, {"agent", agent}};
    if (Get(u, "model").is_string()) step["model"] = Str(u, "model");
    if (!Str(u, "session_id").empty()) step["sessionId"] = Str(u, "session_id");
    step["cost"] = c;
    step["tokens"] = Tokens(tokens);
    if (Get(u, "time").is_string()) step["timestamp"] = Str(u, "time");
    if (!index.contains(agent)) {
      index[agent] = by_agent.size();
      agent_tokens.push_back({});
      by_agent.push_back(
          {{"agent", agent}, {"cost", 0.0}, {"tokens", nullptr}, {"steps", OJson::array()}});
    }
    const size_t a = index[agent];
    by_agent[a]["cost"] = by_agent[a]["cost"].get<double>() + c;
    by_agent[a]["steps"].push_back(std::move(step));
    for (size_t k = 0; k < 5; ++k) {
      agent_tokens[a][k] = AddSaturated(agent_tokens[a][k], tokens[k]);
      total_tokens[k] = AddSaturated(total_tokens[k], tokens[k]);
    }
    total += c;
  }
  for (size_t a = 0; a < by_agent.size(); ++a) {
    OJson t = OJson::object();
    for (size_t k = 0; k < 5; ++k) t[kTokenKeys[k]] = agent_tokens[a][k];
    by_agent[a]["tokens"] = std::move(t);
  }
  cost["totalCost"] = total;
  cost["totalTokens"] = Tokens(total_tokens);
  cost["byAgent"] = std::move(by_agent);
  return cost;
}

// The newest open question: sgai shows one at a time.
OpenQuestion DocumentWriter::Question() {
  OpenQuestion out;
  const Json* newest = nullptr;
  int64_t open = 0;
  for (const Json* q : Rows(image_, "questions")) {
    if (Str(*q, "status", "open") != "open") continue;
    newest = q;
    ++open;
  }
  if (open > 1) {
    Note("questions: " + std::to_string(open) +
         " open questions; state.json shows only the newest");
  }
  if (newest == nullptr) return out;
  out.message = Str(*newest, "message");
  if (Get(*newest, "questions").is_array()) out.questions = Get(*newest, "questions");
  out.work_gate = Truthy(Get(*newest, "work_gate"));
  return out;
}

void DocumentWriter::NoteUnwritten() {
  for (auto [key, what] : {std::pair{"approvals", "decision(s)"},
                           {"sessions", "session(s)"},
                           {"handoffs", "hand-off(s)"}}) {
    const Json& list = Get(image_, key);
    if (list.is_array() && !list.empty()) {
      Note(std::string(key) + ": " + std::to_string(list.size()) + " " + what +
           " not written; sgai's state.json has no place for them");
    }
  }
  if (sgai_) {
    std::map<std::string, int64_t> others;
    for (const Json* t : Rows(image_, "tasks")) {
      const std::string kind = Str(*t, "kind");
      if (kind != "todo" && kind != "project_todo") ++others[kind];
    }
    for (const auto& [kind, n] : others) {
      Note("tasks: " + std::to_string(n) + " task(s) of kind \"" + kind +
           "\" not written; sgai's lists hold todos only");
    }
    return;
  }
  std::vector<std::string> fields;
  if (meta_.is_object()) {
    for (auto it = meta_.begin(); it != meta_.end(); ++it) {
      if (it.key() != "kept" && it.key() != "format_keys") fields.push_back(it.key());
    }
  }
  if (!fields.empty()) {
    std::string list;
    for (const std::string& f : fields) list += (list.empty() ? "" : ", ") + f;
    Note("run.meta: " + profile_ + "'s run fields (" + list + ") not written");
  }
}

OJson DocumentWriter::Build() {
  OJson doc = OJson::object();
  doc["status"] = RunStatus();
  MetaField(doc, "task", "");
  OJson progress = Progress();
  if (Wanted("progress", !progress.empty())) doc["progress"] = std::move(progress);
  OpenQuestion question = Question();
  if (!question.message.empty() || (from_file_ && file_keys_.contains("humanMessage"))) {
    doc["humanMessage"] = question.message;
  }
  if (!question.questions.empty()) {
    OJson mc = {
        {"questions", ListInOrder(question.questions, {"question", "choices", "multiSelect"})}};
    if (question.work_gate) mc["isWorkGate"] = true;
    doc["multiChoiceQuestion"] = std::move(mc);
  }
  OJson messages = Messages();
  if (Wanted("messages", !messages.empty())) doc["messages"] = std::move(messages);
  MetaField(doc, "goalChecksum", "");
  MetaField(doc, "visitCounts", Json::object());
  MetaField(doc, "currentAgent", "coordinator");
  OJson todos = sgai_ ? Todos(false) : OJson::array();
  if (Wanted("todos", !todos.empty())) doc["todos"] = std::move(todos);
  OJson project = sgai_ ? Todos(true) : ForeignTodos();
  if (Wanted("projectTodos", !project.empty())) doc["projectTodos"] = std::move(project);
  MetaField(doc, "agentSequence", Json::array());
  MetaField(doc, "sessionId", "");
  if (Wanted("cost", !Rows(image_, "usage").empty())) doc["cost"] = Cost();
  MetaField(doc, "interactionMode", "brainstorming");
  MetaField(doc, "modelStatuses", Json::object());
  MetaField(doc, "currentModel", "");
  MetaField(doc, "summary", "");
  MetaField(doc, "summaryManual", false);
  NoteUnwritten();
  RestoreKept(Get(Get(meta_, "kept"), "sgai"), doc);
  return doc;
}

// Go prints a float64 that is a whole number without a fraction ("0", not
// "0.0").
void GoNumbers(OJson& v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d >= -9.2e18 && d <= 9.2e18 && d == static_cast<double>(static_cast<int64_t>(d))) {
      v = static_cast<int64_t>(d);
    }
    return;
  }
  if (v.is_array() || v.is_object()) {
    for (auto& item : v) GoNumbers(item);
  }
}

// Go's encoder escapes <, >, & and U+2028/U+2029 in strings (they occur
// nowhere else in the text).
std::string GoEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

nlohmann::ordered_json SgaiDocument(const RunImage& image, std::vector<std::string>* notes) {
  return DocumentWriter(image, notes).Build();
}

Result<FormatOutput> WriteSgaiState(const RunImage& image) {
  if (!Get(image, "run").is_object()) {
    return FailedPreconditionError("image: there is no run to write (\"run\" must be an object)");
  }
  FormatOutput out;
  OJson doc = SgaiDocument(image, &out.notes);
  GoNumbers(doc);
  out.text = GoEscape(doc.dump(2, ' ', false, OJson::error_handler_t::replace));
  return out;
}

}  // namespace baton
