// Issue 15, the engine's part: a backtracking Lua pattern ends within the
// chunk's budget (and Lua's patterns mean what they meant); a lost agent
// holds nothing and may not claim or heartbeat until it registers again; a
// graph runner killed with -9 leaves no command running beside the node's
// rerun.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <lua.hpp>

#include "model/graph_lua.h"
#include "test_util.h"
#include "util/subprocess.h"

extern char** environ;

namespace baton::testing {
namespace {

namespace fs = std::filesystem;

// Runs "code" as a graph Lua chunk on another thread; a chunk that has not
// returned within 60 s fails the suite at once instead of hanging it.
Result<GraphLuaResult> RunBounded(const std::string& code, const std::string& chunk) {
  auto task = std::make_shared<std::packaged_task<Result<GraphLuaResult>()>>(
      [code, chunk] { return RunGraphLua(code, chunk, Json::object(), false); });
  std::future<Result<GraphLuaResult>> done = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "FAILED: the Lua chunk %s did not end within 60 s:\n%s\n", chunk.c_str(),
                 code.c_str());
    std::fflush(stderr);
    _exit(1);
  }
  return done.get();
}

// ---- Lua: every chunk ends within its budget --------------------------------

TEST(SecurityEngineLua, WorkInCFunctionsEndsWithTheLimitError) {
  struct Case {
    const char* name;
    const char* code;
  };
  const Case cases[] = {
      // "What was seen" 5: a pattern that backtracks, inside one call.
      {"find", "return string.rep('a', 30000):find('.-.-.-.-.-b')"},
      {"match", "return ('a'):rep(30000):match('.-.-.-.-.-b')"},
      {"gmatch", "for m in ('a'):rep(30000):gmatch('.-.-.-.-.-b') do end"},
      {"gsub", "return (string.gsub(('a'):rep(30000), '.-.-.-.-.-b', 'x'))"},
      {"max_expand", "return ('a'):rep(30000):find('a*a*a*a*a*b')"},
      {"balance", "return ('('):rep(200000):find('%b()%b()')"},
      // A plain find whose every candidate compares half a megabyte.
      {"plain find", "local s = ('a'):rep(1000000) return s:find(('a'):rep(500000) .. 'b', 1, true)"},
      // C loops that a length or a range makes as long as one likes.
      {"table.move", "return #table.move({}, 1, 1e15, 2)"},
      {"table.insert", "local t = setmetatable({}, {__len = function() return 1e15 end}) "
                       "table.insert(t, 1, 0)"},
      {"table.remove", "local t = setmetatable({}, {__len = function() return 1e15 end}) "
                       "table.remove(t, 1)"},
      // Copies in a loop: each is one instruction, the bytes count.
      {"concatenation", "local s = ('a'):rep(10000000) for i = 1, 1e9 do local t = s .. 'b' end"},
      // A million values pushed per call, in a loop.
      {"table.unpack", "local t = {} for i = 1, 999000 do t[i] = i end "
                       "for k = 1, 1e9 do local a = table.unpack(t) end"},
      {"string.byte", "local s = ('a'):rep(999000) for k = 1, 1e9 do local a = s:byte(1, -1) end"},
  };
  for (const Case& c : cases) {
    const std::string chunk = std::string("eval ") + c.name;
    const auto began = std::chrono::steady_clock::now();
    Result<GraphLuaResult> r = RunBounded(c.code, chunk);
    std::printf("  %-14s stopped after %lld ms\n", c.name,
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::steady_clock::now() - began)
                                           .count()));
    ASSERT_FALSE(r.ok()) << c.name << ": " << c.code << " returned " << r->value.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << c.name << ": " << r.status().ToString();
    EXPECT_EQ(r.status().message().rfind(chunk + ":", 0), 0u)
        << c.name << ": the error names the chunk: " << r.status().ToString();
    EXPECT_NE(r.status().message().find("instructions"), std::string::npos)
        << c.name << ": " << r.status().ToString();
  }
  // string.rep of nothing, any number of times, is nothing at once.
  Result<GraphLuaResult> empty = RunBounded("return #string.rep('', 1e15) + #(''):rep(1e15, '')", "eval rep");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->value, 0);
}

// The same snippet through stock Lua 5.4 (all of its string and table
// libraries): what it returns, or "error: <message>".
std::string StockLua(const std::string& code) {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  std::string out;
  if (luaL_loadbufferx(L, code.data(), code.size(), "=stock", "t") != LUA_OK ||
      lua_pcall(L, 0, 1, 0) != LUA_OK) {
    const char* m = lua_tostring(L, -1);
    out = std::string("error: ") + (m != nullptr ? m : "?");
  } else {
    const char* m = lua_tostring(L, -1);
    out = m != nullptr ? m : "(not a string)";
  }
  lua_close(L);
  return out;
}

std::string SandboxLua(const std::string& code) {
  Result<GraphLuaResult> r = RunBounded(code, "stock");
  if (!r.ok()) return "error: " + std::string(r.status().message());
  return r->value.is_string() ? r->value.get<std::string>() : "(not a string)";
}

// The counted library is Lua's own: each snippet gives what stock Lua gives
// (and, where written, the value the manual says).
TEST(SecurityEngineLua, PatternsMeanWhatTheyMeanInLua) {
  const std::string prelude =
      "local function S(...) local t = table.pack(...) "
      "for i = 1, t.n do t[i] = tostring(t[i]) end return table.concat(t, ',', 1, t.n) end\n";
  struct Case {
    const char* code;
    const char* want;  // nullptr: only compared with stock Lua
  };
  const Case cases[] = {
      {"return S(string.find('hello world', 'o w'))", "5,7"},
      {"return S(string.find('hello', 'l+'))", "3,4"},
      {"return S(string.find('hello', '(l)(l)'))", "3,4,l,l"},
      {"return S(string.find('hello', 'xyz'))", "nil"},
      {"return S(string.find('a.b', '.', 1, true))", "2,2"},
      {"return S(string.find('a+b', '+', 1, true))", "2,2"},
      {"return S(string.find('abc', 'b', -1))", "nil"},
      {"return S(string.find('abc', 'b', -2))", "2,2"},
      {"return S(string.find('abc', '', 10))", "nil"},
      {"return S(string.find('abc', '', 4))", "4,3"},
      {"return S(string.find('hello', '^h'))", "1,1"},
      {"return S(string.find('hello', '^e'))", "nil"},
      {"return S(('hello'):find('lo$'))", "4,5"},
      {"return S(('hello'):find('l$'))", "nil"},
      {"return S(('a$b'):find('$b'))", "2,3"},
      {"return S(string.match('key = value', '(%w+)%s*=%s*(%w+)'))", "key,value"},
      {"return S(string.match('  trim  ', '^%s*(.-)%s*$'))", "trim"},
      {"return S(string.match('hello', '()ll()'))", "3,5"},
      {"return S(string.match('THE (quick) fox', '%((%a+)%)'))", "quick"},
      {"return S(string.match('f(a(b)c)d', '%b()'))", "(a(b)c)"},
      {"return S(string.match('f(a(b)c', '%b()'))", "(b)"},
      {"return S(string.match('THE (quick) fox', '%f[%a]%a+', 5))", "quick"},
      {"return S(string.gsub('THE (quick) fox', '%f[%a]%a+', 'W'))", "W (W) W,3"},
      {"return S(string.match('2024-11-25', '(%d+)-(%d+)-(%d+)'))", "2024,11,25"},
      {"return S(string.find('abc]def', '[]]'))", "4,4"},
      {"return S(string.match('x-y z', '[a-z%-]+'))", "x-y"},
      {"return S(string.match('hello', '[^aeiou]+'))", "h"},
      {"return S(string.match('abc123DEF!?', '(%a+)(%d+)(%u+)(%p+)'))", "abc,123,DEF,!?"},
      {"return S(string.match('a1 B2', '%l%d%s%u%x'))", "a1 B2"},
      {"return S(string.match('tab\\there', '%c'))", "\t"},
      {"return S(string.match('x y', '%S+$'))", "y"},
      {"return S(string.match([[say \"hi\" now]], [[([\"'])(.-)%1]]))", "\",hi"},
      {"return S(string.match('aaab', 'a-b'))", "aaab"},
      {"return S(string.match('aaa', 'a-'))", ""},
      {"return S(string.match('ab', 'a?b'), string.match('b', 'a?b'))", "ab,b"},
      {"return S(('<a><b>'):match('<(.-)>'), ('<a><b>'):match('<(.*)>'))", "a,a><b"},
      {"return S(string.match('hello', '.-(l+)(.*)'))", "ll,o"},
      {"return S(string.gsub('hello world', 'o', '0'))", "hell0 w0rld,2"},
      {"return S(string.gsub('hello world', '(%w+)', '<%1>'))", "<hello> <world>,2"},
      {"return S(string.gsub('abc', '%w', '%0%0'))", "aabbcc,3"},
      {"return S(string.gsub('abc', '%w', '%%'))", "%%%,3"},
      {"return S(string.gsub('$name is $age', '%$(%w+)', {name = 'bob', age = 42}))", "bob is 42,2"},
      {"return S(string.gsub('a b c', '%w', function(c) return c:upper() end, 2))", "A B c,2"},
      {"return S(string.gsub('abc', '', '-'))", "-a-b-c-,4"},
      {"return S(string.gsub('hello', 'l', {l = false}))", "hello,2"},
      {"return S(string.gsub('hello', '()l', '%1'))", "he34o,2"},
      {"return S(string.gsub('hello world', '^h', 'H'))", "Hello world,1"},
      {"return S(string.gsub('abc', '.', {a = 1, b = true}))", nullptr},
      {"local t = {} for k, v in string.gmatch('a=1, b=2', '(%w+)=(%w+)') do t[#t + 1] = k .. v end "
       "return table.concat(t, ';')",
       "a1;b2"},
      {"local t = {} for w in ('one two  three'):gmatch('%a+') do t[#t + 1] = w end "
       "return table.concat(t, '|')",
       "one|two|three"},
      {"local t = {} for p in ('abc'):gmatch('()') do t[#t + 1] = p end return table.concat(t, ',')",
       "1,2,3,4"},
      {"local t = {} for w in ('^a^a'):gmatch('^a') do t[#t + 1] = w end return table.concat(t, ',')",
       nullptr},
      {"local t = {} for w in ('abcabc'):gmatch('b', 3) do t[#t + 1] = w end return #t .. ''", nullptr},
      {"return S(string.rep('ab', 3, ','), string.rep('', 5), string.rep('x', 0), string.rep('x', -1))",
       "ab,ab,ab,,,"},
      {"local t = {3, 1, 2} table.sort(t) return table.concat(t, ',')", "1,2,3"},
      {"local t = {3, 1, 2} table.sort(t, function(a, b) return a > b end) return table.concat(t, ',')",
       "3,2,1"},
      {"local t = {1, 2, 3} table.insert(t, 1, 9) table.insert(t, 7) return table.concat(t, ',')",
       "9,1,2,3,7"},
      {"local t = {1, 2, 3} return S(table.remove(t, 1), table.remove(t), #t)", "1,3,1"},
      {"return table.concat(table.move({1, 2, 3}, 1, 3, 2), ',')", "1,1,2,3"},
      {"return table.concat(table.move({1, 2, 3}, 1, 3, 1, {}), ',')", "1,2,3"},
      {"return S(table.unpack({1, 2, 3})) .. ';' .. S(table.unpack({1, 2, 3}, 2)) .. ';' .. "
       "S(table.unpack({1, 2, 3}, 2, 5)) .. ';' .. S(table.unpack({}, 3, 1))",
       "1,2,3;2,3;2,3,nil,nil;"},
      {"return S(('hello'):byte(1, -1)) .. ';' .. S(('hello'):byte()) .. ';' .. S(('hello'):byte(10, 20))",
       "104,101,108,108,111;104;"},
      {"return S(utf8.codepoint('h\\u{e9}!', 1, -1))", "104,233,33"},
      {"return table.unpack({}, 1, 1e8)", nullptr},
      {"return utf8.codepoint('\\xff', 1, -1)", nullptr},
      // Errors, as stock Lua words them.
      {"return ('a'):find('%')", nullptr},
      {"return ('a'):find('[a')", nullptr},
      {"return ('a'):gsub('(', 'x')", nullptr},
      {"return ('a'):gsub(')', 'x')", nullptr},
      {"return ('a'):gsub('a', '%2')", nullptr},
      {"return ('a'):gsub('a', '%x')", nullptr},
      {"return ('a'):find('%b')", nullptr},
      {"return ('a'):find('%fa')", nullptr},
      {"return ('a'):find('%1')", nullptr},
      {"return ('a'):gsub('a', true)", nullptr},
      {"return ('a'):gsub('a', function() return {} end)", nullptr},
      {"return ('a'):rep(1e18, 'xx')", nullptr},
      {"return table.insert({}, 5, 1)", nullptr},
      {"return table.insert({}, 1, 2, 3)", nullptr},
      {"return table.remove({}, 5)", nullptr},
      {"return table.move({}, 1, 2)", nullptr},
      {"return table.sort({1, 2}, 3)", nullptr},
      {"return string.find()", nullptr},
      {"return (string.rep('(', 40) .. 'a' .. string.rep(')', 40)):len() .. S(('a'):find(string.rep('(', 40) .. 'a' .. string.rep(')', 40)))", nullptr},
      {"return S(('a'):rep(300):find(('a?'):rep(300) .. ('a'):rep(300)))", nullptr},
  };
  for (const Case& c : cases) {
    const std::string code = prelude + c.code;
    const std::string stock = StockLua(code);
    std::string ours = SandboxLua(code);
    // Ours names the chunk in front of Lua's message, and the stock state's
    // chunk is called "stock" too.
    if (ours.rfind("error: stock: ", 0) == 0 && stock.rfind("error: stock:", 0) != 0) {
      ours = "error: " + ours.substr(14);
    }
    EXPECT_EQ(ours, stock) << c.code;
    if (c.want != nullptr) {
      EXPECT_EQ(ours, c.want) << c.code;
    }
  }
}

// ---- Lost agents hold nothing -------------------------------------------------

class SecurityEngineAgents : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = OpenApi(":memory:", false, &time_);
    MustCall(*api_, "agent.register", {{"id", "coder"}}, Agent("coder"));
    MustCall(*api_, "agent.register", {{"id", "reviewer"}}, Agent("reviewer"));
  }
  std::string NewTask(const std::string& title) {
    return MustCall(*api_, "task.create", {{"title", title}})["id"].get<std::string>();
  }
  std::string StatusOf(const std::string& id) {
    return MustCall(*api_, "task.show", {{"id", id}})["status"].get<std::string>();
  }
  // Makes "coder" lost: its heartbeat is old, the reconciler runs.
  Json LoseCoder() {
    time_.Advance(30);
    MustCall(*api_, "agent.heartbeat", {{"id", "reviewer"}}, Agent("reviewer"));
    return MustCall(*api_, "agent.reconcile", {{"lost_after_ms", 20}}, Coordinator());
  }
  testing::FakeTime time_;
  std::unique_ptr<Api> api_;
};

TEST_F(SecurityEngineAgents, ALostAgentMayNotClaimOrHeartbeatUntilItRegistersAgain) {
  const std::string a = NewTask("a");
  const std::string b = NewTask("b");
  const std::string c = NewTask("c");
  const Json claim_a = MustCall(*api_, "task.claim", {{"task", a}}, Agent("coder"));
  const Json claim_b = MustCall(*api_, "task.claim", {{"task", b}}, Agent("coder"));
  const Json result = LoseCoder();
  ASSERT_EQ(result["lost"].size(), 1u) << result.dump();
  EXPECT_EQ(result["lost"][0]["released_tasks"], a < b ? Json::array({a, b}) : Json::array({b, a}));
  EXPECT_EQ(MustCall(*api_, "agent.show", {{"id", "coder"}})["status"], "lost");
  // Freed, each with its own event in the ledger.
  EXPECT_EQ(StatusOf(a), "ready");
  EXPECT_EQ(StatusOf(b), "ready");
  const Json events = MustCall(*api_, "ledger.events", {{"kind", "task.status"}})["events"];
  int freed = 0;
  for (const Json& e : events) {
    if (e["payload"]["to"] == "ready" &&
        e["payload"]["reason"].get<std::string>().find("agent coder lost") != std::string::npos) {
      ++freed;
    }
  }
  EXPECT_EQ(freed, 2) << events.dump();

  struct Attempt {
    const char* op;
    Json input;
    StatusCode code;
  };
  const Attempt attempts[] = {
      {"task.claim", {{"task", c}}, StatusCode::kFailedPrecondition},
      {"task.claim", Json::object(), StatusCode::kFailedPrecondition},
      {"task.heartbeat", {{"task", a}, {"epoch", claim_a["lease"]["epoch"]}}, StatusCode::kFailedPrecondition},
      {"agent.heartbeat", {{"id", "coder"}}, StatusCode::kFailedPrecondition},
      {"agent.heartbeat", {{"id", "coder"}, {"status", "working"}}, StatusCode::kFailedPrecondition},
      {"agent.set_status", {{"id", "coder"}, {"status", "working"}}, StatusCode::kFailedPrecondition},
      // Fencing still refuses its stale completions, fails and releases.
      {"task.complete", {{"task", a}, {"epoch", claim_a["lease"]["epoch"]}}, StatusCode::kAborted},
      {"task.fail", {{"task", b}, {"epoch", claim_b["lease"]["epoch"]}}, StatusCode::kAborted},
      {"task.release", {{"task", b}, {"epoch", claim_b["lease"]["epoch"]}}, StatusCode::kAborted},
  };
  for (const Attempt& at : attempts) {
    const Status s = Refused(*api_, at.op, at.input, at.code, Agent("coder"));
    if (at.code == StatusCode::kFailedPrecondition) {
      EXPECT_NE(s.message().find("coder is lost"), std::string::npos) << at.op << ": " << s.ToString();
      EXPECT_NE(s.message().find("register it again"), std::string::npos) << at.op << ": " << s.ToString();
    }
  }
  EXPECT_EQ(StatusOf(c), "ready");
  EXPECT_EQ(MustCall(*api_, "agent.show", {{"id", "coder"}})["status"], "lost");

  // Registering again brings it back; then it claims as before.
  EXPECT_EQ(MustCall(*api_, "agent.register", {{"id", "coder"}}, Agent("coder"))["status"], "working");
  const Json again = MustCall(*api_, "task.claim", {{"task", a}}, Agent("coder"));
  EXPECT_EQ(again["claimed"], true);
  EXPECT_GT(again["lease"]["epoch"].get<int64_t>(), claim_a["lease"]["epoch"].get<int64_t>());
  MustCall(*api_, "task.complete", {{"task", a}, {"epoch", again["lease"]["epoch"]}}, Agent("coder"));
  EXPECT_EQ(StatusOf(a), "done");
}

// Marked lost by a coordinator instead of the reconciler: the same.
TEST_F(SecurityEngineAgents, AnAgentSetLostByHandHoldsNothingEither) {
  const std::string a = NewTask("a");
  const Json claim = MustCall(*api_, "task.claim", {{"task", a}}, Agent("coder"));
  MustCall(*api_, "agent.set_status", {{"id", "coder"}, {"status", "working"}}, Coordinator());
  MustCall(*api_, "agent.set_status", {{"id", "coder"}, {"status", "lost"}}, Coordinator());
  EXPECT_EQ(StatusOf(a), "ready");
  (void)Refused(*api_, "task.heartbeat", {{"task", a}, {"epoch", claim["lease"]["epoch"]}},
                StatusCode::kFailedPrecondition, Agent("coder"));
  (void)Refused(*api_, "task.claim", {{"task", a}}, StatusCode::kFailedPrecondition, Agent("coder"));
  const Json again = MustCall(*api_, "agent.reconcile", {{"lost_after_ms", 600000}}, Coordinator());
  EXPECT_TRUE(again["lost"].empty()) << again.dump();
}

// ---- A killed runner's children die with it -----------------------------------

bool Alive(int64_t pid) { return ProcessStartTicks(pid) >= 0; }  // zombies are dead

std::string Slurp(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

// `baton graph run` killed with -9 while its command node waits on a
// background sleeper; running the run again by its id first ends the
// sleeper's process group, then runs the node once more.
TEST(SecurityEngineRunner, AResumedNodeNeverRunsBesideTheKilledRunnersCommand) {
  TempDir dir;
  const std::string work = dir.File("work");
  fs::create_directories(work);
  std::ofstream(work + "/workflow.yaml") << "id: orphan\n"
                                            "nodes:\n"
                                            "  - name: WORK\n"
                                            "    type: command\n"
                                            "    command: sh work.sh\n"
                                            "    then: END\n";
  // Each run says whether the sleeper of the run before is still alive.
  std::ofstream(work + "/work.sh")
      << "n=$(cat runs 2>/dev/null || echo 0); n=$((n + 1)); echo $n > runs\n"
         "if [ -f sleeper.pid ]; then\n"
         "  p=$(cat sleeper.pid); s=gone\n"
         "  if [ -r /proc/$p/stat ] && [ \"$(cut -d' ' -f3 /proc/$p/stat)\" != Z ]; then s=alive; fi\n"
         "  echo \"run $n: orphan $s\" >> calls.log\n"
         "else\n"
         "  echo \"run $n\" >> calls.log\n"
         "fi\n"
         "if [ -f hang ]; then\n"
         "  sleep 600 & echo $! > sleeper.tmp; mv sleeper.tmp sleeper.pid; wait\n"
         "fi\n";
  std::ofstream(work + "/hang") << "1\n";
  const std::string store = testing::InitStore(dir.File("baton.db"));
  std::vector<std::string> args = {BatonBin(), "--store", store, "graph", "run",
                                   work + "/workflow.yaml", "--id", "k", "--workdir", work};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t runner = -1;
  ASSERT_EQ(posix_spawn(&runner, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  for (int i = 0; i < 3000 && !fs::exists(work + "/sleeper.pid"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(work + "/sleeper.pid"));
  const int64_t sleeper = std::stoll(Slurp(work + "/sleeper.pid"));
  ASSERT_EQ(kill(runner, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(runner, &status, 0), runner);
  fs::remove(work + "/hang");
  ASSERT_TRUE(Alive(sleeper)) << "the killed runner's command left its sleeper running";

  ProcessResult resumed =
      RunBaton({"--store", store, "graph", "run", work + "/workflow.yaml", "--id", "k", "--workdir", work});
  const bool orphan_left = Alive(sleeper);
  if (orphan_left) kill(static_cast<pid_t>(sleeper), SIGKILL);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("run k: completed"), std::string::npos) << resumed.out;
  EXPECT_FALSE(orphan_left) << "the sleeper outlived the resume";
  // The node ran exactly once more, and the orphan was gone when it did.
  std::vector<std::string> lines;
  std::istringstream log(Slurp(work + "/calls.log"));
  for (std::string line; std::getline(log, line);) lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<std::string>{"run 1", "run 2: orphan gone"}));
  // The run says which group it ended, and why it was the right one.
  std::unique_ptr<Api> api = OpenApi(store);
  const Json events =
      MustCall(*api, "ledger.events", {{"run", "k"}, {"kind", "graph.node.interrupted"}})["events"];
  ASSERT_EQ(events.size(), 1u);
  const Json ended = events[0]["payload"].value("processes", Json::array());
  ASSERT_EQ(ended.size(), 1u) << events.dump();
  EXPECT_EQ(ended[0]["node"], "WORK");
  EXPECT_NE(ended[0]["ended"].get<std::string>().find("ended by"), std::string::npos) << ended.dump();
  EXPECT_EQ(MustCall(*api, "ledger.events", {{"run", "k"}, {"kind", "graph.process"}})["events"].size(),
            2u);
  EXPECT_FALSE(MustCall(*api, "run.show", {{"id", "k"}})["meta"]["graph"].contains("processes"));
}

// A recorded group whose leader's pid now names another process is left
// alone; the group recorded is ended.
TEST(SecurityEngineRunner, EndProcessGroupKillsOnlyTheGroupRecorded) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  std::string sleep_bin = "/bin/sleep", seconds = "600";
  char* argv[] = {sleep_bin.data(), seconds.data(), nullptr};
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, &attr, argv, environ), 0);
  posix_spawnattr_destroy(&attr);
  const int64_t start = ProcessStartTicks(pid);
  ASSERT_GE(start, 0);
  const std::string other = EndProcessGroup(pid, start + 1, 100);
  EXPECT_NE(other.find("not ours"), std::string::npos) << other;
  EXPECT_TRUE(Alive(pid));
  const std::string ours = EndProcessGroup(pid, start, 2000);
  EXPECT_EQ(ours, "ended by SIGTERM (1 processes)");
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_EQ(EndProcessGroup(pid, start, 100), "no process left");
}

}  // namespace
}  // namespace baton::testing
