// sgai.start: GOAL.md in, a workflow resumed or started fresh, as sgai-RICH's
// canResumeWorkflow decides. See sgai.h.

#include <filesystem>
#include <optional>

#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "engine/profiles/sgai/sgai.h"
#include "model/sgai_flow.h"
#include "store/tables/run_table.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using namespace sgai_internal;

constexpr char kStartedKind[] = "sgai.started";
constexpr int64_t kMaxGoalBytes = 1 << 20;  // as the goal text field

struct Goal {
  GoalDocument doc;
  std::string goal_file;  // absolute; empty for goal text
  std::string workdir;    // absolute
  std::string flow_text;
};

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool IsFalsish(const std::string& v) {
  const std::string t = Trim(v);
  return t == "no" || t == "false" || t == "0" || t == "off" || t == "No" || t == "False" ||
         t == "NO" || t == "FALSE" || t == "Off" || t == "OFF";
}

// "@file" relative to "base", refusing a path that leaves it.
Result<std::string> ReadFlowFile(const std::string& ref, const fs::path& base) {
  const std::string name = Trim(ref.substr(1));
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(base, ec);
  const fs::path path = fs::weakly_canonical(root / name, ec);
  const fs::path rel = path.lexically_relative(root);
  if (ec || rel.empty() || rel.native().starts_with("..") || fs::path(name).is_absolute()) {
    return InvalidArgumentError("flow: \"@" + name + "\" is outside the GOAL.md folder " +
                                root.string());
  }
  Result<std::string> text = ReadFile(path.string(), kMaxGoalBytes);
  if (!text.ok()) return InvalidArgumentError("flow: " + text.status().message());
  return text;
}

// The front matter keys baton reads must have the types sgai gives them: a
// list where a script is expected must not quietly switch the gate off.
Status CheckFrontMatter(const Json& fm) {
  if (!fm.is_object()) return InvalidArgumentError("front matter: must be a mapping");
  auto scalar = [](const Json& v) { return v.is_string() || v.is_number() || v.is_boolean(); };
  if (fm.contains("flow") && !fm["flow"].is_null() && !fm["flow"].is_string()) {
    return InvalidArgumentError("flow: must be a DOT string or \"@file\" (got " +
                                std::string(fm["flow"].type_name()) + ")");
  }
  for (const char* key : {"completionGateScript", "retrospective", "continuousModePrompt", "title"}) {
    if (fm.contains(key) && !fm[key].is_null() && !scalar(fm[key])) {
      return InvalidArgumentError(std::string(key) + ": must be a single value (got " +
                                  fm[key].type_name() + ")");
    }
  }
  // sgai since mid-2026: `agents:` (whom the coordinator may hand to) and one
  // `model:` (the coordinator's), instead of flow and models.
  if (fm.contains("agents") && !fm["agents"].is_null()) {
    bool ok = fm["agents"].is_array();
    for (const Json& a : ok ? fm["agents"] : Json::array()) ok = ok && a.is_string();
    if (!ok) return InvalidArgumentError("agents: must be a list of agent names");
  }
  if (fm.contains("model") && !fm["model"].is_null() && !fm["model"].is_string()) {
    return InvalidArgumentError("model: must be one model, as \"provider/model (effort)\" (got " +
                                std::string(fm["model"].type_name()) + ")");
  }
  if (fm.contains("models") && !fm["models"].is_null()) {
    if (!fm["models"].is_object()) {
      return InvalidArgumentError("models: must map agents to a model or a list of models");
    }
    for (auto it = fm["models"].begin(); it != fm["models"].end(); ++it) {
      const Json& v = it.value();
      bool ok = v.is_string();
      if (v.is_array()) {
        ok = true;
        for (const Json& m : v) ok = ok && m.is_string();
      }
      if (!ok) {
        return InvalidArgumentError("models." + it.key() +
                                    ": must be a model or a list of models");
      }
    }
  }
  return Status();
}

// The flow an `agents:` list means: each agent sgai would delegate to (not
// "" nor the coordinator) as a node of its own, unordered — the coordinator
// may hand to any of them, as sgai's coordinator does. "" without a list.
std::string FlowOfAgents(const Json& fm) {
  std::string dot;
  for (const Json& a : fm.value("agents", Json::array())) {
    const std::string name = a.get<std::string>();
    if (name.empty() || name == "coordinator") continue;
    dot += Json(name).dump() + "\n";
  }
  return dot;
}

Result<Goal> ReadGoal(const Json& in) {
  Goal goal;
  std::error_code ec;
  std::string text;
  if (in.contains("goal_file")) {
    const fs::path file = fs::absolute(in["goal_file"].get<std::string>(), ec);
    Result<std::string> read = ReadFile(file.string(), kMaxGoalBytes);
    if (!read.ok()) return InvalidArgumentError("goal_file: " + read.status().message());
    text = *read;
    goal.goal_file = file.lexically_normal().string();
    goal.workdir = file.parent_path().lexically_normal().string();
  } else if (in.contains("goal")) {
    text = in["goal"].get<std::string>();
    goal.workdir = fs::current_path(ec).string();
  } else {
    return InvalidArgumentError("goal_file: give goal_file (a GOAL.md) or goal (its text)");
  }
  if (in.contains("workdir")) {
    goal.workdir = fs::absolute(in["workdir"].get<std::string>(), ec).lexically_normal().string();
  }
  Result<GoalDocument> doc = ParseGoalMarkdown(text);
  if (!doc.ok()) return doc.status().WithPrefix(in.contains("goal_file") ? "goal_file" : "goal");
  goal.doc = *std::move(doc);
  RETURN_IF_ERROR(CheckFrontMatter(goal.doc.front_matter));
  const Json& flow = goal.doc.front_matter.value("flow", Json());
  goal.flow_text = flow.is_string() ? flow.get<std::string>() : "";
  if (Trim(goal.flow_text).empty()) goal.flow_text = FlowOfAgents(goal.doc.front_matter);
  if (Trim(goal.flow_text).starts_with("@")) {
    const fs::path base =
        goal.goal_file.empty() ? fs::path(goal.workdir) : fs::path(goal.goal_file).parent_path();
    ASSIGN_OR_RETURN(goal.flow_text, ReadFlowFile(Trim(goal.flow_text), base));
  }
  return goal;
}

std::string FrontString(const Json& fm, const char* key) {
  const Json& v = fm.value(key, Json());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) return v.dump();  // YAML plain scalars may be typed
  return "";
}

std::string TitleOf(const Goal& goal) {
  std::string title = FrontString(goal.doc.front_matter, "title");
  if (!title.empty()) return title;
  size_t pos = 0;
  const std::string& body = goal.doc.body;
  while (pos < body.size()) {
    const size_t eol = body.find('\n', pos);
    const std::string line = body.substr(pos, eol == std::string::npos ? eol : eol - pos);
    if (line.starts_with("# ")) return Trim(line.substr(2)).substr(0, 2000);
    if (eol == std::string::npos) break;
    pos = eol + 1;
  }
  return "sgai workflow";
}

// The goal-derived fields, set on a fresh run and refreshed on resume (sgai
// reloads the front matter without restarting).
void SetGoalFields(Json& m, const Goal& goal, const SgaiFlow& flow) {
  const Json& fm = goal.doc.front_matter;
  m["goalChecksum"] = goal.doc.body_checksum;
  m["flow"] = flow.ToJson();
  m["models"] = fm.value("models", Json::object());
  if (!m["models"].is_object()) m["models"] = Json::object();
  // `model:` is the coordinator's (sgai passes it to that process only).
  const std::string model = FrontString(fm, "model");
  if (!model.empty() && !m["models"].contains("coordinator")) m["models"]["coordinator"] = model;
  m["completionGateScript"] = FrontString(fm, "completionGateScript");
  m["retrospective"] = !IsFalsish(FrontString(fm, "retrospective"));
  m["continuousModePrompt"] = FrontString(fm, "continuousModePrompt");
  m["workdir"] = goal.workdir;
  m["goalFile"] = goal.goal_file;
  if (!m.contains("visitCounts")) m["visitCounts"] = Json::object();
  for (const std::string& a : flow.agents()) {
    if (!m["visitCounts"].contains(a)) m["visitCounts"][a] = 0;
  }
}

// The latest sgai run started for this workdir and project, from the
// sgai.started events (the ledger orders runs created in the same instant).
Result<std::optional<Run>> LatestRun(OpContext& ctx, const std::string& workdir,
                                      const std::string& project_id) {
  ASSIGN_OR_RETURN(Json events,
                   ListEvents(ctx.txn, {.kind = kStartedKind, .limit = int64_t{1} << 40}));
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    const Json& p = (*it)["payload"];
    if (p.value("workdir", "") != workdir || p.value("project_id", "") != project_id) continue;
    ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, (*it)["run_id"].get<std::string>()));
    return std::optional<Run>(std::move(run));
  }
  // Their sgai.started events may have been archived (`baton ledger
  // archive` takes finished runs' events): the runs keep their workdir.
  ASSIGN_OR_RETURN(std::vector<Run> runs,
                   ListRunRows(ctx.txn, {.profile = "sgai", .limit = int64_t{1} << 40}));
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (it->meta.value("workdir", "") != workdir || it->project_id.value_or("") != project_id) {
      continue;
    }
    return std::optional<Run>(std::move(*it));
  }
  return std::optional<Run>();
}

bool Resumable(const std::string& status) {
  return status == "working" || status == "agent-done" || status == "waiting-for-human";
}

// What the starter chose, as sgai's startSessionService computes it:
// continuous when GOAL.md has a continuousModePrompt, self-drive for an
// "auto" start, else an explicit interaction_mode. Empty: no choice.
std::string ChosenMode(const Json& in, const Goal& goal) {
  if (!FrontString(goal.doc.front_matter, "continuousModePrompt").empty()) return "continuous";
  if (in.value("auto", false)) return "self-drive";
  return in.value("interaction_mode", "");
}

Result<Json> Resume(OpContext& ctx, const Json& in, Run run, const Goal& goal,
                    const SgaiFlow& flow, const std::string& reason) {
  SetGoalFields(run.meta, goal, flow);
  const std::string mode = ChosenMode(in, goal);
  if (!mode.empty()) run.meta["interactionMode"] = mode;
  RETURN_IF_ERROR(StoreRun(ctx, run));
  RETURN_IF_ERROR(
      AppendEvent(ctx, {.run_id = run.id,
                        .kind = "sgai.resumed",
                        .summary = "resumed: " + reason,
                        .payload = {{"reason", reason}, {"goal_checksum", goal.doc.body_checksum}}})
          .status());
  ASSIGN_OR_RETURN(Json loaded, AnswerRun(ctx.txn, run.id));
  return Json{{"run", loaded}, {"resumed", true}, {"reason", reason}, {"previous_run", Json()}};
}

Result<Json> Fresh(OpContext& ctx, const Json& in, const Goal& goal, const SgaiFlow& flow,
                   const std::optional<Run>& old, const std::string& project_id,
                   const std::string& reason) {
  // A fresh run keeps only the old run's interaction mode, unless the
  // starter chose one.
  std::string mode = ChosenMode(in, goal);
  if (mode.empty()) {
    mode = old ? old->meta.value("interactionMode", "brainstorming") : "brainstorming";
  }
  const Json previous_run = old ? Json(old->id) : Json();
  Json meta = {
      {"interactionMode", mode},
      {"currentAgent", "coordinator"},
      {"agentSequence",
       Json::array({{{"agent", "coordinator"}, {"startTime", ctx.now}, {"isCurrent", true}}})},
      {"sessionId", ""},
      {"summary", ""},
      {"summaryManual", false},
      {"modelStatuses", Json::object()},
      {"currentModel", ""},
      {"task", ""},
      {"visitCounts", Json::object()}};
  SetGoalFields(meta, goal, flow);
  meta["visitCounts"]["coordinator"] = 1;  // the workflow starts in the coordinator
  if (old) meta["previousRun"] = old->id;
  Json create = {{"profile", "sgai"}, {"title", TitleOf(goal)}, {"meta", meta}};
  if (!project_id.empty()) create["project"] = project_id;
  ASSIGN_OR_RETURN(Run created, MakeRun(ctx, create));
  const std::string& id = created.id;
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = id,
                                    .kind = kStartedKind,
                                    .summary = "started fresh: " + reason,
                                    .payload = {{"reason", reason},
                                                {"workdir", goal.workdir},
                                                {"project_id", project_id},
                                                {"goal_file", goal.goal_file},
                                                {"goal_checksum", goal.doc.body_checksum},
                                                {"previous_run", previous_run}}})
                      .status());
  return Json{{"run", RunToJson(created)},
              {"resumed", false},
              {"reason", reason},
              {"previous_run", previous_run}};
}

}  // namespace

Result<Json> SgaiStart(OpContext& ctx, const Json& in) {
  // GOAL.md is read and the workdir is where the completion gate script
  // runs: both under the roots (relative ones start at baton's folder).
  Json scoped = in;
  std::error_code ec;
  for (const char* key : {"goal_file", "workdir"}) {
    if (!in.contains(key)) continue;
    ASSIGN_OR_RETURN(scoped[key], ctx.ScopedPath(key, in[key].get<std::string>(),
                                                 fs::current_path(ec).string()));
  }
  ASSIGN_OR_RETURN(Goal goal, ReadGoal(scoped));
  // The gate script runs later for whoever completes the run: planting one
  // is running it, so the run's starter needs the grant too.
  if (!FrontString(goal.doc.front_matter, "completionGateScript").empty() &&
      !ctx.actor.Has(kGrantCommands)) {
    return PermissionDeniedError(
        "goal: its completionGateScript is a command run at completion; starting a run that "
        "carries one needs the grant \"commands\"");
  }
  Result<SgaiFlow> flow = SgaiFlow::FromDot(goal.flow_text);
  if (!flow.ok()) return flow.status().WithPrefix("flow");
  std::string project_id;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  std::optional<Run> old;
  if (in.contains("run")) {
    ASSIGN_OR_RETURN(old, LoadSgaiRun(ctx.txn, in["run"].get<std::string>()));
    if (project_id.empty()) project_id = old->project_id.value_or("");
  } else {
    ASSIGN_OR_RETURN(old, LatestRun(ctx, goal.workdir, project_id));
  }
  if (!old) return Fresh(ctx, in, goal, *flow, old, project_id, "no earlier sgai run here");
  const std::string old_id = old->id;
  const std::string status = old->status;
  const std::string checksum = old->meta.value("goalChecksum", "");
  if (in.value("fresh", false)) {
    return Fresh(ctx, in, goal, *flow, old, project_id, "fresh asked; run " + old_id + " kept");
  }
  if (checksum != goal.doc.body_checksum) {
    return Fresh(ctx, in, goal, *flow, old, project_id,
                 "the goal body changed since run " + old_id + " (checksum " +
                     checksum.substr(0, 12) + " -> " + goal.doc.body_checksum.substr(0, 12) + ")");
  }
  if (!Resumable(status)) {
    return Fresh(ctx, in, goal, *flow, old, project_id,
                 "run " + old_id + " is " + status + ", not resumable");
  }
  return Resume(ctx, in, *old, goal, *flow,
                "the goal body is unchanged and run " + old_id + " is " + status);
}

}  // namespace baton
