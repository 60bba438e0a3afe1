// File: graph_checkpoint_table.h
//
// The graph_checkpoints table: a graph run's checkpoints, one per node it
// passed (model/graph_checkpoint.h), keyed by (run_id, seq). Written by the
// runner's commit, rewritten only by compaction, which removes some and
// folds their changes into the next one kept.

#ifndef BATON_SRC_STORE_TABLES_GRAPH_CHECKPOINT_TABLE_H_
#define BATON_SRC_STORE_TABLES_GRAPH_CHECKPOINT_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/graph_checkpoint.h"
#include "store/store.h"

namespace baton {

// Adds checkpoint "c" of run "run_id", made at "created_at".
Status InsertGraphCheckpoint(Txn& txn, const std::string& run_id, const GraphCheckpoint& c,
                             const std::string& created_at);

// A run's checkpoints, oldest first. DataLoss, naming the checkpoint, when a
// stored base or delta is not JSON.
Result<std::vector<GraphCheckpoint>> LoadGraphCheckpoints(Txn& txn, const std::string& run_id);

// Whether run "run_id" has any checkpoint.
Result<bool> HasGraphCheckpoints(Txn& txn, const std::string& run_id);

// Compaction's two writes: one checkpoint removed; one given a new base or
// delta (the other null) and the count of checkpoints folded into it; the
// bytes its state now takes.
Status DeleteGraphCheckpoint(Txn& txn, const std::string& run_id, int64_t seq);
Result<size_t> RewriteGraphCheckpointState(Txn& txn, const std::string& run_id, int64_t seq,
                                   const Json& base, const Json& delta, int64_t folded);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_GRAPH_CHECKPOINT_TABLE_H_
