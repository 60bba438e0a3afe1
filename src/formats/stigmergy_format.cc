// Reading Stigmergy's .ai/state.json (2.0, 3.0, 3.1) into a run image; the
// layout is described in stigmergy_format.h, the writer is
// stigmergy_document.cc.

#include "formats/stigmergy_format.h"

#include <map>
#include <set>
#include <span>

#include "formats/reader.h"
#include "util/json_or_null.h"

namespace baton {
namespace {

constexpr char kFormat[] = "stigmergy";

struct Alias {
  std::string_view from;
  std::string_view to;
};

// A machine's 2.0 statuses, and the statuses of other schemas read as one of
// them (seed-systems.md part 2 §2.2: the 2.0 draft 93d9f8f6, v3.0 4c7d95b6,
// v3.1 908a6ebd and its schema document).
struct StatusSet {
  const char* machine;
  std::span<const std::string_view> statuses;
  std::span<const Alias> aliases;
};

constexpr std::string_view kProjectStatuses[] = {
    "NEEDS_BRIEFING",   "NEEDS_PLANNING",       "READY_FOR_EXECUTION", "EXECUTION_IN_PROGRESS",
    "EXECUTION_HALTED", "HUMAN_INPUT_REQUIRED", "PROJECT_COMPLETE"};
constexpr Alias kProjectAliases[] = {{"PLANNING_IN_PROGRESS", "NEEDS_PLANNING"},
                                     {"SYSTEM_AUDIT_PENDING", "EXECUTION_IN_PROGRESS"},
                                     {"NEW", "NEEDS_BRIEFING"},
                                     {"NEEDS_INITIALIZATION", "NEEDS_BRIEFING"},
                                     {"AWAITING_APPROVAL_BRIEF", "NEEDS_BRIEFING"},
                                     {"NEEDS_PRD", "NEEDS_PLANNING"},
                                     {"AWAITING_APPROVAL_PRD", "NEEDS_PLANNING"},
                                     {"NEEDS_ARCHITECTURE", "NEEDS_PLANNING"},
                                     {"AWAITING_APPROVAL_ARCHITECTURE", "NEEDS_PLANNING"},
                                     {"NEEDS_BLUEPRINT", "NEEDS_PLANNING"},
                                     {"GRAND_BLUEPRINT_PHASE", "NEEDS_PLANNING"},
                                     {"AWAITING_APPROVAL_BLUEPRINT", "READY_FOR_EXECUTION"},
                                     {"AWAITING_EXECUTION_APPROVAL", "READY_FOR_EXECUTION"},
                                     {"EXECUTION_PHASE", "EXECUTION_IN_PROGRESS"},
                                     {"AWAITING_QA", "EXECUTION_IN_PROGRESS"},
                                     {"DEPLOYMENT_PHASE", "EXECUTION_IN_PROGRESS"},
                                     {"EXECUTION_FAILED", "EXECUTION_HALTED"},
                                     {"PAUSED_BY_USER", "EXECUTION_HALTED"},
                                     // The graph era's .stigmergy/state/current.json
                                     // (GraphStateManager's transitionToState).
                                     {"ENRICHMENT_PHASE", "NEEDS_BRIEFING"},
                                     {"REQUIREMENTS_PHASE", "NEEDS_PLANNING"},
                                     {"ARCHITECTURE_PHASE", "NEEDS_PLANNING"},
                                     {"PLANNING_PHASE", "NEEDS_PLANNING"},
                                     {"TASK_BREAKDOWN_PHASE", "NEEDS_PLANNING"},
                                     {"VALIDATION_PHASE", "EXECUTION_IN_PROGRESS"},
                                     {"REVISION_PHASE", "EXECUTION_IN_PROGRESS"},
                                     {"HUMAN_INPUT_NEEDED", "HUMAN_INPUT_REQUIRED"},
                                     {"PAUSED", "EXECUTION_HALTED"},
                                     {"ERROR", "EXECUTION_HALTED"},
                                     {"COMPLETED", "PROJECT_COMPLETE"},
                                     {"EXECUTION_COMPLETE", "PROJECT_COMPLETE"}};
constexpr std::string_view kEpicStatuses[] = {"PENDING", "IN_PROGRESS", "COMPLETE"};
constexpr Alias kEpicAliases[] = {{"COMPLETED", "COMPLETE"}, {"DONE", "COMPLETE"}};
constexpr std::string_view kStoryStatuses[] = {"PENDING", "IN_PROGRESS", "AWAITING_VERIFICATION",
                                               "COMPLETE", "FAILED"};
constexpr Alias kStoryAliases[] = {{"COMPLETED", "COMPLETE"},
                                   {"DONE", "COMPLETE"},
                                   {"APPROVED", "PENDING"},
                                   {"QA_PENDING", "AWAITING_VERIFICATION"},
                                   {"PO_PENDING", "AWAITING_VERIFICATION"},
                                   {"AWAITING_QA", "AWAITING_VERIFICATION"}};
constexpr std::string_view kIssueStatuses[] = {"OPEN", "IN_PROGRESS", "RESOLVED",
                                               "FAILED_TO_RESOLVE"};
constexpr Alias kIssueAliases[] = {{"CLOSED", "RESOLVED"}};

constexpr StatusSet kProject{"stigmergy.project", kProjectStatuses, kProjectAliases};
constexpr StatusSet kEpic{"stigmergy.epic", kEpicStatuses, kEpicAliases};
constexpr StatusSet kStory{"stigmergy.story", kStoryStatuses, kStoryAliases};
constexpr StatusSet kIssue{"stigmergy.issue", kIssueStatuses, kIssueAliases};

// The 2.0 status of "value", or "" when the set does not know it.
std::string_view Lookup(const StatusSet& set, std::string_view value) {
  for (std::string_view s : set.statuses) {
    if (s == value) return s;
  }
  for (const Alias& a : set.aliases) {
    if (a.from == value) return a.to;
  }
  return {};
}

// Reads the status at "key": its 2.0 value, with "original" set to what the
// file said when that was another schema's status.
Result<std::string> ReadStatus(ObjectReader& r, std::string_view key, const StatusSet& set,
                               std::string* original) {
  ASSIGN_OR_RETURN(std::string value, r.String(key));
  const std::string_view mapped = Lookup(set, value);
  if (mapped.empty()) {
    std::string allowed, read_as;
    for (std::string_view s : set.statuses)
      allowed += (allowed.empty() ? "" : ", ") + std::string(s);
    for (const Alias& a : set.aliases)
      read_as += (read_as.empty() ? "" : ", ") + std::string(a.from);
    return r.Error(key, "unknown " + std::string(set.machine) + " status \"" + value +
                            "\"; allowed: " + allowed +
                            " (also read, from other schema versions: " + read_as + ")");
  }
  if (mapped != value) *original = value;
  return std::string(mapped);
}

// Reads an array of strings; std::nullopt when absent.
Result<std::optional<Json>> OptStrings(ObjectReader& r, std::string_view key) {
  ASSIGN_OR_RETURN(std::optional<Json> list, r.OptArray(key));
  if (!list) return list;
  for (size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_string()) {
      return FieldError(r.source(), PointerAppend(r.Path(key), i),
                        "must be a string, not " + TypeName((*list)[i]));
    }
  }
  return list;
}

class StateReader {
 public:
  StateReader(const Json& doc, std::string source) : doc_(doc), source_(std::move(source)) {}
  Result<RunImage> Read();

 private:
  Status ReadManifest(ObjectReader& top);
  Status ReadEpic(const Json& value, const std::string& pointer, int64_t position);
  Status ReadStory(const Json& value, const std::string& pointer, const std::string& epic_ref,
                   int64_t position);
  Status ReadV3Tasks(const Json& tasks, const std::string& pointer);
  Status ReadHistory(const Json& list, const std::string& pointer);
  Status ReadIssue(const Json& value, const std::string& pointer, int64_t position);
  Result<std::string> ProjectStatus(ObjectReader& top, std::string* original);
  // Adds "task" (its ref made of kind and key), refusing a second item with
  // the same ref.
  Status AddTask(Json task, const std::string& pointer, const std::string& what);

  const Json& doc_;
  std::string source_;
  Json kept_ = Json::object();
  Json tasks_ = Json::array();
  Json history_ = Json::array();
  std::map<std::string, std::string> refs_;  // ref → pointer of the item
  std::string signal_;                       // the system signal as history runs
  int64_t epics_ = 0;
};

Status StateReader::AddTask(Json task, const std::string& pointer, const std::string& what) {
  const std::string ref = task["kind"].get<std::string>() + ":" + task["key"].get<std::string>();
  auto [it, added] = refs_.emplace(ref, pointer);
  if (!added) {
    return FieldError(source_, pointer, what + " appears twice (also at " + it->second + ")");
  }
  task["ref"] = ref;
  tasks_.push_back(std::move(task));
  return Status();
}

// Adds the item's unread keys to "extra" (pointers relative to the item) and
// stores "extra", when not empty, as the task's meta.kept.stigmergy.
void KeepItemRest(const ObjectReader& r, const std::string& pointer, Json extra, Json& meta) {
  Json kept = Json::object();
  r.KeepRest(kept);
  for (auto& [p, value] : kept.items()) extra[p.substr(pointer.size())] = value;
  if (!extra.empty()) meta["kept"][kFormat] = std::move(extra);
}

Result<std::string> StateReader::ProjectStatus(ObjectReader& top, std::string* original) {
  ASSIGN_OR_RETURN(std::string status, ReadStatus(top, "project_status", kProject, original));
  if (*original != "PAUSED_BY_USER") return status;
  // 3.1 pauses by remembering where it was: a pause of execution is a halt,
  // a pause in another phase is that phase (2.0 can halt only execution).
  auto before = doc_.find("status_before_pause");
  if (before == doc_.end() || !before->is_string()) return status;
  const std::string_view was = Lookup(kProject, before->get<std::string>());
  if (was.empty() || was == "EXECUTION_IN_PROGRESS" || was == "EXECUTION_HALTED") return status;
  return std::string(was);
}

Status StateReader::ReadManifest(ObjectReader& top) {
  ASSIGN_OR_RETURN(std::optional<Json> manifest, top.OptObject("project_manifest"));
  if (!manifest) return Status();
  ASSIGN_OR_RETURN(ObjectReader m, ObjectReader::Make(*manifest, source_, "/project_manifest"));
  ASSIGN_OR_RETURN(std::optional<Json> epics, m.OptArray("epics"));
  if (epics) {
    for (size_t e = 0; e < epics->size(); ++e) {
      RETURN_IF_ERROR(
          ReadEpic((*epics)[e], PointerAppend(m.Path("epics"), e), static_cast<int64_t>(e) + 1));
    }
  }
  ASSIGN_OR_RETURN(std::optional<Json> tasks, m.OptArray("tasks"));
  if (tasks) RETURN_IF_ERROR(ReadV3Tasks(*tasks, m.Path("tasks")));
  m.KeepRest(kept_);
  return Status();
}

Status StateReader::ReadEpic(const Json& value, const std::string& pointer, int64_t position) {
  ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(value, source_, pointer));
  const std::optional<Json> id = r.OptAny("epic_id");
  std::string key;
  if (!id || id->is_null()) return r.Error("epic_id", "is required");
  if (id->is_string()) {
    key = id->get<std::string>();
  } else if (id->is_number_integer()) {
    key = id->dump();
  } else {
    return r.Error("epic_id", "must be an integer or a string, not " + TypeName(*id));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> title, r.OptString("title"));
  std::string original;
  ASSIGN_OR_RETURN(std::string status, ReadStatus(r, "status", kEpic, &original));
  ASSIGN_OR_RETURN(std::optional<Json> stories, r.OptArray("stories"));
  Json meta = Json::object();
  // "1" or -1 would not come back as written; the original type does.
  if (StigmergyEpicId(key) != *id) meta["epic_id"] = *id;
  Json extra = Json::object();
  if (!original.empty()) extra["/source_status"] = original;
  KeepItemRest(r, pointer, std::move(extra), meta);
  RETURN_IF_ERROR(AddTask({{"kind", "epic"},
                           {"key", key},
                           {"parent", nullptr},
                           {"title", title.value_or("")},
                           {"status", status},
                           {"position", position},
                           {"depends_on", Json::array()},
                           {"attempts", 0},
                           {"meta", meta}},
                          pointer, "epic " + key));
  ++epics_;
  if (!stories) return Status();
  for (size_t s = 0; s < stories->size(); ++s) {
    RETURN_IF_ERROR(ReadStory((*stories)[s], PointerAppend(r.Path("stories"), s), "epic:" + key,
                              static_cast<int64_t>(s) + 1));
  }
  return Status();
}

Status StateReader::ReadStory(const Json& value, const std::string& pointer,
                              const std::string& epic_ref, int64_t position) {
  ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(value, source_, pointer));
  ASSIGN_OR_RETURN(std::string id, r.String("story_id"));
  ASSIGN_OR_RETURN(std::optional<std::string> title, r.OptString("title"));
  std::string original;
  ASSIGN_OR_RETURN(std::string status, ReadStatus(r, "status", kStory, &original));
  Json meta = Json::object();
  Json extra = Json::object();
  if (!original.empty()) extra["/source_status"] = original;
  KeepItemRest(r, pointer, std::move(extra), meta);
  return AddTask({{"kind", "story"},
                  {"key", id},
                  {"parent", epic_ref},
                  {"title", title.value_or("")},
                  {"status", status},
                  {"position", position},
                  {"depends_on", Json::array()},
                  {"attempts", 0},
                  {"meta", meta}},
                 pointer, "story " + id);
}

// 3.x tasks are stories of one epic made for them: 2.0 has no story without
// an epic, and stigmergy.story moves a story's epic with it.
Status StateReader::ReadV3Tasks(const Json& tasks, const std::string& pointer) {
  if (tasks.empty()) return Status();
  std::set<std::string> ids;
  for (const Json& t : tasks) {
    if (t.is_object() && t.contains("id") && t["id"].is_string())
      ids.insert(t["id"].get<std::string>());
  }
  int64_t n = 1;
  while (refs_.contains("epic:" + std::to_string(n))) ++n;
  const std::string epic_key = std::to_string(n);
  const size_t epic_index = tasks_.size();
  RETURN_IF_ERROR(AddTask({{"kind", "epic"},
                           {"key", epic_key},
                           {"parent", nullptr},
                           {"title", "Tasks"},
                           {"status", "PENDING"},
                           {"position", epics_ + 1},
                           {"depends_on", Json::array()},
                           {"attempts", 0},
                           {"meta", {{"made_for", "project_manifest.tasks"}}}},
                          pointer, "epic " + epic_key));
  bool all_pending = true, all_complete = true;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const std::string at = PointerAppend(pointer, i);
    ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(tasks[i], source_, at));
    ASSIGN_OR_RETURN(std::string id, r.String("id"));
    ASSIGN_OR_RETURN(std::optional<std::string> title, r.OptString("title"));
    ASSIGN_OR_RETURN(std::optional<std::string> summary, r.OptString("summary"));
    std::string original;
    // The graph era writes planned tasks without a status: not started.
    std::string status = "PENDING";
    if (tasks[i].contains("status") && !tasks[i]["status"].is_null()) {
      ASSIGN_OR_RETURN(status, ReadStatus(r, "status", kStory, &original));
    }
    ASSIGN_OR_RETURN(std::optional<std::string> agent, r.OptString("agent"));
    ASSIGN_OR_RETURN(std::optional<Json> deps, OptStrings(r, "dependencies"));
    ASSIGN_OR_RETURN(std::optional<int64_t> failures, r.OptInt("failure_count"));
    if (failures && *failures < 0) return r.Error("failure_count", "must not be negative");
    // 2.0 has no place for these; the story keeps them as they were.
    Json extra = Json::object();
    if (title && summary) extra["/summary"] = *summary;
    if (!original.empty()) extra["/source_status"] = original;
    if (agent) extra["/agent"] = *agent;
    if (deps) extra["/dependencies"] = *deps;
    if (failures) extra["/failure_count"] = *failures;
    Json depends_on = Json::array();
    for (const Json& d : deps.value_or(Json::array())) {
      if (ids.contains(d.get<std::string>()) && d != id)
        depends_on.push_back("story:" + d.get<std::string>());
    }
    Json meta = Json::object();
    KeepItemRest(r, at, std::move(extra), meta);
    all_pending = all_pending && status == "PENDING";
    all_complete = all_complete && status == "COMPLETE";
    RETURN_IF_ERROR(AddTask({{"kind", "story"},
                             {"key", id},
                             {"parent", "epic:" + epic_key},
                             {"title", title ? *title : summary.value_or("")},
                             {"status", status},
                             {"position", static_cast<int64_t>(i) + 1},
                             {"depends_on", depends_on},
                             {"assignee", OrNull(agent)},
                             {"attempts", failures.value_or(0)},
                             {"meta", meta}},
                            at, "task " + id));
  }
  tasks_[epic_index]["status"] = all_complete  ? "COMPLETE"
                                 : all_pending ? "PENDING"
                                               : "IN_PROGRESS";
  return Status();
}

Status StateReader::ReadHistory(const Json& list, const std::string& pointer) {
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = PointerAppend(pointer, i);
    ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(list[i], source_, at));
    ASSIGN_OR_RETURN(std::optional<int64_t> seq, r.OptInt("seq"));
    ASSIGN_OR_RETURN(std::optional<std::string> timestamp, r.OptString("timestamp"));
    ASSIGN_OR_RETURN(std::optional<std::string> agent, r.OptString("agent_id"));
    ASSIGN_OR_RETURN(std::optional<std::string> signal, r.OptString("signal"));
    ASSIGN_OR_RETURN(std::optional<std::string> summary, r.OptString("summary"));
    ASSIGN_OR_RETURN(std::optional<std::string> message, r.OptString("message"));  // 3.1
    ASSIGN_OR_RETURN(std::optional<Json> files, OptStrings(r, "files_modified"));
    if (signal) signal_ = *signal;
    Json extra = Json::object();
    if (summary && message) extra["/message"] = *message;
    const Json file_list = files.value_or(Json::array());
    Json payload = {
        {"signal", OrNull(signal)}, {"system_signal", signal_}, {"files_modified", file_list}};
    if (agent) payload["agent_id"] = *agent;
    KeepItemRest(r, at, std::move(extra), payload);
    Json event = {
        {"kind", "stigmergy.signal"}, {"time", OrNull(timestamp)},
        {"agent", OrNull(agent)},     {"summary", summary ? *summary : message.value_or("")},
        {"payload", payload},         {"files", file_list}};
    if (seq) event["seq"] = *seq;
    history_.push_back(std::move(event));
  }
  return Status();
}

Status StateReader::ReadIssue(const Json& value, const std::string& pointer, int64_t position) {
  ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(value, source_, pointer));
  ASSIGN_OR_RETURN(std::string id, r.String("issue_id"));
  ASSIGN_OR_RETURN(std::optional<std::string> timestamp, r.OptString("timestamp"));
  std::string original;
  ASSIGN_OR_RETURN(std::string status, ReadStatus(r, "status", kIssue, &original));
  ASSIGN_OR_RETURN(std::optional<std::string> summary, r.OptString("summary"));
  ASSIGN_OR_RETURN(std::optional<Json> refs, r.OptArray("history_ref"));
  Json meta = Json::object();
  if (refs) meta["history_ref"] = *refs;
  Json extra = Json::object();
  if (!original.empty()) extra["/source_status"] = original;
  KeepItemRest(r, pointer, std::move(extra), meta);
  return AddTask({{"kind", "issue"},
                  {"key", id},
                  {"parent", nullptr},
                  {"title", summary.value_or("")},
                  {"status", status},
                  {"position", position},
                  {"created_at", OrNull(timestamp)},
                  {"depends_on", Json::array()},
                  {"attempts", 0},
                  {"meta", meta}},
                 pointer, "issue " + id);
}

Result<RunImage> StateReader::Read() {
  ASSIGN_OR_RETURN(ObjectReader top, ObjectReader::Make(doc_, source_, ""));
  ASSIGN_OR_RETURN(std::optional<std::string> version, top.OptString("schema_version"));
  const bool v3 = version && version->rfind("3.", 0) == 0;
  if (version && *version != "2.0" && !v3) {
    return top.Error("schema_version", "unsupported schema version \"" + *version +
                                           "\"; this reader reads 2.0 and 3.x (3.0, 3.1)");
  }
  ASSIGN_OR_RETURN(std::optional<std::string> name, top.OptString("project_name"));
  ASSIGN_OR_RETURN(std::optional<std::string> mode, top.OptString("autonomy_mode"));
  if (mode && *mode != "supervised" && *mode != "autonomous") {
    return top.Error("autonomy_mode",
                     "unknown autonomy mode \"" + *mode + "\"; allowed: supervised, autonomous");
  }
  std::string original_status;
  ASSIGN_OR_RETURN(std::string status, ProjectStatus(top, &original_status));
  ASSIGN_OR_RETURN(std::optional<std::string> signal, top.OptString("system_signal"));
  RETURN_IF_ERROR(ReadManifest(top));
  ASSIGN_OR_RETURN(std::optional<Json> history, top.OptArray("history"));
  if (history) RETURN_IF_ERROR(ReadHistory(*history, top.Path("history")));
  ASSIGN_OR_RETURN(std::optional<Json> issues, top.OptArray("issue_log"));
  for (size_t i = 0; issues && i < issues->size(); ++i) {
    RETURN_IF_ERROR(ReadIssue((*issues)[i], PointerAppend(top.Path("issue_log"), i),
                              static_cast<int64_t>(i) + 1));
  }
  top.KeepRest(kept_);
  // Where the file came from when 2.0 cannot say it: written back top-level.
  if (v3 || !original_status.empty()) {
    Json from = Json::object();
    if (v3) from["schema_version"] = *version;
    from["project_status"] = original_status.empty() ? status : original_status;
    kept_["/stigmergy_source"] = from;
  }
  Json meta = {{"schema_version", "2.0"},
               {"autonomy_mode", mode.value_or("supervised")},
               {"system_signal", signal ? *signal : signal_}};
  if (name) meta["project_name"] = *name;
  if (!kept_.empty()) meta["kept"][kFormat] = kept_;
  Json run = {{"profile", "stigmergy"},    {"machine", "stigmergy.project"},
              {"status", status},          {"title", name.value_or("")},
              {"cursor", nullptr},         {"cursor_index", nullptr},
              {"context", Json::object()}, {"meta", meta}};
  return Json{{"image", 1},
              {"source", {{"format", kFormat}, {"name", source_}}},
              {"run", run},
              {"tasks", tasks_},
              {"history", history_}};
}

}  // namespace

Result<RunImage> ReadStigmergyState(std::string_view text, const std::string& source) {
  ASSIGN_OR_RETURN(Json doc, ReadJsonObject(text, source));
  return StateReader(doc, source).Read();
}

}  // namespace baton
