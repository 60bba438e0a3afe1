// The sgai profile's lists: todos (opencode's todowrite) and usage; the
// workflow in .sgai/state.json's shape is rendered by the sgai format
// (formats/sgai_format.h). See sgai.h.

#include <map>
#include <set>

#include "engine/core/core_services.h"
#include "engine/interchange/imports.h"
#include "engine/ledger/ledger.h"
#include "engine/profiles/sgai/sgai.h"
#include "engine/core/task_graph.h"
#include "formats/sgai_format.h"
#include "store/tables/task_table.h"
#include "store/tables/usage_table.h"

namespace baton {
namespace sgai_internal {

Result<std::vector<Task>> CurrentTodos(Txn& txn, const std::string& run_id,
                                       const std::string& agent, bool project) {
  ASSIGN_OR_RETURN(std::vector<std::string> ids,
                   ListSgaiTodoIds(txn, run_id, project ? "project_todo" : "todo",
                                   project ? std::nullopt : std::optional<std::string>(agent)));
  std::vector<Task> todos;
  for (const std::string& id : ids) {
    ASSIGN_OR_RETURN(Task todo, LoadTask(txn, id));
    todos.push_back(std::move(todo));
  }
  return todos;
}

bool IsOpenTodo(const Task& todo) {
  return todo.status != "completed" && todo.status != "cancelled";
}

Json TodoToSgai(const Task& todo) {
  return {{"id", todo.meta.value("todo_id", "")},
          {"content", todo.title},
          {"status", todo.status},
          {"priority", todo.meta.value("priority", "medium")}};
}

Status ArchiveTodo(OpContext& ctx, const Task& todo, const std::string& reason) {
  Json meta = todo.meta;
  if (IsOpenTodo(todo)) {
    RETURN_IF_ERROR(ChangeTaskStatus(ctx, todo, "cancelled", reason));
    // What the status change wrote (its hooks included) stays: meta is read again.
    ASSIGN_OR_RETURN(Task cancelled, LoadTask(ctx.txn, todo.id));
    meta = std::move(cancelled.meta);
  }
  meta["archived"] = true;
  meta["archived_reason"] = reason;
  return ArchiveSgaiTodoRow(ctx.txn, todo.id, meta, ctx.now);
}

}  // namespace sgai_internal

namespace {

using namespace sgai_internal;

int64_t PriorityRank(const std::string& p) {
  if (p == "high") return 2;
  if (p == "medium") return 1;
  return 0;
}

// Moves a todo to "to" through sgai.todo. opencode's todowrite replaces the
// whole list, so any status may follow any other: a closed todo given a new
// status is reopened first (both steps are the machine's).
Status MoveTodo(OpContext& ctx, const Task& todo, const std::string& to, size_t index) {
  const std::string& from = todo.status;
  if (from == to) return Status();
  const std::string where = "todos[" + std::to_string(index) + "].status";
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(todo.machine));
  Status direct = machine->Check(from, to, ctx.transition());
  if (!direct.ok() && to != "pending" && !IsOpenTodo(todo)) {
    RETURN_IF_ERROR(ChangeTaskStatus(ctx, todo, "pending", "todo_write").WithPrefix(where));
    ASSIGN_OR_RETURN(Task reopened, LoadTask(ctx.txn, todo.id));
    return ChangeTaskStatus(ctx, reopened, to, "todo_write").WithPrefix(where);
  }
  RETURN_IF_ERROR(direct.WithPrefix(where));
  return ChangeTaskStatus(ctx, todo, to, "todo_write").WithPrefix(where);
}

Status UpdateTodo(OpContext& ctx, const Task& todo, const Json& item, size_t index) {
  Json meta = todo.meta;
  const std::string priority = item.value("priority", "medium");
  meta["priority"] = priority;
  RETURN_IF_ERROR(UpdateSgaiTodoRow(ctx.txn, todo.id,
                                    {.title = item.at("content").get<std::string>(),
                                     .priority = PriorityRank(priority),
                                     .position = static_cast<int64_t>(index),
                                     .meta = meta,
                                     .now = ctx.now}));
  ASSIGN_OR_RETURN(Task updated, LoadTask(ctx.txn, todo.id));
  return MoveTodo(ctx, updated, item.value("status", "pending"), index);
}

Status CreateTodo(OpContext& ctx, const std::string& run_id, const std::string& agent, bool project,
                  const Json& item, size_t index) {
  const std::string id = item.at("id").get<std::string>();
  const std::string priority = item.value("priority", "medium");
  Json create = {{"run", run_id},
                 {"kind", project ? "project_todo" : "todo"},
                 {"key", project ? "project_todo:" + id : "todo:" + agent + ":" + id},
                 {"title", item.at("content")},
                 {"priority", PriorityRank(priority)},
                 {"position", static_cast<int64_t>(index)},
                 {"meta", {{"todo_id", id}, {"priority", priority}}}};
  if (!project) create["assignee"] = agent;
  ASSIGN_OR_RETURN(Task created, MakeTask(ctx, create));
  return MoveTodo(ctx, created, item.value("status", "pending"), index);
}

Json TodoJsonList(const std::vector<Task>& todos) {
  Json list = Json::array();
  for (const Task& t : todos) list.push_back(TodoToSgai(t));
  return list;
}

}  // namespace

Result<Json> SgaiTodoWrite(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, in.at("run").get<std::string>()));
  const std::string run_id = run.id;
  const bool project = in.value("project", false);
  if (project && !IsSgaiCoordinator(ctx.actor)) {
    return PermissionDeniedError(
        "project: only the coordinator writes the project todo list "
        "(sgai's project_todowrite)");
  }
  const std::string agent = SgaiAgentName(ctx.actor);
  const Json& todos = in.at("todos");
  std::set<std::string> ids;
  for (size_t i = 0; i < todos.size(); ++i) {
    if (!ids.insert(todos[i].at("id").get<std::string>()).second) {
      return InvalidArgumentError("todos[" + std::to_string(i) + "].id: \"" +
                                  todos[i]["id"].get<std::string>() + "\" appears twice");
    }
  }
  ASSIGN_OR_RETURN(std::vector<Task> current, CurrentTodos(ctx.txn, run_id, agent, project));
  std::map<std::string, Task> existing;
  for (const Task& t : current) existing[t.meta.value("todo_id", "")] = t;
  // opencode's todowrite replaces the list: items left out come off it.
  for (const auto& [id, todo] : existing) {
    if (!ids.contains(id)) RETURN_IF_ERROR(ArchiveTodo(ctx, todo, "removed by todo_write"));
  }
  for (size_t i = 0; i < todos.size(); ++i) {
    auto it = existing.find(todos[i]["id"].get<std::string>());
    if (it != existing.end()) {
      RETURN_IF_ERROR(UpdateTodo(ctx, it->second, todos[i], i));
    } else {
      RETURN_IF_ERROR(CreateTodo(ctx, run_id, agent, project, todos[i], i));
    }
  }
  ASSIGN_OR_RETURN(std::vector<Task> after, CurrentTodos(ctx.txn, run_id, agent, project));
  int64_t open = 0;
  for (const Task& t : after) open += IsOpenTodo(t) ? 1 : 0;
  const std::string whose = project ? "project" : agent;
  RETURN_IF_ERROR(
      AppendEvent(ctx, {.run_id = run_id,
                        .kind = "sgai.todos",
                        .summary = whose + " todo list: " + std::to_string(after.size()) +
                                   " item(s), " + std::to_string(open) + " open",
                        .payload = {{"list", whose},
                                    {"items", static_cast<int64_t>(after.size())},
                                    {"open", open}}})
          .status());
  return Json{{"run_id", run_id}, {"list", whose}, {"todos", TodoJsonList(after)}};
}

Result<Json> SgaiTodoRead(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, in.at("run").get<std::string>()));
  const bool project = in.value("project", false);
  const std::string agent = in.value("agent", SgaiAgentName(ctx.actor));
  ASSIGN_OR_RETURN(std::vector<Task> todos, CurrentTodos(ctx.txn, run.id, agent, project));
  return Json{
      {"run_id", run.id}, {"list", project ? "project" : agent}, {"todos", TodoJsonList(todos)}};
}

Result<Json> SgaiUsageAdd(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, in.at("run").get<std::string>()));
  const std::string& run_id = run.id;
  const std::string agent = in.value("agent", SgaiAgentName(ctx.actor));
  const Json tokens = in.value("tokens", Json::object());
  const double cost = in.value("cost", 0.0);
  ASSIGN_OR_RETURN(
      const int64_t seq,
      InsertUsageRow(ctx.txn, {.run_id = run_id,
                                   .agent = agent,
                                   .model = in.at("model").get<std::string>(),
                                   .step_id = in.value("step_id", ""),
                                   .session_id = in.value("session_id", ""),
                                   .cost = cost,
                                   .input_tokens = tokens.value("input", int64_t{0}),
                                   .output_tokens = tokens.value("output", int64_t{0}),
                                   .reasoning_tokens = tokens.value("reasoning", int64_t{0}),
                                   .cache_read_tokens = tokens.value("cacheRead", int64_t{0}),
                                   .cache_write_tokens = tokens.value("cacheWrite", int64_t{0}),
                                   .created_at = ctx.now}));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "sgai.usage",
                                    .summary = agent + " used " + in["model"].get<std::string>() +
                                               ": cost " + std::to_string(cost),
                                    .payload = {{"usage_seq", seq},
                                                {"agent", agent},
                                                {"model", in["model"]},
                                                {"cost", cost},
                                                {"tokens", tokens}}})
                      .status());
  return Json{{"run_id", run_id}, {"seq", seq}, {"agent", agent}, {"cost", cost}};
}

Result<Json> SgaiState(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadSgaiRun(ctx.txn, in.at("run").get<std::string>()));
  ASSIGN_OR_RETURN(RunImage image, ExportImage(ctx.txn, run.id));
  // One renderer of state.json: the sgai format's (formats/sgai_format.h).
  return Json(SgaiDocument(image, nullptr));
}

}  // namespace baton
