// File: graph_context_table.h
//
// The graph_context_values table (migration 15): the large values of a
// graph run's context, one row per top-level key, keyed by (run_id, key)
// with the key as its JSON text.
// A value whose JSON text is kSplitContextBytes or longer lives there; the
// rest of the context stays in the run's row (runs.context). A node's
// commit patches the keys the node set, and the storage engine edits the
// run's row by re-reading its whole text (SQLite's json_set parses it,
// PostgreSQL reads, merges and writes it): kept apart, a 100 KB value the
// node left alone costs the node nothing (issue 21 item 3). The runs table
// joins the two when it loads a graph run (run_table.h), so every reader
// sees the context whole.

#ifndef BATON_SRC_STORE_TABLES_GRAPH_CONTEXT_TABLE_H_
#define BATON_SRC_STORE_TABLES_GRAPH_CONTEXT_TABLE_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// A context value whose canonical JSON text is at least this long is kept
// in a row of its own.
inline constexpr size_t kSplitContextBytes = 2048;

// A context as stored: what stays in the run's row, and the values kept
// apart, as canonical JSON text by key.
struct SplitContext {
  Json in_row = Json::object();
  std::map<std::string, std::string> apart;
};

// Splits "context" by the size of each value. A context that is not an
// object stays whole in the row.
SplitContext SplitGraphContext(const Json& context);

// Makes "apart" run "run_id"'s whole set of values kept apart: a new run, a
// run written whole, a reset, an import.
Status ReplaceGraphContextValues(Txn& txn, const std::string& run_id,
                                 const std::map<std::string, std::string>& apart);

// Drops the values of "drop" (a key not kept apart is no error), then
// sets the values "set" (canonical text by key) of run "run_id" apart.
Status PatchGraphContextValues(Txn& txn, const std::string& run_id,
                               const std::map<std::string, std::string>& set,
                               const std::vector<std::string>& drop);

// The values kept apart of "run_ids", in one read: by run id, an object of
// key -> value; a run with none is absent. DataLoss, naming the run and the
// key, when a stored value is not JSON.
Result<std::map<std::string, Json>> LoadGraphContextValues(Txn& txn,
                                                           const std::vector<std::string>& run_ids);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_GRAPH_CONTEXT_TABLE_H_
