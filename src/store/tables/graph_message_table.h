// File: graph_message_table.h
//
// The graph_messages table: a graph run's conversation (the @sys/graph
// engine's conversationHistory), one row per message, keyed by (run_id,
// idx) with idx counting from 0. It lives outside the run's row so that a
// node that says one more thing appends one row instead of rewriting the
// whole conversation with the run (issue 19, docs/graph.md "Storage"). The
// runs table presents it back as meta.conversationHistory when it loads a
// graph run (run_table.h), so every reader sees the run as before.

#ifndef BATON_SRC_STORE_TABLES_GRAPH_MESSAGE_TABLE_H_
#define BATON_SRC_STORE_TABLES_GRAPH_MESSAGE_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// Run "run_id"'s conversation, oldest first (an empty array when it has
// none). DataLoss, naming the message, when a stored one is not JSON.
Result<Json> LoadGraphMessages(Txn& txn, const std::string& run_id);

// The conversations of "run_ids" in one read, by run id; a run without
// messages is absent.
Result<std::map<std::string, Json>> LoadGraphMessagesOfRuns(Txn& txn,
                                                            const std::vector<std::string>& run_ids);

// How many messages run "run_id"'s conversation holds.
Result<int64_t> CountGraphMessages(Txn& txn, const std::string& run_id);

// Adds "messages" (an array) after the conversation's last message.
Status AppendGraphMessages(Txn& txn, const std::string& run_id, const Json& messages);

// Makes "messages" (an array) run "run_id"'s whole conversation: a new run,
// a reset, an import over a stored run.
Status ReplaceGraphMessages(Txn& txn, const std::string& run_id, const Json& messages);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_GRAPH_MESSAGE_TABLE_H_
