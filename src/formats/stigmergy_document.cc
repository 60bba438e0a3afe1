// Writing a run image as Stigmergy's .ai/state.json, schema 2.0 (layout in
// stigmergy_format.h). StigmergyDocument is also what `stigmergy.state`
// answers, so one renderer serves the operation, exports and mirrors.

#include <algorithm>

#include "formats/lifecycle.h"
#include "formats/reader.h"
#include "formats/stigmergy_format.h"

namespace baton {
namespace {

using OJson = nlohmann::ordered_json;

constexpr char kFormat[] = "stigmergy";
constexpr char kProject[] = "stigmergy.project";

const Json& Field(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string Str(const Json& j, const char* key, const std::string& fallback = "") {
  const Json& v = Field(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

int64_t Position(const Json& task) {
  const Json& v = Field(task, "position");
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float() && v.get<double>() > -9.0e18 && v.get<double>() < 9.0e18) {
    return static_cast<int64_t>(v.get<double>());
  }
  return 0;
}

std::string Ref(const Json& task) {
  if (Field(task, "ref").is_string()) return Str(task, "ref");
  if (Field(task, "key").is_string()) return Str(task, "kind") + ":" + Str(task, "key");
  return Str(task, "id");
}

// The machine of a profile's runs, for an image that does not name it
// (model/profile.cc).
std::string RunMachine(const Json& run) {
  if (Field(run, "machine").is_string()) return Str(run, "machine");
  const std::string profile = Str(run, "profile");
  if (profile == "stigmergy") return kProject;
  if (profile == "sgai") return "sgai.run";
  if (profile == "graph") return "graph.run";
  if (profile == "sinfonia") return "sinfonia.workflow";
  return "baton.run";
}

std::string TaskMachine(const std::string& profile, const Json& task) {
  if (Field(task, "machine").is_string()) return Str(task, "machine");
  const std::string kind = Str(task, "kind");
  if (profile == "stigmergy") return "stigmergy." + kind;
  if (profile == "sgai") return "sgai.todo";
  if (profile == "genie") return kind == "group" ? "genie.group" : "genie.task";
  if (profile == "graph") return "graph.node";
  if (profile == "sinfonia") return "sinfonia.step";
  return "baton.task";
}

// "status" of "from" as a status of "to"; counts a conversion in "converted".
std::string StatusIn(const std::string& from, const std::string& status, const std::string& to,
                     int* converted) {
  if (from == to && PhaseOf(to, status)) return status;
  ++*converted;
  return StatusFor(to, PhaseOf(from, status).value_or(Phase::kActive));
}

// The tasks "pick" accepts, in the order the stigmergy operations list them:
// by position, then key (engine/profiles/stigmergy/stigmergy.cc Items).
template <typename Pick>
std::vector<const Json*> Sorted(const Json& tasks, Pick pick) {
  std::vector<const Json*> out;
  if (!tasks.is_array()) return out;
  for (const Json& t : tasks) {
    if (t.is_object() && pick(t)) out.push_back(&t);
  }
  std::stable_sort(out.begin(), out.end(), [](const Json* a, const Json* b) {
    const int64_t pa = Position(*a), pb = Position(*b);
    return pa != pb ? pa < pb : Str(*a, "key") < Str(*b, "key");
  });
  return out;
}

void RestoreItemKept(const Json& holder, OJson& item) {
  const Json& kept = Field(Field(holder, "kept"), kFormat);
  if (kept.is_object()) RestoreKept(kept, item);
}

OJson EpicIdOf(const Json& epic) {
  const std::string key = Str(epic, "key");
  const Json& original = Field(Field(epic, "meta"), "epic_id");
  if ((original.is_string() && original.get<std::string>() == key) ||
      (original.is_number_integer() && original.dump() == key)) {
    return OJson(original);
  }
  return OJson(StigmergyEpicId(key));
}

// {"epic_id", "title", "status", "stories"} of a stigmergy run's epics.
OJson OwnEpics(const Json& tasks, int* converted, std::vector<std::string>& notes) {
  const auto epics = Sorted(tasks, [](const Json& t) { return Str(t, "kind") == "epic"; });
  const auto stories = Sorted(tasks, [](const Json& t) { return Str(t, "kind") == "story"; });
  std::vector<bool> placed(stories.size(), false);
  OJson list = OJson::array();
  for (const Json* e : epics) {
    const std::string ref = Ref(*e), id = Str(*e, "id", ref);
    OJson story_list = OJson::array();
    for (size_t i = 0; i < stories.size(); ++i) {
      const std::string parent = Str(*stories[i], "parent");
      if (placed[i] || parent.empty() || (parent != ref && parent != id)) continue;
      placed[i] = true;
      OJson s;
      s["story_id"] = Str(*stories[i], "key");
      s["title"] = Str(*stories[i], "title");
      s["status"] =
          StatusIn("stigmergy.story", Str(*stories[i], "status"), "stigmergy.story", converted);
      RestoreItemKept(Field(*stories[i], "meta"), s);
      story_list.push_back(std::move(s));
    }
    OJson epic;
    epic["epic_id"] = EpicIdOf(*e);
    epic["title"] = Str(*e, "title");
    epic["status"] = StatusIn("stigmergy.epic", Str(*e, "status"), "stigmergy.epic", converted);
    epic["stories"] = std::move(story_list);
    RestoreItemKept(Field(*e, "meta"), epic);
    list.push_back(std::move(epic));
  }
  const size_t orphans = static_cast<size_t>(std::count(placed.begin(), placed.end(), false));
  if (orphans > 0) {
    notes.push_back("stories: " + std::to_string(orphans) +
                    " stories without an epic are not written (2.0 keeps stories in epics)");
  }
  const auto others = Sorted(tasks, [](const Json& t) {
    const std::string kind = Str(t, "kind");
    return kind != "epic" && kind != "story" && kind != "issue";
  });
  if (!others.empty()) {
    notes.push_back("tasks: " + std::to_string(others.size()) +
                    " tasks of kinds other than epic, story and issue are not written");
  }
  return list;
}

// Another profile's tasks, in their order, as the stories of one epic.
OJson ForeignEpics(const Json& run, const Json& tasks, int* converted,
                   std::vector<std::string>& notes) {
  const std::string profile = Str(run, "profile");
  const auto all = Sorted(tasks, [](const Json&) { return true; });
  if (all.empty()) return OJson::array();
  OJson stories = OJson::array();
  bool all_pending = true, all_complete = true;
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string status = StatusIn(TaskMachine(profile, *all[i]), Str(*all[i], "status"),
                                        "stigmergy.story", converted);
    all_pending = all_pending && status == "PENDING";
    all_complete = all_complete && status == "COMPLETE";
    OJson s;
    s["story_id"] = "1." + std::to_string(i + 1);
    s["title"] = Str(*all[i], "title");
    s["status"] = status;
    stories.push_back(std::move(s));
  }
  notes.push_back("tasks: " + std::to_string(all.size()) + " " + profile +
                  " tasks written as the stories of epic 1; their kinds, keys, hierarchy, "
                  "dependencies, assignees and bodies are not written");
  OJson epic;
  epic["epic_id"] = 1;
  epic["title"] = Str(run, "title", "Tasks");
  epic["status"] = all_complete ? "COMPLETE" : all_pending ? "PENDING" : "IN_PROGRESS";
  epic["stories"] = std::move(stories);
  return OJson::array({std::move(epic)});
}

// stigmergy.signal events as history entries; for another profile also the
// history kinds of the other systems, without a signal.
OJson History(const Json& image, bool own, std::vector<std::string>& notes) {
  OJson list = OJson::array();
  const Json& events = Field(image, "history");
  if (!events.is_array()) return list;
  size_t foreign = 0;
  for (const Json& e : events) {
    const std::string kind = Str(e, "kind");
    const bool other_system =
        !own && (kind == "run.progress" || kind == "sgai.handoff" || kind == "graph.node");
    if (kind != "stigmergy.signal" && !other_system) continue;
    foreign += other_system ? 1 : 0;
    const Json& payload = Field(e, "payload");
    OJson h;
    // baton's own entries carry their ledger seq (issues' history_ref names
    // them); an entry read from a file is written as the file had it.
    const bool from_file = Field(payload, "imported").is_boolean() && Field(payload, "imported").get<bool>();
    if (Field(e, "seq").is_number_integer() && !from_file) h["seq"] = Field(e, "seq");
    if (Field(e, "time").is_string()) h["timestamp"] = Field(e, "time");
    h["agent_id"] = Str(payload, "agent_id", Str(e, "agent"));
    h["signal"] = Str(payload, "system_signal");
    h["summary"] = Str(e, "summary");
    OJson files = OJson::array();
    if (Field(e, "files").is_array()) {
      for (const Json& f : Field(e, "files")) {
        if (f.is_string()) files.push_back(f.get<std::string>());
      }
    }
    h["files_modified"] = std::move(files);
    RestoreItemKept(payload, h);
    list.push_back(std::move(h));
  }
  if (foreign > 0) {
    notes.push_back("history: " + std::to_string(foreign) +
                    " events of other systems written as history entries without a signal");
  }
  return list;
}

OJson IssueLog(const Json& tasks, int* converted) {
  OJson list = OJson::array();
  for (const Json* t : Sorted(tasks, [](const Json& t) { return Str(t, "kind") == "issue"; })) {
    const Json& meta = Field(*t, "meta");
    OJson issue;
    issue["issue_id"] = Str(*t, "key");
    if (Field(*t, "created_at").is_string()) issue["timestamp"] = Field(*t, "created_at");
    issue["status"] = StatusIn("stigmergy.issue", Str(*t, "status"), "stigmergy.issue", converted);
    issue["summary"] = Str(*t, "title");
    const Json& refs = Field(meta, "history_ref");
    issue["history_ref"] = refs.is_array() ? OJson(refs) : OJson::array();
    RestoreItemKept(meta, issue);
    list.push_back(std::move(issue));
  }
  return list;
}

// A note for each list of the image that .ai/state.json has no place for.
void NoteUnwritten(const Json& image, std::vector<std::string>& notes) {
  static constexpr std::pair<const char*, const char*> kLists[] = {
      {"messages", "messages"},  {"approvals", "decisions"}, {"sessions", "sessions"},
      {"handoffs", "hand-offs"}, {"usage", "usage records"}, {"questions", "questions"}};
  for (const auto& [key, what] : kLists) {
    const Json& list = Field(image, key);
    if (list.is_array() && !list.empty()) {
      notes.push_back(std::string(key) + ": " + std::to_string(list.size()) + " " + what +
                      " not written (.ai/state.json has no place for them)");
    }
  }
  const Json& run = Field(image, "run");
  if (Field(run, "context").is_object() && !Field(run, "context").empty()) {
    notes.push_back(
        "context: the run's context is not written (.ai/state.json has no place for it)");
  }
  if (Field(run, "cursor").is_string()) {
    notes.push_back("cursor: \"" + Str(run, "cursor") + "\" is not written");
  }
}

}  // namespace

Json StigmergyEpicId(const std::string& key) {
  if (key.empty() || key.size() > 18 || key.find_first_not_of("0123456789") != std::string::npos) {
    return key;
  }
  return std::stoll(key);
}

OJson StigmergyDocument(const RunImage& image, std::vector<std::string>* notes_out) {
  std::vector<std::string> scratch;
  std::vector<std::string>& notes = notes_out != nullptr ? *notes_out : scratch;
  const Json& run = Field(image, "run");
  const Json& meta = Field(run, "meta");
  const Json& tasks = Field(image, "tasks");
  const bool own = Str(run, "profile") == "stigmergy";
  const std::string machine = RunMachine(run);
  int converted = 0;
  const std::string status = StatusIn(machine, Str(run, "status"), kProject, &converted);
  if (converted > 0) {
    notes.push_back("status: " + machine + " status \"" + Str(run, "status") +
                    "\" written as project_status " + status);
  }
  const std::string schema = Str(meta, "schema_version", "2.0");
  if (own && schema != "2.0") {
    notes.push_back("schema_version: the run says " + schema + "; written as 2.0");
  }
  std::string mode = Str(meta, "autonomy_mode", "supervised");
  if (mode != "supervised" && mode != "autonomous") {
    notes.push_back("autonomy_mode: \"" + mode + "\" is not a 2.0 mode; written as supervised");
    mode = "supervised";
  }
  OJson doc;
  doc["schema_version"] = "2.0";
  doc["project_name"] = Str(meta, "project_name", Str(run, "title"));
  doc["autonomy_mode"] = mode;
  doc["project_status"] = status;
  doc["system_signal"] = Str(meta, "system_signal");
  converted = 0;
  doc["project_manifest"] = {{"epics", own ? OwnEpics(tasks, &converted, notes)
                                           : ForeignEpics(run, tasks, &converted, notes)}};
  doc["history"] = History(image, own, notes);
  doc["issue_log"] = own ? IssueLog(tasks, &converted) : OJson::array();
  if (converted > 0) {
    notes.push_back("tasks: " + std::to_string(converted) +
                    " task statuses written through their phase (pending, active, done…)");
  }
  NoteUnwritten(image, notes);
  RestoreItemKept(meta, doc);
  return doc;
}

Result<FormatOutput> WriteStigmergyState(const RunImage& image) {
  if (!Field(image, "run").is_object()) {
    return FailedPreconditionError("stigmergy: the image has no run; there is nothing to write");
  }
  FormatOutput out;
  const OJson doc = StigmergyDocument(image, &out.notes);
  out.text = doc.dump(2, ' ', false, OJson::error_handler_t::replace) + "\n";
  return out;
}

}  // namespace baton
