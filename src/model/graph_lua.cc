#include "model/graph_lua.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include <lua.hpp>

#include "model/graph_lua_counted.h"

namespace baton {
namespace {

// The addresses name the registry's array marker and JSON's null, and the
// conversation's proxy and the messages appended through it.
char kArrayMarker;
char kNullValue;
char kHistoryProxy;
char kHistoryView;
char kHistoryJson;
char kHistoryHole;  // a message the chunk set to nil before the last
constexpr int kMaxDepth = 200;
// The hook counts VM instructions this many at a time; it also reads the
// clock, so the time limit is checked at least this often.
constexpr int kHookEvery = 1000;

// Bytes allocated that count as one instruction: work done in C (a
// concatenation, string.rep, string.upper...) is in proportion to what it
// allocates, so a loop of such calls is bounded by the instruction budget.
constexpr size_t kBytesPerInstruction = 64;

// "instructions" counts VM instructions (by the hook), the matcher's steps
// (graph_lua_counted.h) and allocated bytes / kBytesPerInstruction.
struct Budget {
  size_t used = 0;
  int64_t instructions = 0;
  bool exhausted = false;  // an allocation was refused for the instruction budget
  int64_t deadline_ms = 0;
  GraphLuaSteps steps;
};

// lua_Alloc with a ceiling: returning nullptr makes Lua raise a memory error.
void* BudgetAlloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* budget = static_cast<Budget*>(ud);
  if (ptr == nullptr) osize = 0;
  if (nsize == 0) {
    budget->used -= osize;
    std::free(ptr);
    return nullptr;
  }
  if (nsize > osize && budget->used + (nsize - osize) > kGraphLuaMaxBytes) return nullptr;
  if (nsize > osize) {
    budget->instructions += static_cast<int64_t>((nsize - osize) / kBytesPerInstruction);
    if (budget->instructions > kGraphLuaMaxInstructions) {
      budget->exhausted = true;
      return nullptr;
    }
  }
  void* grown = std::realloc(ptr, nsize);
  if (grown != nullptr) budget->used = budget->used - osize + nsize;
  return grown;
}

Budget* BudgetOf(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return static_cast<Budget*>(ud);
}

void CountInstructions(lua_State* L, lua_Debug*) {
  Budget* budget = BudgetOf(L);
  budget->instructions += kHookEvery;
  if (budget->instructions > kGraphLuaMaxInstructions) {
    luaL_error(L, "ran more than %d instructions (an endless loop?)",
               static_cast<int>(kGraphLuaMaxInstructions));
  }
  if (GraphLuaNowMillis() > budget->deadline_ms) {
    luaL_error(L, "ran longer than %d ms", static_cast<int>(kGraphLuaMaxMillis));
  }
}

// Pushes "v". Raises only Lua's memory error; the frames hold no C++ object
// that a longjmp would skip (references and indexes only).
void PushJson(lua_State* L, const Json& v, int depth) {
  if (depth > kMaxDepth) luaL_error(L, "the state is nested more than %d deep", kMaxDepth);
  luaL_checkstack(L, 4, "the state is nested too deep");
  switch (v.type()) {
    case Json::value_t::null:
      lua_pushlightuserdata(L, &kNullValue);
      return;
    case Json::value_t::boolean:
      lua_pushboolean(L, v.get<bool>());
      return;
    case Json::value_t::number_integer:
      lua_pushinteger(L, v.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      if (v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
        lua_pushinteger(L, static_cast<lua_Integer>(v.get<uint64_t>()));
      } else {
        lua_pushnumber(L, static_cast<lua_Number>(v.get<uint64_t>()));
      }
      return;
    case Json::value_t::number_float:
      lua_pushnumber(L, v.get<double>());
      return;
    case Json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
    case Json::value_t::array:
      lua_createtable(L, static_cast<int>(v.size()), 0);
      for (size_t i = 0; i < v.size(); ++i) {
        PushJson(L, v[i], depth + 1);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      lua_rawgetp(L, LUA_REGISTRYINDEX, &kArrayMarker);
      lua_setmetatable(L, -2);
      return;
    case Json::value_t::object:
      lua_createtable(L, 0, static_cast<int>(v.size()));
      for (auto it = v.begin(); it != v.end(); ++it) {
        lua_pushlstring(L, it.key().data(), it.key().size());
        PushJson(L, it.value(), depth + 1);
        lua_rawset(L, -3);
      }
      return;
    default:
      lua_pushnil(L);  // binary and discarded values never reach here
  }
}

// state.conversationHistory as a chunk sees it: a table that holds none of
// the messages (a long conversation is not converted at every node). The
// chunk's view of it is the registry's kHistoryView table: "n", how many
// messages it has now, and [i] for each message the chunk read (converted
// once, so it reads the same twice) or wrote; any other i up to the
// conversation's length is that message (kHistoryJson). As before, the
// chunk may do what it likes with its view — read, count, walk, sort,
// remove, append (table.insert, h[#h + 1] = m) — and what the node keeps is
// the view's messages past the conversation's length: appended, never
// rewritten. `next` and `rawlen` know the proxy too.
const Json& HistoryJson(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kHistoryJson);
  const Json* history = static_cast<const Json*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return *history;
}

bool IsHistoryProxy(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE) return false;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kHistoryProxy);
  const bool is = lua_rawequal(L, idx, -1) != 0;
  lua_pop(L, 1);
  return is;
}

// Pushes the view table.
void PushHistoryView(lua_State* L) { lua_rawgetp(L, LUA_REGISTRYINDEX, &kHistoryView); }

lua_Integer HistoryLength(lua_State* L) {
  PushHistoryView(L);
  lua_pushliteral(L, "n");
  lua_rawget(L, -2);
  const lua_Integer n = lua_tointeger(L, -1);
  lua_pop(L, 2);
  return n;
}

// The integer a key stands for (1.0 is 1, as in any table); false for none.
bool IndexKey(lua_State* L, int idx, lua_Integer* k) {
  if (lua_type(L, idx) != LUA_TNUMBER) return false;
  int ok = 0;
  *k = lua_tointegerx(L, idx, &ok);
  return ok != 0;
}

bool IsHole(lua_State* L, int idx) {
  return lua_type(L, idx) == LUA_TLIGHTUSERDATA && lua_touserdata(L, idx) == &kHistoryHole;
}

// Pushes message "k" of the view (1 <= k <= its length), nil for a hole.
void PushHistoryItem(lua_State* L, lua_Integer k) {
  PushHistoryView(L);
  if (lua_rawgeti(L, -1, k) != LUA_TNIL) {
    if (IsHole(L, -1)) {
      lua_pop(L, 1);
      lua_pushnil(L);
    }
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  const Json& history = HistoryJson(L);
  if (k > static_cast<lua_Integer>(history.size())) {
    lua_pop(L, 1);
    lua_pushnil(L);
    return;
  }
  PushJson(L, history[static_cast<size_t>(k - 1)], 1);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, k);
  lua_remove(L, -2);
}

int HistoryIndex(lua_State* L) {
  lua_Integer k = 0;
  if (!IndexKey(L, 2, &k) || k < 1 || k > HistoryLength(L)) {
    lua_pushnil(L);
    return 1;
  }
  PushHistoryItem(L, k);
  return 1;
}

// As on the plain array the chunk had before: nil past the end changes
// nothing, nil before the last leaves a hole (null, if it stays), a message
// past the end extends the view (the gap holes); only a key that is no
// index, or one so far past the end that the array would be mostly holes
// (it could not be converted back), is an error.
int HistoryNewIndex(lua_State* L) {
  lua_Integer n = HistoryLength(L);
  lua_Integer k = 0;
  const bool remove = lua_isnil(L, 3);
  if (!IndexKey(L, 2, &k) || (!remove && (k < 1 || k > 2 * n + 17))) {
    return luaL_error(L,
                      "conversationHistory: a message goes at an index from 1 to about twice "
                      "its length (%d now)",
                      static_cast<int>(std::min<lua_Integer>(n, INT32_MAX)));
  }
  if (remove && (k < 1 || k > n)) return 0;
  PushHistoryView(L);
  if (remove) {
    if (k < n) {
      lua_pushlightuserdata(L, &kHistoryHole);
      lua_rawseti(L, -2, k);
    } else {
      // The last one (table.remove), and the holes before it.
      do {
        lua_pushnil(L);
        lua_rawseti(L, -2, n);
        --n;
        lua_rawgeti(L, -1, n);
        const bool hole = IsHole(L, -1);
        lua_pop(L, 1);
        if (!hole) break;
      } while (n > 0);
    }
  } else {
    for (lua_Integer gap = n + 1; gap < k; ++gap) {
      lua_pushlightuserdata(L, &kHistoryHole);
      lua_rawseti(L, -2, gap);
    }
    lua_pushvalue(L, 3);
    lua_rawseti(L, -2, k);
    n = std::max(n, k);
  }
  lua_pushliteral(L, "n");
  lua_pushinteger(L, n);
  lua_rawset(L, -3);
  return 0;
}

int HistoryLen(lua_State* L) {
  lua_pushinteger(L, HistoryLength(L));
  return 1;
}

// next(h, k) over the view: the next index past k that holds a message.
int HistoryNext(lua_State* L) {
  lua_Integer k = 0;
  if (!lua_isnoneornil(L, 2) && !IndexKey(L, 2, &k)) {
    return luaL_error(L, "invalid key to 'next'");
  }
  // Holes are passed over, as next passes over a table's.
  const lua_Integer n = HistoryLength(L);
  if (k >= n) {
    lua_pushnil(L);
    return 1;
  }
  for (lua_Integer i = std::max<lua_Integer>(k, 0) + 1; i <= n; ++i) {
    PushHistoryItem(L, i);
    if (!lua_isnil(L, -1)) {
      lua_pushinteger(L, i);
      lua_insert(L, -2);
      return 2;
    }
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  return 1;
}

int HistoryPairs(lua_State* L) {
  lua_pushcfunction(L, HistoryNext);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// The globals next and rawlen, which look past metamethods, see the view:
// "for_proxy" when argument 1 is the proxy, else the base library's own
// (upvalue 1).
int PastProxy(lua_State* L, lua_CFunction for_proxy) {
  if (IsHistoryProxy(L, 1)) return for_proxy(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

int SafeNext(lua_State* L) { return PastProxy(L, HistoryNext); }
int SafeRawlen(lua_State* L) { return PastProxy(L, HistoryLen); }

void PushHistoryProxy(lua_State* L, const Json& history) {
  lua_pushlightuserdata(L, const_cast<Json*>(&history));
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kHistoryJson);
  lua_newtable(L);  // the view
  lua_pushliteral(L, "n");
  lua_pushinteger(L, static_cast<lua_Integer>(history.size()));
  lua_rawset(L, -3);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kHistoryView);
  lua_newtable(L);           // the proxy
  lua_createtable(L, 0, 5);  // its metatable
  const struct {
    const char* name;
    lua_CFunction fn;
  } methods[] = {{"__index", HistoryIndex},
                 {"__newindex", HistoryNewIndex},
                 {"__len", HistoryLen},
                 {"__pairs", HistoryPairs}};
  for (const auto& m : methods) {
    lua_pushcfunction(L, m.fn);
    lua_setfield(L, -2, m.name);
  }
  // getmetatable gives this name; setmetatable is refused.
  lua_pushliteral(L, "conversationHistory");
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kHistoryProxy);
}

// The state object, its conversation as the proxy above.
void PushState(lua_State* L, const Json& state) {
  if (!state.is_object()) {
    PushJson(L, state, 0);
    return;
  }
  lua_createtable(L, 0, static_cast<int>(state.size()));
  for (auto it = state.begin(); it != state.end(); ++it) {
    lua_pushlstring(L, it.key().data(), it.key().size());
    if (it.key() == "conversationHistory" && it.value().is_array()) {
      PushHistoryProxy(L, it.value());
    } else {
      PushJson(L, it.value(), 1);
    }
    lua_rawset(L, -3);
  }
}

Status ToJson(lua_State* L, int idx, int depth, const std::string& path, int64_t* budget,
              Json* out);

// How many values ToJson would count for "v" (each array, object and
// scalar once).
int64_t JsonValueCount(const Json& v) {
  int64_t n = 1;
  if (v.is_structured()) {
    for (const Json& item : v) n += JsonValueCount(item);
  }
  return n;
}

// The conversation as the chunk's view holds it, where it is converted
// (returned, put in the context, sent as a body): every message.
Status HistoryToJson(lua_State* L, int depth, const std::string& path, int64_t* budget,
                     Json* out) {
  const Json& history = HistoryJson(L);
  const lua_Integer n = HistoryLength(L);
  *out = Json::array();
  PushHistoryView(L);
  for (lua_Integer k = 1; k <= n; ++k) {
    const std::string at = path + "[" + std::to_string(k) + "]";
    if (lua_rawgeti(L, -1, k) != LUA_TNIL && !IsHole(L, -1)) {
      Json item;
      Status s = ToJson(L, -1, depth + 1, at, budget, &item);
      lua_pop(L, 1);
      if (!s.ok()) {
        lua_pop(L, 1);
        return s;
      }
      out->push_back(std::move(item));
      continue;
    }
    const bool hole = IsHole(L, -1);
    lua_pop(L, 1);
    if (hole || k > static_cast<lua_Integer>(history.size())) {
      out->push_back(Json());
      continue;
    }
    // A message the chunk never read is copied, and costs its values as a
    // converted one would.
    const Json& message = history[static_cast<size_t>(k - 1)];
    *budget -= JsonValueCount(message);
    if (*budget < 0) {
      lua_pop(L, 1);
      return FailedPreconditionError(at + ": more than " + std::to_string(kGraphLuaMaxValues) +
                                     " values to convert to JSON");
    }
    out->push_back(message);
  }
  lua_pop(L, 1);
  return Status();
}

// Converts the value at "idx" without raising Lua errors. "path" names it.
Status ToJson(lua_State* L, int idx, int depth, const std::string& path, int64_t* budget,
              Json* out) {
  idx = lua_absindex(L, idx);
  if (--*budget < 0) {
    return FailedPreconditionError(path + ": more than " + std::to_string(kGraphLuaMaxValues) +
                                   " values to convert to JSON");
  }
  switch (lua_type(L, idx)) {
    case LUA_TNIL:
      *out = nullptr;
      return Status();
    case LUA_TBOOLEAN:
      *out = lua_toboolean(L, idx) != 0;
      return Status();
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        *out = static_cast<int64_t>(lua_tointeger(L, idx));
      } else {
        const double d = lua_tonumber(L, idx);
        if (!std::isfinite(d)) return FailedPreconditionError(path + ": " + std::to_string(d) + " is not a JSON number");
        *out = d;
      }
      return Status();
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, idx, &n);
      *out = std::string(s, n);
      return Status();
    }
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, idx) == &kNullValue) {
        *out = nullptr;
        return Status();
      }
      break;
    case LUA_TTABLE:
      break;
    default:
      return FailedPreconditionError(path + ": a Lua " + luaL_typename(L, idx) +
                                     " cannot be JSON");
  }
  if (lua_type(L, idx) != LUA_TTABLE) {
    return FailedPreconditionError(path + ": a Lua userdata cannot be JSON");
  }
  if (depth > kMaxDepth || !lua_checkstack(L, 4)) {
    return FailedPreconditionError(path + ": nested more than " + std::to_string(kMaxDepth) +
                                   " deep (a table that holds itself?)");
  }
  if (IsHistoryProxy(L, idx)) return HistoryToJson(L, depth, path, budget, out);
  bool marked = false;
  if (lua_getmetatable(L, idx)) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &kArrayMarker);
    marked = lua_rawequal(L, -1, -2) != 0;
    lua_pop(L, 2);
  }
  // Count the keys; an unmarked table is an array when they are 1..n.
  int64_t count = 0;
  int64_t max_index = 0;
  bool all_indexes = true;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    ++count;
    if (lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1) {
      max_index = std::max<int64_t>(max_index, lua_tointeger(L, -2));
    } else {
      all_indexes = false;
    }
    lua_pop(L, 1);
  }
  const bool is_array = (marked && all_indexes) || (count > 0 && all_indexes && max_index == count);
  if (is_array && max_index > 2 * count + 16) {
    return FailedPreconditionError(path + ": an array with holes up to index " +
                                   std::to_string(max_index) + " (" + std::to_string(count) +
                                   " values); use null for a missing item");
  }
  if (is_array) {
    *out = Json::array();
    const int64_t n = static_cast<int64_t>(lua_rawlen(L, idx));
    for (int64_t i = 1; i <= std::max(n, max_index); ++i) {
      lua_rawgeti(L, idx, i);
      Json item;
      Status s = ToJson(L, -1, depth + 1, path + "[" + std::to_string(i) + "]", budget, &item);
      lua_pop(L, 1);
      if (!s.ok()) return s;
      out->push_back(std::move(item));
    }
    return Status();
  }
  *out = Json::object();
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    std::string key;
    if (lua_type(L, -2) == LUA_TSTRING) {
      size_t n = 0;
      const char* s = lua_tolstring(L, -2, &n);
      key.assign(s, n);
    } else if (lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2)) {
      key = std::to_string(lua_tointeger(L, -2));
    } else {
      lua_pop(L, 2);
      return FailedPreconditionError(path + ": a table key must be a string or an integer, not a " +
                                     luaL_typename(L, -2));
    }
    Json value;
    Status s = ToJson(L, -1, depth + 1, path + "." + key, budget, &value);
    lua_pop(L, 1);
    if (!s.ok()) {
      lua_pop(L, 1);
      return s;
    }
    (*out)[key] = std::move(value);
  }
  return Status();
}

// setmetatable without finalizers: Lua runs __gc with hooks off, so the
// instruction limit could not stop one.
int SafeSetMetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL) return luaL_error(L, "setmetatable: __gc is not allowed");
    lua_pop(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

// Opens the sandbox's libraries and sets the globals; run under lua_pcall
// with the state as a light userdata argument.
int Prepare(lua_State* L) {
  const Json* state = static_cast<const Json*>(lua_touserdata(L, 1));
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  // pcall/xpcall would catch the instruction limit's error and go on;
  // print would write into baton's own stdout (the MCP stream).
  for (const char* name : {"dofile", "loadfile", "load", "collectgarbage", "require", "pcall",
                           "xpcall", "print"}) {
    lua_pushnil(L);
    lua_setfield(L, -2, name);
  }
  lua_getfield(L, -1, "setmetatable");
  lua_pushcclosure(L, SafeSetMetatable, 1);
  lua_setfield(L, -2, "setmetatable");
  // next and rawlen look past metamethods: they see the conversation's view.
  lua_getfield(L, -1, "next");
  lua_pushcclosure(L, SafeNext, 1);
  lua_setfield(L, -2, "next");
  lua_getfield(L, -1, "rawlen");
  lua_pushcclosure(L, SafeRawlen, 1);
  lua_setfield(L, -2, "rawlen");
  lua_pop(L, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
  lua_pop(L, 4);
  // Matching, repetition and table shifts count their work in C.
  InstallCountedLibraries(L, &BudgetOf(L)->steps);
  // os: the clock and the calendar only.
  luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);
  lua_createtable(L, 0, 3);
  for (const char* name : {"time", "clock", "date"}) {
    lua_getfield(L, -2, name);
    lua_setfield(L, -2, name);
  }
  lua_setglobal(L, "os");
  lua_pop(L, 1);

  lua_newtable(L);
  lua_pushstring(L, "array");
  lua_setfield(L, -2, "__name");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kArrayMarker);
  lua_pushlightuserdata(L, &kNullValue);
  lua_setglobal(L, "null");

  PushState(L, *state);
  if (lua_getfield(L, -1, "context") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "context");
  }
  lua_setglobal(L, "context");
  lua_setglobal(L, "state");
  return 0;
}

std::string TopMessage(lua_State* L) {
  const char* m = lua_tostring(L, -1);
  return m != nullptr ? m : "an error that is not a string";
}

// The error of a chunk that failed: Lua's message, naming the chunk (errors
// raised in C functions carry no position), or the instruction limit when an
// allocation was refused for it.
std::string ChunkError(lua_State* L, const Budget& budget, const std::string& chunk) {
  std::string m = budget.exhausted ? "ran more than " + std::to_string(kGraphLuaMaxInstructions) +
                                         " instructions, counting what it allocated (an endless "
                                         "loop?)"
                                   : TopMessage(L);
  if (m.rfind(chunk + ":", 0) != 0) m = chunk + ": " + m;
  return m;
}

}  // namespace

Result<GraphLuaResult> RunGraphLua(const std::string& code, const std::string& chunk,
                                   const Json& state, bool want_state) {
  Budget budget;
  budget.deadline_ms = GraphLuaNowMillis() + kGraphLuaMaxMillis;
  budget.steps = {.used = &budget.instructions,
                  .limit = kGraphLuaMaxInstructions,
                  .deadline_ms = budget.deadline_ms};
  std::unique_ptr<lua_State, decltype(&lua_close)> owner(lua_newstate(BudgetAlloc, &budget),
                                                         &lua_close);
  lua_State* L = owner.get();
  if (L == nullptr) return FailedPreconditionError(chunk + ": Lua could not start (out of memory)");
  lua_pushcfunction(L, Prepare);
  lua_pushlightuserdata(L, const_cast<Json*>(&state));
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    return FailedPreconditionError(chunk + ": " + TopMessage(L));
  }
  const std::string name = "=" + chunk;
  if (luaL_loadbufferx(L, code.data(), code.size(), name.c_str(), "t") != LUA_OK) {
    return InvalidArgumentError(TopMessage(L));
  }
  // The hook stays for the state's whole life: finalizers that run at
  // lua_close are counted too.
  lua_sethook(L, CountInstructions, LUA_MASKCOUNT, kHookEvery);
  if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
    return FailedPreconditionError(ChunkError(L, budget, chunk));
  }
  GraphLuaResult out;
  out.truthy = lua_toboolean(L, -1) != 0;
  int64_t values = kGraphLuaMaxValues;
  RETURN_IF_ERROR(ToJson(L, -1, 0, chunk + ": the returned value", &values, &out.value));
  lua_pop(L, 1);
  if (want_state) {
    // Raw access: no metamethod of the chunk's runs outside the protection.
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_pushliteral(L, "state");
    lua_rawget(L, -2);
    // The conversation is what was appended to it, unless the chunk put
    // another table in its place.
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_pushliteral(L, "conversationHistory");
      lua_rawget(L, -2);
      // (No proxy when the conversation was no array: nil is not one.)
      const bool proxied = lua_rawgetp(L, LUA_REGISTRYINDEX, &kHistoryProxy) == LUA_TTABLE &&
                           lua_rawequal(L, -1, -2) != 0;
      lua_pop(L, 2);
      if (proxied) {
        // What the view holds past the conversation's length.
        const lua_Integer n = HistoryLength(L);
        PushHistoryView(L);
        Json appended = Json::array();
        // (HistoryJson: the conversation itself; state.value() would copy it.)
        for (lua_Integer i = static_cast<lua_Integer>(HistoryJson(L).size()) + 1; i <= n; ++i) {
          lua_rawgeti(L, -1, i);
          Json message;
          Status converted =
              IsHole(L, -1) ? Status()
                            : ToJson(L, -1, 1, "state.conversationHistory[" + std::to_string(i) + "]",
                                     &values, &message);
          lua_pop(L, 1);
          if (!converted.ok()) return converted;
          appended.push_back(std::move(message));
        }
        lua_pop(L, 1);
        out.history_appended = std::move(appended);
        lua_pushliteral(L, "conversationHistory");
        lua_pushnil(L);
        lua_rawset(L, -3);
      }
    }
    RETURN_IF_ERROR(ToJson(L, -1, 0, "state", &values, &out.state));
    lua_pop(L, 2);
  }
  return out;
}

}  // namespace baton
