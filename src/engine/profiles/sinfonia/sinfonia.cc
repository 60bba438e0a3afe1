// The Sinfonia profile: step discovery, start, sessions, hand-offs, state.
// The moves are in sinfonia_flow.cc, compaction and resume in
// sinfonia_index.cc.

#include "engine/profiles/sinfonia/sinfonia.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "engine/core/approvals.h"
#include "engine/core/core_services.h"
#include "engine/interchange/imports.h"
#include "engine/ledger/ledger.h"
#include "engine/core/task_graph.h"
#include "formats/sinfonia_format.h"
#include "store/tables/handoff_table.h"
#include "store/tables/run_table.h"
#include "store/tables/session_table.h"
#include "store/tables/task_table.h"
#include "util/json_or_null.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using namespace sinfonia_internal;

// coordinator.ts WORKFLOW_PERSONA_MAP; anything else is maestro's.
std::string PersonaFor(const std::string& workflow) {
  static const std::map<std::string, std::string> kPersonas = {{"create-prd", "libretto"},
                                                               {"create-spec", "amadeus"},
                                                               {"dev-story", "coda"},
                                                               {"code-review", "rondo"}};
  auto it = kPersonas.find(workflow);
  return it == kPersonas.end() ? "maestro" : it->second;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> ReadLines(const std::string& path, size_t max_lines = 2000) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (lines.size() < max_lines && std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// The value of a "Key: value" line of workflow.md (case-insensitive key).
std::string FieldOf(const std::vector<std::string>& lines, std::string_view key) {
  for (const std::string& line : lines) {
    const std::string t = Trim(line);
    if (t.size() <= key.size() || t[key.size()] != ':') continue;
    bool same = true;
    for (size_t i = 0; i < key.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(t[i])) == key[i];
    }
    if (same) return Trim(std::string_view(t).substr(key.size() + 1));
  }
  return "";
}

std::string StepTitle(const std::string& path, const std::string& slug) {
  for (const std::string& line : ReadLines(path, 200)) {
    if (line.rfind("# ", 0) == 0) return Trim(std::string_view(line).substr(2));
  }
  return slug;
}

struct PlannedStep {
  std::string key;
  std::string title;
  std::string persona;
  Json meta = Json::object();
};

struct Plan {
  std::string workflow_id;
  std::string description;
  std::vector<PlannedStep> steps;
  Json meta = Json::object();
};

// One workflow folder: its steps, all given to the workflow's persona.
Result<Plan> PlanFromFolder(const std::string& dir) {
  Plan plan;
  ASSIGN_OR_RETURN(std::vector<SinfoniaStepFile> files, DiscoverSinfoniaSteps(dir));
  plan.workflow_id = fs::path(dir).lexically_normal().filename().string();
  if (plan.workflow_id.empty()) {
    plan.workflow_id = fs::path(dir).lexically_normal().parent_path().filename().string();
  }
  plan.description = SinfoniaWorkflowDescription(dir);
  std::string persona = FieldOf(ReadLines((fs::path(dir) / "workflow.md").string()), "persona");
  if (persona.empty()) persona = PersonaFor(plan.workflow_id);
  for (const SinfoniaStepFile& f : files) {
    plan.steps.push_back({.key = f.key,
                          .title = f.title,
                          .persona = persona,
                          .meta = {{"file", f.path}, {"number", f.number}}});
  }
  plan.meta["workflow_dir"] = dir;
  return plan;
}

// initPipeline: one step "{i}-{name}" per workflow, persona by routing table.
Result<Plan> PlanFromPipeline(const Json& names, const std::string& root) {
  Plan plan;
  plan.workflow_id = "pipeline";
  int i = 0;
  for (const Json& n : names) {
    const std::string name = Trim(n.get<std::string>());
    const std::string field = "workflows[" + std::to_string(i) + "]";
    if (name.empty()) return InvalidArgumentError(field + ": a workflow name may not be empty");
    std::string title = name;
    Json meta = {{"workflow", name}};
    if (!root.empty()) {
      const fs::path dir = fs::path(root) / name;
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) {
        return InvalidArgumentError(field + ": no workflow folder at " + dir.string());
      }
      const std::string description = SinfoniaWorkflowDescription(dir.string());
      if (!description.empty()) title = description;
      // The stage is one step of the pipeline, as initPipeline makes it; the
      // steps the step engine will walk inside it are its folder's.
      Json inner = Json::array();
      if (Result<std::vector<SinfoniaStepFile>> files = DiscoverSinfoniaSteps(dir.string());
          files.ok()) {
        for (const SinfoniaStepFile& f : *files) {
          inner.push_back({{"key", f.key}, {"title", f.title}, {"file", f.path}});
        }
      }
      meta["workflow_dir"] = dir.string();
      meta["steps"] = inner;
    }
    ++i;
    plan.workflow_id += "-" + name;
    plan.steps.push_back({.key = std::to_string(i) + "-" + name,
                          .title = title,
                          .persona = PersonaFor(name),
                          .meta = meta});
  }
  plan.meta["workflows"] = names;
  if (!root.empty()) plan.meta["workflows_root"] = root;
  return plan;
}

Result<std::string> NewSessionId(Txn& txn, int64_t now_ms) {
  // Two sessions started in the same second would share an id (Sinfonia's
  // createSessionId): take the next free second instead.
  for (int64_t t = now_ms;; t += 1000) {
    const std::string id = SinfoniaSessionId(t);
    ASSIGN_OR_RETURN(bool taken, SessionIdTaken(txn, id));
    if (!taken) return id;
  }
}

// Ends the run's active session and starts a new one.
Result<std::string> StartSession(OpContext& ctx, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::string previous, ActiveSession(ctx.txn, run_id));
  ASSIGN_OR_RETURN(std::string id, NewSessionId(ctx.txn, ctx.now_ms));
  RETURN_IF_ERROR(EndActiveSessions(ctx.txn, run_id, ctx.now));
  RETURN_IF_ERROR(InsertActiveSession(ctx.txn, id, run_id, ctx.now));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "sinfonia.session",
                                    .summary = "session " + id + " started" +
                                               (previous.empty() ? "" : "; " + previous + " ended"),
                                    .payload = {{"session_id", id}, {"ended", previous}}})
                      .status());
  return id;
}

Status CreateSteps(OpContext& ctx, const std::string& run_id, const Plan& plan) {
  int64_t position = 0;
  for (const PlannedStep& s : plan.steps) {
    Json meta = s.meta;
    meta["started_at"] = "";
    meta["completed_at"] = "";
    meta["notes"] = "";
    RETURN_IF_ERROR(CreateTask(ctx, {{"run", run_id},
                                     {"kind", "step"},
                                     {"key", s.key},
                                     {"title", s.title},
                                     {"position", ++position},
                                     {"assignee", s.persona},
                                     {"meta", meta}})
                        .status());
  }
  return Status();
}

Json StepOut(const Task& task) {
  const Json& meta = task.meta;
  return Json{{"step", OrNull(task.key)},
              {"index", task.position},
              {"title", task.title},
              {"persona", task.assignee.value_or("")},
              {"status", task.status},
              {"started_at", meta.value("started_at", "")},
              {"completed_at", meta.value("completed_at", "")},
              {"notes", meta.value("notes", "")},
              {"attempts", task.attempts},
              {"file", meta.value("file", "")},
              {"task_id", task.id}};
}

Result<Task> StepByKey(OpContext& ctx, const std::string& run_id, const std::string& key) {
  ASSIGN_OR_RETURN(std::vector<Task> steps, LoadSteps(ctx, run_id));
  for (Task& s : steps) {
    if (s.key == key) return std::move(s);
  }
  return NotFoundError("step: run " + run_id + " has no step \"" + key + "\"");
}

}  // namespace

Result<std::vector<SinfoniaStepFile>> DiscoverSinfoniaSteps(const std::string& workflow_dir) {
  const fs::path dir = fs::path(workflow_dir) / "steps";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return InvalidArgumentError("workflow_dir: no steps folder at " + dir.string());
  }
  static const std::regex kStepName(R"(^step-(\d+)-(.+)\.md$)");
  std::vector<SinfoniaStepFile> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, kStepName)) continue;
    const std::string digits = m[1].str();
    // Numeric order; more than 18 digits would overflow, and sorts last.
    const int64_t number = digits.size() > 18 ? INT64_MAX : std::stoll(digits);
    files.push_back({.number = number,
                     .key = digits + "-" + m[2].str(),
                     .slug = m[2].str(),
                     .path = e.path().string(),
                     .title = StepTitle(e.path().string(), m[2].str())});
  }
  if (ec)
    return InvalidArgumentError("workflow_dir: cannot read " + dir.string() + ": " + ec.message());
  if (files.empty()) {
    return InvalidArgumentError("workflow_dir: " + dir.string() +
                                " holds no step files (step-NN-slug.md)");
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return a.number != b.number ? a.number < b.number : a.key < b.key;
  });
  return files;
}

std::string SinfoniaWorkflowDescription(const std::string& workflow_dir) {
  const std::vector<std::string> lines =
      ReadLines((fs::path(workflow_dir) / "workflow.md").string());
  std::string description = FieldOf(lines, "description");
  if (!description.empty()) return description;
  for (const std::string& line : lines) {
    const std::string t = Trim(line);
    if (!t.empty() && t[0] != '#') return t;
  }
  return "";
}

std::string SinfoniaSessionId(int64_t millis) {
  const std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "s-%Y%m%d-%H%M%S", &utc);
  return buf;
}

int SinfoniaCountWords(std::string_view text) {
  int words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

Result<Json> SinfoniaStart(OpContext& ctx, const Json& in) {
  const bool has_dir = in.contains("workflow_dir");
  const bool has_list = in.contains("workflows");
  if (has_dir == has_list) {
    return InvalidArgumentError(
        "workflow_dir: give either workflow_dir (one workflow folder) or workflows "
        "(a pipeline of workflow names), not " +
        std::string(has_dir ? "both" : "neither"));
  }
  if (in.contains("workflows_root") && !has_list) {
    return InvalidArgumentError("workflows_root: only with workflows");
  }
  // The folders are read: under the roots (relative ones start at baton's
  // folder), never the store's.
  std::error_code ec;
  const std::string here = fs::current_path(ec).string();
  std::string folder;
  if (has_dir) {
    ASSIGN_OR_RETURN(folder, ctx.ScopedPath("workflow_dir", in["workflow_dir"].get<std::string>(), here));
  } else if (in.contains("workflows_root")) {
    ASSIGN_OR_RETURN(folder, ctx.ScopedPath("workflows_root", in["workflows_root"].get<std::string>(), here));
  }
  Result<Plan> planned = has_dir ? PlanFromFolder(folder) : PlanFromPipeline(in["workflows"], folder);
  RETURN_IF_ERROR(planned.status());
  Plan& plan = *planned;
  Json meta = plan.meta;
  meta["workflow_id"] = plan.workflow_id;
  meta["goal"] = in.at("goal");
  meta["context"] = in.value("context", "");
  meta["description"] = plan.description;
  Json run_in = {
      {"profile", "sinfonia"},
      {"title", in.value("title", plan.description.empty() ? plan.workflow_id : plan.description)},
      {"meta", meta}};
  if (in.contains("run")) run_in["id"] = in["run"];
  if (in.contains("project")) run_in["project"] = in["project"];
  ASSIGN_OR_RETURN(Run created, MakeRun(ctx, run_in));
  const std::string& run_id = created.id;
  RETURN_IF_ERROR(CreateSteps(ctx, run_id, plan));
  // createWorkflowIndex: the first step is current at index 1 (the new run
  // has no cursor yet).
  const std::string first = plan.steps.empty() ? "" : plan.steps.front().key;
  RETURN_IF_ERROR(SetCursor(ctx, created, first, 1));
  RETURN_IF_ERROR(StartSession(ctx, run_id).status());
  return SinfoniaState(ctx, {{"run", run_id}});
}

Result<Json> SinfoniaStartSession(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  RETURN_IF_ERROR(LoadWorkflow(ctx.txn, run_id).status());
  ASSIGN_OR_RETURN(std::string id, StartSession(ctx, run_id));
  ASSIGN_OR_RETURN(Json state, SinfoniaState(ctx, {{"run", run_id}}));
  return Json{{"run_id", run_id}, {"session_id", id}, {"sessions", state["sessions"]}};
}

Result<Json> SinfoniaCurrent(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  ASSIGN_OR_RETURN(Run run, LoadWorkflow(ctx.txn, run_id));
  ASSIGN_OR_RETURN(std::vector<Task> steps, LoadSteps(ctx, run_id));
  const int64_t index = run.cursor_index.value_or(0);
  Json step;
  if (run.status != "complete" && index >= 1 && index <= static_cast<int64_t>(steps.size())) {
    step = StepOut(steps[index - 1]);
  }
  return Json{{"run_id", run_id},
              {"workflow_status", run.status},
              {"current_step_index", index},
              {"total_steps", steps.size()},
              {"step", step}};
}

Result<Json> SinfoniaHandoff(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  ASSIGN_OR_RETURN(Run run, LoadWorkflow(ctx.txn, run_id));
  std::optional<Task> step;
  if (in.contains("step")) {
    ASSIGN_OR_RETURN(step, StepByKey(ctx, run_id, in["step"].get<std::string>()));
  } else if (run.cursor) {
    ASSIGN_OR_RETURN(step, StepByKey(ctx, run_id, *run.cursor));
  }
  ASSIGN_OR_RETURN(
      HandoffRow h,
      RecordHandoff(ctx, run, in.at("type").get<std::string>(), in.at("source").get<std::string>(),
                    in.at("target").get<std::string>(), in.value("body", ""),
                    step ? &*step : nullptr, "body"));
  RETURN_IF_ERROR(TouchSession(ctx, run_id));
  return HandoffToJson(h);
}

Result<Json> SinfoniaState(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  RETURN_IF_ERROR(LoadWorkflow(ctx.txn, run_id).status());
  ASSIGN_OR_RETURN(RunImage image, ExportImage(ctx.txn, run_id));
  // One renderer of the index: the sinfonia format's.
  return SinfoniaIndexOf(image);
}

namespace sinfonia_internal {

Result<Run> LoadWorkflow(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(Run run, LoadRun(txn, run_id));
  if (run.profile != "sinfonia") {
    return InvalidArgumentError("run: " + run_id + " has profile " + run.profile +
                                "; sinfonia operations need a sinfonia run");
  }
  return run;
}

Result<std::vector<Task>> LoadSteps(OpContext& ctx, const std::string& run_id) {
  return ListSinfoniaSteps(ctx.txn, run_id);
}

Status SetCursor(OpContext& ctx, const Run& run, const std::string& key, int64_t index) {
  if (run.cursor == key && run.cursor_index == index) return Status();
  RETURN_IF_ERROR(SetSinfoniaRunCursor(ctx.txn, run.id, key, index, ctx.now));
  return AppendEvent(ctx, {.run_id = run.id,
                           .kind = "sinfonia.cursor",
                           .summary = "current step " + key + " (" + std::to_string(index) + ")",
                           .payload = {{"from", OrNull(run.cursor)},
                                       {"from_index", OrNull(run.cursor_index)},
                                       {"to", key},
                                       {"to_index", index}}})
      .status();
}

Status MoveWorkflow(OpContext& ctx, const std::string& run_id, const std::string& to,
                    const std::string& reason) {
  ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, run_id));
  if (run.status == to) {
    // A self-transition is still checked (complete -> complete is allowed,
    // failed -> failed too), but changes nothing worth an event.
    ASSIGN_OR_RETURN(const Machine* m, ctx.machines.Get(run.machine));
    return m->Check(to, to, ctx.transition());
  }
  return SetRunStatus(ctx, {{"id", run_id}, {"status", to}, {"reason", reason}}).status();
}

Result<Task> MoveStep(OpContext& ctx, const Task& step, const std::string& to,
                      const std::string& reason, const std::string& note) {
  Json meta = step.meta;
  if (to == "in-progress" && meta.value("started_at", "").empty()) meta["started_at"] = ctx.now;
  if (to == "completed") meta["completed_at"] = ctx.now;
  if (!note.empty()) meta["notes"] = note;
  RETURN_IF_ERROR(ChangeTaskStatus(ctx, step, to, reason, {.meta = std::move(meta)}));
  return LoadTask(ctx.txn, step.id);
}

Result<std::string> ActiveSession(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::optional<std::string> id, FindActiveSessionId(txn, run_id));
  return id.value_or("");
}

Status TouchSession(OpContext& ctx, const std::string& run_id) {
  return TouchActiveSessions(ctx.txn, run_id, ctx.now);
}

Json HandoffToJson(const HandoffRow& h) {
  return Json{{"id", h.id},
              {"run_id", h.run_id},
              {"session_id", OrNull(h.session_id)},
              {"sequence", h.sequence},
              {"source", h.source},
              {"target", h.target},
              {"type", h.type},
              {"status", h.status},
              {"step_id", OrNull(h.step_id)},
              {"step", h.meta.value("step", "")},
              {"body", h.body},
              {"word_count", h.meta.value("word_count", 0)},
              {"meta", h.meta},
              {"created_at", h.created_at},
              {"updated_at", h.updated_at}};
}

Result<HandoffRow> LoadHandoff(Txn& txn, const std::string& run_id, const std::string& id) {
  ASSIGN_OR_RETURN(std::optional<HandoffRow> handoff, LoadSinfoniaHandoff(txn, run_id, id));
  if (!handoff) {
    return NotFoundError("subject: run " + run_id + " has no hand-off \"" + id + "\"");
  }
  return *std::move(handoff);
}

Result<HandoffRow> RecordHandoff(OpContext& ctx, const Run& run, const std::string& type,
                                 const std::string& source, const std::string& target,
                                 const std::string& body, const Task* step,
                                 const std::string& field) {
  const int words = SinfoniaCountWords(body);
  if (words > kSinfoniaMaxHandoffWords) {
    return InvalidArgumentError(field + ": a hand-off body is at most " +
                                std::to_string(kSinfoniaMaxHandoffWords) + " words; this one has " +
                                std::to_string(words));
  }
  const std::string& run_id = run.id;
  ASSIGN_OR_RETURN(std::string session, ActiveSession(ctx.txn, run_id));
  if (session.empty()) {
    return FailedPreconditionError("run: " + run_id + " has no active session; start one");
  }
  // Inside the write transaction, so two writers cannot take the same number
  // (Sinfonia scanned the folder for the highest NNN- prefix).
  ASSIGN_OR_RETURN(const int64_t sequence, NextSinfoniaHandoffSequence(ctx.txn, run_id));
  char nnn[24];
  std::snprintf(nnn, sizeof(nnn), "%03lld", static_cast<long long>(sequence));
  const std::string id = session + "-" + nnn;
  const std::string step_key = step == nullptr ? "" : step->key.value_or("");
  const Json meta = {{"word_count", words}, {"step", step_key}};
  RETURN_IF_ERROR(InsertSinfoniaHandoff(
      ctx.txn, {.id = id,
                .run_id = run_id,
                .session_id = session,
                .sequence = sequence,
                .source = source,
                .target = target,
                .type = type,
                .step_id = step == nullptr ? std::nullopt : std::optional<std::string>(step->id),
                .body = body,
                .meta = meta,
                .created_at = ctx.now}));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "sinfonia.handoff",
                                    .summary = type + " " + id + ": " + source + " -> " + target,
                                    .payload = {{"handoff_id", id},
                                                {"sequence", sequence},
                                                {"type", type},
                                                {"source", source},
                                                {"target", target},
                                                {"step", step_key},
                                                {"word_count", words}}})
                      .status());
  return LoadHandoff(ctx.txn, run_id, id);
}

}  // namespace sinfonia_internal
}  // namespace baton
