// File: graph_format.h
//
// The @sys/graph engine's checkpoint `.graph-state/{id}.json` (format
// "graph", profile "graph"; reference/seed-systems.md part 2 §1.2–1.3):
//
//   {"currentNode": "IMPLEMENT", "status": "running",
//    "updatedAt": "2024-01-15T10:30:00Z", "conversationHistory": [],
//    "context": {...}}
//
// ReadGraphState (format.h) makes a run of profile "graph" (machine
// graph.run): status = status, cursor = currentNode, context = context,
// updated_at = updatedAt, meta.conversationHistory = conversationHistory,
// keys it does not know in meta.kept.graph, and meta.workflow_id when the
// source's file name decodes as a GraphStateFileName. currentNode and status
// are required; status must be one of pending, running, completed, failed,
// paused. WriteGraphState writes those keys in the interface's order, as the
// engine's JSON.stringify(state, null, 2) does: two-space indentation, no
// final newline, numbers as JavaScript prints them, integer-like keys first.
// Since the image holds objects with sorted keys, the keys of "context" and
// of the history's messages come back sorted, not in the file's order.

#ifndef BATON_SRC_FORMATS_GRAPH_FORMAT_H_
#define BATON_SRC_FORMATS_GRAPH_FORMAT_H_

#include <string>
#include <string_view>

#include "baton/status.h"
#include "formats/format.h"

namespace baton {

// The file name of workflow "id"'s checkpoint: "<id>.json" with every byte
// outside [A-Za-z0-9_-] written as "%XX" (upper-case hex; "%" itself too).
// Unlike @sys/graph's own `[^a-zA-Z0-9_-] → _`, under which "workflow@1" and
// "workflow#1" share a file, different ids always get different names, and a
// name never holds "/", "." (but the suffix's) or "..".
std::string GraphStateFileName(std::string_view id);

// The inverse: the id whose GraphStateFileName is the last path component of
// "name". InvalidArgument, naming the offset, for a name no id maps to (no
// ".json" suffix, a byte that should have been encoded, "%" not followed by
// two upper-case hex digits, or an encoded byte that needed no encoding).
Result<std::string> GraphIdFromFileName(std::string_view name);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_GRAPH_FORMAT_H_
