// File: graph_runs.h
//
// The store side of graph workflow runs (docs/graph.md "Running"): each
// function is one transaction of an operation. A run is a row of `runs`
// (profile graph, machine graph.run): cursor = the node to run next,
// cursor_index = that execution's number, context = the merged context,
// meta.conversationHistory, and meta.graph:
//
//   {definition: {id, source, file, hash}, workdir, initial,
//    runner: {token, host, pid, since} while a process runs it,
//    processes: [{pgid, start, host, node, seq, since}] the process groups
//      the current node's programs run in (see graph.node_process),
//    attempt (tries of the current execution that did not finish),
//    cancelled, last_error, keep_last, forked_from: {run, seq}}
//
// Every node's end is one checkpoint (CommitGraphNode): the node's result
// and the merged context, the next node and the ledger event commit together.
// `graph_checkpoints` keeps, per execution, what changed (graph_delta.h); the
// first kept checkpoint of a run holds the whole state in "base".
//
// graph_runs.cc holds a run's life (start, commit, take over, release,
// pause, cancel, reset), graph_history.cc its checkpoints (list, show, fork,
// compact, definition); graph_runs_internal.h is what they share.
//
// A runner is fenced by its token: a commit from a runner that lost the run
// (to a resume after it was presumed dead) is Aborted and changes nothing.

#ifndef BATON_SRC_ENGINE_GRAPH_GRAPH_RUNS_H_
#define BATON_SRC_ENGINE_GRAPH_GRAPH_RUNS_H_

#ifndef BATON_ENGINE_ROOM_GRAPH
#error "engine/graph/ is above this target: link baton_engine_graph (src/engine/README.md)"
#endif

#include "engine/ledger/op_context.h"
#include "model/run.h"

namespace baton {

// graph.start: creates the run, its first checkpoint (seq 0, outcome start)
// and, with "state_dir", its .graph-state mirror; the run is running, owned
// by "runner".
Result<Json> StartGraphRun(OpContext& ctx, const Json& in);

// graph.commit: one node's end — see the file comment. Returns
// {run, status, cursor, seq, stop, reason}: "stop" when the run ended or
// was paused or cancelled meanwhile.
Result<Json> CommitGraphNode(OpContext& ctx, const Json& in);

// graph.take_over: makes "runner" the run's runner for a resume. A run whose
// runner is alive (on this host: its pid exists; on another: unless "force")
// is only unpaused, with {took_over: false}. A run left running by a dead
// runner gets graph.node.interrupted for its current node, which runs again.
// Refused: completed runs, cancelled ones, runs that reached ERROR, runs
// waiting for a question's answer, and runs whose current node is not in
// "nodes" (the definition now in use).
// "ended": what EndInterruptedProcesses returned; the groups it does not
// name end here, inside the transaction (a group recorded after it looked).
Result<Json> TakeOverGraphRun(OpContext& ctx, const Json& in);

// What a take-over of "run" (as run.show returned it) will find interrupted
// is ended first, by the resume, with no transaction open: the process
// groups the gone runner's current node started on this host
// (EndProcessGroup: SIGTERM, up to 2 s, SIGKILL). Only for a running run
// whose runner is gone and whose current node is in "nodes" (the
// definition's names), so that a take-over that will refuse ends nothing;
// a forced take-over of a live runner ends them inside its transaction.
// Returns them, each with "ended" saying what became of it, else [].
Json EndInterruptedProcesses(const Run& run, const Json& nodes);

// graph.node_process: the runner records, before a node's program starts,
// the process group it runs in ({run, runner, node, seq, pgid, start}) in
// meta.graph.processes, with a graph.process event. A commit or a
// release forgets them; a take-over of an interrupted run first ends those
// on this host (util/subprocess.h EndProcessGroup: SIGTERM, 2 s, SIGKILL,
// and only the group that was recorded; EndInterruptedProcesses, before the
// take-over's transaction), saying what became of each in its
// graph.node.interrupted event. Aborted, like graph.commit, for a runner
// that lost the run or a node that is not the current one.
Result<Json> RecordGraphNodeProcess(OpContext& ctx, const Json& in);

// graph.release: a runner that stops without a checkpoint (a human node left
// waiting) gives the run up.
Result<Json> ReleaseGraphRun(OpContext& ctx, const Json& in);

Result<Json> PauseGraphRun(OpContext& ctx, const Json& in);   // graph.pause
Result<Json> CancelGraphRun(OpContext& ctx, const Json& in);  // graph.cancel
Result<Json> ResetGraphRun(OpContext& ctx, const Json& in);   // graph.reset

// graph.checkpoints: a run's checkpoints, oldest first, optionally with the
// state at each. graph.checkpoint: one, with its state.
Result<Json> ListGraphCheckpoints(OpContext& ctx, const Json& in);
Result<Json> ShowGraphCheckpoint(OpContext& ctx, const Json& in);

// graph.fork: a new pending run that continues from checkpoint "seq" of
// "run" with the state it had there, shallow-patched by "context" (a null
// removes a key). The original is not changed.
Result<Json> ForkGraphRun(OpContext& ctx, const Json& in);

// graph.compact: drops checkpoints outside the retention policy — beyond the
// last "keep_last", or older than "older_than_ms" — but never the latest,
// one an open question was asked at, or one a fork was made from. The
// states of those kept are unchanged.
Result<Json> CompactGraphCheckpoints(OpContext& ctx, const Json& in);

// graph.definition: the definition a run uses now ({id, source, file, hash,
// text}); its text is kept once per hash in graph_definitions.
Result<Json> ShowGraphDefinition(OpContext& ctx, const Json& in);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_GRAPH_GRAPH_RUNS_H_
