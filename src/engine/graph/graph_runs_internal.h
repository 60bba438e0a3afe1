// File: graph_runs_internal.h
//
// What the two halves of graph_runs.h share — graph_runs.cc (a run's life:
// start, commit, take over, pause, cancel, reset) and graph_history.cc (its
// checkpoints: list, show, fork, compact) — and nothing else uses. Each
// function works inside the caller's transaction.

#ifndef BATON_SRC_ENGINE_GRAPH_GRAPH_RUNS_INTERNAL_H_
#define BATON_SRC_ENGINE_GRAPH_GRAPH_RUNS_INTERNAL_H_

#ifndef BATON_ENGINE_BUILDING_GRAPH
#error "engine/graph/graph_runs_internal.h is private to engine/graph/ (src/engine/README.md)"
#endif

#include <string>
#include <vector>

#include "engine/ledger/op_context.h"
#include "model/graph_checkpoint.h"
#include "model/run.h"
#include "store/tables/run_table.h"

namespace baton::graph_internal {

// run.meta.graph, made an object if it is not one.
Json& GraphMeta(Run& run);

// The run, which must be a graph run (FailedPrecondition otherwise); with
// its conversation unless the caller neither reads nor answers with it.
Result<Run> LoadGraphRun(Txn& txn, const std::string& id,
                         RunConversation conversation = RunConversation::kWith);
// Writes what the steps of a run's life change: status, cursor, meta. Not
// the state: a reset writes the whole initial state, a start or a fork
// makes the run with it. A node's commit writes none of it whole: only
// what the node changed (StoreGraphStepRow, PatchGraphContextRow,
// AppendGraphMessages).
Status StoreGraphRun(OpContext& ctx, const Run& run);

// The graph state a checkpoint holds: the context plus the conversation
// under kGraphHistoryKey (model/graph_delta.h).
Json StateOf(const Run& run);

using Checkpoint = GraphCheckpoint;

// A checkpoint holding the run's whole state: where a run starts, is reset,
// or is forked from another.
Status InsertWholeCheckpoint(OpContext& ctx, const Run& run, int64_t seq,
                             const std::string& outcome, const std::string& next,
                             std::optional<int64_t> event_seq);
// The state after each of "cps" (replayed from the first, which is a base)
// for which "want" is true (all when "want" is empty); null for the others,
// so that memory holds only the states asked for.
Result<std::vector<Json>> Replay(const std::string& run_id, const std::vector<Checkpoint>& cps,
                                 const std::vector<bool>& want = {});
// Runs the compaction policy over "run_id"'s checkpoints (graph.compact);
// returns what it did.
Result<Json> Compact(OpContext& ctx, const std::string& run_id, int64_t keep_last,
                     int64_t older_than_ms);

// InvalidArgument when a key of "keys" (an object's, or an array of names)
// is one of the engine's own ("__..."), naming "field".
Status CheckUserKeys(const Json& keys, const std::string& field);
// With a non-empty "state_dir", mirrors the run to <state_dir>/<id>.json
// in the @sys/graph format.
Status BindStateMirror(OpContext& ctx, const std::string& run_id, const std::string& state_dir);

}  // namespace baton::graph_internal

#endif  // BATON_SRC_ENGINE_GRAPH_GRAPH_RUNS_INTERNAL_H_
