// The core operations of issue #2: projects, runs and tasks.

#include "engine/core/core_services.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

Status AddProjectOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "project.create",
      .summary = "Create a project (a repository or a virtual scope for boards and tasks)",
      .input_schema = s::Input(
          {{"name", s::Id("unique project name")},
           {"id", s::Id("project id (default: generated)")},
           {"repo_path", s::String("path of the repository, if any", 4096)},
           {"autonomy_mode", s::Enum("supervised gates execution on a human approval",
                                     {"supervised", "autonomous"})},
           {"meta", s::Object("free-form metadata")}},
          {"name"}),
      .output_schema = s::ProjectOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .positional = {"name"},
      .handler = CreateProject,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "project.list",
      .summary = "List projects",
      .input_schema = s::Input({}),
      .output_schema = s::ListOf("projects", s::ProjectOut()),
      .handler = ListProjects,
  }));
  return r.Add({
      .name = "project.show",
      .summary = "Show one project by id or name",
      .input_schema = s::Input({{"id", s::Id("project id or name")}}, {"id"}),
      .output_schema = s::ProjectOut(),
      .positional = {"id"},
      .handler = ShowProject,
  });
}

Status AddRunOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "run.create",
      .summary = "Create a run with a profile (baton, sgai, genie, graph, stigmergy, sinfonia)",
      .input_schema = s::Input(
          {{"profile", s::Enum("vocabulary and machines of the run",
                               {"baton", "sgai", "genie", "graph", "stigmergy", "sinfonia"})},
           {"machine", s::Id("run machine, overriding the profile's (e.g. a user machine)")},
           {"id", s::Id("run id (default: generated)")},
           {"project", s::Id("project id or name")},
           {"title", s::String("what the run is for", 2000)},
           {"context", s::Object("initial context")},
           {"meta", s::Object("profile fields")}}),
      .output_schema = s::RunOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .handler = CreateRun,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "run.show",
      .summary = "Show a run with its progress log and task counts",
      .input_schema = s::Input({{"id", s::Id("run id")},
                                {"progress_limit",
                                 s::Integer("only this many of the newest progress notes "
                                            "(progress_count says how many there are)",
                                            0, 100000)}},
                               {"id"}),
      .output_schema = s::RunOut(),
      .positional = {"id"},
      .handler = ShowRun,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "run.list",
      .summary = "List runs, optionally by project, profile, status or words of the id or title",
      .input_schema = s::Input({{"project", s::Id("project id or name")},
                                {"profile", s::Id("profile")},
                                {"status", s::String("status", 200)},
                                {"text", s::String("words the id or title holds", 200)},
                                {"order", s::Enum("created (oldest first, the default) or activity "
                                                  "(last changed first)",
                                                  {"created", "activity"})},
                                {"counts", s::Boolean("also count the runs by status (over the "
                                                      "other filters)")},
                                {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100000}}}}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"runs", {{"type", "array"}, {"items", s::RunOut()}}},
                                        {"counts", {{"type", "object"},
                                                    {"additionalProperties", {{"type", "integer"}}}}}}},
                        {"required", {"runs"}}},
      .handler = ListRuns,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "run.set_status",
      .summary = "Change a run's status through its machine",
      .input_schema = s::Input({{"id", s::Id("run id")},
                                {"status", s::String("the new status", 200)},
                                {"reason", s::String("why, for the ledger", 2000)}},
                               {"id", "status"}),
      .output_schema = s::RunOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"id", "status"},
      .handler = SetRunStatus,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "run.patch_context",
      .summary = "Shallow-merge keys into a run's context",
      .input_schema = s::Input({{"id", s::Id("run id")},
                                {"patch", s::Object("top-level keys to set")}},
                               {"id", "patch"}),
      .output_schema = s::RunOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"id"},
      .handler = PatchRunContext,
  }));
  return r.Add({
      .name = "run.add_progress",
      .summary = "Append an entry to a run's progress log",
      .input_schema = s::Input({{"id", s::Id("run id")},
                                {"description", s::String("what happened", 10000)}},
                               {"id", "description"}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"run_id", {{"type", "string"}}},
                                        {"seq", {{"type", "integer"}}},
                                        {"version", {{"type", "integer"}}},
                                        {"progress", {{"type", "object"}}}}},
                        {"required", {"run_id", "seq", "progress"}}},
      .mutating = true,
      .versioned = true,
      .positional = {"id", "description"},
      .handler = AddRunProgress,
  });
}

Status AddTaskOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "task.create",
      .summary = "Create a task in a run or a project; its machine comes from the run's profile and kind",
      .input_schema = s::Input(
          {{"title", s::String("what to do", 2000)},
           {"run", s::Id("run id")},
           {"project", s::Id("project id or name")},
           {"kind", s::Id("kind of task (profile-specific: task, todo, group, story, step, ...)")},
           {"machine", s::Id("task machine, overriding the profile's")},
           {"key", s::String("key unique within the run (group name, story id, step slug)", 200)},
           {"id", s::Id("task id (default: generated)")},
           {"body", s::String("details", 100000)},
           {"priority", s::Integer("higher first")},
           {"position", s::Integer("order among equal priorities")},
           {"parent", s::Id("parent task id")},
           {"assignee", s::Id("agent assigned")},
           {"depends_on", {{"type", "array"},
                           {"items", s::Id("task id")},
                           {"maxItems", 1000},
                           {"description", "tasks this one waits for"}}},
           {"trigger_rule", s::TriggerRule()},
           {"meta", s::Object("free-form metadata")}},
          {"title"}),
      .output_schema = s::TaskOut(),
      .mutating = true,
      .positional = {"title"},
      .handler = CreateTask,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "task.list",
      .summary = "List tasks by run, project, status, kind, assignee or parent",
      .input_schema = s::Input({{"run", s::Id("run id")},
                                {"project", s::Id("project id or name")},
                                {"status", s::String("status", 200)},
                                {"kind", s::Id("kind")},
                                {"assignee", s::Id("assignee")},
                                {"parent", s::Id("parent task id")},
                                {"with_dependencies", s::Boolean("give each task depends_on: the "
                                                                 "ids it depends on")},
                                {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100000}}}}),
      .output_schema = s::ListOf("tasks", s::TaskOut()),
      .handler = ListTasks,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "task.show",
      .summary = "Show one task",
      .input_schema = s::Input({{"id", s::Id("task id")}}, {"id"}),
      .output_schema = s::TaskOut(),
      .positional = {"id"},
      .handler = ShowTask,
  }));
  return r.Add({
      .name = "task.set_status",
      .summary = "Change a task's status through its machine",
      .input_schema = s::Input({{"id", s::Id("task id")},
                                {"status", s::String("the new status", 200)},
                                {"reason", s::String("why, for the ledger", 2000)},
                                {"result", {{"description", "result JSON to store on the task"}}}},
                               {"id", "status"}),
      .output_schema = s::TaskOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"id", "status"},
      .handler = SetTaskStatus,
  });
}

}  // namespace

Status RegisterSystemOps(Registry& registry);
Status RegisterTaskCoordinationOps(Registry& registry);
Status RegisterAgentOps(Registry& registry);
Status RegisterWishOps(Registry& registry);
Status RegisterBoardOps(Registry& registry);
Status RegisterMailOps(Registry& registry);
Status RegisterTeamOps(Registry& registry);
Status RegisterQuestionOps(Registry& registry);
Status RegisterStigmergyOps(Registry& registry);
Status RegisterSinfoniaOps(Registry& registry);
Status RegisterSgaiOps(Registry& registry);
Status RegisterInboxOps(Registry& registry);
Status RegisterFormatOps(Registry& registry);
Status RegisterTokenOps(Registry& registry);
Status RegisterGraphOps(Registry& registry);

void AddBoardHooks(EngineHooks& hooks);
void AddSgaiHooks(EngineHooks& hooks);

const std::vector<OpFamily>& CoreFamilies() {
  // Each function with the groups of the operations it adds (a group may
  // span families: run.* is defined by three; Find adds them in this order
  // until it has the name). Checked by RegistryTest.FamiliesNameTheirGroups.
  static const std::vector<OpFamily>* const kFamilies = new std::vector<OpFamily>{
      {{"project"}, AddProjectOps},
      {{"run"}, AddRunOps},
      {{"task"}, AddTaskOps},
      {{"task"}, RegisterTaskCoordinationOps},
      {{"agent"}, RegisterAgentOps},
      {{"wish"}, RegisterWishOps},
      {{"board"}, RegisterBoardOps},
      {{"chat", "mail"}, RegisterMailOps},
      {{"team"}, RegisterTeamOps},
      {{"approval", "question"}, RegisterQuestionOps},
      {{"stigmergy"}, RegisterStigmergyOps},
      {{"sinfonia"}, RegisterSinfoniaOps},
      {{"sgai"}, RegisterSgaiOps},
      {{"mirror", "run"}, RegisterFormatOps},
      {{"session", "token"}, RegisterTokenOps},
      {{"graph"}, RegisterGraphOps},
      {{"inbox", "run"}, RegisterInboxOps},
      {{"ledger", "machine", "op", "store"}, RegisterSystemOps},
  };
  return *kFamilies;
}

Status RegisterCoreOps(Registry& registry) {
  // Hooks first: they run whichever families are built.
  AddBoardHooks(registry.hooks());
  AddSgaiHooks(registry.hooks());
  for (const OpFamily& family : CoreFamilies()) registry.AddFamily(family);
  return Status();
}

}  // namespace baton
