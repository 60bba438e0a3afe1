// Graph workflows (docs/graph.md): checking and drawing definitions
// (graph.check, graph.mermaid: no store), running them (graph.run,
// graph.resume: procedures in graph_runner.cc), steering runs (pause,
// cancel, reset), time travel (checkpoints, checkpoint, fork, path) and
// retention (compact). graph.start, commit, take_over and release are the
// runner's own steps, for admins only.

#include <filesystem>

#include "baton/error_table.h"
#include "engine/core/core_services.h"
#include "engine/graph/graph_runs.h"
#include "model/graph_def.h"
#include "ops/api.h"
#include "ops/graph_runner.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

// "input" (an s::Input) with the three ways to give a definition.
Json WithDefinition(Json input) {
  Json& props = input["properties"];
  props["file"] = s::Path(
      "the definition's path, YAML or JSON (the CLI makes a relative one absolute); under the "
      "roots unless the caller holds the grant \"definitions\" (graph.run) or \"paths\"");
  props["text"] = s::String("the definition's text, instead of a file (graph.run and graph.resume: "
                            "needs the grant \"definitions\")",
                            static_cast<int>(kMaxGraphDefinitionBytes));
  props["source"] = s::String("the name messages give the text (default: the file)", 4096);
  return input;
}

Json DefinitionInput() { return WithDefinition(s::Input({})); }

// graph.check and graph.mermaid read a file the caller names: under the
// roots, unless the caller holds the grant "paths".
Result<GraphDef> LoadDefinition(const OpContext& ctx, Json in) {
  if (in.contains("file") && in["file"].is_string()) {
    if (!in.contains("source")) in["source"] = in["file"];
    ASSIGN_OR_RETURN(in["file"], ctx.ScopedPath("file", in["file"].get<std::string>()));
  }
  ASSIGN_OR_RETURN(LoadedGraph g, LoadGraphDefinition(in));
  return std::move(g.def);
}

Result<Json> GraphCheck(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(GraphDef def, LoadDefinition(ctx, in));
  Json nodes = Json::array();
  for (const GraphNode& n : def.nodes) {
    nodes.push_back({{"name", n.name}, {"type", n.type}, {"result_key", n.result_key}});
  }
  return Json{{"ok", true},
              {"id", def.id},
              {"source", def.source},
              {"entry", def.entry()},
              {"nodes", nodes}};
}

Result<Json> GraphMermaidOp(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(GraphDef def, LoadDefinition(ctx, in));
  return Json{{"mermaid", GraphMermaid(def)}};
}

Result<Json> GraphPathOp(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, id));
  ASSIGN_OR_RETURN(Json def_meta, ShowGraphDefinition(ctx, {{"id", id}}));
  ASSIGN_OR_RETURN(GraphDef def, ParseGraphDef(def_meta.value("text", ""), def_meta.value("source", id)));
  ASSIGN_OR_RETURN(Json listed, ListGraphCheckpoints(ctx, {{"id", id}}));
  GraphPath path;
  Json steps = Json::array();
  for (const Json& c : listed["checkpoints"]) {
    path.steps.push_back({c["seq"].get<int64_t>(), c["node"].get<std::string>(),
                          c["next"].get<std::string>(), c["outcome"].get<std::string>()});
    if (!c["node"].get<std::string>().empty()) {
      steps.push_back({{"seq", c["seq"]}, {"node", c["node"]}, {"next", c["next"]}, {"outcome", c["outcome"]}});
    }
  }
  if (run.status != "completed" && run.cursor) path.current = *run.cursor;
  return Json{{"run", id},
              {"status", run.status},
              {"path", steps},
              {"mermaid", GraphPathMermaid(def, path)}};
}

Json Str() { return {{"type", "string"}}; }
Json Int() { return {{"type", "integer"}}; }
Json Obj() { return {{"type", "object"}}; }

// What graph.run and graph.resume return.
Json RunnerOut() {
  return s::Entity({{"run", Str()},
                    {"status", Str()},
                    {"cursor", Str()},
                    {"seq", Int()},
                    {"stopped", Str()},
                    {"nodes_run", Int()},
                    {"context", Obj()}});
}

std::string RenderRunner(const Json& out) {
  std::string text = "run " + out["run"].get<std::string>() + ": " + out["status"].get<std::string>();
  const std::string stopped = out["stopped"].get<std::string>();
  if (stopped == "waiting") {
    text += ", waiting for the answer to question " + out.value("question", "") +
            " (baton question answer " + out.value("question", "") + " ...; then baton graph resume " +
            out["run"].get<std::string>() + ")";
  } else if (stopped == "held") {
    text += ", still run by " + out.value("runner", Json::object()).dump();
  } else if (stopped == "paused") {
    text += " at " + out["cursor"].get<std::string>() + " #" + out["seq"].dump();
  }
  text += "; " + out["nodes_run"].dump() + " node(s) run\n";
  return text;
}

// A run that ended failed is a failure to a script, though the call worked.
int RunnerExitCode(const Json& out) {
  return out.value("status", "") == "failed" ? kRunFailedExitCode : 0;
}

Json CheckpointOut() {
  return s::Entity({{"seq", Int()},
                    {"node", Str()},
                    {"outcome", Str()},
                    {"attempt", Int()},
                    {"next", Str()},
                    {"whole", {{"type", "boolean"}}},
                    {"folded", Int()},
                    {"duration_ms", Int()},
                    {"event_seq", s::Nullable("integer")},
                    {"bytes", Int()},
                    {"created_at", Str()}});
}

std::string RenderCheckpoints(const Json& out) {
  std::string text;
  for (const Json& c : out["checkpoints"]) {
    const std::string node = c["node"].get<std::string>();
    text += "#" + c["seq"].dump() + "  " + (node.empty() ? "(" + c["outcome"].get<std::string>() + ")" : node) +
            (c["outcome"] == "failed" ? " failed" : "") +
            (c["attempt"].get<int64_t>() > 1 ? " attempt " + c["attempt"].dump() : "") + " -> " +
            c["next"].get<std::string>() + "  " + c["created_at"].get<std::string>() + "\n";
  }
  return text + out["bytes"].dump() + " bytes stored\n";
}

}  // namespace

Status RegisterGraphOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "graph.check",
      .summary = "Check a graph workflow definition (YAML or JSON): every problem, naming the "
                 "file, node and field",
      .input_schema = DefinitionInput(),
      .output_schema = s::Entity(
          {{"ok", {{"type", "boolean"}}},
           {"id", Str()},
           {"source", Str()},
           {"entry", Str()},
           {"nodes",
            {{"type", "array"},
             {"items", s::Entity({{"name", Str()}, {"type", Str()}, {"result_key", Str()}})}}}}),
      .positional = {"file"},
      .handler = GraphCheck,
      .uses_store = false,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.mermaid",
      .summary = "A checked graph workflow definition as a Mermaid flowchart",
      .input_schema = DefinitionInput(),
      .output_schema = s::Entity({{"mermaid", Str()}}),
      .positional = {"file"},
      .handler = GraphMermaidOp,
      .uses_store = false,
      .render_text = [](const Json& out) { return out["mermaid"].get<std::string>(); },
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.run",
      .summary = "Run a graph workflow definition, checkpointing after every node, until END, "
                 "ERROR, a pause, a cancel or an unanswered human node",
      .input_schema = WithDefinition(s::Input(
          {{"id", s::Id("the new run's id (default: generated)")},
           {"title", s::String("the run's title (default: the definition's id)", 500)},
           {"project", s::Id("the project the run belongs to")},
           {"context", s::Object("keys that replace the definition's initialContext ones")},
           {"workdir", s::Path("where commands run and relative cwd options start "
                                    "(default: the runner's working directory)")},
           {"state_dir", s::Path("write the @sys/graph state file <state_dir>/<id>.json "
                                      "after every checkpoint (e.g. .graph-state)")},
           {"keep_last", s::Integer("retention: keep only the last N checkpoints (compacted "
                               "every 32 nodes)", 1, 1000000)},
           {"wait_for_human", s::Boolean("wait at a human node until its question is answered "
                                       "(default true); false leaves the run paused there")}})),
      .output_schema = RunnerOut(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .positional = {"file"},
      .uses_store = true,
      .render_text = RenderRunner,
      .exit_code = RunnerExitCode,
      .procedure = RunGraph,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.resume",
      .summary = "Resume a paused, failed or interrupted graph run from its last checkpoint (a "
                 "node a crash interrupted runs again)",
      .input_schema = WithDefinition(s::Input(
          {{"id", s::Id("the run")},
           {"force", s::Boolean("take the run from a runner on another host that may be alive")},
           {"wait_for_human", s::Boolean("wait at a human node until its question is answered "
                                       "(default true)")}},
          {"id"})),
      .output_schema = RunnerOut(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .positional = {"id"},
      .render_text = RenderRunner,
      .exit_code = RunnerExitCode,
      .procedure = ResumeGraph,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.pause",
      .summary = "Pause a graph run after the node it is running (resume continues it)",
      .input_schema = s::Input({{"id", s::Id("the run")}, {"reason", s::String("why", 2000)}}, {"id"}),
      .output_schema = s::RunOut(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .idempotent = true,
      .positional = {"id"},
      .handler = PauseGraphRun,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.cancel",
      .summary = "Cancel a graph run for good (it fails; open questions are cancelled; it cannot "
                 "be resumed, only forked)",
      .input_schema = s::Input({{"id", s::Id("the run")}, {"reason", s::String("why", 2000)}}, {"id"}),
      .output_schema = s::RunOut(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .idempotent = true,
      .destructive = true,
      .positional = {"id"},
      .handler = CancelGraphRun,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.reset",
      .summary = "Start a graph run over: pending at the entry node with the initial context "
                 "(its checkpoints stay)",
      .input_schema = s::Input({{"id", s::Id("the run")},
                                {"force", s::Boolean("even if a runner on another host may hold it")}},
                               {"id"}),
      .output_schema = s::RunOut(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .destructive = true,
      .positional = {"id"},
      .handler = ResetGraphRun,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.checkpoints",
      .summary = "A graph run's checkpoints, oldest first: node, outcome, next node, size",
      .input_schema = s::Input({{"id", s::Id("the run")},
                                {"with_state", s::Boolean("include the state after each")}},
                               {"id"}),
      .output_schema = s::Entity({{"run", Str()},
                                  {"checkpoints", {{"type", "array"}, {"items", CheckpointOut()}}},
                                  {"bytes", Int()}}),
      .positional = {"id"},
      .handler = ListGraphCheckpoints,
      .render_text = RenderCheckpoints,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.checkpoint",
      .summary = "One checkpoint of a graph run with the state after it",
      .input_schema = s::Input({{"id", s::Id("the run")}, {"seq", s::Integer("the checkpoint's seq", 0, INT64_MAX)}},
                               {"id", "seq"}),
      .output_schema = s::Entity({{"run", Str()}, {"seq", Int()}, {"node", Str()}, {"next", Str()}, {"state", Obj()}}),
      .positional = {"id"},
      .handler = ShowGraphCheckpoint,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.fork",
      .summary = "A new graph run that goes on from a checkpoint of another, optionally with "
                 "context keys changed (the original is not touched)",
      .input_schema = s::Input({{"id", s::Id("the run to fork")},
                                {"seq", s::Integer("the checkpoint to go on from", 0, INT64_MAX)},
                                {"new_id", s::Id("the new run's id (default: generated)")},
                                {"title", s::String("the new run's title", 500)},
                                {"context", s::Object("context keys to set (null removes one)")}},
                               {"id", "seq"}),
      .output_schema = s::RunOut(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .positional = {"id"},
      .handler = ForkGraphRun,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.compact",
      .summary = "Drop a graph run's old checkpoints (keep the last N, or those younger than T); "
                 "never the latest, a question's or a fork's",
      .input_schema = s::Input({{"id", s::Id("the run")},
                                {"keep_last", s::Integer("keep the last N checkpoints", 1, 1000000)},
                                {"older_than_ms", s::Integer("drop checkpoints older than this", 1, INT64_MAX)}},
                               {"id"}),
      .output_schema = s::Entity({{"run", Str()}, {"removed", Int()}, {"kept", Int()},
                                  {"bytes_before", Int()}, {"bytes_after", Int()}}),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .destructive = true,
      .positional = {"id"},
      .handler = CompactGraphCheckpoints,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.definition",
      .summary = "The definition a graph run uses: id, source file, hash and text",
      .input_schema = s::Input({{"id", s::Id("the run")}}, {"id"}),
      .output_schema = s::Entity({{"run", Str()}, {"id", Str()}, {"source", Str()}, {"file", Str()},
                                  {"hash", Str()}, {"text", Str()}}),
      .positional = {"id"},
      .handler = ShowGraphDefinition,
      .render_text = [](const Json& out) { return out["text"].get<std::string>(); },
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.path",
      .summary = "A graph run's path: the executions in order, and its definition as a Mermaid "
                 "flowchart with the path drawn on it",
      .input_schema = s::Input({{"id", s::Id("the run")}}, {"id"}),
      .output_schema = s::Entity({{"run", Str()}, {"status", Str()},
                                  {"path", {{"type", "array"}}}, {"mermaid", Str()}}),
      .positional = {"id"},
      .handler = GraphPathOp,
      .render_text = [](const Json& out) { return out["mermaid"].get<std::string>(); },
  }));

  // The runner's own steps (graph_runner.cc calls them as baton itself).
  const Json runner_id = s::Entity({{"token", Str()}, {"host", Str()}, {"pid", Int()}, {"start", Int()}});
  RETURN_IF_ERROR(r.Add({
      .name = "graph.start",
      .summary = "Runner step: create a graph run and its first checkpoint",
      .input_schema = s::Input({{"id", s::Id("the run's id")},
                                {"title", s::String("title", 500)},
                                {"project", s::Id("project")},
                                {"definition", Obj()},
                                {"entry", Str()},
                                {"context", Obj()},
                                {"workdir", Str()},
                                {"state_dir", Str()},
                                {"keep_last", s::Integer("retention", 1, 1000000)},
                                {"runner", runner_id}},
                               {"definition", "entry", "context", "runner"}),
      .output_schema = s::RunOut(),
      .roles = {"admin"},
      .mutating = true,
      .handler = StartGraphRun,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.commit",
      .summary = "Runner step: one node's checkpoint (result, context, next node, event)",
      .input_schema = s::Input({{"run", s::Id("the run")},
                                {"runner", Str()},
                                {"seq", Int()},
                                {"node", Str()},
                                {"attempt", Int()},
                                {"success", {{"type", "boolean"}}},
                                {"result_key", Str()},
                                {"result", Obj()},
                                {"updates", Obj()},
                                {"removed", {{"type", "array"}, {"items", Str()}}},
                                {"history_append", {{"type", "array"}}},
                                {"duration_ms", Int()},
                                {"error", Str()},
                                {"retried", {{"type", "array"}}},
                                {"next", Str()},
                                {"route_error", Str()}},
                               {"run", "runner", "seq", "node", "result_key", "result"}),
      .output_schema = s::Entity({{"run", Str()}, {"status", Str()}, {"cursor", Str()},
                                  {"seq", Int()}, {"stop", {{"type", "boolean"}}}, {"reason", Str()}}),
      .roles = {"admin"},
      .mutating = true,
      .handler = CommitGraphNode,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.node_process",
      .summary = "Runner step: record the process group a node's program runs in, before it starts",
      .input_schema = s::Input({{"run", s::Id("the run")},
                                {"runner", Str()},
                                {"seq", Int()},
                                {"node", Str()},
                                {"pgid", s::Integer("the process group's id", 2, INT32_MAX)},
                                {"start", s::Integer("its leader's start, in clock ticks after boot",
                                                     -1, INT64_MAX)}},
                               {"run", "runner", "seq", "node", "pgid", "start"}),
      .output_schema = s::Entity({{"recorded", {{"type", "boolean"}}}, {"process", Obj()}}),
      .roles = {"admin"},
      .mutating = true,
      .handler = RecordGraphNodeProcess,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "graph.take_over",
      .summary = "Runner step: take a graph run to resume it",
      .input_schema = s::Input({{"run", s::Id("the run")},
                                {"runner", runner_id},
                                {"force", {{"type", "boolean"}}},
                                {"nodes", {{"type", "array"}, {"items", Str()}}},
                                {"definition", Obj()},
                                {"ended", {{"type", "array"}, {"items", Obj()}}}},
                               {"run", "runner", "nodes", "definition"}),
      .output_schema = s::Entity({{"took_over", {{"type", "boolean"}}}, {"status", Str()}, {"run", Obj()}}),
      .roles = {"admin"},
      .mutating = true,
      .handler = TakeOverGraphRun,
  }));
  return r.Add({
      .name = "graph.release",
      .summary = "Runner step: give a graph run up without a checkpoint",
      .input_schema = s::Input({{"run", s::Id("the run")}, {"runner", Str()}, {"reason", s::String("why", 2000)}},
                               {"run", "runner"}),
      .output_schema = s::Entity({{"released", {{"type", "boolean"}}}}),
      .roles = {"admin"},
      .mutating = true,
      .handler = ReleaseGraphRun,
  });
}

}  // namespace baton
