#include "ops/graph_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <set>
#include <thread>

#include "engine/graph/graph_nodes.h"
#include "engine/graph/graph_runs.h"
#include "model/graph_delta.h"
#include "util/clock.h"
#include "util/json_or_null.h"
#include "util/sha256.h"
#include "util/scoped_path.h"
#include "util/subprocess.h"

namespace baton {
namespace {

// How long one question.wait slice lasts while a human node waits.
constexpr int64_t kHumanWaitSliceMillis = 30000;
// Retry backoff doubles per attempt up to this.
constexpr int64_t kMaxBackoffMillis = 3600000;

// The runner, and who started it with which grants: it goes into the run's
// graph.started (or take-over) event, so the ledger says what let it run.
Json RunnerId(const OpRunner& runner, const std::set<std::string>& grants) {
  return {{"token", NewId("runner")},
          {"host", HostName()},
          {"pid", static_cast<int64_t>(getpid())},
          {"start", ProcessStartTicks(getpid())},
          {"caller", {{"id", runner.actor().id}, {"role", runner.actor().role}}},
          {"grants", Json(std::vector<std::string>(grants.begin(), grants.end()))}};
}

// Node types whose running runs something outside baton: a program, an
// agent, a request, a model.
constexpr std::string_view kCommandNodeTypes[] = {"command", "dynamic-command", "agent",
                                                  "dynamic-agent", "http", "llm",
                                                  "slash-command"};

bool RunsCommands(const GraphNode& node) {
  return std::find(std::begin(kCommandNodeTypes), std::end(kCommandNodeTypes), node.type) !=
         std::end(kCommandNodeTypes);
}

// "path" resolved for the runner's caller: inside the roots, or outside them
// when the caller holds "grant" (then added to "used"). The store's files are
// refused either way.
Result<std::string> Scoped(const OpRunner& runner, std::string_view field, const std::string& path,
                           const std::string& base, std::string_view grant,
                           std::set<std::string>& used) {
  const PathScope* scope = runner.paths();
  if (scope == nullptr) {
    return PermissionDeniedError(std::string(field) + ": no path scope here, so no path is accepted");
  }
  Result<std::string> inside = ResolveScopedPath(*scope, {.field = field, .path = path,
                                                          .base = base, .grant = grant});
  if (inside.ok() || inside.status().code() != StatusCode::kPermissionDenied ||
      !runner.actor().Has(grant)) {
    return inside;
  }
  ASSIGN_OR_RETURN(std::string outside, ResolveScopedPath(*scope, {.field = field,
                                                                   .path = path,
                                                                   .base = base,
                                                                   .may_leave_roots = true}));
  used.insert(std::string(grant));
  return outside;
}

// The definition source of "in" ("file" resolved; "text" needs the grant
// "definitions" unless "stored": the run's own, accepted when it started).
Result<Json> ScopeDefinition(const OpRunner& runner, Json in, bool stored,
                             std::set<std::string>& used) {
  if (in.contains("file") && in["file"].is_string()) {
    ASSIGN_OR_RETURN(std::string file, Scoped(runner, "file", in["file"].get<std::string>(), "",
                                              kGrantDefinitions, used));
    if (!in.contains("source")) in["source"] = in["file"];
    in["file"] = file;
  } else if (in.contains("text") && !stored) {
    if (!runner.actor().Has(kGrantDefinitions)) {
      return PermissionDeniedError(
          "text: a definition given inline runs only for a caller with the grant \"definitions\" "
          "(give the file of a definition under the roots instead)");
    }
    used.insert(std::string(kGrantDefinitions));
  }
  return in;
}

// Refuses "def" when it runs commands and the caller may not; resolves each
// node's cwd (relative ones start at "workdir") in place.
Status ScopeNodes(const OpRunner& runner, GraphDef& def, const std::string& workdir,
                  std::set<std::string>& used) {
  for (GraphNode& node : def.nodes) {
    if (RunsCommands(node)) {
      if (!runner.actor().Has(kGrantCommands)) {
        return PermissionDeniedError("nodes: node " + node.name + " is a " + node.type +
                                     " node, which runs outside baton; running it needs the grant "
                                     "\"commands\"");
      }
      used.insert(std::string(kGrantCommands));
    }
    auto cwd = node.options.find("cwd");
    if (cwd == node.options.end() || !cwd->is_string() || cwd->get<std::string>().empty()) continue;
    std::error_code ec;
    const std::string base = workdir.empty() ? std::filesystem::current_path(ec).string() : workdir;
    ASSIGN_OR_RETURN(std::string resolved,
                     Scoped(runner, "node " + node.name + ": cwd", cwd->get<std::string>(), base,
                            kGrantPaths, used));
    *cwd = resolved;
  }
  return Status();
}

Json DefinitionMeta(const LoadedGraph& g) {
  return {{"id", g.def.id},
          {"source", g.def.source},
          {"file", g.file},
          {"text", g.text},
          {"hash", Sha256Hex(g.text)}};
}

Json NodeNames(const GraphDef& def) {
  Json names = Json::array();
  for (const GraphNode& n : def.nodes) names.push_back(n.name);
  return names;
}

// One run of the loop: the runner's view of the run between checkpoints.
struct Loop {
  OpRunner& runner;
  const GraphDef& def;
  std::string run_id;
  std::string token;
  std::string workdir;
  bool wait_for_human = true;
  Json context;
  Json history;
  std::string cursor;
  int64_t seq = 0;
  int64_t interrupted = 0;  // earlier tries of this execution that died
  std::string waiting_question;  // set when a human node left without its answer
  int64_t nodes_run = 0;

  Result<Json> AskHuman(const GraphNode& node, const Json& question) {
    Json ask = {{"run", run_id},
                {"questions", Json::array({question})},
                {"message", "graph " + def.id + ": node " + node.name + " #" + std::to_string(seq)}};
    ASSIGN_OR_RETURN(Json q, runner.CallAsSystem("question.ask", ask));
    if (q["status"] == "open") {
      const std::string id = q["id"].get<std::string>();
      runner.Progress("#" + std::to_string(seq) + " " + node.name + ": waiting for the human to "
                      "answer question " + id + " (baton question answer " + id +
                      " --choice ... or --text ..., or in the dashboard)");
    }
    while (q["status"] == "open") {
      if (!wait_for_human) {
        waiting_question = q["id"].get<std::string>();
        return q;
      }
      ASSIGN_OR_RETURN(q, runner.CallAsSystem("question.wait", {{"id", q["id"]},
                                                                {"run", run_id},
                                                                {"timeout_ms", kHumanWaitSliceMillis}}));
    }
    if (q["status"] != "answered") {
      return FailedPreconditionError("question " + q["id"].get<std::string>() + " was " +
                                     q["status"].get<std::string>());
    }
    return q;
  }

  // The state Lua and the executors see. The context and the conversation
  // move into it and back (a long conversation is not copied per node).
  Json TakeState() {
    Json state = Json::object();
    state["currentNode"] = cursor;
    state["status"] = "running";
    state["context"] = std::move(context);
    state["conversationHistory"] = std::move(history);
    return state;
  }

  // Runs the node at the cursor with its retries; commits the checkpoint.
  Result<Json> Step(const GraphNode& node) {
    GraphExecEnv env;
    env.run_id = run_id;
    env.seq = seq;
    env.workdir = workdir;
    env.time = &runner.time();
    env.ask_human = [this, &node](const Json& q) { return AskHuman(node, q); };
    // Each program's process group is in the run before the program starts.
    env.on_process_start = [this, &node](int64_t pgid, int64_t start) {
      return runner.CallAsSystem("graph.node_process", {{"run", run_id}, {"runner", token},
                                                        {"node", node.name}, {"seq", seq},
                                                        {"pgid", pgid}, {"start", start}})
          .status();
    };
    const auto start = std::chrono::steady_clock::now();
    GraphNodeOutcome out;
    Json tries = Json::array();
    Json state = TakeState();
    for (int attempt = 0;; ++attempt) {
      env.attempt = static_cast<int>(interrupted) + attempt + 1;
      ASSIGN_OR_RETURN(out, ExecuteGraphNode(node, state, env));
      if (!waiting_question.empty()) {
        context = std::move(state["context"]);
        history = std::move(state["conversationHistory"]);
        return Json{{"waiting", waiting_question}};
      }
      if (out.success || attempt >= node.retry.max) break;
      tries.push_back({{"attempt", env.attempt}, {"error", out.error}});
      const int64_t backoff =
          std::min(kMaxBackoffMillis, node.retry.backoff_ms << std::min(attempt, 20));
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
    }
    // The state the node leaves: routing sees it before it is committed.
    RETURN_IF_ERROR(ApplyGraphDelta(
        state["context"], state["conversationHistory"],
        NodeOutcomeDelta(node.result_key, out.result, out.updates, Json(out.removed),
                         Json(out.history_append))));
    Result<std::string> next = RouteGraphNode(def, node, state);

    Json commit = {{"run", run_id},
                   {"runner", token},
                   {"seq", seq},
                   {"node", node.name},
                   {"attempt", env.attempt},
                   {"success", out.success},
                   {"result_key", node.result_key},
                   {"result", out.result},
                   {"updates", out.updates},
                   {"removed", out.removed},
                   {"history_append", out.history_append},
                   {"duration_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::steady_clock::now() - start)
                                       .count()}};
    if (!out.success) commit["error"] = out.error;
    if (!tries.empty()) commit["retried"] = tries;
    if (next.ok()) {
      commit["next"] = *next;
    } else {
      commit["route_error"] = std::string(next.status().message());
    }
    ASSIGN_OR_RETURN(Json done, runner.CallAsSystem("graph.commit", commit));
    ++nodes_run;
    runner.Progress("#" + std::to_string(seq) + " " + node.name + ": " +
                    (out.success ? "ok" : "failed: " + out.error) + " (" +
                    commit["duration_ms"].dump() + " ms) -> " +
                    done["cursor"].get<std::string>());
    context = std::move(state["context"]);
    history = std::move(state["conversationHistory"]);
    cursor = done["cursor"].get<std::string>();
    seq = done["seq"].get<int64_t>();
    interrupted = 0;
    return done;
  }

  Result<Json> Run(std::string status) {
    std::string stopped;
    while (stopped.empty()) {
      const GraphNode* node = def.Find(cursor);
      if (node == nullptr) {
        // graph.take_over refuses a missing node; END here means a paused
        // run resumed exactly at its end.
        stopped = cursor == kGraphEnd ? "completed" : "failed";
        break;
      }
      Result<Json> step = InternalError("not run");
      try {
        step = Step(*node);
      } catch (const std::exception& e) {
        // A defect must not leave the run held by a runner that still
        // looks alive (under baton serve it would look alive for good).
        step = InternalError(std::string("graph runner: ") + e.what());
      }
      if (!step.ok()) {
        // A lost run is another runner's now; anything else releases it so
        // a resume may take it at once.
        if (step.status().code() != StatusCode::kAborted) {
          (void)runner.CallAsSystem("graph.release", {{"run", run_id}, {"runner", token},
                                                      {"reason", std::string(step.status().message())}});
        }
        return step.status();
      }
      if (step->contains("waiting")) {
        RETURN_IF_ERROR(runner.CallAsSystem("graph.release",
                                            {{"run", run_id}, {"runner", token},
                                             {"reason", "waiting for the answer to question " + waiting_question}})
                            .status());
        stopped = "waiting";
        status = "paused";
        break;
      }
      status = (*step)["status"].get<std::string>();
      if ((*step)["stop"].get<bool>()) stopped = (*step)["reason"].get<std::string>();
    }
    Json out = {{"run", run_id}, {"status", status}, {"cursor", cursor}, {"seq", seq},
                {"stopped", stopped}, {"nodes_run", nodes_run}, {"context", context}};
    if (!waiting_question.empty()) out["question"] = waiting_question;
    return out;
  }
};

}  // namespace

Result<LoadedGraph> LoadGraphDefinition(const Json& in) {
  const bool has_file = in.contains("file");
  if (has_file == in.contains("text")) {
    return InvalidArgumentError("give exactly one of file and text (a definition's YAML or JSON)");
  }
  LoadedGraph g;
  std::string source = in.value("source", "");
  if (has_file) {
    g.file = in["file"].get<std::string>();
    // Any caller (over HTTP and MCP too) may name a file: only definition
    // files are read, so no other file's contents reach an error message.
    const std::string ext = std::filesystem::path(g.file).extension().string();
    if (ext != ".yaml" && ext != ".yml" && ext != ".json") {
      return InvalidArgumentError("file: " + g.file + ": a graph definition is a .yaml, .yml or .json file");
    }
    ASSIGN_OR_RETURN(g.text, ReadFile(g.file, kMaxGraphDefinitionBytes));
    if (source.empty()) source = g.file;
  } else {
    g.text = in["text"].get<std::string>();
    if (source.empty()) source = "<text>";
  }
  ASSIGN_OR_RETURN(g.def, ParseGraphDef(g.text, source));
  return g;
}

Result<Json> RunGraph(OpRunner& runner, const Json& in) {
  std::set<std::string> used;
  ASSIGN_OR_RETURN(Json source, ScopeDefinition(runner, in, /*stored=*/false, used));
  ASSIGN_OR_RETURN(LoadedGraph g, LoadGraphDefinition(source));
  // As @sys/graph's run(id): a run that exists is resumed, a completed one
  // is left as it is.
  if (in.contains("id")) {
    Result<Json> shown = runner.CallAsSystem("run.show", {{"id", in["id"]}});
    if (shown.ok()) {
      const Run existing = RunFromJson(*shown);
      if (in.contains("context")) {
        return FailedPreconditionError("context: run " + in["id"].get<std::string>() +
                                       " exists, so it is resumed with its own context; fork it "
                                       "to change the context (baton graph fork)");
      }
      if (existing.status == "completed" && existing.profile == "graph") {
        return Json{{"run", in["id"]}, {"status", "completed"}, {"cursor", OrNull(existing.cursor)},
                    {"seq", OrNull(existing.cursor_index)}, {"stopped", "completed"},
                    {"nodes_run", 0}, {"context", existing.context}};
      }
      Json resume = {{"id", in["id"]}, {"wait_for_human", in.value("wait_for_human", true)}};
      for (const char* key : {"file", "text", "source"}) {
        if (in.contains(key)) resume[key] = in[key];
      }
      return ResumeGraph(runner, resume);
    }
  }
  Json context = g.def.initial_context;
  const Json patch = in.value("context", Json::object());
  for (auto it = patch.begin(); it != patch.end(); ++it) context[it.key()] = it.value();
  std::string workdir = in.value("workdir", "");
  if (workdir.empty()) {
    // The runner's own folder, not one the caller named.
    std::error_code ec;
    workdir = std::filesystem::current_path(ec).string();
  } else {
    ASSIGN_OR_RETURN(workdir, Scoped(runner, "workdir", workdir, "", kGrantPaths, used));
  }
  RETURN_IF_ERROR(ScopeNodes(runner, g.def, workdir, used));
  std::string state_dir;
  if (in.contains("state_dir")) {
    ASSIGN_OR_RETURN(state_dir, Scoped(runner, "state_dir", in["state_dir"].get<std::string>(), "",
                                       kGrantPaths, used));
  }
  const Json id = RunnerId(runner, used);
  Json start = {{"definition", DefinitionMeta(g)},
                {"entry", g.def.entry()},
                {"context", context},
                {"workdir", workdir},
                {"runner", id}};
  for (const char* key : {"id", "title", "project", "keep_last", "state_dir"}) {
    if (in.contains(key)) start[key] = in[key];
  }
  if (!state_dir.empty()) {
    start["state_dir"] = state_dir;
    std::error_code ec;
    std::filesystem::create_directories(state_dir, ec);
    if (ec) {
      return InvalidArgumentError("state_dir: cannot create " + state_dir + ": " + ec.message());
    }
  }
  ASSIGN_OR_RETURN(Json started, runner.CallAsSystem("graph.start", start));
  Run run = RunFromJson(started);
  Loop loop{.runner = runner, .def = g.def};
  loop.run_id = run.id;
  loop.token = id["token"].get<std::string>();
  loop.workdir = workdir;
  loop.wait_for_human = in.value("wait_for_human", true);
  loop.context = std::move(run.context);
  loop.history = Json::array();
  loop.cursor = run.cursor.value_or("");
  loop.seq = run.cursor_index.value_or(0);
  return loop.Run(run.status);
}

Result<Json> ResumeGraph(OpRunner& runner, const Json& in) {
  const std::string run_id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Json shown, runner.CallAsSystem("run.show", {{"id", run_id}}));
  const Run run = RunFromJson(shown);
  if (run.profile != "graph") {
    return FailedPreconditionError("id: run " + run_id + " is a " + run.profile +
                                   " run, not a graph workflow run");
  }
  const Json stored = run.meta.value("graph", Json::object()).value("definition", Json::object());
  Json source = Json::object();
  bool stored_text = false;
  if (in.contains("file") || in.contains("text")) {
    for (const char* key : {"file", "text", "source"}) {
      if (in.contains(key)) source[key] = in[key];
    }
  } else if (!stored.value("file", "").empty()) {
    // The file again: an edited definition applies from the current node.
    source["file"] = stored["file"];
  } else {
    ASSIGN_OR_RETURN(Json text, runner.CallAsSystem("graph.definition", {{"id", run_id}}));
    source = {{"text", text["text"]}, {"source", text.value("source", "<text>")}};
    stored_text = true;
  }
  std::set<std::string> used;
  ASSIGN_OR_RETURN(source, ScopeDefinition(runner, source, stored_text, used));
  ASSIGN_OR_RETURN(LoadedGraph g, LoadGraphDefinition(source));
  // The workdir was checked when the run started; each node's cwd is checked
  // again, for this definition and this caller.
  const std::string workdir =
      run.meta.value("graph", Json::object()).value("workdir", std::string());
  RETURN_IF_ERROR(ScopeNodes(runner, g.def, workdir, used));
  const Json id = RunnerId(runner, used);
  // A gone runner's node processes end here, not inside the take-over's
  // transaction: ending one may take its 2 s grace.
  const Json ended = EndInterruptedProcesses(run, NodeNames(g.def));
  ASSIGN_OR_RETURN(Json taken, runner.CallAsSystem("graph.take_over",
                                                   {{"run", run_id},
                                                    {"runner", id},
                                                    {"force", in.value("force", false)},
                                                    {"nodes", NodeNames(g.def)},
                                                    {"definition", DefinitionMeta(g)},
                                                    {"ended", ended}}));
  Run r = RunFromJson(taken["run"]);
  if (!taken["took_over"].get<bool>()) {
    return Json{{"run", run_id}, {"status", taken["status"]}, {"cursor", OrNull(r.cursor)},
                {"seq", OrNull(r.cursor_index)}, {"stopped", "held"}, {"nodes_run", 0},
                {"context", r.context}, {"runner", taken["runner"]}};
  }
  Loop loop{.runner = runner, .def = g.def};
  loop.run_id = run_id;
  loop.token = id["token"].get<std::string>();
  const Json& gm = r.meta.value("graph", Json::object());
  loop.workdir = gm.value("workdir", "");
  loop.wait_for_human = in.value("wait_for_human", true);
  loop.context = std::move(r.context);
  loop.history = r.meta.value("conversationHistory", Json::array());
  loop.cursor = r.cursor.value_or("");
  loop.seq = r.cursor_index.value_or(0);
  loop.interrupted = gm.value("attempt", int64_t{0});
  return loop.Run(taken["status"].get<std::string>());
}

}  // namespace baton
