// File: graph_lua.h
//
// Runs the Lua of a graph workflow (docs/graph.md "Lua"): routing conditions
// and routers, eval nodes, and the build/body chunks of dynamic nodes. Each
// call gets a fresh Lua 5.4 state holding the global `state` ({currentNode,
// status, context, conversationHistory}), `context` (the same table as
// state.context) and `null` (JSON's null; Lua's nil cannot sit in an array).
// state.conversationHistory holds no message until one is read: each is
// converted when the chunk reads it, so a node costs what it touches, not
// the length of the conversation. The chunk uses it as an array (through
// metamethods, and next and rawlen); what it holds past the conversation's
// length when the chunk ends is what was appended (history_appended).
//
// The sandbox: the base library without dofile, loadfile, load,
// collectgarbage, pcall, xpcall and print, and with a setmetatable that
// refuses __gc (finalizers run with hooks off); string, table, math, utf8;
// os.time, os.clock and os.date. No io, no require, no debug. A chunk may
// run at most kGraphLuaMaxInstructions instructions and allocate at most
// kGraphLuaMaxBytes; past either it stops with an error. What counts as an
// instruction: each VM instruction, each step of string matching (find,
// match, gmatch, gsub run Lua's matcher counting its steps, so a pattern that
// backtracks stops too), each element table.insert/remove/move/sort shift
// or compare, and every 64 bytes allocated (graph_lua_counted.h). A chunk
// also stops once it has run kGraphLuaMaxMillis, checked with the count: a
// backstop for work in C that nothing counts. Only text chunks load.
// Thread-safe: nothing is shared between calls.

#ifndef BATON_SRC_MODEL_GRAPH_LUA_H_
#define BATON_SRC_MODEL_GRAPH_LUA_H_

#include <cstdint>
#include <optional>
#include <string>

#include "baton/status.h"
#include "util/json_util.h"

namespace baton {

inline constexpr int64_t kGraphLuaMaxInstructions = 200'000'000;
inline constexpr size_t kGraphLuaMaxBytes = size_t{256} << 20;
inline constexpr int64_t kGraphLuaMaxMillis = 30'000;
// The most values (tables count once per appearance) converted back to JSON.
inline constexpr int64_t kGraphLuaMaxValues = 10'000'000;

struct GraphLuaResult {
  Json value;           // the chunk's first return value as JSON; null for none or nil
  bool truthy = false;  // Lua's truth of that value (only nil and false are false)
  Json state;           // `state` after the chunk, when asked for; else null
  // With the state: the messages the chunk appended to the conversation,
  // which is then left out of "state" (unset when the chunk replaced
  // state.conversationHistory with a table of its own: "state" holds that).
  std::optional<Json> history_appended;
};

// Runs "code" as the text chunk "chunk" (the name its errors carry) over
// "state" (an object as above). With "want_state" the `state` table is
// converted back after the chunk returns.
//
// JSON becomes Lua as objects → tables, arrays → sequences (marked, so an
// empty one comes back as []), null → `null`, numbers → integers when they
// are. Back again, a table is an array when marked or when its keys are
// exactly 1..n; integer keys of other tables become strings; functions,
// userdata, NaN and infinities cannot be JSON.
//
// FailedPrecondition "<chunk>: <Lua's message>" for an error raised or met
// while running (the instruction and memory limits included) or a value that
// cannot be JSON; InvalidArgument when the chunk does not compile.
Result<GraphLuaResult> RunGraphLua(const std::string& code, const std::string& chunk,
                                   const Json& state, bool want_state);

}  // namespace baton

#endif  // BATON_SRC_MODEL_GRAPH_LUA_H_
