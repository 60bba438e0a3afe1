// File: graph_definition_table.h
//
// The graph_definitions table: each graph definition's text, once, by the
// hash of its text. A graph run's meta names the hash, so the run's row,
// read and written at every node, stays small.

#ifndef BATON_SRC_STORE_TABLES_GRAPH_DEFINITION_TABLE_H_
#define BATON_SRC_STORE_TABLES_GRAPH_DEFINITION_TABLE_H_

#include <optional>
#include <string>

#include "store/store.h"

namespace baton {

// Keeps "text" under "hash" unless the store has it already.
Status KeepGraphDefinition(Txn& txn, const std::string& hash, const std::string& text,
                           const std::string& now);

// The text kept under "hash"; none when the store lacks it.
Result<std::optional<std::string>> LoadGraphDefinitionText(Txn& txn, const std::string& hash);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_GRAPH_DEFINITION_TABLE_H_
