#include <algorithm>
#include <map>

#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "engine/core/task_graph.h"
#include "model/profile.h"
#include "store/tables/task_dep_table.h"
#include "store/tables/task_table.h"
#include "util/clock.h"
#include "util/optional_text.h"

namespace baton {
namespace {

// Picks the machine for a new task: explicit, else from the run's profile and
// the task's kind, else baton.task.
Result<std::string> MachineForNewTask(OpContext& ctx, const Json& in,
                                      const Run* run, std::string* kind) {
  const Profile* profile = nullptr;
  if (run != nullptr) {
    ASSIGN_OR_RETURN(profile, FindProfile(run->profile));
  } else {
    ASSIGN_OR_RETURN(profile, FindProfile("baton"));
  }
  *kind = in.value("kind", profile->default_task_kind);
  std::string machine;
  if (in.contains("machine")) {
    machine = in["machine"].get<std::string>();
  } else {
    ASSIGN_OR_RETURN(machine, TaskMachineFor(*profile, *kind));
  }
  Result<const Machine*> m = ctx.machines.Get(machine);
  if (!m.ok()) return InvalidArgumentError("machine: " + m.status().message());
  return machine;
}

}  // namespace

Result<Task> LoadTask(Txn& txn, const std::string& id) { return LoadTaskRow(txn, id); }

Result<std::vector<Task>> LoadRunTasks(Txn& txn, const std::string& run_id) {
  return LoadRunTaskRows(txn, run_id);
}

Result<Json> AnswerTask(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(Task task, LoadTask(txn, id));
  return TaskToJson(task);
}

Result<Json> CreateTask(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Task task, MakeTask(ctx, in));
  return TaskToJson(task);
}

Result<Task> MakeTask(OpContext& ctx, const Json& in) {
  std::optional<Run> run;
  std::string run_id;
  std::string project_id;
  if (in.contains("run")) {
    run_id = in["run"].get<std::string>();
    ASSIGN_OR_RETURN(run, LoadRun(ctx.txn, run_id));
    project_id = run->project_id.value_or("");
  }
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(std::string pid, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
    if (!project_id.empty() && pid != project_id) {
      return InvalidArgumentError("project: run " + run_id + " belongs to project " +
                                  project_id + ", not " + pid);
    }
    project_id = pid;
  }
  std::string parent_id = in.value("parent", "");
  if (!parent_id.empty()) RETURN_IF_ERROR(LoadTask(ctx.txn, parent_id).status());
  std::string kind;
  ASSIGN_OR_RETURN(std::string machine_name,
                   MachineForNewTask(ctx, in, run ? &*run : nullptr, &kind));
  const std::string status = ctx.machines.Find(machine_name)->initial();
  const std::string id = in.value("id", NewId("task"));
  const std::string key = in.value("key", "");
  const std::string title = in.at("title").get<std::string>();
  Status inserted =
      InsertTaskRow(ctx.txn, {.id = id,
                              .run_id = NoneIfEmpty(run_id),
                              .project_id = NoneIfEmpty(project_id),
                              .parent_id = NoneIfEmpty(parent_id),
                              .kind = kind,
                              .key = NoneIfEmpty(key),
                              .title = title,
                              .body = in.value("body", ""),
                              .machine = machine_name,
                              .status = status,
                              .priority = in.value("priority", int64_t{0}),
                              .position = in.value("position", int64_t{0}),
                              .assignee = NoneIfEmpty(in.value("assignee", "")),
                              .meta = in.value("meta", Json::object()),
                              .created_at = ctx.now,
                              .updated_at = ctx.now,
                              .trigger_rule = in.value("trigger_rule", "all_success")});
  if (inserted.code() == StatusCode::kAlreadyExists) {
    return AlreadyExistsError("task: a task with id \"" + id + "\"" +
                              (key.empty() ? "" : " or key \"" + key + "\" in run " + run_id) +
                              " already exists");
  }
  RETURN_IF_ERROR(inserted);
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "task.created",
                                    .summary = kind + " " + id + " created: " + title,
                                    .payload = {{"task_id", id},
                                                {"kind", kind},
                                                {"key", key},
                                                {"machine", machine_name},
                                                {"status", status}}})
                      .status());
  for (const Json& dep : in.value("depends_on", Json::array())) {
    RETURN_IF_ERROR(InsertDependency(ctx, id, dep.get<std::string>(), "depends_on")
                        .WithPrefix("depends_on"));
  }
  RETURN_IF_ERROR(EvaluateReadiness(ctx, id));
  return LoadTask(ctx.txn, id);
}

Result<Json> ShowTask(OpContext& ctx, const Json& in) {
  return AnswerTask(ctx.txn, in.at("id").get<std::string>());
}

// Gives each task of "tasks" its "depends_on" (ids).
Status AddDependencies(Txn& txn, Json& tasks) {
  std::map<std::string, Json*> by_id;
  std::vector<std::string> ids;
  ids.reserve(tasks.size());
  for (Json& t : tasks) {
    t["depends_on"] = Json::array();
    ids.push_back(t["id"].get<std::string>());
    by_id[ids.back()] = &t;
  }
  ASSIGN_OR_RETURN(std::vector<TaskDep> deps, ListTaskDepsOf(txn, ids));
  for (const TaskDep& d : deps) (*by_id[d.task_id])["depends_on"].push_back(d.depends_on_id);
  return Status();
}

Result<Json> ListTasks(OpContext& ctx, const Json& in) {
  TaskFilter filter{.limit = in.value("limit", 1000)};
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(filter.project_id,
                     ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  for (auto [field, value] : {std::pair{"run", &filter.run_id}, {"status", &filter.status},
                              {"kind", &filter.kind}, {"assignee", &filter.assignee},
                              {"parent", &filter.parent_id}}) {
    if (in.contains(field)) *value = in[field].get<std::string>();
  }
  ASSIGN_OR_RETURN(std::vector<Task> rows, ListTaskRows(ctx.txn, filter));
  Json list = Json::array();
  for (const Task& t : rows) list.push_back(TaskToJson(t));
  if (in.value("with_dependencies", false)) RETURN_IF_ERROR(AddDependencies(ctx.txn, list));
  return Json{{"tasks", list}};
}

Result<Json> SetTaskStatus(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, id));
  RETURN_IF_ERROR(CheckExpectedVersion(in, "task", id, task.version));
  // None keeps the stored result.
  const std::optional<Json> result =
      in.contains("result") ? std::optional<Json>(in["result"]) : std::nullopt;
  // A block by hand names who did it, so readiness never lifts it.
  std::string reason = in.value("reason", "");
  if (in.at("status") == "blocked") {
    reason = "blocked by " + ctx.actor.id + (reason.empty() ? "" : ": " + reason);
  }
  if (task.status == "blocked" && in.at("status") == "blocked") {
    // Already blocked (say, by its dependencies): the block by hand replaces
    // the reason, so that readiness leaves the task alone.
    RETURN_IF_ERROR(UpdateTaskBlockedReasonAndResult(ctx.txn, id, reason, result, ctx.now));
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = task.run_id.value_or(""),
                                      .kind = "task.blocked",
                                      .summary = id + " blocked: " + reason,
                                      .payload = {{"task_id", id}, {"reason", reason}}})
                        .status());
    return AnswerTask(ctx.txn, id);
  }
  RETURN_IF_ERROR(ChangeTaskStatus(ctx, task, in.at("status").get<std::string>(), reason,
                                   {.result = result}));
  return AnswerTask(ctx.txn, id);
}

}  // namespace baton
