#include "engine/graph/graph_runs.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <filesystem>
#include <set>

#include "engine/core/core_services.h"
#include "engine/graph/graph_runs_internal.h"
#include "engine/interchange/imports.h"
#include "engine/ledger/ledger.h"
#include "engine/core/questions.h"
#include "formats/graph_format.h"
#include "model/graph_def.h"
#include "model/graph_delta.h"
#include "store/tables/graph_checkpoint_table.h"
#include "store/tables/graph_definition_table.h"
#include "store/tables/graph_message_table.h"
#include "store/tables/question_table.h"
#include "store/tables/run_table.h"
#include "util/clock.h"
#include "util/json_or_null.h"
#include "util/subprocess.h"

namespace baton {
namespace {

// Compaction runs by itself every this many checkpoints of a run that has
// a keep_last policy.
constexpr int64_t kAutoCompactEvery = 32;

}  // namespace

namespace graph_internal {


Json& GraphMeta(Run& run) {
  Json& g = run.meta["graph"];
  if (!g.is_object()) g = Json::object();
  return g;
}

static Json& History(Run& run) {
  Json& h = run.meta["conversationHistory"];
  if (!h.is_array()) h = Json::array();
  return h;
}

// The run, which must be a graph run.
static Status CheckGraphRun(const Run& run) {
  if (run.profile == "graph") return Status();
  return FailedPreconditionError("run: " + run.id + " is a " + run.profile +
                                 " run, not a graph workflow run");
}

Result<Run> LoadGraphRun(Txn& txn, const std::string& id, RunConversation conversation) {
  ASSIGN_OR_RETURN(Run run, LoadRunRow(txn, id, conversation));
  RETURN_IF_ERROR(CheckGraphRun(run));
  return run;
}

Status StoreGraphRun(OpContext& ctx, const Run& run) {
  return StoreGraphRunRow(ctx.txn, run, ctx.now);
}

// MoveRunStatus, where staying in the same status is no move.
static Status MoveStatus(OpContext& ctx, Run& run, const std::string& to, const std::string& reason) {
  if (run.status == to) return Status();
  return MoveRunStatus(ctx, run, to, reason).WithPrefix("run " + run.id);
}

// The graph state a checkpoint holds: the context plus the conversation.
Json StateOf(const Run& run) {
  Json state = run.context.is_object() ? run.context : Json::object();
  const Json& h = run.meta.value("conversationHistory", Json::array());
  state[kGraphHistoryKey] = h.is_array() ? h : Json::array();
  return state;
}

static void SetState(Run& run, Json state) {
  auto h = state.find(kGraphHistoryKey);
  run.meta["conversationHistory"] = h != state.end() ? *h : Json::array();
  if (h != state.end()) state.erase(h);
  run.context = std::move(state);
}

// Where "run" stands, as a refused runner step says it: the cursor and its
// index as JSON ("PLAN" #3; null when unset).
static std::string CursorText(const Run& run) {
  return OrNull(run.cursor).dump() + " #" + OrNull(run.cursor_index).dump();
}

// A checkpoint holding the run's whole state: where a run starts, is
// reset, or is forked from another.
Status InsertWholeCheckpoint(OpContext& ctx, const Run& run, int64_t seq, const std::string& outcome,
                             const std::string& next, std::optional<int64_t> event_seq) {
  Checkpoint c;
  c.seq = seq;
  c.outcome = outcome;
  c.attempt = 0;
  c.next = next;
  c.base = StateOf(run);
  c.event_seq = event_seq;
  return InsertGraphCheckpoint(ctx.txn, run.id, c, ctx.now);
}

// Whether the process "runner" names may still be running the run: on this
// host, its pid exists; on another host we cannot tell, so it may.
static bool RunnerMayBeAlive(const Json& runner) {
  if (!runner.is_object()) return false;
  if (JsonText(runner, "host") != HostName()) return true;
  const int64_t pid = runner.value("pid", int64_t{0});
  if (pid <= 0 || pid > INT_MAX) return false;
  const int64_t recorded = runner.value("start", int64_t{-1});
  if (recorded < 0) {
    // Its start time could not be read: the pid alone must do.
    return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  }
  return ProcessStartTicks(pid) == recorded;
}

// Cancels the run's open questions (a human node's), saying why.
static Status CancelOpenQuestions(OpContext& ctx, const std::string& run_id, const std::string& why) {
  ASSIGN_OR_RETURN(std::vector<Question> open, OpenQuestionRows(ctx.txn, run_id));
  for (const Question& q : open) {
    RETURN_IF_ERROR(CancelQuestion(ctx, {{"id", q.id}, {"run", run_id}, {"reason", why}}).status());
  }
  return Status();
}

// How long a node's process group gets between SIGTERM and SIGKILL when a
// resume ends it.
constexpr int64_t kProcessGraceMillis = 2000;

// Ends one recorded process group on this host; says what became of it.
static Json EndRecordedProcess(Json p) {
  if (JsonText(p, "host") != HostName()) {
    p["ended"] = "left running: it is on host " + JsonText(p, "host");
  } else {
    p["ended"] = EndProcessGroup(p.value("pgid", int64_t{0}), p.value("start", int64_t{-1}),
                                 kProcessGraceMillis);
  }
  return p;
}

// Forgets the process groups recorded for the current node (graph.node_process)
// and returns each with what became of it: as "already" says for those the
// resume ended before its transaction, else ended now.
static Json EndNodeProcesses(Json& g, const Json& already) {
  Json ended = Json::array();
  if (!g.contains("processes") || !g["processes"].is_array()) return ended;
  for (const Json& p : g["processes"]) {
    if (!p.is_object()) continue;
    const auto same = std::find_if(already.begin(), already.end(), [&](const Json& e) {
      return e.is_object() && e.value("pgid", int64_t{0}) == p.value("pgid", int64_t{0}) &&
             e.value("start", int64_t{-1}) == p.value("start", int64_t{-1}) &&
             e.value("host", "") == HostName() && e.value("ended", Json()).is_string();
    });
    if (same != already.end()) {
      Json done = p;
      done["ended"] = (*same)["ended"];
      ended.push_back(std::move(done));
    } else {
      ended.push_back(EndRecordedProcess(p));
    }
  }
  g.erase("processes");
  return ended;
}

static std::string RunnerName(const Json& runner) {
  return "pid " + std::to_string(runner.value("pid", int64_t{0})) + " on " + JsonText(runner, "host");
}

static Json NewRunner(const OpContext& ctx, const Json& in) {
  Json r = in.at("runner");
  r["since"] = ctx.now;
  return r;
}

// Keeps the definition's text once, by its hash, and returns the
// definition as the run's meta holds it (without the text): a run's row is
// read and written at every node, so it stays small.
static Result<Json> StoreDefinition(OpContext& ctx, Json definition) {
  const std::string hash = JsonText(definition, "hash");
  if (hash.empty() || !definition.contains("text") || !definition["text"].is_string()) {
    return InvalidArgumentError("definition: needs its text and hash, as strings");
  }
  for (const char* key : {"id", "source", "file"}) {
    if (definition.contains(key) && !definition[key].is_string()) {
      return InvalidArgumentError(std::string("definition.") + key + ": must be a string");
    }
  }
  RETURN_IF_ERROR(
      KeepGraphDefinition(ctx.txn, hash, definition["text"].get<std::string>(), ctx.now));
  definition.erase("text");
  return definition;
}

// InvalidArgument when a key of "keys" (an object's, or an array of names)
// is one of the engine's own ("__..."): they would bypass the checkpoint's
// bookkeeping of the conversation.
Status CheckUserKeys(const Json& keys, const std::string& field) {
  auto check = [&](const std::string& k) -> Status {
    if (k.rfind("__", 0) == 0) {
      return InvalidArgumentError(field + "." + k + ": keys starting with __ are the engine's own");
    }
    return Status();
  };
  if (keys.is_object()) {
    for (auto it = keys.begin(); it != keys.end(); ++it) RETURN_IF_ERROR(check(it.key()));
  } else {
    for (const Json& k : keys) RETURN_IF_ERROR(check(k.is_string() ? k.get<std::string>() : ""));
  }
  return Status();
}

Status BindStateMirror(OpContext& ctx, const std::string& run_id, const std::string& state_dir) {
  if (state_dir.empty()) return Status();
  const std::string path =
      (std::filesystem::path(state_dir) / GraphStateFileName(run_id)).lexically_normal().string();
  return BindMirror(ctx, {{"run", run_id}, {"format", "graph"}, {"path", path}}).status();
}

}  // namespace graph_internal

Json EndInterruptedProcesses(const Run& run, const Json& nodes) {
  Json ended = Json::array();
  const Json g = run.meta.value("graph", Json::object());
  const Json runner = g.value("runner", Json());
  const std::string cursor = run.cursor.value_or("");
  // Only what the take-over will certainly find interrupted: a running run
  // whose runner is gone (a forced take-over of a live runner ends its
  // processes inside the transaction, so that runner's late commit is
  // refused), at a node the definition still has.
  bool known = cursor == kGraphEnd;
  for (const Json& n : nodes) known = known || n == cursor;
  if (run.status != "running" || !runner.is_object() ||
      g.value("cancelled", false) || graph_internal::RunnerMayBeAlive(runner) || !known ||
      !g.value("processes", Json()).is_array()) {
    return ended;
  }
  for (const Json& p : g["processes"]) {
    if (p.is_object() && p.value("host", "") == HostName()) {
      ended.push_back(graph_internal::EndRecordedProcess(p));
    }
  }
  return ended;
}

namespace {

using graph_internal::BindStateMirror;
using graph_internal::CancelOpenQuestions;
using graph_internal::CheckUserKeys;
using graph_internal::Checkpoint;
using graph_internal::Compact;
using graph_internal::CursorText;
using graph_internal::EndNodeProcesses;
using graph_internal::GraphMeta;
using graph_internal::History;
using graph_internal::InsertWholeCheckpoint;
using graph_internal::LoadGraphRun;
using graph_internal::MoveStatus;
using graph_internal::NewRunner;
using graph_internal::RunnerMayBeAlive;
using graph_internal::RunnerName;
using graph_internal::SetState;
using graph_internal::StateOf;
using graph_internal::StoreDefinition;
using graph_internal::StoreGraphRun;

}  // namespace

Result<Json> StartGraphRun(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Json definition, StoreDefinition(ctx, in.at("definition")));
  Json meta = {{"graph",
                {{"definition", definition},
                 {"workdir", in.value("workdir", "")},
                 {"entry", in.at("entry")},
                 {"initial", in.at("context")},
                 {"runner", NewRunner(ctx, in)},
                 {"attempt", 0}}},
               {"conversationHistory", Json::array()}};
  if (in.contains("keep_last")) meta["graph"]["keep_last"] = in["keep_last"];
  if (in.contains("state_dir")) meta["graph"]["state_dir"] = in["state_dir"];
  Json create = {{"profile", "graph"}, {"context", in.at("context")}, {"meta", meta},
                 {"title", in.value("title", in["definition"].value("id", ""))}};
  for (const char* key : {"id", "project"}) {
    if (in.contains(key)) create[key] = in[key];
  }
  ASSIGN_OR_RETURN(Run run, MakeRun(ctx, create));
  const std::string id = run.id;
  const std::string entry = in.at("entry").get<std::string>();
  RETURN_IF_ERROR(MoveStatus(ctx, run, "running", "graph " + in["definition"].value("id", "") + " started"));
  run.cursor = entry;
  run.cursor_index = 1;
  ASSIGN_OR_RETURN(int64_t event,
                   AppendEvent(ctx, {.run_id = id,
                                     .kind = "graph.started",
                                     .summary = "graph " + in["definition"].value("id", "") +
                                                " from " + in["definition"].value("source", "") +
                                                ", entry " + entry,
                                     .payload = {{"definition", in["definition"].value("id", "")},
                                                 {"source", in["definition"].value("source", "")},
                                                 {"hash", in["definition"].value("hash", "")},
                                                 {"entry", entry},
                                                 {"runner", meta["graph"]["runner"]}}}));
  RETURN_IF_ERROR(StoreGraphRun(ctx, run));
  RETURN_IF_ERROR(InsertWholeCheckpoint(ctx, run, 0, "start", entry, event));
  RETURN_IF_ERROR(BindStateMirror(ctx, id, in.value("state_dir", "")));
  return AnswerRun(ctx.txn, id);
}

namespace {

// Aborted unless the runner token "in" presents still holds the run whose
// graph meta is "g"; the message ends with what follows for the caller.
Status CheckRunnerHolds(const std::string& id, const Json& g, const Json& in,
                        const std::string& consequence) {
  if (g.contains("runner") && JsonText(g["runner"], "token") == in.at("runner").get<std::string>()) {
    return Status();
  }
  return AbortedError("run " + id + ": this runner no longer holds the run (" +
                      (g.contains("runner") ? "it was resumed by " + RunnerName(g["runner"])
                                            : std::string("no runner holds it")) +
                      "); " + consequence);
}

}  // namespace

Result<Json> CommitGraphNode(OpContext& ctx, const Json& in) {
  const std::string id = in.at("run").get<std::string>();
  // The context is patched and the conversation appended to: neither is
  // read (a node costs what it changed, not what the state holds).
  ASSIGN_OR_RETURN(Run run, LoadRunRowWithoutState(ctx.txn, id));
  RETURN_IF_ERROR(graph_internal::CheckGraphRun(run));
  Json& g = GraphMeta(run);
  const std::string node = in.at("node").get<std::string>();
  const int64_t seq = in.at("seq").get<int64_t>();
  RETURN_IF_ERROR(CheckRunnerHolds(id, g, in, "the result of " + node + " #" +
                                                  std::to_string(seq) + " is dropped"));
  if (run.cursor != node || run.cursor_index != seq) {
    return AbortedError("run " + id + ": at " + CursorText(run) + ", not " + node + " #" +
                        std::to_string(seq));
  }
  if (in.contains("next") == in.contains("route_error")) {
    return InvalidArgumentError("next: give exactly one of next and route_error");
  }
  RETURN_IF_ERROR(CheckUserKeys(in.value("updates", Json::object()), "updates"));
  RETURN_IF_ERROR(CheckUserKeys(in.value("removed", Json::array()), "removed"));
  RETURN_IF_ERROR(CheckUserKeys(Json::array({in.at("result_key")}), "result_key"));
  // The node's changes, merged as the runner merged them for routing; they
  // are the checkpoint's delta, and all the commit writes of the state: the
  // context's keys it set or removed, the messages it appended.
  const std::string result_key = in.at("result_key").get<std::string>();
  const Json delta = NodeOutcomeDelta(result_key, in.at("result"),
                                      in.value("updates", Json::object()),
                                      in.value("removed", Json::array()),
                                      in.value("history_append", Json::array()));
  RETURN_IF_ERROR(PatchGraphContextRow(ctx.txn, id, delta.value("set", Json::object()),
                                     delta.value("unset", Json::array())));
  if (auto append = delta.find("append"); append != delta.end()) {
    RETURN_IF_ERROR(AppendGraphMessages(ctx.txn, id, append->at(kGraphHistoryKey)));
  }

  const bool route_failed = in.contains("route_error");
  const std::string next = route_failed ? node : in.at("next").get<std::string>();
  const int64_t attempt = in.value("attempt", int64_t{1});
  const bool success = in.value("success", true);
  std::string summary = node + " #" + std::to_string(seq);
  if (attempt > 1) summary += " (attempt " + std::to_string(attempt) + ")";
  if (route_failed) {
    summary += ": routing failed: " + in["route_error"].get<std::string>();
  } else {
    summary += " -> " + next;
    if (!success) summary += " (unsuccessful: " + in.value("error", std::string("no detail")) + ")";
  }
  Json payload = {{"node", node},       {"seq", seq},
                  {"attempt", attempt}, {"success", success},
                  {"next", next},       {"result_key", result_key},
                  {"duration_ms", in.value("duration_ms", int64_t{0})}};
  if (in.contains("error")) payload["error"] = in["error"];
  if (route_failed) payload["route_error"] = in["route_error"];
  if (in.contains("retried")) payload["retried"] = in["retried"];
  ASSIGN_OR_RETURN(int64_t event,
                   AppendEvent(ctx, {.run_id = id,
                                     .kind = route_failed ? "graph.node.failed" : "graph.node.completed",
                                     .summary = summary,
                                     .payload = payload}));
  Checkpoint c;
  c.seq = seq;
  c.node = node;
  c.outcome = route_failed ? "failed" : "completed";
  c.attempt = attempt;
  c.next = next;
  c.delta = std::move(delta);
  c.duration_ms = in.value("duration_ms", int64_t{0});
  c.event_seq = event;
  RETURN_IF_ERROR(InsertGraphCheckpoint(ctx.txn, id, c, ctx.now));

  // What changes in meta.graph, written as that (the rest of the meta — the
  // initial context among it — is not rewritten at every node).
  Json graph_set = {{"attempt", 0}};
  run.cursor = next;
  run.cursor_index = seq + 1;
  std::string reason;
  const std::string status = run.status;
  const bool cancelled = g.value("cancelled", false);  // its reason stays
  if (route_failed) {
    if (!cancelled) graph_set["last_error"] = in["route_error"];
    if (status != "failed") RETURN_IF_ERROR(MoveStatus(ctx, run, "failed", in["route_error"].get<std::string>()));
    reason = "failed";
  } else if (next == kGraphEnd || next == kGraphError) {
    if (status == "paused") RETURN_IF_ERROR(MoveStatus(ctx, run, "running", "reached " + next));
    if (next == kGraphEnd) {
      if (run.status == "running") RETURN_IF_ERROR(MoveStatus(ctx, run, "completed", "reached END"));
      reason = "completed";
    } else {
      if (!cancelled) graph_set["last_error"] = node + " routed to ERROR";
      if (run.status != "failed") RETURN_IF_ERROR(MoveStatus(ctx, run, "failed", node + " routed to ERROR"));
      reason = "failed";
    }
  } else if (status != "running") {
    reason = cancelled ? "cancelled" : status;
  } else if (g.value("pause_requested", false)) {
    // Asked while a human node's question held the run paused.
    RETURN_IF_ERROR(MoveStatus(ctx, run, "paused", "pause asked while waiting for an answer"));
    reason = "paused";
  }
  // The node's programs have ended: nothing to end at a resume.
  Json graph_unset = {"pause_requested", "processes"};
  if (!reason.empty()) graph_unset.push_back("runner");
  RETURN_IF_ERROR(StoreGraphStepRow(ctx.txn, run, graph_set, graph_unset, ctx.now));
  if (g.contains("keep_last") && seq % kAutoCompactEvery == 0) {
    RETURN_IF_ERROR(Compact(ctx, id, g["keep_last"].get<int64_t>(), 0).status());
  }
  return Json{{"run", id},
              {"status", run.status},
              {"cursor", next},
              {"seq", seq + 1},
              {"stop", !reason.empty()},
              {"reason", reason}};
}

Result<Json> TakeOverGraphRun(OpContext& ctx, const Json& in) {
  const std::string id = in.at("run").get<std::string>();
  ASSIGN_OR_RETURN(Run run, LoadGraphRun(ctx.txn, id));
  Json& g = GraphMeta(run);
  const std::string status = run.status;
  const std::string cursor = run.cursor.value_or("");
  if (g.value("cancelled", false)) {
    return FailedPreconditionError("run " + id + " was cancelled, and a cancelled run cannot be "
                                   "resumed; fork it from a checkpoint to go on from there "
                                   "(baton graph checkpoints " + id + ")");
  }
  if (status == "completed") return FailedPreconditionError("run " + id + " is completed; there is nothing to resume");
  if (cursor == kGraphError) {
    return FailedPreconditionError("run " + id + " reached ERROR (" + JsonText(g, "last_error") +
                                   "); fork it from an earlier checkpoint to try again");
  }
  RETURN_IF_ERROR(CheckNoOpenQuestion(ctx.txn, id));
  const Json old = g.value("runner", Json());
  if (old.is_object() && RunnerMayBeAlive(old) && !in.value("force", false)) {
    if (status == "paused") {
      RETURN_IF_ERROR(MoveStatus(ctx, run, "running", "resumed; " + RunnerName(old) + " runs it"));
      RETURN_IF_ERROR(StoreGraphRun(ctx, run));
    } else if (status != "running") {
      return FailedPreconditionError("run " + id + " is " + status + " and " + RunnerName(old) +
                                     " still holds it");
    }
    return Json{{"took_over", false}, {"runner", old}, {"status", run.status},
                {"run", RunToJson(run)}};
  }
  if (cursor.empty()) {
    return FailedPreconditionError("run " + id + " has no current node to resume at");
  }
  bool known = cursor == kGraphEnd;
  for (const Json& n : in.at("nodes")) known = known || n == cursor;
  if (!known) {
    return FailedPreconditionError(
        "run " + id + ": the definition " + in["definition"].value("source", "") +
        " no longer has node " + cursor + ", where the run stands; restore the node, or fork "
        "the run from a checkpoint whose next node exists");
  }
  // Running with a runner that is gone: it died inside the current node.
  // Running without one: a runner gave it up (graph.release) and an answer
  // or a resume set it going again; nothing was interrupted.
  const bool interrupted = status == "running" && old.is_object();
  if (interrupted) {
    g["attempt"] = g.value("attempt", int64_t{0}) + 1;
    // What the dead runner's node started may still run: it ends before
    // the node runs again, so the two never run side by side.
    const Json ended = EndNodeProcesses(g, in.value("ended", Json::array()));
    std::string summary = cursor + " #" + OrNull(run.cursor_index).dump() + " was interrupted (" +
                          RunnerName(old) + " is gone); it runs again";
    for (const Json& e : ended) {
      summary += "; process group " + e["pgid"].dump() + ": " + e["ended"].get<std::string>();
    }
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = id,
                                      .kind = "graph.node.interrupted",
                                      .summary = summary,
                                      .payload = {{"node", cursor},
                                                  {"seq", OrNull(run.cursor_index)},
                                                  {"interrupted", g["attempt"]},
                                                  {"runner", old},
                                                  {"processes", ended}}})
                        .status());
  } else if (status != "running") {
    RETURN_IF_ERROR(MoveStatus(ctx, run, "running", "resumed at " + cursor));
  }
  g["runner"] = NewRunner(ctx, in);
  ASSIGN_OR_RETURN(g["definition"], StoreDefinition(ctx, in.at("definition")));
  if (!run.cursor_index) run.cursor_index = 1;  // an imported run
  if (!g.contains("entry")) g["entry"] = in.at("nodes").empty() ? Json(cursor) : in["nodes"][0];
  if (!g.contains("initial")) g["initial"] = run.context;
  ASSIGN_OR_RETURN(const bool any, HasGraphCheckpoints(ctx.txn, id));
  if (!any) {
    // A run baton did not start (imported from a .graph-state file) gets
    // its first checkpoint: the state it holds now.
    RETURN_IF_ERROR(
        InsertWholeCheckpoint(ctx, run, *run.cursor_index - 1, "start", cursor, std::nullopt));
  }
  g.erase("last_error");
  RETURN_IF_ERROR(StoreGraphRun(ctx, run));
  return Json{{"took_over", true}, {"interrupted", interrupted}, {"status", run.status},
              {"run", RunToJson(run)}};
}

Result<Json> RecordGraphNodeProcess(OpContext& ctx, const Json& in) {
  const std::string id = in.at("run").get<std::string>();
  // Once per program a node starts: it reads and writes only meta.graph.
  ASSIGN_OR_RETURN(Run run, LoadGraphRun(ctx.txn, id, RunConversation::kWithout));
  Json& g = GraphMeta(run);
  const std::string node = in.at("node").get<std::string>();
  const int64_t seq = in.at("seq").get<int64_t>();
  RETURN_IF_ERROR(CheckRunnerHolds(id, g, in, node + " #" + std::to_string(seq) +
                                                  " must not start its program"));
  if (run.cursor != node || run.cursor_index != seq) {
    return AbortedError("run " + id + ": at " + CursorText(run) + ", not " + node + " #" +
                        std::to_string(seq));
  }
  const int64_t pgid = in.at("pgid").get<int64_t>();
  Json process = {{"pgid", pgid},
                  {"start", in.at("start")},
                  {"host", JsonText(g["runner"], "host")},
                  {"node", node},
                  {"seq", seq},
                  {"since", ctx.now}};
  if (!g.contains("processes") || !g["processes"].is_array()) g["processes"] = Json::array();
  g["processes"].push_back(process);
  RETURN_IF_ERROR(
      StoreGraphStepRow(ctx.txn, run, {{"processes", g["processes"]}}, Json::array(), ctx.now));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = id,
                                    .kind = "graph.process",
                                    .summary = node + " #" + std::to_string(seq) +
                                               " runs its program as process group " +
                                               std::to_string(pgid),
                                    .payload = process})
                      .status());
  return Json{{"recorded", true}, {"process", process}};
}

Result<Json> ReleaseGraphRun(OpContext& ctx, const Json& in) {
  const std::string id = in.at("run").get<std::string>();
  ASSIGN_OR_RETURN(Run run, LoadGraphRun(ctx.txn, id, RunConversation::kWithout));
  Json& g = GraphMeta(run);
  if (!g.contains("runner") || JsonText(g["runner"], "token") != in.at("runner").get<std::string>()) {
    return Json{{"released", false}};
  }
  const std::string who = RunnerName(g["runner"]);
  RETURN_IF_ERROR(StoreGraphStepRow(ctx.txn, run, Json::object(), Json::array({"runner", "processes"}),
                                    ctx.now));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = id,
                                    .kind = "graph.released",
                                    .summary = who + " stopped running it: " + in.value("reason", ""),
                                    .payload = {{"reason", in.value("reason", "")}}})
                      .status());
  return Json{{"released", true}};
}

Result<Json> PauseGraphRun(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Run run, LoadGraphRun(ctx.txn, id));
  Json& g = GraphMeta(run);
  if (run.status == "paused") {
    // Paused by a human node's open question: the answer would set it
    // running again, so the pause waits for the node's end.
    if (!CheckNoOpenQuestion(ctx.txn, id).ok() && !g.value("pause_requested", false)) {
      g["pause_requested"] = true;
      RETURN_IF_ERROR(StoreGraphRun(ctx, run));
      RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = id,
                                        .kind = "graph.pause_requested",
                                        .summary = "pause after the human node is answered",
                                        .payload = {{"reason", in.value("reason", "")}}})
                          .status());
      return AnswerRun(ctx.txn, id);
    }
    return RunToJson(run);
  }
  RETURN_IF_ERROR(MoveStatus(ctx, run, "paused", in.value("reason", "paused by " + ctx.actor.id)));
  RETURN_IF_ERROR(StoreGraphRun(ctx, run));
  return AnswerRun(ctx.txn, id);
}

Result<Json> CancelGraphRun(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  RETURN_IF_ERROR(CancelOpenQuestions(ctx, id, "the run was cancelled"));
  ASSIGN_OR_RETURN(Run run, LoadGraphRun(ctx.txn, id));
  Json& g = GraphMeta(run);
  if (g.value("cancelled", false)) return RunToJson(run);
  const std::string reason = in.value("reason", "");
  RETURN_IF_ERROR(MoveStatus(ctx, run, "failed", "cancelled by " + ctx.actor.id + (reason.empty() ? "" : ": " + reason)));
  g["cancelled"] = true;
  g["last_error"] = "Execution cancelled by user";
  RETURN_IF_ERROR(StoreGraphRun(ctx, run));
  return AnswerRun(ctx.txn, id);
}

Result<Json> ResetGraphRun(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Run run, LoadGraphRun(ctx.txn, id));
  Json& g = GraphMeta(run);
  if (g.value("cancelled", false)) {
    return FailedPreconditionError("run " + id + " was cancelled; a cancelled run is not started "
                                   "again — fork it from a checkpoint instead");
  }
  if (g.contains("runner") && RunnerMayBeAlive(g["runner"]) && !in.value("force", false)) {
    return FailedPreconditionError("run " + id + " is being run by " + RunnerName(g["runner"]) +
                                   "; pause or cancel it first");
  }
  RETURN_IF_ERROR(CancelOpenQuestions(ctx, id, "the run was reset"));
  ASSIGN_OR_RETURN(run, LoadGraphRun(ctx.txn, id, RunConversation::kWithout));  // emptied below
  Json& graph = GraphMeta(run);
  RETURN_IF_ERROR(MoveStatus(ctx, run, "pending", "reset to the initial context"));
  const int64_t seq = run.cursor_index.value_or(1);
  const std::string entry = JsonText(graph, "entry");
  SetState(run, graph.value("initial", Json::object()));
  History(run) = Json::array();
  run.cursor = entry;
  run.cursor_index = seq + 1;
  for (const char* key : {"runner", "cancelled", "last_error"}) graph.erase(key);
  graph["attempt"] = 0;
  ASSIGN_OR_RETURN(int64_t event, AppendEvent(ctx, {.run_id = id,
                                                    .kind = "graph.reset",
                                                    .summary = "reset: starts again at " + entry +
                                                               " from the initial context",
                                                    .payload = {{"seq", seq}, {"entry", entry}}}));
  RETURN_IF_ERROR(InsertWholeCheckpoint(ctx, run, seq, "reset", entry, event));
  RETURN_IF_ERROR(StoreGraphRun(ctx, run));
  RETURN_IF_ERROR(StoreGraphContextRow(ctx.txn, id, run.context));
  RETURN_IF_ERROR(ReplaceGraphMessages(ctx.txn, id, History(run)));
  return AnswerRun(ctx.txn, id);
}

}  // namespace baton
