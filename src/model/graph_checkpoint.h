// File: graph_checkpoint.h
//
// One row of the graph_checkpoints table, typed: what a graph run holds
// after one node (docs/graph.md "Storage"). A checkpoint stores either the
// whole state (a base: where a run starts, is reset or forked, and the
// first one compaction keeps) or what changed since the checkpoint before
// it (a delta, model/graph_delta.h). store/tables/graph_checkpoint_table.h
// reads and writes it.

#ifndef BATON_SRC_MODEL_GRAPH_CHECKPOINT_H_
#define BATON_SRC_MODEL_GRAPH_CHECKPOINT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct GraphCheckpoint {
  int64_t seq = 0;
  std::string node, outcome, next;
  int64_t attempt = 1;
  Json base;   // null unless this checkpoint holds the whole state
  Json delta;  // null for a base
  int64_t folded = 0;  // how many removed checkpoints compaction folded in
  int64_t duration_ms = 0;
  std::optional<int64_t> event_seq;  // the ledger event that recorded it
  std::string created_at;
  size_t bytes = 0;  // what its state takes in the store (read, not written)
};

}  // namespace baton

#endif  // BATON_SRC_MODEL_GRAPH_CHECKPOINT_H_
