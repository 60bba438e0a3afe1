// Run images into the store (imports.h, docs/formats.md "Import"): run.import.

#include "engine/interchange/imports.h"

#include <cstdio>
#include <map>
#include <set>

#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "formats/lifecycle.h"
#include "formats/sinfonia_envelope.h"
#include "model/profile.h"
#include "store/tables/approval_table.h"
#include "store/tables/handoff_table.h"
#include "store/tables/message_table.h"
#include "store/tables/question_table.h"
#include "store/tables/run_table.h"
#include "store/tables/session_table.h"
#include "store/tables/task_dep_table.h"
#include "store/tables/task_table.h"
#include "store/tables/usage_table.h"
#include "store/tables/wish_table.h"
#include "util/clock.h"
#include "util/optional_text.h"
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



Json ObjectOr(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : Json::object();
}

Json ListOf(const Json& image, const char* key) {
  auto it = image.find(key);
  return it != image.end() && it->is_array() ? *it : Json::array();
}


std::string TaskRef(const Json& task) {
  const std::string ref = JsonText(task, "ref");
  if (!ref.empty()) return ref;
  const std::string key = JsonText(task, "key");
  return key.empty() ? JsonText(task, "id") : JsonText(task, "kind") + ":" + key;
}

// Identity of a list item, to recognise one the run already holds.
std::string Fingerprint(std::string_view list, const Json& item) {
  auto s = [&](const char* k) { return JsonText(item, k); };
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
      : ctx_(ctx), image_(image), request_(request), notes_(request.notes) {}

  Result<Json> Import();

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
    const std::string t = JsonText(item, key);
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
  Run current_;              // the stored run when updating
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
  ASSIGN_OR_RETURN(profile_, FindProfile(JsonText(run_, "profile")));
  const std::string machine = JsonText(run_, "machine", profile_->run_machine);
  Result<const Machine*> m = ctx_.machines.Get(machine);
  if (!m.ok()) return InvalidArgumentError("run.machine: " + m.status().message());
  machine_ = *m;
  const std::string status = JsonText(run_, "status");
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
  Json merged = created_ || !current_.meta.is_object() ? Json::object() : current_.meta;
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
  const std::string status = JsonText(run_, "status");
  Run row{.status = status,
          .title = JsonText(run_, "title"),
          .cursor = JsonTextOrNone(run_, "cursor"),
          .context = ObjectOr(run_, "context"),
          .updated_at = Time(run_, "updated_at")};
  if (run_.contains("cursor_index") && run_["cursor_index"].is_number_integer()) {
    row.cursor_index = run_["cursor_index"].get<int64_t>();
  }
  if (request_.run_id.empty()) {
    created_ = true;
    run_id_ = NewId("run");
    if (!request_.project.empty()) {
      ASSIGN_OR_RETURN(project_id_, ResolveProjectId(ctx_.txn, request_.project));
    }
    row.id = run_id_;
    row.project_id = NoneIfEmpty(project_id_);
    row.profile = profile_->name;
    row.machine = machine_->name();
    row.meta = MergedMeta(ObjectOr(run_, "meta"));
    row.created_at = Time(run_, "created_at");
    return InsertRunRow(ctx_.txn, row);
  }
  run_id_ = request_.run_id;
  ASSIGN_OR_RETURN(current_, LoadRun(ctx_.txn, run_id_));
  if (current_.profile != profile_->name) {
    return FailedPreconditionError("run: " + run_id_ + " is a " + current_.profile + " run; this " +
                                   request_.format + " file holds a " + profile_->name +
                                   " run — import it as a new run");
  }
  if (!request_.project.empty()) {
    return InvalidArgumentError("project: only a new run takes a project; run " + run_id_ +
                                " keeps its own");
  }
  // The stored run's machine rules its status, whatever the file's profile
  // would pick.
  const std::string& machine = current_.machine;
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
  if (current_.project_id) project_id_ = *current_.project_id;
  if (current_.status != status) {
    status_changes_.push_back({{"ref", "run"}, {"from", current_.status}, {"to", status}});
  }
  row.id = run_id_;
  row.profile = current_.profile;
  row.meta = MergedMeta(ObjectOr(run_, "meta"));
  return UpdateImportedRun(ctx_.txn, row);
}

Status Importer::WriteTasks() {
  const Json tasks = ListOf(image_, "tasks");
  std::map<std::string, Task> stored;   // kind:key → stored task, when updating
  std::map<std::string, Task> keyless;  // kind|title|created_at → stored task
  if (!created_) {
    ASSIGN_OR_RETURN(std::vector<Task> rows, LoadRunTasks(ctx_.txn, run_id_));
    for (Task& t : rows) {
      if (t.key) {
        stored[t.kind + ":" + *t.key] = std::move(t);
      } else {
        keyless[t.kind + "|" + t.title + "|" + t.created_at] = std::move(t);
      }
    }
  }
  std::set<std::string> refs;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Json& t = tasks[i];
    const std::string where = "tasks[" + std::to_string(i) + "]";
    const std::string kind = JsonText(t, "kind", profile_->default_task_kind);
    Result<std::string> machine_name = TaskMachineFor(*profile_, kind);
    if (!machine_name.ok()) return InvalidArgumentError(where + "." + machine_name.status().message());
    const Machine* machine = ctx_.machines.Find(*machine_name);
    if (machine == nullptr) return InternalError(where + ": machine " + *machine_name + " is missing");
    const std::string status = JsonText(t, "status", machine->initial());
    if (!machine->HasState(status)) {
      return InvalidArgumentError(request_.source + ": " + where + ".status: \"" + status +
                                  "\" is not a state of " + *machine_name);
    }
    const std::string ref = TaskRef(t);
    if (ref.empty() || !refs.insert(ref).second) {
      return InvalidArgumentError(request_.source + ": " + where + ": task \"" + ref +
                                  "\" appears twice");
    }
    const std::string key = JsonText(t, "key");
    const Task* found = nullptr;
    if (!key.empty() && stored.contains(kind + ":" + key)) {
      found = &stored[kind + ":" + key];
    } else if (key.empty()) {
      auto it = keyless.find(kind + "|" + JsonText(t, "title") + "|" + JsonText(t, "created_at"));
      if (it != keyless.end()) found = &it->second;
    }
    Task row{.title = JsonText(t, "title"),
             .body = JsonText(t, "body"),
             .status = status,
             .priority = JsonInt(t, "priority"),
             .position = JsonInt(t, "position", static_cast<int64_t>(i)),
             .assignee = JsonTextOrNone(t, "assignee"),
             .attempts = JsonInt(t, "attempts"),
             .board_column = JsonTextOrNone(t, "board_column"),
             .result = t.contains("result") ? t["result"] : Json(),
             .meta = ObjectOr(t, "meta"),
             .updated_at = Time(t, "updated_at")};
    if (found != nullptr) {
      const std::string& stored_machine = found->machine;
      const Machine* sm = ctx_.machines.Find(stored_machine);
      if (stored_machine != *machine_name && (sm == nullptr || !sm->HasState(status))) {
        return FailedPreconditionError(request_.source + ": " + where + ".status: task " + ref +
                                       " follows " + stored_machine + ", which has no status \"" +
                                       status + "\"");
      }
      task_ids_[ref] = found->id;
      if (found->status != status) {
        status_changes_.push_back({{"ref", ref}, {"from", found->status}, {"to", status}});
      }
      row.id = found->id;
      RETURN_IF_ERROR(UpdateImportedTaskRow(ctx_.txn, row));
      Count("tasks_updated");
      continue;
    }
    row.id = NewId("task");
    task_ids_[ref] = row.id;
    row.run_id = run_id_;
    row.project_id = NoneIfEmpty(project_id_);
    row.kind = kind;
    row.key = NoneIfEmpty(key);
    row.machine = *machine_name;
    row.created_at = Time(t, "created_at");
    row.trigger_rule = "all_success";  // the column's default, what task.create gives too
    RETURN_IF_ERROR(InsertTaskRow(ctx_.txn, row));
    Count("tasks_created");
  }
  // Parents and dependencies, now that every task has an id.
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Json& t = tasks[i];
    const std::string where = "tasks[" + std::to_string(i) + "]";
    const std::string id = task_ids_[TaskRef(t)];
    const std::string parent = JsonText(t, "parent");
    if (!parent.empty()) {
      if (!task_ids_.contains(parent)) {
        return InvalidArgumentError(request_.source + ": " + where + ".parent: no task \"" +
                                    parent + "\" in the file");
      }
      RETURN_IF_ERROR(SetImportedTaskParent(ctx_.txn, id, task_ids_[parent]));
    }
    const Json deps = t.value("depends_on", Json::array());
    for (size_t d = 0; d < deps.size(); ++d) {
      const std::string dep = deps[d].is_string() ? deps[d].get<std::string>() : "";
      if (!task_ids_.contains(dep) || task_ids_[dep] == id) {
        return InvalidArgumentError(request_.source + ": " + where + ".depends_on[" +
                                    std::to_string(d) + "]: no other task \"" + dep +
                                    "\" in the file");
      }
      RETURN_IF_ERROR(InsertImportedTaskDep(ctx_.txn, id, task_ids_[dep]));
    }
  }
  return Status();
}

Status Importer::WriteMessages() {
  for (const Json& m : ListOf(image_, "messages")) {
    if (Seen("messages", m)) continue;
    // Stored as delivered, from source "import", addressed to its recipient.
    RETURN_IF_ERROR(InsertMessageRow(
        ctx_.txn, Message{.id = NewId("msg"),
                          .sender = JsonText(m, "from"),
                          .recipient = JsonText(m, "to"),
                          .addressed_to = JsonText(m, "to"),
                          .body = JsonText(m, "body"),
                          .source = "import",
                          .meta = ObjectOr(m, "meta"),
                          .run_id = run_id_,
                          .project_id = NoneIfEmpty(project_id_),
                          .read = m.value("read", false),
                          .read_at = JsonTextOrNone(m, "read_at"),
                          .read_by = JsonTextOrNone(m, "read_by"),
                          .delivery_status = "delivered",
                          // Empty when the file did not say: writers then leave it out.
                          .created_at = JsonText(m, "created_at")}));
    Count("messages");
  }
  return Status();
}

Status Importer::WriteHistory() {
  int64_t skipped = 0;
  for (const Json& h : ListOf(image_, "history")) {
    const std::string kind = JsonText(h, "kind");
    if (!IsHistoryKind(kind)) {
      ++skipped;
      continue;
    }
    if (Seen("history", h)) continue;
    Json payload = ObjectOr(h, "payload");
    if (!JsonText(h, "time").empty()) payload["source_time"] = JsonText(h, "time");
    payload["imported"] = true;
    RETURN_IF_ERROR(AppendEvent(ctx_, {.run_id = run_id_,
                                       .kind = kind,
                                       .summary = JsonText(h, "summary"),
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
    RETURN_IF_ERROR(InsertImportedApproval(ctx_.txn, NewId("dec"), run_id_, event_seq,
                                           {.subject_kind = JsonText(a, "subject_kind", "run"),
                                            .subject = JsonText(a, "subject"),
                                            .decision = JsonText(a, "decision"),
                                            .reviewer = JsonText(a, "reviewer"),
                                            .note = JsonText(a, "note"),
                                            .created_at = Time(a, "time"),
                                            .meta = ObjectOr(a, "meta")}));
    Count("approvals");
  }
  return Status();
}

// Session and hand-off ids are unique in the store: one that another run
// already holds is left out, with a note.
Status Importer::WriteSessionsAndHandoffs() {
  for (const Json& s : ListOf(image_, "sessions")) {
    if (Seen("sessions", s)) continue;
    ASSIGN_OR_RETURN(bool stored,
                     InsertImportedSession(ctx_.txn, run_id_,
                                           {.id = JsonText(s, "id"),
                                            .status = JsonText(s, "status", "active"),
                                            .started_at = Time(s, "started_at"),
                                            .last_active_at = Time(s, "last_active_at"),
                                            .meta = ObjectOr(s, "meta")}));
    if (!stored) {
      notes_.push_back("sessions: " + JsonText(s, "id") + " belongs to another run; not imported");
    } else {
      Count("sessions");
    }
  }
  for (const Json& h : ListOf(image_, "handoffs")) {
    if (Seen("handoffs", h)) continue;
    const std::string step = JsonText(h, "step");
    ASSIGN_OR_RETURN(bool stored, InsertImportedHandoff(
                                      ctx_.txn, {.id = JsonText(h, "id", NewId("handoff")),
                                                 .run_id = run_id_,
                                                 .session_id = JsonTextOrNone(h, "session_id"),
                                                 .sequence = JsonInt(h, "sequence"),
                                                 .source = JsonText(h, "source"),
                                                 .target = JsonText(h, "target"),
                                                 .type = JsonText(h, "type", "dispatch"),
                                                 .status = JsonText(h, "status", "pending"),
                                                 .step_id = task_ids_.contains(step)
                                                                ? std::optional(task_ids_[step])
                                                                : std::nullopt,
                                                 .body = JsonText(h, "body"),
                                                 .meta = ObjectOr(h, "meta"),
                                                 .created_at = Time(h, "created_at"),
                                                 .updated_at = Time(h, "updated_at")}));
    if (!stored) {
      notes_.push_back("handoffs: " + JsonText(h, "id") +
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
    RETURN_IF_ERROR(InsertUsageRow(ctx_.txn, {.run_id = run_id_,
                                              .agent = JsonText(u, "agent"),
                                              .model = JsonText(u, "model"),
                                              .step_id = JsonText(u, "step_id"),
                                              .session_id = JsonText(u, "session_id"),
                                              .cost = u.value("cost", 0.0),
                                              .input_tokens = JsonInt(tokens, "input"),
                                              .output_tokens = JsonInt(tokens, "output"),
                                              .reasoning_tokens = JsonInt(tokens, "reasoning"),
                                              .cache_read_tokens = JsonInt(tokens, "cacheRead"),
                                              .cache_write_tokens = JsonInt(tokens, "cacheWrite"),
                                              .created_at = Time(u, "time")})
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
  const std::string status = JsonText(run_, "status");
  const bool waiting = status == profile_->waiting_status;
  const std::string before = waiting ? StatusFor(machine_->name(), Phase::kActive) : status;
  Json questions_in = ListOf(image_, "questions");
  if (waiting && questions_in.empty() && !created_) {
    ASSIGN_OR_RETURN(bool open, ImportedRunHasOpenQuestion(ctx_.txn, run_id_));
    if (open) return Status();
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
    if (JsonText(q, "status", "open") != "open" || Seen("questions", q)) continue;
    const Json questions = q.value("questions", Json::array());
    const std::string id =
        JsonText(q, "id", Sha256Hex(JsonText(q, "message") + CanonicalJson(questions)).substr(0, 16));
    RETURN_IF_ERROR(InsertImportedQuestion(ctx_.txn, {.id = id,
                                                      .run_id = run_id_,
                                                      .project_id = project_id_,
                                                      .asked_by = JsonText(q, "asked_by", "coordinator"),
                                                      .message = JsonText(q, "message"),
                                                      .questions = questions,
                                                      .work_gate = q.value("work_gate", false),
                                                      .status_before = before,
                                                      .created_at = Time(q, "created_at"),
                                                      .updated_at = ctx_.now}));
    Count("questions");
  }
  return Status();
}

// A Genie wish state is a wish: registered under its slug, so the wish
// operations find it, unless that slug is already another run's.
Status Importer::RegisterWish() {
  if (!created_ || request_.format != "genie-wish") return Status();
  const Json meta = ObjectOr(run_, "meta");
  const std::string slug = JsonText(meta, "slug");
  if (slug.empty()) return Status();
  const std::string wish_file = JsonText(meta, "wish_file");
  ASSIGN_OR_RETURN(
      bool stored,
      InsertImportedWish(ctx_.txn,
                         {.project_key = project_id_,
                          .slug = slug,
                          .run_id = run_id_,
                          .wish_file = wish_file.empty() ? std::nullopt : std::optional(wish_file),
                          .signature = JsonText(meta, "groupsSignature"),
                          .created_at = Time(run_, "created_at")}));
  if (!stored) {
    notes_.push_back("wish: the slug \"" + slug +
                     "\" is already another run's wish; this run is not registered under it");
  }
  return Status();
}

Result<Json> Importer::Import() {
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
                                     {"status", JsonText(run_, "status")},
                                     {"status_changes", status_changes_},
                                     {"counts", counts_},
                                     {"notes", notes_}}}));
  RETURN_IF_ERROR(WriteApprovals(seq));
  return Json{{"run_id", run_id_},
              {"created", created_},
              {"format", request_.format},
              {"status", JsonText(run_, "status")},
              {"counts", counts_},
              {"notes", notes_}};
}

}  // namespace

Result<Json> ImportImage(OpContext& ctx, const RunImage& image, const ImportRequest& request) {
  Importer importer(ctx, image, request);
  return importer.Import();
}

Status CheckImportSize(const std::string& file, size_t size, size_t limit) {
  if (size <= limit) return Status();
  auto mib = [](size_t n) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(n) / (1 << 20));
    return std::string(text);
  };
  return InvalidArgumentError(file + ": " + mib(size) + " (" + std::to_string(size) +
                              " bytes) is more than the " + mib(limit) + " an import reads");
}

Result<Json> ImportRunOp(OpContext& ctx, const Json& in) {
  const std::string format = in.at("format").get<std::string>();
  const std::string& content = in.at("content").get_ref<const std::string&>();
  ASSIGN_OR_RETURN(const Format* f, FindFormat(format));
  const std::string source = in.value("source", std::string(f->file));
  RETURN_IF_ERROR(CheckImportSize(source, content.size(), kMaxImportBytes));
  ASSIGN_OR_RETURN(RunImage image, f->read(content, source));
  std::vector<std::string> notes;
  if (in.contains("envelopes")) {
    if (std::string(f->name) != "sinfonia") {
      return InvalidArgumentError("envelopes: only the sinfonia format has hand-off envelopes");
    }
    Json envelopes = Json::array();
    for (const Json& e : in["envelopes"]) {
      Status fits = CheckImportSize(e.at("name").get<std::string>(),
                                    e.at("content").get_ref<const std::string&>().size(),
                                    kMaxEnvelopeBytes);
      if (fits.ok()) {
        envelopes.push_back(e);
      } else {
        notes.push_back("envelope skipped: " + fits.message());
      }
    }
    notes = [&] {
      std::vector<std::string> read = AddSinfoniaEnvelopes(image, envelopes);
      read.insert(read.begin(), notes.begin(), notes.end());
      return read;
    }();
  }
  // What a reader kept without understanding it is said, not hidden.
  const Json& kept = image["run"]["meta"].value("kept", Json::object());
  for (auto it = kept.begin(); it != kept.end(); ++it) {
    std::string keys;
    if (it.value().is_object()) {
      for (auto k = it.value().begin(); k != it.value().end(); ++k) keys += (keys.empty() ? "" : ", ") + k.key();
    }
    if (!keys.empty()) notes.push_back("kept as data, written back as they were: " + keys);
  }
  ImportRequest request{.format = f->name,
                        .source = source,
                        .sha256 = Sha256Hex(content),
                        .run_id = in.value("run", ""),
                        .project = in.value("project", ""),
                        .notes = std::move(notes)};
  return ImportImage(ctx, image, request);
}

}  // namespace baton
