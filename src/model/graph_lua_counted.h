// File: graph_lua_counted.h
//
// The library functions of the graph Lua sandbox (graph_lua.h) whose work in
// C is not bounded by the memory limit, made to count that work against the
// chunk's instruction budget. Lua's count hook sees VM instructions only: a
// pattern that backtracks (`("a"):rep(30000):find(".-.-.-.-.-b")`) ran for
// ever inside one call to string.find, between two instructions.
//
//   string.find, match, gmatch, gsub  Lua 5.4's own matcher (lstrlib.c,
//       ported here), counting a step per match() call, per character
//       tried by a repetition or %b, and per candidate of a plain find
//       (plus one per 64 bytes compared);
//   string.rep     an empty string and separator give "" at once (Lua copied
//                  nothing n times, up to 2^63);
//   table.insert, remove, move, sort   the elements they will shift, move or
//       compare (n log2 n for sort), counted before they start: a __len
//       metamethod can claim any length;
//   table.unpack, string.byte, utf8.codepoint   the values their range can
//       push (at most the stack's million): a loop of them did a million
//       pushes per instruction.
//
// Everything else a chunk can call does work in proportion to what it
// allocates (counted by graph_lua.cc's allocator) or to the Lua it calls
// back (counted by the hook).
//
// Past the budget a step raises "<function>: ran more than N instructions
// and pattern steps", a Lua error at the caller's line.

#ifndef BATON_SRC_MODEL_GRAPH_LUA_COUNTED_H_
#define BATON_SRC_MODEL_GRAPH_LUA_COUNTED_H_

#include <cstdint>

struct lua_State;

namespace baton {

// What a state's counted functions share: "*used" grows by each step; past
// "limit", or once the steady clock passes "deadline_ms" (checked every few
// thousand steps), a step raises.
struct GraphLuaSteps {
  int64_t* used = nullptr;
  int64_t limit = 0;
  int64_t deadline_ms = 0;  // steady-clock milliseconds; 0 = none
};

// Replaces the functions above in the state's `string` and `table` (both
// already opened: the string metatable's __index is that same table).
// "steps" must outlive the state.
void InstallCountedLibraries(lua_State* L, const GraphLuaSteps* steps);

// Steady-clock milliseconds, the clock deadline_ms is on.
int64_t GraphLuaNowMillis();

}  // namespace baton

#endif  // BATON_SRC_MODEL_GRAPH_LUA_COUNTED_H_
