// The Sinfonia workflow index writer (sinfonia_format.h): any run image as
// the index data sinfonia.state returns, then that data as the workflow.md
// Sinfonia's index-manager.ts renders, with its cells escaped and the text
// the reader kept put back.

#include <cctype>
#include <optional>
#include <set>

#include "formats/lifecycle.h"
#include "formats/sinfonia_internal.h"

namespace baton {
namespace {

using namespace sinfonia_format_internal;

const Json& EmptyArray() {
  static const Json kEmpty = Json::array();
  return kEmpty;
}
const Json& EmptyObject() {
  static const Json kEmpty = Json::object();
  return kEmpty;
}

const Json* Get(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}
std::string Str(const Json& j, std::string_view key, std::string fallback = "") {
  const Json* v = Get(j, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}
std::optional<int64_t> Int(const Json& j, std::string_view key) {
  const Json* v = Get(j, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) return std::nullopt;
  return v->get<int64_t>();
}
const Json& List(const Json& j, std::string_view key) {
  const Json* v = Get(j, key);
  return v != nullptr && v->is_array() ? *v : EmptyArray();
}
const Json& Object(const Json& j, std::string_view key) {
  const Json* v = Get(j, key);
  return v != nullptr && v->is_object() ? *v : EmptyObject();
}

// Each profile's run machine and the machine of its tasks (model/profile.cc).
struct ProfileMachines {
  std::string_view profile, run, task;
};
constexpr ProfileMachines kProfiles[] = {{"baton", "baton.run", "baton.task"},
                                         {"sgai", "sgai.run", "sgai.todo"},
                                         {"genie", "baton.run", "genie.task"},
                                         {"graph", "graph.run", "graph.node"},
                                         {"stigmergy", "stigmergy.project", "stigmergy.story"},
                                         {"sinfonia", kWorkflowMachine, kStepMachine}};

const ProfileMachines& MachinesOf(std::string_view profile) {
  for (const ProfileMachines& p : kProfiles) {
    if (p.profile == profile) return p;
  }
  return kProfiles[0];
}

std::string TaskMachine(std::string_view profile, std::string_view kind) {
  if (profile == "stigmergy" && (kind == "epic" || kind == "issue")) {
    return "stigmergy." + std::string(kind);
  }
  if (profile == "genie" && kind == "group") return "genie.group";
  return std::string(MachinesOf(profile).task);
}

// "status" of machine "from" in machine "to"; one the target does not know
// (an image with a status its own machine lacks) becomes the active one.
std::string Convert(std::string_view from, const std::string& status, std::string_view to,
                    int* unknown) {
  std::string out = ConvertStatus(from, status, to);
  if (!PhaseOf(to, out)) {
    ++*unknown;
    out = StatusFor(to, Phase::kActive);
  }
  return out;
}

std::string Plural(size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// One name per row, never empty, never twice (the reader refuses both).
std::string Unique(std::string name, const std::string& fallback, std::set<std::string>& used,
                   int* renamed) {
  if (name.empty() || used.contains(name)) ++*renamed;
  if (name.empty()) name = fallback;
  const std::string base = name;
  for (int n = 2; used.contains(name); ++n) name = base + "-" + std::to_string(n);
  used.insert(name);
  return name;
}

struct Built {
  Json index;
  std::vector<std::string> notes;
};

class IndexBuilder {
 public:
  explicit IndexBuilder(const RunImage& image) : image_(image) {}
  Result<Built> Build();

 private:
  Json Steps();
  void Cursor(const Json& steps);
  Json Artifacts();
  Json Decisions();
  Json Sessions(std::string* session_id);
  void NoteUnwritten();

  const RunImage& image_;
  Json run_;
  std::string profile_;
  bool native_ = true;  // a sinfonia run
  Json index_ = Json::object();
  std::vector<std::string> notes_;
};

Json IndexBuilder::Steps() {
  Json steps = Json::array();
  std::set<std::string> used;
  size_t other_kinds = 0, bodies = 0, parents = 0, deps = 0;
  int renamed = 0, unknown = 0;
  for (const Json& t : List(image_, "tasks")) {
    if (!t.is_object()) continue;
    const std::string kind = Str(t, "kind", native_ ? "step" : "");
    if (native_ && kind != "step") {
      ++other_kinds;
      continue;
    }
    const Json& meta = Object(t, "meta");
    const int64_t place = static_cast<int64_t>(steps.size()) + 1;
    std::string key = Str(t, "key");
    if (!native_ && key.empty()) key = Str(t, "ref", Str(t, "id"));
    if (!native_ && used.contains(key) && !kind.empty()) {
      key = kind + ":" + key;
      ++renamed;
    }
    key = Unique(key, "step-" + std::to_string(place), used, &renamed);
    const std::string machine = native_ ? std::string(kStepMachine) : TaskMachine(profile_, kind);
    std::string notes = Str(meta, "notes");
    if (!native_ && notes.empty()) notes = Str(t, "title");
    if (!Str(t, "body").empty()) ++bodies;
    if (const Json* p = Get(t, "parent"); p != nullptr && !p->is_null()) ++parents;
    deps += List(t, "depends_on").size();
    const Json* id = Get(t, "id");
    steps.push_back({{"step", key},
                     {"index", native_ ? Int(t, "position").value_or(place) : place},
                     {"title", Str(t, "title")},
                     {"persona", Str(t, "assignee")},
                     {"status", Convert(machine, Str(t, "status"), kStepMachine, &unknown)},
                     {"started_at", Str(meta, "started_at")},
                     {"completed_at", Str(meta, "completed_at")},
                     {"notes", notes},
                     {"attempts", Int(t, "attempts").value_or(0)},
                     {"file", Str(meta, "file")},
                     {"task_id", id != nullptr && id->is_string() ? *id : Json()}});
  }
  if (other_kinds > 0) {
    notes_.push_back("tasks: " + Plural(other_kinds, "task", "tasks") +
                     " not of kind step not written (the Steps table lists steps only)");
  }
  if (!native_ && !steps.empty()) {
    notes_.push_back("tasks: " + Plural(steps.size(), "task", "tasks") +
                     " written as steps in the image's order (persona = assignee, notes = the "
                     "title), statuses converted to sinfonia.step through their phase");
  }
  if (parents + deps > 0) {
    notes_.push_back("tasks: the Steps table is a flat list; " +
                     Plural(parents, "parent link", "parent links") + " and " +
                     Plural(deps, "dependency", "dependencies") + " not written");
  }
  if (bodies > 0) {
    notes_.push_back("tasks: " + Plural(bodies, "description", "descriptions") +
                     " (body) not written; the Steps table has no column for them");
  }
  if (renamed > 0) {
    notes_.push_back("tasks: " + Plural(static_cast<size_t>(renamed), "step", "steps") +
                     " without a name of its own, or sharing one, renamed (a step name is unique)");
  }
  if (unknown > 0) {
    notes_.push_back("tasks: " + Plural(static_cast<size_t>(unknown), "status", "statuses") +
                     " no machine knows written as in-progress");
  }
  return steps;
}

// A sinfonia run's cursor as it is; for another profile the step its cursor
// names, else the first step not completed, else the last.
void IndexBuilder::Cursor(const Json& steps) {
  if (native_) {
    index_["current_step"] = Str(run_, "cursor");
    index_["current_step_index"] = Int(run_, "cursor_index").value_or(0);
    return;
  }
  const std::string cursor = Str(run_, "cursor");
  std::optional<size_t> at;
  for (size_t i = 0; i < steps.size() && !at; ++i) {
    if (!cursor.empty() && steps[i]["step"] == cursor) at = i;
  }
  for (size_t i = 0; i < steps.size() && !at; ++i) {
    if (steps[i]["status"] != "completed") at = i;
  }
  if (!at && !steps.empty()) at = steps.size() - 1;
  index_["current_step"] = at ? steps[*at]["step"] : Json("");
  index_["current_step_index"] = at ? static_cast<int64_t>(*at + 1) : 0;
}

Json IndexBuilder::Artifacts() {
  Json artifacts = Json::array();
  size_t bodies = 0;
  for (const Json& h : List(image_, "handoffs")) {
    if (!h.is_object()) continue;
    if (!Str(h, "body").empty()) ++bodies;
    const Json* kept_notes = Get(Object(h, "meta"), "notes");
    artifacts.push_back({{"name", Str(h, "id")},
                         {"type", Str(h, "type")},
                         {"status", Str(h, "status")},
                         {"updated_at", Str(h, "updated_at")},
                         {"notes", kept_notes != nullptr && kept_notes->is_string()
                                       ? kept_notes->get<std::string>()
                                       : Str(h, "source") + " → " + Str(h, "target")}});
  }
  if (bodies > 0) {
    notes_.push_back("handoffs: " + Plural(bodies, "envelope body", "envelope bodies") +
                     " not written (the index lists envelopes as artifacts; Sinfonia keeps "
                     "each in a file of its own)");
  }
  return artifacts;
}

Json IndexBuilder::Decisions() {
  Json decisions = Json::array();
  for (const Json& a : List(image_, "approvals")) {
    if (!a.is_object()) continue;
    decisions.push_back({{"timestamp", Str(a, "time")},
                         {"handoff_id", Str(a, "subject")},
                         {"subject_kind", Str(a, "subject_kind")},
                         {"decision", Str(a, "decision")},
                         {"reviewer", Str(a, "reviewer")},
                         {"note", Str(a, "note")}});
  }
  return decisions;
}

// sinfonia.state's session: the last active one, else the first.
Json IndexBuilder::Sessions(std::string* session_id) {
  Json sessions = Json::array();
  for (const Json& s : List(image_, "sessions")) {
    if (!s.is_object()) continue;
    const std::string id = Str(s, "id");
    const std::string status = Str(s, "status");
    sessions.push_back({{"session_id", id},
                        {"started_at", Str(s, "started_at")},
                        {"last_active_at", Str(s, "last_active_at")},
                        {"status", status}});
    if (status == "active" || session_id->empty()) *session_id = id;
  }
  return sessions;
}

void IndexBuilder::NoteUnwritten() {
  const auto count = [&](std::string_view list, std::string_view what, std::string_view why) {
    if (const size_t n = List(image_, list).size(); n > 0) {
      notes_.push_back(std::string(list) + ": " + std::to_string(n) + " " + std::string(what) +
                       " not written; " + std::string(why));
    }
  };
  count("messages", "message(s)", "workflow.md has no mailbox");
  count("usage", "usage record(s)", "workflow.md has no usage log");
  count("questions", "open question(s)", "workflow.md shows only the status they hold the run in");
  // The kinds that are a seed system's own history (docs/formats.md); the
  // rest is baton's record of changes the tables already show.
  size_t history = 0;
  for (const Json& h : List(image_, "history")) {
    const std::string kind = Str(h, "kind");
    for (std::string_view k : {"run.progress", "sgai.handoff", "stigmergy.signal", "graph.node"}) {
      if (kind == k) ++history;
    }
  }
  if (history > 0) {
    notes_.push_back("history: " + Plural(history, "event", "events") +
                     " of the run's own history not written; workflow.md has no event log");
  }
  if (!Object(run_, "context").empty()) {
    notes_.push_back(
        "context: the run's context object not written; workflow.md's Context is free text");
  }
}

Result<Built> IndexBuilder::Build() {
  const Json* run = Get(image_, "run");
  if (run == nullptr || !run->is_object()) {
    return FailedPreconditionError("image: no run object; nothing to write as a workflow index");
  }
  run_ = *run;
  profile_ = Str(run_, "profile", "sinfonia");
  native_ = profile_ == "sinfonia";
  const Json& meta = Object(run_, "meta");
  const std::string machine = Str(run_, "machine", std::string(MachinesOf(profile_).run));
  const std::string status = Str(run_, "status");
  int unknown = 0;
  const std::string workflow_status = Convert(machine, status, kWorkflowMachine, &unknown);
  if (machine != kWorkflowMachine) {
    notes_.push_back("status: a " + profile_ + " run; its " + machine + " status \"" + status +
                     "\" written as sinfonia.workflow \"" + workflow_status + "\"");
  } else if (unknown > 0) {
    notes_.push_back("status: \"" + status + "\" is not a sinfonia.workflow status; written as \"" +
                     workflow_status + "\"");
  }
  const Json steps = Steps();
  Cursor(steps);
  std::string session_id;
  const Json sessions = Sessions(&session_id);
  index_["run_id"] = Str(run_, "id");
  index_["workflow_id"] = Str(meta, "workflow_id", native_ ? "" : Str(run_, "id"));
  index_["workflow_status"] = workflow_status;
  index_["total_steps"] = steps.size();
  index_["session_id"] = session_id;
  index_["created_at"] = Str(run_, "created_at");
  index_["updated_at"] = Str(run_, "updated_at");
  const std::optional<int64_t> version = Int(run_, "version");
  index_["version"] = version ? Json(*version) : Json();
  index_["title"] = Str(run_, "title");
  index_["description"] = Str(meta, "description");
  index_["goal"] = Str(meta, "goal", native_ ? "" : Str(run_, "title"));
  index_["steps"] = steps;
  index_["artifacts"] = Artifacts();
  index_["decisions"] = Decisions();
  index_["sessions"] = sessions;
  index_["context"] = Str(meta, "context");
  NoteUnwritten();
  return Built{std::move(index_), std::move(notes_)};
}

// ---- Rendering ----------------------------------------------------------

// A front matter value on one line, as the reader trims it.
std::string OneLine(const Json& v) {
  if (v.is_number_integer()) return v.dump();
  std::string s = v.is_string() ? v.get<std::string>() : "";
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return std::string(Trim(s));
}

// A cell as the reader will trim it (line breaks are kept, as <br>).
std::string Cell(const Json& v) {
  std::string_view s = v.is_string() ? std::string_view(v.get_ref<const std::string&>()) : "";
  while (!s.empty() && s.front() != '\n' && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && s.back() != '\n' && IsSpace(s.back())) s.remove_suffix(1);
  return EscapeCell(s);
}

void Row(const std::vector<std::string>& cells, std::string& out) {
  out += "|";
  for (const std::string& c : cells) out += " " + c + " |";
}

std::string Table(const TableSpec& spec, const Json& items,
                  const std::vector<std::string_view>& fields, std::string_view text) {
  std::string out;
  Row(std::vector<std::string>(spec.columns.begin(), spec.columns.end()), out);
  out += "\n";
  Row(std::vector<std::string>(spec.columns.size(), "---"), out);
  for (const Json& item : items) {
    std::vector<std::string> cells;
    bool empty = true;
    for (std::string_view f : fields) {
      const Json* v = Get(item, f);
      cells.push_back(Cell(v == nullptr ? Json() : *v));
      empty = empty && cells.back().empty();
    }
    // A row of empty cells reads back as no row at all.
    if (empty) continue;
    out += "\n";
    Row(cells, out);
  }
  if (!text.empty()) out += "\n\n" + std::string(text);
  return out;
}

// "- Overall Status: …" or "- Current Stage: …" (the first of them on the
// line; only that one, so that writing it again changes nothing) with the
// run's value. A current stage is written only when there is one.
std::string StatusLine(std::string line, const Json& index) {
  const size_t status = LabelValueAt(line, "overall status");
  size_t stage = LabelValueAt(line, "current stage");
  const int64_t current = index["current_step_index"].get<int64_t>();
  if (current < 1 || current > static_cast<int64_t>(index["steps"].size())) {
    stage = std::string::npos;
  }
  if (status != std::string::npos && (stage == std::string::npos || status < stage)) {
    return line.substr(0, status) + " " + index["workflow_status"].get<std::string>();
  }
  if (stage != std::string::npos) {
    return line.substr(0, stage) + " Phase " + std::to_string(current) + " — " +
           OneLine(index["steps"][current - 1]["step"]);
  }
  return line;
}

// Kept free text made safe to read back as it was: CRs at line ends
// dropped, blank lines around it dropped, a line that would start a section
// (or, beside a table, a row) given a leading backslash. The "- Overall
// Status:" and "- Current Stage:" lines say what the run says now.
std::string Kept(const Json& v, bool beside_table, const Json& index) {
  if (!v.is_string()) return "";
  const std::string& text = v.get_ref<const std::string&>();
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string_view t = Trim(line);
    if (IsSectionHeading(line) || (beside_table && !t.empty() && t[0] == '|')) line = "\\" + line;
    lines.push_back(StatusLine(std::move(line), index));
    start = end + 1;
  }
  size_t b = 0, e = lines.size();
  while (b < e && Trim(lines[b]).empty()) ++b;
  while (e > b && Trim(lines[e - 1]).empty()) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) out += (i > b ? "\n" : "") + lines[i];
  return out;
}

std::string Render(const Json& index, const Json& kept) {
  const Json& text = Object(kept, "text");
  std::string out = "---\n";
  const auto field = [&](const char* key, const Json& value) {
    out += std::string(key) + ": " + OneLine(value) + "\n";
  };
  field("workflow_id", index["workflow_id"]);
  field("workflow_status", index["workflow_status"]);
  field("current_step", index["current_step"]);
  field("current_step_index", index["current_step_index"]);
  const std::optional<int64_t> total = Int(kept, "total_steps");
  field("total_steps", total ? Json(*total) : index["total_steps"]);
  const Json* session = Get(kept, "session_id");
  field("session_id", session != nullptr && session->is_string() ? *session : index["session_id"]);
  field("created_at", index["created_at"]);
  field("updated_at", index["updated_at"]);
  for (const Json& line : List(kept, "front_matter")) {
    if (!line.is_string()) continue;
    const std::string& l = line.get_ref<const std::string&>();
    if (l.find_first_of("\r\n") != std::string::npos || IsFrontMatterDelimiter(l) ||
        IsOwnFrontMatterLine(l)) {
      continue;
    }
    out += l + "\n";
  }
  out += "---\n";
  if (const Json* p = Get(kept, "preamble")) {
    if (const std::string preamble = Kept(*p, false, index); !preamble.empty()) {
      out += preamble + "\n\n";
    }
  }
  const auto kept_text = [&](const TableSpec& spec) {
    const Json* t = Get(text, spec.text_key);
    return t == nullptr ? std::string() : Kept(*t, true, index);
  };
  out += "## Goal\n" + EscapeBlock(Trim(Str(index, "goal"))) + "\n\n";
  out += "## Steps\n" +
         Table(StepsTable(), index["steps"],
               {"step", "persona", "status", "started_at", "completed_at", "notes"},
               kept_text(StepsTable())) +
         "\n\n";
  // An empty table gives way to a section of the same name the reader kept
  // as written (a table with its own columns), which follows below.
  const auto replaced = [&](const TableSpec& spec, const char* list) {
    if (!index[list].empty() || !kept_text(spec).empty()) return false;
    std::string name = "## " + std::string(spec.section);
    for (const Json& section : List(kept, "sections")) {
      std::string heading = Str(section, "heading");
      for (std::string* t : {&name, &heading}) {
        for (char& c : *t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      if (heading == name) return true;
    }
    return false;
  };
  if (!replaced(ArtifactsTable(), "artifacts")) {
    out += "## Artifacts\n" +
           Table(ArtifactsTable(), index["artifacts"],
                 {"name", "type", "status", "updated_at", "notes"}, kept_text(ArtifactsTable())) +
           "\n\n";
  }
  if (!replaced(DecisionsTable(), "decisions")) {
    out += "## Decisions\n" +
           Table(DecisionsTable(), index["decisions"],
                 {"timestamp", "handoff_id", "decision", "reviewer", "note"},
                 kept_text(DecisionsTable())) +
           "\n\n";
  }
  if (!replaced(SessionsTable(), "sessions")) {
    out += "## Sessions\n" +
           Table(SessionsTable(), index["sessions"],
                 {"session_id", "started_at", "last_active_at", "status"},
                 kept_text(SessionsTable())) +
           "\n\n";
  }
  out += "## Context\n" + EscapeBlock(Trim(Str(index, "context")));
  for (const Json& section : List(kept, "sections")) {
    const std::string heading = Str(section, "heading");
    if (!IsSectionHeading(heading) || heading.find_first_of("\r\n") != std::string::npos) continue;
    out += "\n\n" + heading;
    if (const Json* t = Get(section, "text")) {
      if (const std::string body = Kept(*t, false, index); !body.empty()) out += "\n" + body;
    }
  }
  return out + "\n";
}

}  // namespace

Result<Json> SinfoniaIndexOf(const RunImage& image) {
  IndexBuilder builder(image);
  ASSIGN_OR_RETURN(Built built, builder.Build());
  return std::move(built.index);
}

Result<FormatOutput> WriteSinfoniaIndex(const RunImage& image) {
  IndexBuilder builder(image);
  ASSIGN_OR_RETURN(Built built, builder.Build());
  const Json* run = Get(image, "run");
  const Json& kept = Object(Object(Object(*run, "meta"), "kept"), "sinfonia");
  return FormatOutput{.text = Render(built.index, kept), .notes = std::move(built.notes)};
}

}  // namespace baton
