// File: graph_delta.h
//
// What one graph checkpoint stores (docs/graph.md "Storage"): not the whole
// state but what changed since the checkpoint before it. A graph state is a
// JSON object — the run's context keys plus "__conversationHistory" — and a
// delta is
//
//   {"set": {key: value}, "append": {key: [items]}, "unset": [key]}
//
// with empty members left out: "append" when the new value is an array that
// starts with the whole old one (a conversation growing by a message stores
// the message, not the conversation), "set" for any other new or changed
// key, "unset" for keys that went away. Pure functions, thread-safe.

#ifndef BATON_SRC_MODEL_GRAPH_DELTA_H_
#define BATON_SRC_MODEL_GRAPH_DELTA_H_

#include <string>

#include "baton/status.h"
#include "util/json_util.h"

namespace baton {

// The key the conversation history has inside a graph state. Context keys
// may not start with "__" (docs/graph.md), so it never meets a user's key.
inline constexpr char kGraphHistoryKey[] = "__conversationHistory";

// The delta that turns "before" into "after" (both objects). Applying it to
// "before" gives a value equal to "after".
Json GraphStateDelta(const Json& before, const Json& after);

// Applies "delta" to "state" in place. DataLoss when the delta is not one
// (a stored checkpoint was altered): "append" to a key that is not an array,
// or members of the wrong type. "state" is unspecified after an error.
Status ApplyGraphStateDelta(Json& state, const Json& delta);

// True when "delta" changes nothing.
bool GraphDeltaEmpty(const Json& delta);

// The delta a node's outcome makes, the one merge the runner (routing sees
// it) and the checkpoint (it is stored) both apply: the node's "result"
// under "result_key", then the keys it set in "updates" (an object; an eval
// that writes its own result key wins over its result), the keys it
// "removed" (an array of strings), and the conversation's new messages
// "appended" (an array).
Json NodeOutcomeDelta(const std::string& result_key, const Json& result, const Json& updates,
                      const Json& removed, const Json& appended);

// ApplyGraphStateDelta on a state kept as its two parts: the context object
// and the conversation array (a graph run's row, the runner's state).
Status ApplyGraphDelta(Json& context, Json& history, const Json& delta);

}  // namespace baton

#endif  // BATON_SRC_MODEL_GRAPH_DELTA_H_
