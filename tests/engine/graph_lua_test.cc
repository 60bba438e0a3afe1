// The pieces beneath the graph runner (docs/graph.md): a node's state
// delta, and the Lua that routing, eval and dynamic nodes run — its
// conversions both ways, its sandbox, and the conversation a chunk reads
// where it reads it (issue 21 item 3).

#include <gtest/gtest.h>

#include <string>

#include "model/graph_delta.h"
#include "model/graph_lua.h"
#include "util/json_util.h"

namespace baton {
namespace {

TEST(GraphDeltaTest, StoresTheAppendedTailAndRoundTrips) {
  const Json before = {{"a", 1}, {"h", {1, 2}}, {"gone", true}, {"same", {{"x", 1}}}};
  const Json after = {{"a", 2}, {"h", {1, 2, 3}}, {"same", {{"x", 1}}}, {"new", nullptr}};
  const Json delta = GraphStateDelta(before, after);
  EXPECT_EQ(delta, Json({{"set", {{"a", 2}, {"new", nullptr}}},
                         {"append", {{"h", {3}}}},
                         {"unset", {"gone"}}}));
  Json state = before;
  ASSERT_TRUE(ApplyGraphStateDelta(state, delta).ok());
  EXPECT_EQ(state, after);
  EXPECT_TRUE(GraphDeltaEmpty(GraphStateDelta(after, after)));
  // A shorter or rewritten array is set whole.
  EXPECT_EQ(GraphStateDelta({{"h", {1, 2}}}, {{"h", {2, 1, 3}}}), Json({{"set", {{"h", {2, 1, 3}}}}}));
  Json bad = {{"h", 1}};
  EXPECT_EQ(ApplyGraphStateDelta(bad, {{"append", {{"h", {1}}}}}).code(), StatusCode::kDataLoss);
}

TEST(GraphLuaTest, ConvertsBothWaysAndKeepsItsSandbox) {
  const Json state = {{"currentNode", "A"},
                      {"status", "running"},
                      {"context", {{"list", Json::array()}, {"obj", Json::object()}, {"n", nullptr}, {"f", 1.5}}},
                      {"conversationHistory", Json::array()}};
  Result<GraphLuaResult> r = RunGraphLua("context.k = #context.list; return io == nil and os.execute == nil",
                                         "t", state, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->truthy);
  EXPECT_EQ(r->state["context"], Json({{"list", Json::array()}, {"obj", Json::object()}, {"n", nullptr},
                                       {"f", 1.5}, {"k", 0}}));
  Result<GraphLuaResult> loop = RunGraphLua("while true do end", "spin", state, false);
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("instructions"), std::string::npos);
  Result<GraphLuaResult> fn = RunGraphLua("context.f = string.len", "fn", state, true);
  EXPECT_NE(fn.status().message().find("state.context.f: a Lua function cannot be JSON"), std::string::npos)
      << fn.status().ToString();
  EXPECT_EQ(RunGraphLua("x = = 1", "bad", state, false).status().code(), StatusCode::kInvalidArgument);
  // Found in review: pcall caught the limit and looped for ever; print
  // wrote into baton's stdout; a metamethod on _G ran unprotected after the
  // chunk and aborted the process; a sparse array grew without bound.
  EXPECT_NE(RunGraphLua("while true do pcall(function() while true do end end) end", "p", state, false)
                .status().message().find("attempt to call a nil value (global 'pcall')"),
            std::string::npos);
  EXPECT_TRUE(RunGraphLua("return print == nil", "pr", state, false)->truthy);
  Result<GraphLuaResult> meta = RunGraphLua(
      "state = nil; setmetatable(_G, {__index = function() error('boom') end})", "g", state, true);
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_TRUE(meta->state.is_null());
  Result<GraphLuaResult> sparse = RunGraphLua("context.list[2^40] = 1", "s", state, true);
  EXPECT_NE(sparse.status().message().find("an array with holes"), std::string::npos)
      << sparse.status().ToString();
  Result<GraphLuaResult> gc = RunGraphLua(
      "setmetatable({}, {__gc = function() while true do end end}); return 1", "gc", state, false);
  // Finalizers run with hooks off, out of the limit's reach: refused.
  EXPECT_NE(gc.status().message().find("__gc is not allowed"), std::string::npos) << gc.status().ToString();
}

// Issue 21 item 3: a chunk's conversation is read where it reads it, so a
// node costs what it touches, not the conversation's length; it reads,
// counts, walks and appends as before, and cannot rewrite a message.
TEST(GraphLuaTest, TheConversationIsReadWhereTheChunkReadsItAndOnlyAppendedTo) {
  Json history = Json::array();
  for (int i = 0; i < 3; ++i) history.push_back({{"type", "user"}, {"content", "m" + std::to_string(i)}});
  const Json state = {{"currentNode", "n"},
                      {"status", "running"},
                      {"context", Json::object()},
                      {"conversationHistory", history}};
  Result<GraphLuaResult> r = RunGraphLua(
      "local h = state.conversationHistory\n"
      "local seen = {}\n"
      "for i, m in ipairs(h) do seen[#seen + 1] = i .. m.content end\n"
      "for i, m in pairs(h) do seen[#seen + 1] = i .. m.content end\n"
      "context.before = #h\n"
      "context.same = h[1] == h[1]\n"
      "table.insert(h, {type = 'assistant', content = 'new'})\n"
      "h[#h + 1] = {type = 'assistant', content = 'newer'}\n"
      "context.after = #h; context.last = h[#h].content; context.seen = table.concat(seen, ',')\n"
      "context.missing = h[99] == nil and h.x == nil",
      "t", state, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->state["context"],
            Json({{"before", 3}, {"same", true}, {"after", 5}, {"last", "newer"}, {"missing", true},
                  {"seen", "1m0,2m1,3m2,1m0,2m1,3m2"}}));
  ASSERT_TRUE(r->history_appended.has_value());
  EXPECT_EQ(*r->history_appended,
            Json::parse(R"([{"type":"assistant","content":"new"},{"type":"assistant","content":"newer"}])"));
  EXPECT_FALSE(r->state.contains("conversationHistory"));
  // As before, the chunk may do what it likes with its view (sort it,
  // remove from it, change a message): the node keeps only what lies past
  // the conversation's length.
  Result<GraphLuaResult> shuffled = RunGraphLua(
      "local h = state.conversationHistory\n"
      "table.sort(h, function(a, b) return a.content > b.content end)\n"
      "context.first = h[1].content; h[2] = {content = 'changed'}\n"
      "table.remove(h, 1); table.insert(h, {content = 'x'}); table.insert(h, {content = 'y'})\n"
      "context.n = #h; context.raw = rawlen(h); context.next = next(h) ~= nil\n"
      "context.float = h[1.0].content; h[(#h + 1) / 1] = {content = 'z'}\n"
      "local f, t = pairs(h); context.past = f(t, math.maxinteger) == nil\n"
      "return h",
      "s", state, true);
  ASSERT_TRUE(shuffled.ok()) << shuffled.status().ToString();
  EXPECT_EQ(shuffled->state["context"]["first"], "m2");
  EXPECT_EQ(shuffled->state["context"]["n"], 4);
  EXPECT_EQ(shuffled->state["context"]["raw"], 4);
  EXPECT_EQ(shuffled->state["context"]["next"], true);
  EXPECT_EQ(shuffled->state["context"]["float"], "changed");
  EXPECT_EQ(shuffled->state["context"]["past"], true);
  // Returned (or put in the context, or sent as a body), it is every message.
  ASSERT_EQ(shuffled->value.size(), 5u) << shuffled->value.dump();
  EXPECT_EQ(shuffled->value[4]["content"], "z");
  EXPECT_EQ(*shuffled->history_appended, Json::parse(R"([{"content":"y"},{"content":"z"}])"));
  // What a plain array allowed still works: nil past the end, removing
  // from an empty one, moving past the end (a gap, then filled).
  Result<GraphLuaResult> plain = RunGraphLua(
      "local h = state.conversationHistory\n"
      "h[9] = nil; h[0] = nil; table.remove(h, #h + 1)\n"
      "table.move(h, 1, #h, 3)\n"
      "context.n = #h; context.first = h[1].content; context.third = h[3].content\n"
      "h[2] = nil; local keys = {}; for i in pairs(h) do keys[#keys + 1] = i end\n"
      "context.keys = table.concat(keys, ',')",
      "p", state, true);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->state["context"]["n"], 5);
  EXPECT_EQ(plain->state["context"]["first"], "m0");
  EXPECT_EQ(plain->state["context"]["third"], "m0");
  EXPECT_EQ(plain->state["context"]["keys"], "1,3,4,5");
  EXPECT_EQ(*plain->history_appended, Json::parse(R"([{"type":"user","content":"m1"},{"type":"user","content":"m2"}])"));
  // A conversation that is no array has no proxy: setting it to nil is no
  // crash.
  Json odd = state;
  odd["conversationHistory"] = "not an array";
  EXPECT_TRUE(RunGraphLua("state.conversationHistory = nil", "o", odd, true).ok());
  // Copies of the messages count against the conversion's value budget.
  Json long_state = state;
  long_state["conversationHistory"] = Json::array();
  for (int i = 0; i < 1000; ++i) long_state["conversationHistory"].push_back({{"content", "x"}});
  Result<GraphLuaResult> copies = RunGraphLua(
      "for k = 1, 5000 do context['c' .. k] = state.conversationHistory end", "c", long_state, true);
  EXPECT_FALSE(copies.ok());
  EXPECT_NE(copies.status().message().find("values to convert"), std::string::npos)
      << copies.status().ToString();
  for (const char* refused_code :
       {"state.conversationHistory[99] = {}", "state.conversationHistory.x = 1",
        "setmetatable(state.conversationHistory, {})",
        "local h = state.conversationHistory; h[#h + 1] = h"}) {
    Result<GraphLuaResult> refused = RunGraphLua(refused_code, "w", state, true);
    EXPECT_FALSE(refused.ok()) << refused_code;
  }
  // A table of the chunk's own in its place is taken as before.
  Result<GraphLuaResult> replaced =
      RunGraphLua("state.conversationHistory = {1, 2, 3, 4}", "r", state, true);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_FALSE(replaced->history_appended.has_value());
  EXPECT_EQ(replaced->state["conversationHistory"], Json({1, 2, 3, 4}));
}

}  // namespace
}  // namespace baton
