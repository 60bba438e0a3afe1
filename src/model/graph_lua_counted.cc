// The pattern matcher below is Lua 5.4.4's (src/lstrlib.c, "PATTERN
// MATCHING"), changed only to count its steps; it keeps Lua's license:
//
// Copyright (C) 1994-2022 Lua.org, PUC-Rio.
//
// Permission is hereby granted, free of charge, to any person obtaining a
// copy of this software and associated documentation files (the
// "Software"), to deal in the Software without restriction, including
// without limitation the rights to use, copy, modify, merge, publish,
// distribute, sublicense, and/or sell copies of the Software, and to permit
// persons to whom the Software is furnished to do so, subject to the
// following conditions:
//
// The above copyright notice and this permission notice shall be included
// in all copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS
// OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
// MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN
// NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
// DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
// OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE
// USE OR OTHER DEALINGS IN THE SOFTWARE.
//
// Lua raises errors with longjmp: no function here holds a C++ object with a
// destructor across a call that may raise.

#include "model/graph_lua_counted.h"

#include <cctype>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstring>

#include <lua.hpp>

namespace baton {

int64_t GraphLuaNowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

constexpr int kMaxCaptures = 32;  // LUA_MAXCAPTURES
constexpr int kMaxCalls = 200;    // MAXCCALLS: match()'s recursion depth
constexpr int kCapUnfinished = -1;
constexpr int kCapPosition = -2;
constexpr char kEsc = '%';
constexpr const char* kSpecials = "^$*+?.([%-";
// The clock is read once per this many steps.
constexpr int64_t kClockEvery = 1 << 16;

// Raises the budget's error at the caller's line. "what" names the function.
[[noreturn]] void OverBudget(lua_State* L, const GraphLuaSteps* steps, const char* what) {
  luaL_where(L, 2);
  if (*steps->used > steps->limit) {
    lua_pushfstring(L, "%s: ran more than %I instructions and pattern steps (a pattern that "
                       "backtracks, or an endless loop?)",
                    what, static_cast<lua_Integer>(steps->limit));
  } else {
    lua_pushfstring(L, "%s: ran past the chunk's time limit", what);
  }
  lua_concat(L, 2);
  lua_error(L);
  __builtin_unreachable();
}

// Adds "n" steps; raises past the budget or the deadline.
void Count(lua_State* L, const GraphLuaSteps* steps, const char* what, int64_t n) {
  const int64_t before = *steps->used;
  *steps->used += n;
  if (*steps->used > steps->limit) OverBudget(L, steps, what);
  if (steps->deadline_ms != 0 && before / kClockEvery != *steps->used / kClockEvery &&
      GraphLuaNowMillis() > steps->deadline_ms) {
    OverBudget(L, steps, what);
  }
}

const GraphLuaSteps* StepsOf(lua_State* L) {
  return static_cast<const GraphLuaSteps*>(lua_touserdata(L, lua_upvalueindex(1)));
}

unsigned char Uchar(char c) { return static_cast<unsigned char>(c); }

size_t PosRelatI(lua_Integer pos, size_t len) {
  if (pos > 0) return static_cast<size_t>(pos);
  if (pos == 0) return 1;
  if (pos < -static_cast<lua_Integer>(len)) return 1;
  return len + static_cast<size_t>(pos) + 1;
}

// ---------------------------------------------------------------- matcher

struct MatchState {
  const char* src_init;
  const char* src_end;
  const char* p_end;
  lua_State* L;
  const GraphLuaSteps* steps;
  const char* what;
  int matchdepth;
  unsigned char level;
  struct {
    const char* init;
    ptrdiff_t len;
  } capture[kMaxCaptures];
};

inline void Step(MatchState* ms) { Count(ms->L, ms->steps, ms->what, 1); }

const char* match(MatchState* ms, const char* s, const char* p);

int check_capture(MatchState* ms, int l) {
  l -= '1';
  if (l < 0 || l >= ms->level || ms->capture[l].len == kCapUnfinished) {
    return luaL_error(ms->L, "invalid capture index %%%d", l + 1);
  }
  return l;
}

int capture_to_close(MatchState* ms) {
  int level = ms->level;
  for (level--; level >= 0; level--) {
    if (ms->capture[level].len == kCapUnfinished) return level;
  }
  return luaL_error(ms->L, "invalid pattern capture");
}

const char* classend(MatchState* ms, const char* p) {
  switch (*p++) {
    case kEsc: {
      if (p == ms->p_end) luaL_error(ms->L, "malformed pattern (ends with '%%')");
      return p + 1;
    }
    case '[': {
      if (*p == '^') p++;
      do {  // look for a ']'
        if (p == ms->p_end) luaL_error(ms->L, "malformed pattern (missing ']')");
        if (*(p++) == kEsc && p < ms->p_end) p++;  // skip escapes (e.g. '%]')
      } while (*p != ']');
      return p + 1;
    }
    default:
      return p;
  }
}

int match_class(int c, int cl) {
  int res;
  switch (std::tolower(cl)) {
    case 'a': res = std::isalpha(c); break;
    case 'c': res = std::iscntrl(c); break;
    case 'd': res = std::isdigit(c); break;
    case 'g': res = std::isgraph(c); break;
    case 'l': res = std::islower(c); break;
    case 'p': res = std::ispunct(c); break;
    case 's': res = std::isspace(c); break;
    case 'u': res = std::isupper(c); break;
    case 'w': res = std::isalnum(c); break;
    case 'x': res = std::isxdigit(c); break;
    case 'z': res = (c == 0); break;  // deprecated option
    default: return (cl == c);
  }
  return std::islower(cl) ? res : !res;
}

int matchbracketclass(int c, const char* p, const char* ec) {
  int sig = 1;
  if (*(p + 1) == '^') {
    sig = 0;
    p++;  // skip the '^'
  }
  while (++p < ec) {
    if (*p == kEsc) {
      p++;
      if (match_class(c, Uchar(*p))) return sig;
    } else if (*(p + 1) == '-' && p + 2 < ec) {
      p += 2;
      if (Uchar(*(p - 2)) <= c && c <= Uchar(*p)) return sig;
    } else if (Uchar(*p) == c) {
      return sig;
    }
  }
  return !sig;
}

int singlematch(MatchState* ms, const char* s, const char* p, const char* ep) {
  if (s >= ms->src_end) return 0;
  const int c = Uchar(*s);
  switch (*p) {
    case '.': return 1;  // matches any char
    case kEsc: return match_class(c, Uchar(*(p + 1)));
    case '[': return matchbracketclass(c, p, ep - 1);
    default: return Uchar(*p) == c;
  }
}

const char* matchbalance(MatchState* ms, const char* s, const char* p) {
  if (p >= ms->p_end - 1) luaL_error(ms->L, "malformed pattern (missing arguments to '%%b')");
  if (s >= ms->src_end || *s != *p) return nullptr;
  const int b = *p;
  const int e = *(p + 1);
  int cont = 1;
  while (++s < ms->src_end) {
    Step(ms);
    if (*s == e) {
      if (--cont == 0) return s + 1;
    } else if (*s == b) {
      cont++;
    }
  }
  return nullptr;  // string ends out of balance
}

const char* max_expand(MatchState* ms, const char* s, const char* p, const char* ep) {
  ptrdiff_t i = 0;  // counts maximum expand for item
  while (singlematch(ms, s + i, p, ep)) {
    Step(ms);
    i++;
  }
  // keeps trying to match with the maximum repetitions
  while (i >= 0) {
    const char* res = match(ms, s + i, ep + 1);
    if (res) return res;
    i--;  // else didn't match; reduce 1 repetition to try again
  }
  return nullptr;
}

const char* min_expand(MatchState* ms, const char* s, const char* p, const char* ep) {
  for (;;) {
    const char* res = match(ms, s, ep + 1);
    if (res != nullptr) return res;
    if (!singlematch(ms, s, p, ep)) return nullptr;
    s++;  // try with one more repetition
  }
}

const char* start_capture(MatchState* ms, const char* s, const char* p, int what) {
  const int level = ms->level;
  if (level >= kMaxCaptures) luaL_error(ms->L, "too many captures");
  ms->capture[level].init = s;
  ms->capture[level].len = what;
  ms->level = static_cast<unsigned char>(level + 1);
  const char* res = match(ms, s, p);
  if (res == nullptr) ms->level--;  // undo capture
  return res;
}

const char* end_capture(MatchState* ms, const char* s, const char* p) {
  const int l = capture_to_close(ms);
  ms->capture[l].len = s - ms->capture[l].init;  // close capture
  const char* res = match(ms, s, p);
  if (res == nullptr) ms->capture[l].len = kCapUnfinished;  // undo capture
  return res;
}

const char* match_capture(MatchState* ms, const char* s, int l) {
  l = check_capture(ms, l);
  const size_t len = static_cast<size_t>(ms->capture[l].len);
  if (static_cast<size_t>(ms->src_end - s) >= len &&
      std::memcmp(ms->capture[l].init, s, len) == 0) {
    Count(ms->L, ms->steps, ms->what, static_cast<int64_t>(len / 64));
    return s + len;
  }
  return nullptr;
}

const char* match(MatchState* ms, const char* s, const char* p) {
  if (ms->matchdepth-- == 0) luaL_error(ms->L, "pattern too complex");
init:  // using goto's to optimize tail recursion
  Step(ms);
  if (p != ms->p_end) {  // end of pattern?
    switch (*p) {
      case '(': {  // start capture
        if (*(p + 1) == ')') {  // position capture?
          s = start_capture(ms, s, p + 2, kCapPosition);
        } else {
          s = start_capture(ms, s, p + 1, kCapUnfinished);
        }
        break;
      }
      case ')': {  // end capture
        s = end_capture(ms, s, p + 1);
        break;
      }
      case '$': {
        if ((p + 1) != ms->p_end) goto dflt;  // not the last char of the pattern
        s = (s == ms->src_end) ? s : nullptr;  // check end of string
        break;
      }
      case kEsc: {  // escaped sequences not in the format class[*+?-]?
        switch (*(p + 1)) {
          case 'b': {  // balanced string?
            s = matchbalance(ms, s, p + 2);
            if (s != nullptr) {
              p += 4;
              goto init;  // return match(ms, s, p + 4);
            }  // else fail (s == NULL)
            break;
          }
          case 'f': {  // frontier?
            p += 2;
            if (*p != '[') luaL_error(ms->L, "missing '[' after '%%f' in pattern");
            const char* ep = classend(ms, p);  // points to what is next
            const char previous = (s == ms->src_init) ? '\0' : *(s - 1);
            if (!matchbracketclass(Uchar(previous), p, ep - 1) &&
                matchbracketclass(Uchar(*s), p, ep - 1)) {
              p = ep;
              goto init;  // return match(ms, s, ep);
            }
            s = nullptr;  // match failed
            break;
          }
          case '0': case '1': case '2': case '3': case '4':
          case '5': case '6': case '7': case '8': case '9': {  // capture results (%0-%9)?
            s = match_capture(ms, s, Uchar(*(p + 1)));
            if (s != nullptr) {
              p += 2;
              goto init;  // return match(ms, s, p + 2)
            }
            break;
          }
          default:
            goto dflt;
        }
        break;
      }
      default:
      dflt: {  // pattern class plus optional suffix
        const char* ep = classend(ms, p);  // points to optional suffix
        if (!singlematch(ms, s, p, ep)) {  // does not match at least once?
          if (*ep == '*' || *ep == '?' || *ep == '-') {  // accept empty?
            p = ep + 1;
            goto init;  // return match(ms, s, ep + 1);
          }
          s = nullptr;  // '+' or no suffix: fail
        } else {  // matched once
          switch (*ep) {  // handle optional suffix
            case '?': {  // optional
              const char* res = match(ms, s + 1, ep + 1);
              if (res != nullptr) {
                s = res;
              } else {
                p = ep + 1;
                goto init;  // else return match(ms, s, ep + 1);
              }
              break;
            }
            case '+':  // 1 or more repetitions
              s++;     // 1 match already done
              [[fallthrough]];
            case '*':  // 0 or more repetitions
              s = max_expand(ms, s, p, ep);
              break;
            case '-':  // 0 or more repetitions (minimum)
              s = min_expand(ms, s, p, ep);
              break;
            default:  // no suffix
              s++;
              p = ep;
              goto init;  // return match(ms, s + 1, ep);
          }
        }
        break;
      }
    }
  }
  ms->matchdepth++;
  return s;
}

// A plain find: a step per candidate, and one per 64 bytes compared.
const char* lmemfind(MatchState* ms, const char* s1, size_t l1, const char* s2, size_t l2) {
  if (l2 == 0) return s1;        // empty strings are everywhere
  if (l2 > l1) return nullptr;   // avoids a negative 'l1'
  const int64_t per_try = 1 + static_cast<int64_t>(l2 / 64);
  const char* init;  // to search for a '*s2' inside 's1'
  l2--;              // 1st char will be checked by 'memchr'
  l1 = l1 - l2;      // 's2' cannot be found after that
  while (l1 > 0 && (init = static_cast<const char*>(std::memchr(s1, *s2, l1))) != nullptr) {
    Count(ms->L, ms->steps, ms->what, per_try);
    init++;  // 1st char is already checked
    if (std::memcmp(init, s2 + 1, l2) == 0) return init - 1;
    l1 -= static_cast<size_t>(init - s1);  // correct 'l1' and 's1' to try again
    s1 = init;
  }
  return nullptr;
}

size_t get_onecapture(MatchState* ms, int i, const char* s, const char* e, const char** cap) {
  if (i >= ms->level) {
    if (i != 0) luaL_error(ms->L, "invalid capture index %%%d", i + 1);
    *cap = s;
    return static_cast<size_t>(e - s);
  }
  const ptrdiff_t capl = ms->capture[i].len;
  *cap = ms->capture[i].init;
  if (capl == kCapUnfinished) {
    luaL_error(ms->L, "unfinished capture");
  } else if (capl == kCapPosition) {
    lua_pushinteger(ms->L, (ms->capture[i].init - ms->src_init) + 1);
  }
  return static_cast<size_t>(capl);
}

void push_onecapture(MatchState* ms, int i, const char* s, const char* e) {
  const char* cap;
  const ptrdiff_t l = static_cast<ptrdiff_t>(get_onecapture(ms, i, s, e, &cap));
  if (l != kCapPosition) lua_pushlstring(ms->L, cap, static_cast<size_t>(l));
  // else the position was already pushed
}

int push_captures(MatchState* ms, const char* s, const char* e) {
  const int nlevels = (ms->level == 0 && s) ? 1 : ms->level;
  luaL_checkstack(ms->L, nlevels, "too many captures");
  for (int i = 0; i < nlevels; i++) push_onecapture(ms, i, s, e);
  return nlevels;
}

// Whether the pattern has no special characters.
int nospecials(const char* p, size_t l) {
  size_t upto = 0;
  do {
    if (std::strpbrk(p + upto, kSpecials)) return 0;
    upto += std::strlen(p + upto) + 1;  // may have more after \0
  } while (upto <= l);
  return 1;
}

void prepstate(MatchState* ms, lua_State* L, const GraphLuaSteps* steps, const char* what,
               const char* s, size_t ls, const char* p, size_t lp) {
  ms->L = L;
  ms->steps = steps;
  ms->what = what;
  ms->matchdepth = kMaxCalls;
  ms->src_init = s;
  ms->src_end = s + ls;
  ms->p_end = p + lp;
}

void reprepstate(MatchState* ms) { ms->level = 0; }

int str_find_aux(lua_State* L, int find) {
  size_t ls, lp;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  const size_t init = PosRelatI(luaL_optinteger(L, 3, 1), ls) - 1;
  MatchState ms;
  prepstate(&ms, L, StepsOf(L), find ? "string.find" : "string.match", s, ls, p, lp);
  if (init > ls) {  // start after string's end?
    lua_pushnil(L);
    return 1;
  }
  if (find && (lua_toboolean(L, 4) || nospecials(p, lp))) {  // a plain search
    const char* s2 = lmemfind(&ms, s + init, ls - init, p, lp);
    if (s2) {
      lua_pushinteger(L, (s2 - s) + 1);
      lua_pushinteger(L, static_cast<lua_Integer>((s2 - s) + lp));
      return 2;
    }
  } else {
    const char* s1 = s + init;
    const int anchor = (*p == '^');
    if (anchor) {
      p++;
      lp--;  // skip anchor character
    }
    prepstate(&ms, L, ms.steps, ms.what, s, ls, p, lp);
    do {
      reprepstate(&ms);
      const char* res = match(&ms, s1, p);
      if (res != nullptr) {
        if (find) {
          lua_pushinteger(L, (s1 - s) + 1);  // start
          lua_pushinteger(L, res - s);       // end
          return push_captures(&ms, nullptr, nullptr) + 2;
        }
        return push_captures(&ms, s1, res);
      }
    } while (s1++ < ms.src_end && !anchor);
  }
  lua_pushnil(L);  // not found
  return 1;
}

int str_find(lua_State* L) { return str_find_aux(L, 1); }
int str_match(lua_State* L) { return str_find_aux(L, 0); }

struct GMatchState {
  const char* src;        // current position
  const char* p;          // pattern
  const char* lastmatch;  // end of last match
  MatchState ms;
};

int gmatch_aux(lua_State* L) {
  auto* gm = static_cast<GMatchState*>(lua_touserdata(L, lua_upvalueindex(3)));
  gm->ms.L = L;
  for (const char* src = gm->src; src <= gm->ms.src_end; src++) {
    reprepstate(&gm->ms);
    const char* e = match(&gm->ms, src, gm->p);
    if (e != nullptr && e != gm->lastmatch) {
      gm->src = gm->lastmatch = e;
      return push_captures(&gm->ms, src, e);
    }
  }
  return 0;  // not found
}

int gmatch(lua_State* L) {
  size_t ls, lp;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  size_t init = PosRelatI(luaL_optinteger(L, 3, 1), ls) - 1;
  const GraphLuaSteps* steps = StepsOf(L);
  lua_settop(L, 2);  // keep strings on closure to avoid being collected
  auto* gm = static_cast<GMatchState*>(lua_newuserdatauv(L, sizeof(GMatchState), 0));
  if (init > ls) init = ls + 1;  // avoid overflows in 's + init'
  prepstate(&gm->ms, L, steps, "string.gmatch", s, ls, p, lp);
  gm->src = s + init;
  gm->p = p;
  gm->lastmatch = nullptr;
  lua_pushcclosure(L, gmatch_aux, 3);
  return 1;
}

void add_s(MatchState* ms, luaL_Buffer* b, const char* s, const char* e) {
  size_t l;
  lua_State* L = ms->L;
  const char* news = lua_tolstring(L, 3, &l);
  const char* p;
  while ((p = static_cast<const char*>(std::memchr(news, kEsc, l))) != nullptr) {
    luaL_addlstring(b, news, static_cast<size_t>(p - news));
    p++;  // skip ESC
    if (*p == kEsc) {  // '%%'
      luaL_addchar(b, *p);
    } else if (*p == '0') {  // '%0'
      luaL_addlstring(b, s, static_cast<size_t>(e - s));
    } else if (std::isdigit(Uchar(*p))) {  // '%n'
      const char* cap;
      const ptrdiff_t resl = static_cast<ptrdiff_t>(get_onecapture(ms, *p - '1', s, e, &cap));
      if (resl == kCapPosition) {
        luaL_addvalue(b);  // add position to accumulated result
      } else {
        luaL_addlstring(b, cap, static_cast<size_t>(resl));
      }
    } else {
      luaL_error(L, "invalid use of '%c' in replacement string", kEsc);
    }
    l -= static_cast<size_t>(p + 1 - news);
    news = p + 1;
  }
  luaL_addlstring(b, news, l);
}

// Adds the replacement value to "b"; whether the subject changed (function
// calls and table lookups giving nil or false keep the original text).
int add_value(MatchState* ms, luaL_Buffer* b, const char* s, const char* e, int tr) {
  lua_State* L = ms->L;
  switch (tr) {
    case LUA_TFUNCTION: {
      lua_pushvalue(L, 3);
      const int n = push_captures(ms, s, e);  // all captures as arguments
      lua_call(L, n, 1);
      break;
    }
    case LUA_TTABLE: {
      push_onecapture(ms, 0, s, e);  // first capture is the index
      lua_gettable(L, 3);
      break;
    }
    default: {  // LUA_TNUMBER or LUA_TSTRING
      add_s(ms, b, s, e);
      return 1;
    }
  }
  if (!lua_toboolean(L, -1)) {  // nil or false?
    lua_pop(L, 1);
    luaL_addlstring(b, s, static_cast<size_t>(e - s));  // keep original text
    return 0;
  }
  if (!lua_isstring(L, -1)) {
    return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  luaL_addvalue(b);
  return 1;
}

int str_gsub(lua_State* L) {
  size_t srcl, lp;
  const char* src = luaL_checklstring(L, 1, &srcl);
  const char* p = luaL_checklstring(L, 2, &lp);
  const char* lastmatch = nullptr;
  const int tr = lua_type(L, 3);
  const lua_Integer max_s = luaL_optinteger(L, 4, static_cast<lua_Integer>(srcl + 1));
  const int anchor = (*p == '^');
  lua_Integer n = 0;
  int changed = 0;
  MatchState ms;
  luaL_Buffer b;
  luaL_argexpected(L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION ||
                          tr == LUA_TTABLE,
                   3, "string/function/table");
  const GraphLuaSteps* steps = StepsOf(L);
  luaL_buffinit(L, &b);
  if (anchor) {
    p++;
    lp--;  // skip anchor character
  }
  prepstate(&ms, L, steps, "string.gsub", src, srcl, p, lp);
  while (n < max_s) {
    reprepstate(&ms);
    const char* e = match(&ms, src, p);
    if (e != nullptr && e != lastmatch) {  // match?
      n++;
      changed = add_value(&ms, &b, src, e, tr) | changed;
      src = lastmatch = e;
    } else if (src < ms.src_end) {  // otherwise, skip one character
      luaL_addchar(&b, *src++);
    } else {
      break;  // end of subject
    }
    if (anchor) break;
  }
  if (!changed) {
    lua_pushvalue(L, 1);  // return original string
  } else {
    luaL_addlstring(&b, src, static_cast<size_t>(ms.src_end - src));
    luaL_pushresult(&b);
  }
  lua_pushinteger(L, n);
  return 2;
}

// ------------------------------------------------------ other functions

// Runs the original function (upvalue 2, a C function without upvalues) in
// this call's frame, so that its argument errors still name it.
int CallOriginal(lua_State* L) {
  lua_CFunction original = lua_tocfunction(L, lua_upvalueindex(2));
  return original(L);
}

int str_rep(lua_State* L) {
  size_t l = 0, lsep = 0;
  luaL_checklstring(L, 1, &l);
  luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &lsep);
  if (l == 0 && lsep == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  return CallOriginal(L);
}

// Steps for "n" elements, clamped so that a huge n cannot overflow.
int64_t Elements(lua_Integer n) { return n <= 0 ? 0 : n > (INT64_MAX >> 8) ? (INT64_MAX >> 8) : n; }

int tab_insert(lua_State* L) {
  if (lua_gettop(L) == 3 && lua_type(L, 1) == LUA_TTABLE && lua_isinteger(L, 2)) {
    const lua_Integer e = luaL_len(L, 1) + 1;
    Count(L, StepsOf(L), "table.insert", Elements(e - lua_tointeger(L, 2)));
  }
  return CallOriginal(L);
}

int tab_remove(lua_State* L) {
  if (lua_type(L, 1) == LUA_TTABLE && lua_isinteger(L, 2)) {
    Count(L, StepsOf(L), "table.remove", Elements(luaL_len(L, 1) - lua_tointeger(L, 2)));
  }
  return CallOriginal(L);
}

int tab_move(lua_State* L) {
  const lua_Integer f = luaL_checkinteger(L, 2);
  const lua_Integer e = luaL_checkinteger(L, 3);
  if (e >= f && (f > 0 || e < LUA_MAXINTEGER + f)) {
    Count(L, StepsOf(L), "table.move", Elements(e - f + 1));
  }
  return CallOriginal(L);
}

int tab_sort(lua_State* L) {
  if (lua_type(L, 1) != LUA_TTABLE) return CallOriginal(L);
  const lua_Integer n = luaL_len(L, 1);
  int64_t log2 = 1;
  while (log2 < 63 && (lua_Integer{1} << log2) < n) ++log2;
  const int64_t count = Elements(n);
  Count(L, StepsOf(L), "table.sort", count > (INT64_MAX >> 8) / 64 ? count : count * log2);
  return CallOriginal(L);
}

// The most values one call can push: Lua's stack holds at most LUAI_MAXSTACK
// (1,000,000) slots, and asking for more fails before any work.
constexpr int64_t kMaxPushed = 1000000;

int64_t Pushed(lua_Integer n) { return n <= 0 ? 0 : n > kMaxPushed ? kMaxPushed : n; }

// table.unpack, string.byte and utf8.codepoint push a value per element of
// their range: a loop of them was one instruction per million values.
int tab_unpack(lua_State* L) {
  if (lua_isinteger(L, 3)) {
    const lua_Integer i = lua_isinteger(L, 2) ? lua_tointeger(L, 2) : 1;
    const lua_Integer e = lua_tointeger(L, 3);
    Count(L, StepsOf(L), "table.unpack", e >= i && e - i >= 0 ? Pushed(e - i + 1) : 0);
  } else if (lua_type(L, 1) == LUA_TTABLE && lua_isnoneornil(L, 3)) {
    const lua_Integer i = lua_isinteger(L, 2) ? lua_tointeger(L, 2) : 1;
    const lua_Integer e = luaL_len(L, 1);
    Count(L, StepsOf(L), "table.unpack", e >= i && e - i >= 0 ? Pushed(e - i + 1) : 0);
  }
  return CallOriginal(L);
}

// string.byte(s, i, j) and utf8.codepoint(s, i, j): at most a value per
// byte of "s".
int StringRange(lua_State* L, const char* what) {
  if (lua_gettop(L) >= 3 && lua_type(L, 1) == LUA_TSTRING) {
    Count(L, StepsOf(L), what, Pushed(static_cast<lua_Integer>(lua_rawlen(L, 1))));
  }
  return CallOriginal(L);
}
int str_byte(lua_State* L) { return StringRange(L, "string.byte"); }
int utf8_codepoint(lua_State* L) { return StringRange(L, "utf8.codepoint"); }

void Replace(lua_State* L, const char* library, const char* name, lua_CFunction f,
             const GraphLuaSteps* steps, bool wraps) {
  lua_getglobal(L, library);
  lua_pushlightuserdata(L, const_cast<GraphLuaSteps*>(steps));
  int n = 1;
  if (wraps) {
    lua_getfield(L, -2, name);
    n = 2;
  }
  lua_pushcclosure(L, f, n);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

}  // namespace

void InstallCountedLibraries(lua_State* L, const GraphLuaSteps* steps) {
  Replace(L, LUA_STRLIBNAME, "find", str_find, steps, false);
  Replace(L, LUA_STRLIBNAME, "match", str_match, steps, false);
  Replace(L, LUA_STRLIBNAME, "gmatch", gmatch, steps, false);
  Replace(L, LUA_STRLIBNAME, "gsub", str_gsub, steps, false);
  Replace(L, LUA_STRLIBNAME, "rep", str_rep, steps, true);
  Replace(L, LUA_TABLIBNAME, "insert", tab_insert, steps, true);
  Replace(L, LUA_TABLIBNAME, "remove", tab_remove, steps, true);
  Replace(L, LUA_TABLIBNAME, "move", tab_move, steps, true);
  Replace(L, LUA_TABLIBNAME, "sort", tab_sort, steps, true);
  Replace(L, LUA_TABLIBNAME, "unpack", tab_unpack, steps, true);
  Replace(L, LUA_STRLIBNAME, "byte", str_byte, steps, true);
  Replace(L, LUA_UTF8LIBNAME, "codepoint", utf8_codepoint, steps, true);
}

}  // namespace baton
