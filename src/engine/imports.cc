// Run images in and out of the store (imports.h, docs/formats.md).

#include "engine/imports.h"

#include <filesystem>
#include <map>
#include <set>

#include "engine/core_services.h"
#include "engine/ledger.h"
#include "formats/lifecycle.h"
#include "formats/sinfonia_envelope.h"
#include "model/profile.h"
#include "util/clock.h"
#include "util/sha256.h"

namespace baton {
namespace {

// Ledger kinds that are a seed system's own history, replayed on import.
constexpr std::string_view kHistoryKinds[] = {"run.progress", "sgai.handoff", "stigmergy.signal",
                                              "graph.node"};

bool IsHistoryKind(std::string_view kind) {
  for (std::string_view k : kHistoryKinds) {
    if (k == kind) return true;
  }
  return false;
}

std::string Str(const Json& j, const char* key, std::string fallback = "") {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

int64_t Int(const Json& j, const char* key, int64_t fallback = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

Json ObjectOr(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : Json::object();
}

Json ListOf(const Json& image, const char* key) {
  auto it = image.find(key);
  return it != image.end() && it->is_array() ? *it : Json::array();
}

SqlValue TextOrNull(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return SqlNull();
  return SqlText(it->get<std::string>());
}

std::string TaskRef(const Json& task) {
  const std::string ref = Str(task, "ref");
  if (!ref.empty()) return ref;
  const std::string key = Str(task, "key");
  return key.empty() ? Str(task, "id") : Str(task, "kind") + ":" + key;
}

// ---- Export -------------------------------------------------------------

Result<Json> ExportTasks(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Json> rows, LoadRunTasks(txn, run_id));
  std::map<std::string, std::string> ref_of;  // task id → ref
  for (const Json& t : rows) {
    ref_of[t["id"].get<std::string>()] =
        t["key"].is_string() ? t["kind"].get<std::string>() + ":" + t["key"].get<std::string>()
                             : t["id"].get<std::string>();
  }
  ASSIGN_OR_RETURN(std::vector<Row> deps,
                   txn.Query("SELECT d.task_id, d.depends_on_id, d.dep_type FROM task_deps d "
                             "JOIN tasks t ON t.id = d.task_id WHERE t.run_id = ? "
                             "ORDER BY d.task_id, d.depends_on_id",
                             {SqlText(run_id)}));
  std::map<std::string, Json> depends_on;
  for (const Row& r : deps) {
    auto it = ref_of.find(r.Str(1));
    if (it == ref_of.end() || r.Str(2) != "depends_on") continue;
    depends_on[r.Str(0)].push_back(it->second);
  }
  Json tasks = Json::array();
  for (const Json& t : rows) {
    const std::string id = t["id"].get<std::string>();
    Json parent;
    if (t["parent_id"].is_string()) {
      auto it = ref_of.find(t["parent_id"].get<std::string>());
      if (it != ref_of.end()) parent = it->second;
    }
    tasks.push_back({{"ref", ref_of[id]},
                     {"id", id},
                     {"key", t["key"]},
                     {"kind", t["kind"]},
                     {"parent", parent},
                     {"depends_on", depends_on.contains(id) ? depends_on[id] : Json::array()},
                     {"title", t["title"]},
                     {"body", t["body"]},
                     {"status", t["status"]},
                     {"priority", t["priority"]},
                     {"position", t["position"]},
                     {"assignee", t["assignee"]},
                     {"attempts", t["attempts"]},
                     {"board_column", t["board_column"]},
                     {"blocked_reason", t["blocked_reason"]},
                     {"lease", t["lease"]},
                     {"result", t["result"]},
                     {"meta", t["meta"]},
                     {"created_at", t["created_at"]},
                     {"updated_at", t["updated_at"]}});
  }
  return tasks;
}

Result<Json> ExportMessages(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT sender, recipient, body, read, read_at, read_by, created_at, "
                             "meta FROM messages WHERE run_id = ? ORDER BY seq",
                             {SqlText(run_id)}));
  Json out = Json::array();
  for (const Row& r : rows) {
    out.push_back({{"from", r.Str(0)},
                   {"to", r.Str(1)},
                   {"body", r.Str(2)},
                   {"read", r.Int(3) != 0},
                   {"read_at", RowTextOrNull(r, 4)},
                   {"read_by", RowTextOrNull(r, 5)},
                   // Empty: the imported file did not say.
                   {"created_at", r.Str(6).empty() ? Json() : Json(r.Str(6))},
                   {"meta", RowJsonOr(r, 7, Json::object())}});
  }
  return out;
}

Result<Json> ExportHistory(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(Json events, ListEvents(txn, {.run_id = run_id, .limit = int64_t{1} << 40}));
  Json out = Json::array();
  for (const Json& e : events) {
    const Json& payload = e["payload"];
    std::string agent = Str(payload, "agent", Str(payload, "agent_id"));
    if (agent.empty()) agent = Str(e["actor"], "id");
    out.push_back({{"seq", e["seq"]},
                   {"kind", e["kind"]},
                   {"time", Str(payload, "source_time", e["time"].get<std::string>())},
                   {"agent", agent},
                   {"actor", e["actor"]},
                   {"summary", e["summary"]},
                   {"payload", payload},
                   {"files", e["files"]}});
  }
  return out;
}

Result<Json> ExportRows(Txn& txn, const std::string& run_id, std::string_view what) {
  Json out = Json::array();
  if (what == "approvals") {
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     txn.Query("SELECT subject_kind, subject, decision, reviewer, note, created_at, "
                               "meta FROM approvals WHERE run_id = ? ORDER BY seq",
                               {SqlText(run_id)}));
    for (const Row& r : rows) {
      out.push_back({{"subject_kind", r.Str(0)}, {"subject", r.Str(1)}, {"decision", r.Str(2)},
                     {"reviewer", r.Str(3)},     {"note", r.Str(4)},    {"time", r.Str(5)},
                     {"meta", RowJsonOr(r, 6, Json::object())}});
    }
  } else if (what == "sessions") {
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     txn.Query("SELECT id, status, started_at, last_active_at, meta FROM sessions "
                               "WHERE run_id = ? ORDER BY started_at, id",
                               {SqlText(run_id)}));
    for (const Row& r : rows) {
      out.push_back({{"id", r.Str(0)},
                     {"status", r.Str(1)},
                     {"started_at", r.Str(2)},
                     {"last_active_at", r.Str(3)},
                     {"meta", RowJsonOr(r, 4, Json::object())}});
    }
  } else if (what == "handoffs") {
    ASSIGN_OR_RETURN(
        std::vector<Row> rows,
        txn.Query("SELECT h.id, h.session_id, h.sequence, h.source, h.target, h.type, h.status, "
                  "t.kind, t.key, h.step_id, h.body, h.meta, h.created_at, h.updated_at "
                  "FROM handoffs h LEFT JOIN tasks t ON t.id = h.step_id "
                  "WHERE h.run_id = ? ORDER BY h.sequence",
                  {SqlText(run_id)}));
    for (const Row& r : rows) {
      Json step;
      if (!r.IsNull(8)) {
        step = r.Str(7) + ":" + r.Str(8);
      } else if (!r.IsNull(9)) {
        step = r.Str(9);
      }
      out.push_back({{"id", r.Str(0)},       {"session_id", RowTextOrNull(r, 1)},
                     {"sequence", r.Int(2)}, {"source", r.Str(3)},
                     {"target", r.Str(4)},   {"type", r.Str(5)},
                     {"status", r.Str(6)},   {"step", step},
                     {"body", r.Str(10)},    {"meta", RowJsonOr(r, 11, Json::object())},
                     {"created_at", r.Str(12)}, {"updated_at", r.Str(13)}});
    }
  } else if (what == "usage") {
    ASSIGN_OR_RETURN(
        std::vector<Row> rows,
        txn.Query("SELECT seq, agent, model, step_id, session_id, cost, input_tokens, "
                  "output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, "
                  "created_at FROM usage WHERE run_id = ? ORDER BY seq",
                  {SqlText(run_id)}));
    for (const Row& r : rows) {
      out.push_back({{"seq", r.Int(0)},
                     {"agent", r.Str(1)},
                     {"model", r.Str(2)},
                     {"step_id", r.Str(3)},
                     {"session_id", r.Str(4)},
                     {"cost", r.Real(5)},
                     {"tokens",
                      {{"input", r.Int(6)},
                       {"output", r.Int(7)},
                       {"reasoning", r.Int(8)},
                       {"cacheRead", r.Int(9)},
                       {"cacheWrite", r.Int(10)}}},
                     {"time", r.Str(11)}});
    }
  } else if (what == "questions") {
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     txn.Query("SELECT id, message, questions, work_gate, status, asked_by, "
                               "created_at FROM questions WHERE run_id = ? AND status = 'open' "
                               "ORDER BY seq",
                               {SqlText(run_id)}));
    for (const Row& r : rows) {
      out.push_back({{"id", r.Str(0)},
                     {"message", r.Str(1)},
                     {"questions", RowJsonOr(r, 2, Json::array())},
                     {"work_gate", r.Int(3) != 0},
                     {"status", r.Str(4)},
                     {"asked_by", r.Str(5)},
                     {"created_at", r.Str(6)}});
    }
  }
  return out;
}

// ---- Import -------------------------------------------------------------

// Identity of a list item, to recognise one the run already holds.
std::string Fingerprint(std::string_view list, const Json& item) {
  auto s = [&](const char* k) { return Str(item, k); };
  if (list == "messages") {
    return s("from") + "\n" + s("to") + "\n" + s("body") + "\n" + s("created_at");
  }
  if (list == "history") return s("kind") + "\n" + s("time") + "\n" + s("summary");
  if (list == "approvals") {
    return s("subject_kind") + "\n" + s("subject") + "\n" + s("decision") + "\n" +
           s("reviewer") + "\n" + s("note") + "\n" + s("time");
  }
  if (list == "usage") {
    return s("agent") + "\n" + s("model") + "\n" + s("step_id") + "\n" + s("time") + "\n" +
           CanonicalJson(item.value("tokens", Json()));
  }
  if (list == "questions") return s("message") + "\n" + CanonicalJson(item.value("questions", Json()));
  return s("id");  // sessions, handoffs
}

class Importer {
 public:
  Importer(OpContext& ctx, const RunImage& image, const ImportRequest& request)
      : ctx_(ctx), image_(image), request_(request) {}

  Result<Json> Run();

 private:
  Status CheckRun();
  Json MergedMeta(const Json& meta) const;
  Status WriteRun();
  Status WriteTasks();
  Status WriteMessages();
  Status WriteHistory();
  Status WriteApprovals(int64_t event_seq);
  Status WriteSessionsAndHandoffs();
  Status WriteUsage();
  Status WriteQuestions();
  Status RegisterWish();
  std::string Time(const Json& item, const char* key) const {
    const std::string t = Str(item, key);
    return t.empty() ? ctx_.now : t;
  }
  bool Seen(std::string_view list, const Json& item) {
    return existing_[std::string(list)].contains(Fingerprint(list, item));
  }
  void Count(const std::string& what, int64_t n = 1) {
    counts_[what] = counts_.value(what, int64_t{0}) + n;
  }

  OpContext& ctx_;
  const RunImage& image_;
  const ImportRequest& request_;
  const Profile* profile_ = nullptr;
  const Machine* machine_ = nullptr;
  Json run_;                 // the image's run object
  Json current_;             // the stored run when updating
  std::string run_id_;
  std::string project_id_;
  bool created_ = false;
  std::map<std::string, std::set<std::string>> existing_;  // list → fingerprints
  std::map<std::string, std::string> task_ids_;             // ref → stored id
  Json counts_ = Json::object();
  Json notes_ = Json::array();
  Json status_changes_ = Json::array();
};

Status Importer::CheckRun() {
  auto it = image_.find("run");
  if (it == image_.end() || !it->is_object()) {
    return InvalidArgumentError("image: run: missing; the reader gave no run");
  }
  run_ = *it;
  ASSIGN_OR_RETURN(profile_, FindProfile(Str(run_, "profile")));
  const std::string machine = Str(run_, "machine", profile_->run_machine);
  Result<const Machine*> m = ctx_.machines.Get(machine);
  if (!m.ok()) return InvalidArgumentError("run.machine: " + m.status().message());
  machine_ = *m;
  const std::string status = Str(run_, "status");
  if (!machine_->HasState(status)) {
    std::string states;
    for (const MachineState& s : machine_->states()) {
      states += std::string(states.empty() ? "" : ", ") + s.name;
    }
    return InvalidArgumentError(request_.source + ": status \"" + status + "\" is not a state of " +
                                machine + " (states: " + states + ")");
  }
  return Status();
}

// The meta keys a format's files hold are recorded per format
// (meta.format_keys.<format>), so that an update drops a key the file no
// longer has while keeping what only baton holds (an sgai run's GOAL.md
// flow, say).
Json Importer::MergedMeta(const Json& meta) const {
  Json merged = created_ || !current_["meta"].is_object() ? Json::object() : current_["meta"];
  const Json previous = merged.value("format_keys", Json::object()).value(request_.format, Json::array());
  for (const Json& k : previous) {
    if (k.is_string() && !meta.contains(k.get<std::string>())) merged.erase(k.get<std::string>());
  }
  Json keys = Json::array();
  for (const auto& [k, v] : meta.items()) {
    if (k == "format_keys") continue;
    merged[k] = v;
    keys.push_back(k);
  }
  merged["format_keys"][request_.format] = keys;
  return merged;
}

Status Importer::WriteRun() {
  const std::string status = Str(run_, "status");
  const Json context = ObjectOr(run_, "context");
  const SqlValue cursor = TextOrNull(run_, "cursor");
  const SqlValue cursor_index = run_.contains("cursor_index") && run_["cursor_index"].is_number_integer()
                                    ? SqlInt(run_["cursor_index"].get<int64_t>())
                                    : SqlNull();
  const std::string updated = Time(run_, "updated_at");
  if (request_.run_id.empty()) {
    created_ = true;
    run_id_ = NewId("run");
    if (!request_.project.empty()) {
      ASSIGN_OR_RETURN(project_id_, ResolveProjectId(ctx_.txn, request_.project));
    }
    return ctx_.txn
        .Exec("INSERT INTO runs (id, project_id, profile, machine, status, title, cursor, "
              "cursor_index, context, meta, version, created_at, updated_at) VALUES "
              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
              {SqlText(run_id_), project_id_.empty() ? SqlNull() : SqlText(project_id_),
               SqlText(profile_->name), SqlText(machine_->name()), SqlText(status),
               SqlText(Str(run_, "title")), cursor, cursor_index, SqlText(CanonicalJson(context)),
               SqlText(CanonicalJson(MergedMeta(ObjectOr(run_, "meta")))),
               SqlText(Time(run_, "created_at")), SqlText(updated)})
        .status();
  }
  run_id_ = request_.run_id;
  ASSIGN_OR_RETURN(current_, LoadRun(ctx_.txn, run_id_));
  if (current_["profile"] != profile_->name) {
    return FailedPreconditionError("run: " + run_id_ + " is a " +
                                   current_["profile"].get<std::string>() + " run; this " +
                                   request_.format + " file holds a " + profile_->name +
                                   " run — import it as a new run");
  }
  if (!request_.project.empty()) {
    return InvalidArgumentError("project: only a new run takes a project; run " + run_id_ +
                                " keeps its own");
  }
  // The stored run's machine rules its status, whatever the file's profile
  // would pick.
  const std::string machine = current_["machine"].get<std::string>();
  if (machine != machine_->name()) {
    Result<const Machine*> m = ctx_.machines.Get(machine);
    if (!m.ok()) return FailedPreconditionError("run.machine: " + m.status().message());
    if (!(*m)->HasState(status)) {
      return FailedPreconditionError("run.machine: run " + run_id_ + " follows " + machine +
                                     ", which has no status \"" + status + "\" (the file's " +
                                     machine_->name() + " status); import it as a new run");
    }
    machine_ = *m;
  }
  if (current_["project_id"].is_string()) project_id_ = current_["project_id"].get<std::string>();
  if (current_["status"] != status) {
    status_changes_.push_back({{"ref", "run"}, {"from", current_["status"]}, {"to", status}});
  }
  return ctx_.txn
      .Exec("UPDATE runs SET status = ?, title = ?, cursor = ?, cursor_index = ?, context = ?, "
            "meta = ?, version = version + 1, updated_at = ? WHERE id = ?",
            {SqlText(status), SqlText(Str(run_, "title")), cursor, cursor_index,
             SqlText(CanonicalJson(context)),
             SqlText(CanonicalJson(MergedMeta(ObjectOr(run_, "meta")))), SqlText(updated),
             SqlText(run_id_)})
      .status();
}

Status Importer::WriteTasks() {
  const Json tasks = ListOf(image_, "tasks");
  std::map<std::string, Json> stored;  // ref → stored task, when updating
  std::map<std::string, Json> keyless;  // kind|title|created_at → stored task
  if (!created_) {
    ASSIGN_OR_RETURN(std::vector<Json> rows, LoadRunTasks(ctx_.txn, run_id_));
    for (const Json& t : rows) {
      if (t["key"].is_string()) {
        stored[t["kind"].get<std::string>() + ":" + t["key"].get<std::string>()] = t;
      } else {
        keyless[t["kind"].get<std::string>() + "|" + t["title"].get<std::string>() + "|" +
                t["created_at"].get<std::string>()] = t;
      }
    }
  }
  std::set<std::string> refs;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Json& t = tasks[i];
    const std::string where = "tasks[" + std::to_string(i) + "]";
    const std::string kind = Str(t, "kind", profile_->default_task_kind);
    Result<std::string> machine_name = TaskMachineFor(*profile_, kind);
    if (!machine_name.ok()) return InvalidArgumentError(where + "." + machine_name.status().message());
    const Machine* machine = ctx_.machines.Find(*machine_name);
    if (machine == nullptr) return InternalError(where + ": machine " + *machine_name + " is missing");
    const std::string status = Str(t, "status", machine->initial());
    if (!machine->HasState(status)) {
      return InvalidArgumentError(request_.source + ": " + where + ".status: \"" + status +
                                  "\" is not a state of " + *machine_name);
    }
    const std::string ref = TaskRef(t);
    if (ref.empty() || !refs.insert(ref).second) {
      return InvalidArgumentError(request_.source + ": " + where + ": task \"" + ref +
                                  "\" appears twice");
    }
    const std::string key = Str(t, "key");
    const Json* found = nullptr;
    if (!key.empty() && stored.contains(kind + ":" + key)) {
      found = &stored[kind + ":" + key];
    } else if (key.empty()) {
      auto it = keyless.find(kind + "|" + Str(t, "title") + "|" + Str(t, "created_at"));
      if (it != keyless.end()) found = &it->second;
    }
    const Json meta = ObjectOr(t, "meta");
    const std::string result = t.contains("result") && !t["result"].is_null()
                                   ? CanonicalJson(t["result"])
                                   : std::string();
    std::vector<SqlValue> values = {
        SqlText(Str(t, "title")),           SqlText(Str(t, "body")),
        SqlText(status),                    SqlInt(Int(t, "priority")),
        SqlInt(Int(t, "position", static_cast<int64_t>(i))), TextOrNull(t, "assignee"),
        SqlInt(Int(t, "attempts")),         TextOrNull(t, "board_column"),
        result.empty() ? SqlNull() : SqlText(result), SqlText(CanonicalJson(meta)),
        SqlText(Time(t, "updated_at"))};
    if (found != nullptr) {
      const std::string id = (*found)["id"].get<std::string>();
      const std::string stored_machine = (*found)["machine"].get<std::string>();
      const Machine* sm = ctx_.machines.Find(stored_machine);
      if (stored_machine != *machine_name && (sm == nullptr || !sm->HasState(status))) {
        return FailedPreconditionError(request_.source + ": " + where + ".status: task " + ref +
                                       " follows " + stored_machine + ", which has no status \"" +
                                       status + "\"");
      }
      task_ids_[ref] = id;
      if ((*found)["status"] != status) {
        status_changes_.push_back({{"ref", ref}, {"from", (*found)["status"]}, {"to", status}});
      }
      values.push_back(SqlText(id));
      RETURN_IF_ERROR(ctx_.txn
                          .Exec("UPDATE tasks SET title = ?, body = ?, status = ?, priority = ?, "
                                "position = ?, assignee = ?, attempts = ?, board_column = ?, "
                                "result = ?, meta = ?, updated_at = ?, version = version + 1 "
                                "WHERE id = ?",
                                values)
                          .status());
      Count("tasks_updated");
      continue;
    }
    const std::string id = NewId("task");
    task_ids_[ref] = id;
    std::vector<SqlValue> insert = {SqlText(id),
                                    SqlText(run_id_),
                                    project_id_.empty() ? SqlNull() : SqlText(project_id_),
                                    SqlText(kind),
                                    key.empty() ? SqlNull() : SqlText(key),
                                    SqlText(*machine_name),
                                    SqlText(Time(t, "created_at"))};
    insert.insert(insert.end(), values.begin(), values.end());
    RETURN_IF_ERROR(
        ctx_.txn
            .Exec("INSERT INTO tasks (id, run_id, project_id, kind, key, machine, created_at, "
                  "title, body, status, priority, position, assignee, attempts, board_column, "
                  "result, meta, updated_at, version) VALUES "
                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                  insert)
            .status());
    Count("tasks_created");
  }
  // Parents and dependencies, now that every task has an id.
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Json& t = tasks[i];
    const std::string where = "tasks[" + std::to_string(i) + "]";
    const std::string id = task_ids_[TaskRef(t)];
    const std::string parent = Str(t, "parent");
    if (!parent.empty()) {
      if (!task_ids_.contains(parent)) {
        return InvalidArgumentError(request_.source + ": " + where + ".parent: no task \"" +
                                    parent + "\" in the file");
      }
      RETURN_IF_ERROR(ctx_.txn
                          .Exec("UPDATE tasks SET parent_id = ? WHERE id = ?",
                                {SqlText(task_ids_[parent]), SqlText(id)})
                          .status());
    }
    const Json deps = t.value("depends_on", Json::array());
    for (size_t d = 0; d < deps.size(); ++d) {
      const std::string dep = deps[d].is_string() ? deps[d].get<std::string>() : "";
      if (!task_ids_.contains(dep) || task_ids_[dep] == id) {
        return InvalidArgumentError(request_.source + ": " + where + ".depends_on[" +
                                    std::to_string(d) + "]: no other task \"" + dep +
                                    "\" in the file");
      }
      RETURN_IF_ERROR(ctx_.txn
                          .Exec("INSERT INTO task_deps (task_id, depends_on_id, dep_type) "
                                "VALUES (?, ?, 'depends_on') ON CONFLICT DO NOTHING",
                                {SqlText(id), SqlText(task_ids_[dep])})
                          .status());
    }
  }
  return Status();
}

Status Importer::WriteMessages() {
  for (const Json& m : ListOf(image_, "messages")) {
    if (Seen("messages", m)) continue;
    const bool read = m.value("read", false);
    RETURN_IF_ERROR(
        ctx_.txn
            .Exec("INSERT INTO messages (id, project_id, run_id, sender, recipient, addressed_to, "
                  "body, source, meta, read, read_at, read_by, delivery_status, created_at) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, 'import', ?, ?, ?, ?, 'delivered', ?)",
                  {SqlText(NewId("msg")), project_id_.empty() ? SqlNull() : SqlText(project_id_),
                   SqlText(run_id_), SqlText(Str(m, "from")), SqlText(Str(m, "to")),
                   SqlText(Str(m, "to")), SqlText(Str(m, "body")),
                   SqlText(CanonicalJson(ObjectOr(m, "meta"))), SqlInt(read ? 1 : 0),
                   TextOrNull(m, "read_at"), TextOrNull(m, "read_by"),
                   // Empty when the file did not say: writers then leave it out.
                   SqlText(Str(m, "created_at"))})
            .status());
    Count("messages");
  }
  return Status();
}

Status Importer::WriteHistory() {
  int64_t skipped = 0;
  for (const Json& h : ListOf(image_, "history")) {
    const std::string kind = Str(h, "kind");
    if (!IsHistoryKind(kind)) {
      ++skipped;
      continue;
    }
    if (Seen("history", h)) continue;
    Json payload = ObjectOr(h, "payload");
    if (!Str(h, "time").empty()) payload["source_time"] = Str(h, "time");
    payload["imported"] = true;
    RETURN_IF_ERROR(AppendEvent(ctx_, {.run_id = run_id_,
                                       .kind = kind,
                                       .summary = Str(h, "summary"),
                                       .payload = payload,
                                       .files = h.value("files", Json::array())})
                        .status());
    Count("history");
  }
  if (skipped > 0) {
    notes_.push_back("history: " + std::to_string(skipped) +
                     " event(s) of baton's own kinds (status changes and the like) are the source "
                     "run's record and were not replayed");
  }
  return Status();
}

Status Importer::WriteApprovals(int64_t event_seq) {
  for (const Json& a : ListOf(image_, "approvals")) {
    if (Seen("approvals", a)) continue;
    RETURN_IF_ERROR(
        ctx_.txn
            .Exec("INSERT INTO approvals (id, run_id, subject_kind, subject, decision, reviewer, "
                  "note, event_seq, meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  {SqlText(NewId("dec")), SqlText(run_id_), SqlText(Str(a, "subject_kind", "run")),
                   SqlText(Str(a, "subject")), SqlText(Str(a, "decision")),
                   SqlText(Str(a, "reviewer")), SqlText(Str(a, "note")), SqlInt(event_seq),
                   SqlText(CanonicalJson(ObjectOr(a, "meta"))), SqlText(Time(a, "time"))})
            .status());
    Count("approvals");
  }
  return Status();
}

// Session and hand-off ids are unique in the store: one that another run
// already holds is left out, with a note.
Status Importer::WriteSessionsAndHandoffs() {
  for (const Json& s : ListOf(image_, "sessions")) {
    if (Seen("sessions", s)) continue;
    ASSIGN_OR_RETURN(int64_t n, ctx_.txn.Exec(
        "INSERT INTO sessions (id, run_id, status, started_at, last_active_at, meta) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        {SqlText(Str(s, "id")), SqlText(run_id_), SqlText(Str(s, "status", "active")),
         SqlText(Time(s, "started_at")), SqlText(Time(s, "last_active_at")),
         SqlText(CanonicalJson(ObjectOr(s, "meta")))}));
    if (n == 0) {
      notes_.push_back("sessions: " + Str(s, "id") + " belongs to another run; not imported");
    } else {
      Count("sessions");
    }
  }
  for (const Json& h : ListOf(image_, "handoffs")) {
    if (Seen("handoffs", h)) continue;
    const std::string step = Str(h, "step");
    ASSIGN_OR_RETURN(int64_t n, ctx_.txn.Exec(
        "INSERT INTO handoffs (id, run_id, session_id, sequence, source, target, type, status, "
        "step_id, body, meta, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?) ON CONFLICT DO NOTHING",
        {SqlText(Str(h, "id", NewId("handoff"))), SqlText(run_id_), TextOrNull(h, "session_id"),
         SqlInt(Int(h, "sequence")), SqlText(Str(h, "source")), SqlText(Str(h, "target")),
         SqlText(Str(h, "type", "dispatch")), SqlText(Str(h, "status", "pending")),
         task_ids_.contains(step) ? SqlText(task_ids_[step]) : SqlNull(),
         SqlText(Str(h, "body")), SqlText(CanonicalJson(ObjectOr(h, "meta"))),
         SqlText(Time(h, "created_at")), SqlText(Time(h, "updated_at"))}));
    if (n == 0) {
      notes_.push_back("handoffs: " + Str(h, "id") +
                       " is already held (another run, or the same sequence); not imported");
    } else {
      Count("handoffs");
    }
  }
  return Status();
}

Status Importer::WriteUsage() {
  for (const Json& u : ListOf(image_, "usage")) {
    if (Seen("usage", u)) continue;
    const Json tokens = ObjectOr(u, "tokens");
    RETURN_IF_ERROR(
        ctx_.txn
            .Exec("INSERT INTO usage (run_id, agent, model, step_id, session_id, cost, "
                  "input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, "
                  "cache_write_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  {SqlText(run_id_), SqlText(Str(u, "agent")), SqlText(Str(u, "model")),
                   SqlText(Str(u, "step_id")), SqlText(Str(u, "session_id")),
                   SqlValue(u.value("cost", 0.0)), SqlInt(Int(tokens, "input")),
                   SqlInt(Int(tokens, "output")), SqlInt(Int(tokens, "reasoning")),
                   SqlInt(Int(tokens, "cacheRead")), SqlInt(Int(tokens, "cacheWrite")),
                   SqlText(Time(u, "time"))})
            .status());
    Count("usage");
  }
  return Status();
}

// An open question in the file is open again here: the run waits as the
// file says, and the answer returns it to where it was before — for a run
// the file says waits, its profile's active status. A run that waits with
// no question in the file gets one, or nothing could ever release it.
Status Importer::WriteQuestions() {
  const std::string status = Str(run_, "status");
  const bool waiting = status == profile_->waiting_status;
  const std::string before = waiting ? StatusFor(machine_->name(), Phase::kActive) : status;
  Json questions_in = ListOf(image_, "questions");
  if (waiting && questions_in.empty() && !created_) {
    ASSIGN_OR_RETURN(std::vector<Row> open,
                     ctx_.txn.Query("SELECT 1 FROM questions WHERE run_id = ? AND status = 'open'",
                                    {SqlText(run_id_)}));
    if (!open.empty()) return Status();
  }
  if (waiting && questions_in.empty()) {
    questions_in.push_back(
        {{"message", "The imported " + request_.format + " file says this run waits for a human (" +
                         status + "); answer to let it go on."},
         {"questions", Json::array({{{"question", "Let the run go on?"},
                                     {"choices", Json::array({"go on"})},
                                     {"multiSelect", false}}})},
         {"asked_by", "baton"}});
    notes_.push_back("questions: the file's run waits for a human without a question; one was "
                     "opened so that an answer releases it");
  }
  for (const Json& q : questions_in) {
    if (Str(q, "status", "open") != "open" || Seen("questions", q)) continue;
    const Json questions = q.value("questions", Json::array());
    const std::string id =
        Str(q, "id", Sha256Hex(Str(q, "message") + CanonicalJson(questions)).substr(0, 16));
    RETURN_IF_ERROR(
        ctx_.txn
            .Exec("INSERT INTO questions (id, run_id, project_id, asked_by, asked_by_role, "
                  "message, questions, work_gate, blocks, status, status_before, created_at, "
                  "updated_at) VALUES (?, ?, ?, ?, 'agent', ?, ?, ?, '[]', 'open', ?, ?, ?)",
                  {SqlText(id), SqlText(run_id_),
                   project_id_.empty() ? SqlNull() : SqlText(project_id_),
                   SqlText(Str(q, "asked_by", "coordinator")), SqlText(Str(q, "message")),
                   SqlText(CanonicalJson(questions)), SqlInt(q.value("work_gate", false) ? 1 : 0),
                   SqlText(before), SqlText(Time(q, "created_at")), SqlText(ctx_.now)})
            .status());
    Count("questions");
  }
  return Status();
}

// A Genie wish state is a wish: registered under its slug, so the wish
// operations find it, unless that slug is already another run's.
Status Importer::RegisterWish() {
  if (!created_ || request_.format != "genie-wish") return Status();
  const Json meta = ObjectOr(run_, "meta");
  const std::string slug = Str(meta, "slug");
  if (slug.empty()) return Status();
  ASSIGN_OR_RETURN(int64_t n,
                   ctx_.txn.Exec("INSERT INTO wishes (project_key, slug, run_id, wish_file, "
                                 "signature, created_at) VALUES (?, ?, ?, ?, ?, ?) "
                                 "ON CONFLICT DO NOTHING",
                                 {SqlText(project_id_), SqlText(slug), SqlText(run_id_),
                                  Str(meta, "wish_file").empty() ? SqlNull()
                                                                 : SqlText(Str(meta, "wish_file")),
                                  SqlText(Str(meta, "groupsSignature")),
                                  SqlText(Time(run_, "created_at"))}));
  if (n == 0) {
    notes_.push_back("wish: the slug \"" + slug +
                     "\" is already another run's wish; this run is not registered under it");
  }
  return Status();
}

Result<Json> Importer::Run() {
  RETURN_IF_ERROR(CheckRun());
  RETURN_IF_ERROR(WriteRun());
  if (!created_) {
    ASSIGN_OR_RETURN(RunImage current, ExportImage(ctx_.txn, run_id_));
    for (const char* list : {"messages", "history", "approvals", "sessions", "handoffs", "usage",
                             "questions"}) {
      for (const Json& item : ListOf(current, list)) existing_[list].insert(Fingerprint(list, item));
    }
  }
  RETURN_IF_ERROR(WriteTasks());
  RETURN_IF_ERROR(WriteMessages());
  RETURN_IF_ERROR(WriteHistory());
  RETURN_IF_ERROR(WriteSessionsAndHandoffs());
  RETURN_IF_ERROR(WriteUsage());
  RETURN_IF_ERROR(WriteQuestions());
  RETURN_IF_ERROR(RegisterWish());
  ASSIGN_OR_RETURN(
      int64_t seq,
      AppendEvent(ctx_, {.run_id = run_id_,
                         .kind = "run.imported",
                         .summary = std::string(created_ ? "imported" : "updated") + " from " +
                                    request_.format + " file " + request_.source,
                         .payload = {{"format", request_.format},
                                     {"source", request_.source},
                                     {"sha256", request_.sha256},
                                     {"created", created_},
                                     {"status", Str(run_, "status")},
                                     {"status_changes", status_changes_},
                                     {"counts", counts_},
                                     {"notes", notes_}}}));
  RETURN_IF_ERROR(WriteApprovals(seq));
  return Json{{"run_id", run_id_},
              {"created", created_},
              {"format", request_.format},
              {"status", Str(run_, "status")},
              {"counts", counts_},
              {"notes", notes_}};
}

}  // namespace

Result<RunImage> ExportImage(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(Json run, LoadRun(txn, run_id));
  RunImage image = {{"image", 1}, {"run", run}};
  ASSIGN_OR_RETURN(image["tasks"], ExportTasks(txn, run_id));
  ASSIGN_OR_RETURN(image["messages"], ExportMessages(txn, run_id));
  ASSIGN_OR_RETURN(image["history"], ExportHistory(txn, run_id));
  for (const char* what : {"approvals", "sessions", "handoffs", "usage", "questions"}) {
    ASSIGN_OR_RETURN(image[what], ExportRows(txn, run_id, what));
  }
  return image;
}

Result<Json> ImportImage(OpContext& ctx, const RunImage& image, const ImportRequest& request) {
  Importer importer(ctx, image, request);
  return importer.Run();
}

Result<FormatOutput> RenderRun(Txn& txn, const std::string& run_id, const std::string& format) {
  ASSIGN_OR_RETURN(const Format* f, FindFormat(format));
  ASSIGN_OR_RETURN(RunImage image, ExportImage(txn, run_id));
  return f->write(image);
}

Result<Json> ImportRunOp(OpContext& ctx, const Json& in) {
  const std::string format = in.at("format").get<std::string>();
  const std::string content = in.at("content").get<std::string>();
  ASSIGN_OR_RETURN(const Format* f, FindFormat(format));
  const std::string source = in.value("source", std::string(f->file));
  ASSIGN_OR_RETURN(RunImage image, f->read(content, source));
  if (in.contains("envelopes")) {
    if (std::string(f->name) != "sinfonia") {
      return InvalidArgumentError("envelopes: only the sinfonia format has hand-off envelopes");
    }
    const Json& envelopes = in["envelopes"];
    for (size_t i = 0; i < envelopes.size(); ++i) {
      const std::string name = envelopes[i].at("name").get<std::string>();
      ASSIGN_OR_RETURN(Json handoff,
                       ReadSinfoniaEnvelope(envelopes[i].at("content").get<std::string>(), name));
      // The index's Artifacts row of the same id is this envelope: one
      // hand-off, with the envelope's body and front matter.
      Json* row = nullptr;
      for (Json& h : image["handoffs"]) {
        if (h.is_object() && h.value("id", "") == handoff.value("id", "") && !handoff["id"].empty()) {
          row = &h;
        }
      }
      if (row == nullptr) {
        image["handoffs"].push_back(std::move(handoff));
        continue;
      }
      Json meta = (*row)["meta"].is_object() ? (*row)["meta"] : Json::object();
      meta.update(handoff["meta"]);
      for (const char* k : {"session_id", "sequence", "source", "target", "type", "body", "created_at"}) {
        (*row)[k] = handoff[k];
      }
      (*row)["meta"] = meta;
    }
  }
  ImportRequest request{.format = f->name,
                        .source = source,
                        .sha256 = Sha256Hex(content),
                        .run_id = in.value("run", ""),
                        .project = in.value("project", "")};
  return ImportImage(ctx, image, request);
}

Result<Json> ExportRunOp(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  ASSIGN_OR_RETURN(FormatOutput out, RenderRun(ctx.txn, run_id, in.at("format").get<std::string>()));
  return Json{{"run_id", run_id},
              {"format", in["format"]},
              {"content", out.text},
              {"notes", out.notes}};
}

namespace {

Json MirrorRowToJson(const Row& r) {
  return Json{{"path", r.Str(0)},
              {"run_id", r.Str(1)},
              {"format", r.Str(2)},
              {"ok", r.IsNull(3)},
              {"last_error", RowTextOrNull(r, 3)},
              {"failed_at", RowTextOrNull(r, 4)},
              {"created_at", r.Str(5)}};
}

// One spelling per file: "/a/./b/../c.json" and "/a/c.json" are one mirror.
std::string NormalPath(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

constexpr char kMirrorColumns[] = "path, run_id, format, last_error, failed_at, created_at";

Result<std::vector<Row>> MirrorRow(Txn& txn, const std::string& path) {
  return txn.Query(std::string("SELECT ") + kMirrorColumns + " FROM mirrors WHERE path = ?",
                   {SqlText(path)});
}

}  // namespace

Result<Json> BindMirror(OpContext& ctx, const Json& in) {
  namespace fs = std::filesystem;
  const std::string run_id = in.at("run").get<std::string>();
  const std::string format = in.at("format").get<std::string>();
  const std::string path = NormalPath(in.at("path").get<std::string>());
  const fs::path p(path);
  if (!p.is_absolute()) {
    return InvalidArgumentError("path: \"" + path +
                                "\" must be absolute, so that every process writes the same "
                                "file (the CLI makes a relative path absolute)");
  }
  if (ctx.store != nullptr) {
    const std::string db = NormalPath(ctx.store->location);
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      if (path == db + suffix) {
        return InvalidArgumentError("path: " + path + " is the store's own file");
      }
    }
  }
  std::error_code ec;
  if (!fs::is_directory(p.parent_path(), ec)) {
    return InvalidArgumentError("path: the folder " + p.parent_path().string() +
                                " does not exist");
  }
  if (fs::is_directory(p, ec)) return InvalidArgumentError("path: " + path + " is a folder");
  ASSIGN_OR_RETURN(Json run, LoadRun(ctx.txn, run_id));
  // A format that cannot write this run is refused now, not at every commit.
  ASSIGN_OR_RETURN(FormatOutput out, RenderRun(ctx.txn, run_id, format));
  ASSIGN_OR_RETURN(std::vector<Row> held, MirrorRow(ctx.txn, path));
  if (!held.empty() && held[0].Str(1) != run_id) {
    return AlreadyExistsError("path: " + path + " already mirrors run " + held[0].Str(1) +
                              "; unbind it first");
  }
  RETURN_IF_ERROR(ctx.txn
                      .Exec("INSERT INTO mirrors (path, run_id, format, created_at) "
                            "VALUES (?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET format = "
                            "excluded.format, last_error = NULL, failed_at = NULL",
                            {SqlText(path), SqlText(run_id), SqlText(format), SqlText(ctx.now)})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "mirror.bound",
                                    .summary = "mirrored as " + format + " to " + path,
                                    .payload = {{"path", path},
                                                {"format", format},
                                                {"notes", out.notes}},
                                    .files = Json::array({path})})
                      .status());
  ASSIGN_OR_RETURN(std::vector<Row> row, MirrorRow(ctx.txn, path));
  Json result = MirrorRowToJson(row.at(0));
  result["notes"] = out.notes;
  return result;
}

Result<Json> UnbindMirror(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  RETURN_IF_ERROR(LoadRun(ctx.txn, run_id).status());
  std::string sql = std::string("SELECT ") + kMirrorColumns + " FROM mirrors WHERE run_id = ?";
  std::vector<SqlValue> params = {SqlText(run_id)};
  const std::string path = in.contains("path") ? NormalPath(in["path"].get<std::string>()) : "";
  if (!path.empty()) {
    sql += " AND path = ?";
    params.push_back(SqlText(path));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, ctx.txn.Query(sql, params));
  if (rows.empty()) {
    return NotFoundError("run " + run_id + " has no mirror" +
                         (path.empty() ? "" : " at " + path));
  }
  Json removed = Json::array();
  for (const Row& r : rows) {
    RETURN_IF_ERROR(
        ctx.txn.Exec("DELETE FROM mirrors WHERE path = ?", {SqlText(r.Str(0))}).status());
    removed.push_back(MirrorRowToJson(r));
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                      .kind = "mirror.unbound",
                                      .summary = "no longer mirrored to " + r.Str(0),
                                      .payload = {{"path", r.Str(0)}, {"format", r.Str(2)}}})
                        .status());
  }
  return Json{{"run_id", run_id}, {"removed", removed}};
}

Result<Json> ListMirrors(OpContext& ctx, const Json& in) {
  std::string sql = std::string("SELECT ") + kMirrorColumns + " FROM mirrors";
  std::vector<SqlValue> params;
  if (in.contains("run")) {
    sql += " WHERE run_id = ?";
    params.push_back(SqlText(in["run"].get<std::string>()));
  }
  sql += " ORDER BY created_at, path";
  ASSIGN_OR_RETURN(std::vector<Row> rows, ctx.txn.Query(sql, params));
  Json mirrors = Json::array();
  for (const Row& r : rows) mirrors.push_back(MirrorRowToJson(r));
  return Json{{"mirrors", mirrors}};
}

Result<Json> ReportMirror(OpContext& ctx, const Json& in) {
  const std::string path = NormalPath(in.at("path").get<std::string>());
  const std::string error = in.value("error", "");
  ASSIGN_OR_RETURN(std::vector<Row> rows, MirrorRow(ctx.txn, path));
  if (rows.empty()) return Json{{"path", path}, {"changed", false}};  // unbound meanwhile
  const Row& r = rows[0];
  const std::string run_id = r.Str(1);
  // A report about a binding that has changed since (another run or
  // format at the same path) is not this binding's.
  if ((in.contains("run") && in["run"] != run_id) ||
      (in.contains("format") && in["format"] != r.Str(2))) {
    return Json{{"path", path}, {"changed", false}};
  }
  const std::string previous = r.IsNull(3) ? "" : r.Str(3);
  if (error == previous) return Json{{"path", path}, {"changed", false}};
  if (error.empty()) {
    RETURN_IF_ERROR(ctx.txn
                        .Exec("UPDATE mirrors SET last_error = NULL, failed_at = NULL "
                              "WHERE path = ?",
                              {SqlText(path)})
                        .status());
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                      .kind = "mirror.recovered",
                                      .summary = "mirror " + path + " written again",
                                      .payload = {{"path", path}, {"format", r.Str(2)}},
                                      .files = Json::array({path})})
                        .status());
  } else {
    RETURN_IF_ERROR(ctx.txn
                        .Exec("UPDATE mirrors SET last_error = ?, failed_at = ? WHERE path = ?",
                              {SqlText(error), SqlText(ctx.now), SqlText(path)})
                        .status());
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                      .kind = "mirror.failed",
                                      .summary = "mirror " + path + " not written: " + error,
                                      .payload = {{"path", path},
                                                  {"format", r.Str(2)},
                                                  {"error", error}},
                                      .files = Json::array({path})})
                        .status());
  }
  return Json{{"path", path}, {"changed", true}};
}

Result<std::vector<MirrorTarget>> MirrorsOf(Txn& txn, const std::vector<std::string>& run_ids) {
  std::vector<MirrorTarget> out;
  if (run_ids.empty()) return out;
  std::string sql = "SELECT path, run_id, format, last_error FROM mirrors WHERE run_id IN (";
  std::vector<SqlValue> params;
  for (size_t i = 0; i < run_ids.size(); ++i) {
    sql += i == 0 ? "?" : ", ?";
    params.push_back(SqlText(run_ids[i]));
  }
  sql += ") ORDER BY path";
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  for (const Row& r : rows) {
    out.push_back({.run_id = r.Str(1),
                   .path = r.Str(0),
                   .format = r.Str(2),
                   .last_error = r.IsNull(3) ? "" : r.Str(3)});
  }
  return out;
}

}  // namespace baton
