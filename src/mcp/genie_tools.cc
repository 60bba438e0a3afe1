// Genie v5's MCP tools (src/lib/v5/mcp-tools.ts) with Genie's names and
// argument shapes, over baton's task graph. Genie's results are reshaped
// into its TaskSummary ({id, title, status, claimedBy, wish, group}).
// Genie has no lease epochs: done, release and heartbeat present the
// epoch of the caller's own current lease, so a task someone else holds is
// still refused (Aborted). genie_task_set_wish and genie_worktree_context
// have no counterpart (a task's wish is its run's structure) and are not
// served; docs/mcp.md says so.

#include "mcp/tools.h"

namespace baton::mcp {
namespace {

Json Str(const char* description) { return StringArg(description); }
Json Object(Json properties, std::vector<std::string> required) {
  return ArgsObject(std::move(properties), std::move(required));
}

Json Summary(const Json& task) {
  const Json& lease = task["lease"];
  return Json{{"id", task["id"]},
              {"title", task["title"]},
              {"status", task["status"]},
              {"claimedBy", lease.is_object() ? lease["owner"] : Json()},
              {"wish", task["kind"] == "group" ? task["run_id"] : Json()},
              {"group", task["kind"] == "group" ? task["key"] : Json()}};
}

Json Summaries(const Json& tasks) {
  Json out = Json::array();
  for (const Json& t : tasks) out.push_back(Summary(t));
  return out;
}

Tool Make(const char* name, const char* description, Json input, bool read_only) {
  return SeedTool("genie", name, description, std::move(input), read_only);
}

// {task: summary} after an operation that returns the task.
Result<Json> TaskResult(Result<Json> task) {
  if (!task.ok()) return task.status();
  return Json{{"task", Summary(*task)}};
}

// Calls a fenced operation (complete, release, heartbeat) with the epoch of
// the caller's own lease on the task.
Result<Json> Fenced(Api& api, ToolCall& call, const char* op, Json extra = Json::object()) {
  const Json id = call.arguments["id"];
  ASSIGN_OR_RETURN(Json task, api.Call("task.show", {{"id", id}}, call.actor));
  const Json& lease = task["lease"];
  if (!lease.is_object() || lease["owner"] != call.actor.id) {
    return FailedPreconditionError("id: task " + id.get<std::string>() + " is not claimed by " +
                                   call.actor.id +
                                   (lease.is_object() ? " (held by " + lease["owner"].get<std::string>() + ")" : ""));
  }
  extra["task"] = id;
  extra["epoch"] = lease["epoch"];
  return CallOp(api, call, op, extra);
}

std::vector<Tool> ReadTools() {
  std::vector<Tool> tools;
  Tool board = Make("genie_board", "Task status counts and tasks; optional run or wish filter.",
                    Object({{"board", Str("board id or name; default all tasks")},
                            {"wish", Str("only this wish's groups (the wish slug)")}},
                           {}),
                    true);
  board.call = [](Api& api, ToolCall& call) -> Result<Json> {
    Json tasks;
    const Json& a = call.arguments;
    if (a.contains("wish")) {
      ASSIGN_OR_RETURN(Json wish, CallOp(api, call, "wish.status", {{"slug", a["wish"]}}));
      ASSIGN_OR_RETURN(Json list, CallOp(api, call, "task.list", {{"run", wish["run_id"]}, {"limit", 100000}}));
      tasks = list["tasks"];
    } else {
      ASSIGN_OR_RETURN(Json list, CallOp(api, call, "task.list", {{"limit", 100000}}));
      tasks = list["tasks"];
    }
    if (a.contains("board")) {
      ASSIGN_OR_RETURN(Json b, CallOp(api, call, "board.show", {{"board", a["board"]}}));
      Json kept = Json::array();
      for (const Json& t : tasks) {
        if (t["board_id"] == b["id"]) kept.push_back(t);
      }
      tasks = kept;
    }
    Json counts = {{"blocked", 0}, {"ready", 0}, {"in_progress", 0}, {"done", 0}, {"total", 0}};
    for (const Json& t : tasks) {
      const std::string status = t["status"].get<std::string>();
      if (counts.contains(status)) counts[status] = counts[status].get<int>() + 1;
      counts["total"] = counts["total"].get<int>() + 1;
    }
    return Json{{"board", a.value("board", Json())}, {"counts", counts}, {"tasks", Summaries(tasks)}};
  };
  tools.push_back(board);

  Tool wish = Make("genie_wish_status", "A wish's execution groups (DAG progress) and its tasks.",
                   Object({{"wish", Str("the wish slug")}}, {"wish"}), true);
  wish.call = [](Api& api, ToolCall& call) {
    return CallOp(api, call, "wish.status", {{"slug", call.arguments["wish"]}});
  };
  tools.push_back(wish);

  Tool task = Make("genie_task", "Full detail for a single task by id.",
                   Object({{"id", Str("task id")}}, {"id"}), true);
  task.call = [](Api& api, ToolCall& call) {
    return CallOp(api, call, "task.show", {{"id", call.arguments["id"]}});
  };
  tools.push_back(task);

  Tool active = Make("genie_active", "All in-progress tasks and who claimed each.",
                     Object(Json::object(), {}), true);
  active.call = [](Api& api, ToolCall& call) -> Result<Json> {
    ASSIGN_OR_RETURN(Json list, CallOp(api, call, "task.list", {{"status", "in_progress"}, {"limit", 100000}}));
    return Json{{"tasks", Summaries(list["tasks"])}};
  };
  tools.push_back(active);
  return tools;
}

std::vector<Tool> ClaimTools() {
  std::vector<Tool> tools;
  Tool checkout = Make("genie_task_checkout",
                       "Atomically claim a ready task for a worker (the CLI's task checkout).",
                       Object({{"id", Str("task id")},
                               {"worker", Str("the claiming worker (default: the caller)")}},
                              {"id"}),
                       false);
  checkout.call = [](Api& api, ToolCall& call) -> Result<Json> {
    Json in = {{"task", call.arguments["id"]}};
    if (call.arguments.contains("worker")) in["agent"] = call.arguments["worker"];
    ASSIGN_OR_RETURN(Json claimed, CallOp(api, call, "task.claim", in));
    if (!claimed.value("claimed", false)) {
      return Status(StatusCode::kFailedPrecondition,
                    "claim_conflict: task " + call.arguments["id"].get<std::string>() +
                        " is not claimable (already claimed or not ready)",
                    claimed);
    }
    return Json{{"task", Summary(claimed["task"])}, {"epoch", claimed["task"]["lease"]["epoch"]}};
  };
  tools.push_back(checkout);

  Tool done = Make("genie_task_done", "Mark a task you hold done and recompute the ready set.",
                   Object({{"id", Str("task id")}}, {"id"}), false);
  done.call = [](Api& api, ToolCall& call) { return TaskResult(Fenced(api, call, "task.complete")); };
  tools.push_back(done);

  Tool release = Make("genie_task_release",
                      "Release a claim, returning an in-progress task to the ready queue.",
                      Object({{"id", Str("task id")}}, {"id"}), false);
  release.call = [](Api& api, ToolCall& call) { return TaskResult(Fenced(api, call, "task.release")); };
  tools.push_back(release);

  Tool heartbeat = Make("genie_task_heartbeat", "Record a liveness heartbeat for a claimed task.",
                        Object({{"id", Str("task id")}}, {"id"}), false);
  heartbeat.call = [](Api& api, ToolCall& call) -> Result<Json> {
    ASSIGN_OR_RETURN(Json task, Fenced(api, call, "task.heartbeat"));
    return Json{{"taskId", call.arguments["id"]}, {"lease", task["lease"]}};
  };
  tools.push_back(heartbeat);
  return tools;
}

std::vector<Tool> EditTools() {
  std::vector<Tool> tools;
  Tool create = Make("genie_task_create", "Create a task (ready unless it has dependencies).",
                     Object({{"title", Str("what to do")},
                             {"run", Str("the run it belongs to")},
                             {"project", Str("the project (id or name)")}},
                            {"title"}),
                     false);
  create.call = [](Api& api, ToolCall& call) { return TaskResult(CallOp(api, call, "task.create", call.arguments)); };
  tools.push_back(create);

  Tool block = Make("genie_task_block", "Block a task, refusing checkout until cleared.",
                    Object({{"id", Str("task id")}, {"reason", Str("why")}}, {"id", "reason"}), false);
  block.call = [](Api& api, ToolCall& call) {
    return TaskResult(CallOp(api, call, "task.set_status",
                             {{"id", call.arguments["id"]}, {"status", "blocked"},
                              {"reason", call.arguments["reason"]}}));
  };
  tools.push_back(block);

  Tool unblock = Make("genie_task_unblock", "Clear a block: the task is ready again.",
                      Object({{"id", Str("task id")}}, {"id"}), false);
  unblock.call = [](Api& api, ToolCall& call) {
    return TaskResult(CallOp(api, call, "task.set_status",
                             {{"id", call.arguments["id"]}, {"status", "ready"}}));
  };
  tools.push_back(unblock);

  Tool move = Make("genie_task_move", "Move a card to a column (lane) of its board.",
                   Object({{"id", Str("task id")}, {"to", Str("the column")}}, {"id", "to"}), false);
  move.call = [](Api& api, ToolCall& call) {
    return CallOp(api, call, "board.move", {{"task", call.arguments["id"]}, {"column", call.arguments["to"]}});
  };
  tools.push_back(move);

  Tool dep = Make("genie_task_add_dependency",
                  "Make a task depend on another, rejecting self-dependencies and cycles.",
                  Object({{"id", Str("the dependent task")}, {"depends_on", Str("the task it waits for")}},
                         {"id", "depends_on"}),
                  false);
  dep.call = [](Api& api, ToolCall& call) -> Result<Json> {
    ASSIGN_OR_RETURN(Json out, CallOp(api, call, "task.add_dependency",
                                      {{"task", call.arguments["id"]},
                                       {"on", call.arguments["depends_on"]}}));
    return Json{{"taskId", call.arguments["id"]}, {"dependsOnId", call.arguments["depends_on"]}, {"edge", out}};
  };
  tools.push_back(dep);
  return tools;
}

}  // namespace

std::vector<Tool> GenieTools(const Registry&) {
  std::vector<Tool> tools = ReadTools();
  for (std::vector<Tool> more : {ClaimTools(), EditTools()}) {
    for (Tool& t : more) tools.push_back(std::move(t));
  }
  return tools;
}

}  // namespace baton::mcp
