// The graph runner (docs/graph.md "Running"): the issue processor of
// examples/graph/issue-run with real commands and a stand-in agent, a test
// failure routed on its exit code; kill -9 inside a node and resume (only
// that node runs again); fork; pause and resume; cancel; bad definitions and
// edited ones refused with nothing changed; human nodes; retention. The
// pieces beneath (deltas, Lua) are graph_lua_test.cc's.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>

#include <gtest/gtest.h>
#include <httplib.h>

#include "engine/graph/graph_runs.h"
#include "store/store_wrapper.h"
#include "test_util.h"
#include "util/subprocess.h"

extern char** environ;

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::LedgerLength;
using testing::OpenApi;
using testing::TempDir;

// The user at the terminal: runs command nodes and inline definitions, which
// over HTTP and MCP need the grants "commands" and "definitions"
// (docs/security-paths.md). The default caller of this suite.
Actor Human() { return Actor{"alice", "human", AllGrants()}; }

Json MustCall(Api& api, const std::string& op, const Json& input, const Actor& actor = Human()) {
  return testing::MustCall(api, op, input, actor);
}

Status Refused(Api& api, const std::string& op, const Json& input, StatusCode code,
               const Actor& actor = Human()) {
  return testing::Refused(api, op, input, code, actor);
}

std::string IssueRunDir() { return std::string(BATON_SOURCE_DIR) + "/examples/graph/issue-run"; }

std::string Slurp(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The nodes of a run's checkpoints, in order ("" for start/fork/reset).
std::vector<std::string> CheckpointNodes(Api& api, const std::string& run) {
  std::vector<std::string> out;
  const Json listed = MustCall(api, "graph.checkpoints", {{"id", run}});
  for (const Json& c : listed["checkpoints"]) {
    out.push_back(c["node"].get<std::string>());
  }
  return out;
}

std::vector<std::string> EventKinds(Api& api, const std::string& run, const std::string& kind) {
  std::vector<std::string> out;
  const Json listed = MustCall(api, "ledger.events", {{"run", run}, {"kind", kind}});
  for (const Json& e : listed["events"]) {
    out.push_back(e["kind"].get<std::string>() + " " + e["summary"].get<std::string>());
  }
  return out;
}

class GraphRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = dir_.File("work");
    fs::copy(IssueRunDir(), work_, fs::copy_options::recursive);
    store_ = testing::TestStoreLocation(dir_.File("baton.db"));
    api_ = OpenApi(store_);
  }

  Json Run(Json in) {
    if (!in.contains("file") && !in.contains("text")) in["file"] = work_ + "/workflow.yaml";
    in["workdir"] = work_;
    return MustCall(*api_, "graph.run", in);
  }

  Json Show(const std::string& run) { return MustCall(*api_, "run.show", {{"id", run}}); }

  TempDir dir_;
  std::string work_;
  std::string store_;
  std::unique_ptr<Api> api_;
};

TEST_F(GraphRunTest, IssueProcessorRunsToEndRoutingTheFailingTestOnItsExitCode) {
  Json out = Run({{"id", "issue-42"}, {"state_dir", dir_.File(".graph-state")}});
  EXPECT_EQ(out["status"], "completed");
  EXPECT_EQ(out["stopped"], "completed");
  EXPECT_EQ(out["nodes_run"], 11);
  // Two failing test runs, each routed to the fix loop; the third passes.
  EXPECT_EQ(Lines(work_ + "/calls.log"),
            (std::vector<std::string>{"PLAN #2", "IMPLEMENT #3", "TEST #4 try 1", "FIX #6",
                                      "TEST #7 try 1", "FIX #9", "TEST #10 try 1"}));
  EXPECT_EQ(CheckpointNodes(*api_, "issue-42"),
            (std::vector<std::string>{"", "ANALYZE", "PLAN", "IMPLEMENT", "TEST", "COUNT_FIX", "FIX",
                                      "TEST", "COUNT_FIX", "FIX", "TEST", "REPORT"}));
  // The failing run's result was stored, exit code and all.
  const Json at4 = MustCall(*api_, "graph.checkpoint", {{"id", "issue-42"}, {"seq", 4}});
  EXPECT_EQ(at4["next"], "COUNT_FIX");
  const Json failed = at4["state"]["context"]["lastCommandResult"];
  EXPECT_EQ(failed["exitCode"], 1);
  EXPECT_EQ(failed["success"], false);
  EXPECT_NE(failed["stderr"].get<std::string>().find("2 of 12 tests fail"), std::string::npos);

  const Json run = Show("issue-42");
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["cursor"], "END");
  EXPECT_EQ(run["context"]["fixAttempts"], 2);
  EXPECT_EQ(run["context"]["lastCommandResult"]["stdout"], "fixed after 2 fix(es)\n");
  EXPECT_EQ(run["context"]["analysis"]["exitCode"], 0);
  EXPECT_EQ(run["context"]["plan"]["output"],
            "done: Plan the work for this issue: # Issue 42\n");
  // Each agent exchange is two messages: PLAN, IMPLEMENT and two FIXes.
  const Json history = run["meta"]["conversationHistory"];
  ASSERT_EQ(history.size(), 8u);
  EXPECT_EQ(history[0]["type"], "user");
  EXPECT_EQ(history[1]["type"], "assistant");
  EXPECT_EQ(history[6]["content"].get<std::string>().rfind("Fix the failing tests (attempt 2)", 0), 0u);
  // The @sys/graph state file followed the run.
  const Json mirror = Json::parse(Slurp(dir_.File(".graph-state/issue-42.json")));
  EXPECT_EQ(mirror["status"], "completed");
  EXPECT_EQ(mirror["currentNode"], "END");
  EXPECT_EQ(mirror["context"]["fixAttempts"], 2);
  EXPECT_EQ(mirror["conversationHistory"].size(), 8u);
  EXPECT_TRUE(MustCall(*api_, "ledger.verify", Json::object())["ok"].get<bool>());
  // The path drawn on the definition: the loop taken twice.
  const Json path = MustCall(*api_, "graph.path", {{"id", "issue-42"}});
  EXPECT_EQ(path["path"].size(), 11u);
  EXPECT_NE(path["mermaid"].get<std::string>().find("==>|\"#4, #7\"|"), std::string::npos)
      << path["mermaid"];
  EXPECT_NE(path["mermaid"].get<std::string>().find("TEST<br/>command<br/>ran 3x"), std::string::npos);
}

TEST_F(GraphRunTest, FixLoopEndsAtItsMaximumAndRoutesToError) {
  Json out = Run({{"id", "short"}, {"context", {{"maxFixAttempts", 1}}}});
  EXPECT_EQ(out["status"], "failed");
  EXPECT_EQ(out["cursor"], "ERROR");
  const Json run = Show("short");
  EXPECT_EQ(run["context"]["fixAttempts"], 1);
  EXPECT_EQ(run["meta"]["graph"]["last_error"], "TEST routed to ERROR");
  const Status s = Refused(*api_, "graph.resume", {{"id", "short"}}, StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("reached ERROR"), std::string::npos) << s.ToString();
}

// Found in review: an eval that replaced `state` with a number stopped the
// runner with an exception; it is an unsuccessful node like any bad chunk
// (its result says why, and the run routes on).
TEST_F(GraphRunTest, AnEvalThatReplacesTheStateIsAnUnsuccessfulNode) {
  std::ofstream(work_ + "/bad.yaml")
      << "id: bad\nnodes:\n  - {name: A, type: eval, code: \"state = 5\", then: END}\n";
  const Json out = Run({{"id", "bad"}, {"file", work_ + "/bad.yaml"}});
  EXPECT_EQ(out["nodes_run"], 1) << out.dump();
  const Json result = out["context"]["lastEvalResult"];
  EXPECT_EQ(result["success"], false);
  EXPECT_EQ(result["error"], "A.code: state and state.context must stay tables");
}

// Found in review: a run baton did not start (imported from a .graph-state
// file) takes its context as the initial one at its first resume; it was
// dropped from the meta without being kept beside the run, so a reset went
// back to {}.
TEST_F(GraphRunTest, AnImportedRunResetsToTheContextItWasImportedWith) {
  std::ofstream(work_ + "/inc.yaml")
      << "id: inc\nnodes:\n  - {name: A, type: eval, code: \"context.x = context.x + 1\", then: END}\n";
  const Json imported = MustCall(
      *api_, "run.import",
      {{"format", "graph"},
       {"content", R"({"currentNode": "A", "status": "failed", "updatedAt": "2024-01-15T10:30:00Z",
                      "conversationHistory": [], "context": {"x": 10}})"}});
  const std::string id = imported["run_id"];
  const Json resumed = MustCall(*api_, "graph.resume",
                                {{"id", id}, {"file", work_ + "/inc.yaml"}});
  EXPECT_EQ(resumed["status"], "completed") << resumed.dump();
  EXPECT_EQ(Show(id)["context"]["x"], 11);
  const Json reset = MustCall(*api_, "graph.reset", {{"id", id}});
  EXPECT_EQ(reset["context"], Json({{"x", 10}})) << reset.dump();
}

// Found in review: SQLite's json_set takes at most 127 arguments, so a node
// that set 63 keys or more failed its commit at every resume.
TEST_F(GraphRunTest, ANodeThatSetsManyKeysCommits) {
  std::ofstream(work_ + "/many.yaml")
      << "id: many\nnodes:\n  - {name: A, type: eval, code: \"for i = 1, 70 do context['k' .. i] = "
         "i end\", then: END}\n";
  const Json out = Run({{"id", "many"}, {"file", work_ + "/many.yaml"}});
  EXPECT_EQ(out["status"], "completed") << out.dump();
  const Json context = Show("many")["context"];
  EXPECT_EQ(context["k1"], 1);
  EXPECT_EQ(context["k70"], 70);
}

// Large context values are kept apart from the run's row (issue 21 item
// 3); what a node sees next, the checkpoint and the run shown agree: a key
// removed by the node whose result (resultKey) names it, and keys spelled
// with a NUL or bytes that are not UTF-8, large and then small, on both
// backends (PostgreSQL stores no NUL in text).
TEST_F(GraphRunTest, LargeContextValuesKeptApartReadBackAsTheNodesLeftThem) {
  std::ofstream(work_ + "/apart.yaml") << R"yaml(
id: apart
initialContext: {doc: 1}
nodes:
  - name: A
    type: eval
    resultKey: doc
    code: "context.doc = nil; for i = 1, 300 do context['key_number_' .. i] = i end; context['a\\0b'] = string.rep('x', 3000); context['k\\255'] = string.rep('y', 3000); context.gone = string.rep('z', 3000)"
    then: B
  - name: B
    type: eval
    code: "context.sawDoc = context.doc ~= nil; context['a\\0b'] = 'small'; context['k\\255'] = 'small'; context.gone = nil"
    then: END
)yaml";
  const Json out = Run({{"id", "apart"}, {"file", work_ + "/apart.yaml"}});
  ASSERT_EQ(out["status"], "completed") << out.dump();
  const Json context = Show("apart")["context"];
  EXPECT_EQ(context["sawDoc"], false);
  EXPECT_FALSE(context.contains("doc")) << "a removed key came back";
  EXPECT_FALSE(context.contains("gone"));
  EXPECT_EQ(context[std::string("a\0b", 3)], "small");
  EXPECT_EQ(context["k\xef\xbf\xbd"], "small");
  EXPECT_EQ(context["key_number_300"], 300);
  EXPECT_EQ(context.size(), 300u + 4u);  // and lastEvalResult
  const Json at = MustCall(*api_, "graph.checkpoint", {{"id", "apart"}, {"seq", 2}});
  EXPECT_EQ(at["state"]["context"], context);
}

// A node that waits for the file "go" in its working directory, after
// creating "started": the test acts on the run while the node runs.
constexpr char kGatedFlow[] = R"(
id: gated
initialContext: {n: 0}
nodes:
  - name: A
    type: command
    command: "touch started; while [ ! -f go ]; do sleep 0.02; done; echo A >> ran.log"
    then: B
  - name: B
    type: eval
    code: "context.n = context.n + 1"
    then: C
  - name: C
    type: command
    command: "echo C >> ran.log"
    then: END
)";

TEST_F(GraphRunTest, PausedBetweenNodesThenResumed) {
  Result<Json> out = InternalError("not run");
  std::thread runner([&] {
    out = api_->Call("graph.run", {{"text", kGatedFlow}, {"id", "g"}, {"workdir", work_}}, Human());
  });
  EXPECT_TRUE(testing::Eventually([&] { return fs::exists(work_ + "/started"); }));
  EXPECT_EQ(MustCall(*api_, "graph.pause", {{"id", "g"}})["status"], "paused");
  std::ofstream(work_ + "/go").put('\n');
  runner.join();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // The node in flight finished and was checkpointed; nothing after it ran.
  EXPECT_EQ((*out)["stopped"], "paused");
  EXPECT_EQ((*out)["cursor"], "B");
  EXPECT_EQ(Show("g")["status"], "paused");
  EXPECT_EQ(Lines(work_ + "/ran.log"), std::vector<std::string>{"A"});

  Json resumed = MustCall(*api_, "graph.resume", {{"id", "g"}});
  EXPECT_EQ(resumed["status"], "completed");
  EXPECT_EQ(resumed["nodes_run"], 2);
  EXPECT_EQ(Lines(work_ + "/ran.log"), (std::vector<std::string>{"A", "C"}));
  EXPECT_EQ(Show("g")["context"]["n"], 1);
  EXPECT_TRUE(EventKinds(*api_, "g", "graph.node.interrupted").empty());
}

TEST_F(GraphRunTest, CancelledRunCannotBeResumed) {
  Result<Json> out = InternalError("not run");
  std::thread runner([&] {
    out = api_->Call("graph.run", {{"text", kGatedFlow}, {"id", "c"}, {"workdir", work_}}, Human());
  });
  EXPECT_TRUE(testing::Eventually([&] { return fs::exists(work_ + "/started"); }));
  const Json cancelled = MustCall(*api_, "graph.cancel", {{"id", "c"}, {"reason", "wrong issue"}});
  EXPECT_EQ(cancelled["status"], "failed");
  std::ofstream(work_ + "/go").put('\n');
  runner.join();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)["stopped"], "cancelled");
  EXPECT_EQ(Lines(work_ + "/ran.log"), std::vector<std::string>{"A"});
  const Json run = Show("c");
  EXPECT_EQ(run["meta"]["graph"]["last_error"], "Execution cancelled by user");
  const Status s = Refused(*api_, "graph.resume", {{"id", "c"}}, StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("cancelled run cannot be resumed"), std::string::npos) << s.ToString();
  Refused(*api_, "graph.reset", {{"id", "c"}}, StatusCode::kFailedPrecondition);
  // Forking it is the way on.
  const Json fork = MustCall(*api_, "graph.fork", {{"id", "c"}, {"seq", 1}, {"new_id", "c2"}});
  EXPECT_EQ(fork["cursor"], "B");
  EXPECT_EQ(MustCall(*api_, "graph.resume", {{"id", "c2"}})["status"], "completed");
}

TEST_F(GraphRunTest, ForkGoesOnFromAnEarlierCheckpointAndLeavesTheOriginalAlone) {
  Run({{"id", "orig"}});
  const Json before = MustCall(*api_, "graph.checkpoints", {{"id", "orig"}, {"with_state", true}});
  const int64_t ledger = LedgerLength(*api_);
  // Checkpoint 4: the first test run failed, next COUNT_FIX, no fix yet.
  fs::remove(work_ + "/fixes");
  fs::remove(work_ + "/calls.log");
  const Json fork = MustCall(*api_, "graph.fork", {{"id", "orig"},
                                                   {"seq", 4},
                                                   {"new_id", "forked"},
                                                   {"context", {{"maxFixAttempts", 1}, {"note", "retry"}}}});
  EXPECT_EQ(fork["status"], "pending");
  EXPECT_EQ(fork["cursor"], "COUNT_FIX");
  EXPECT_EQ(fork["cursor_index"], 5);
  EXPECT_EQ(fork["context"]["fixAttempts"], 0);
  EXPECT_EQ(fork["context"]["note"], "retry");
  EXPECT_EQ(fork["meta"]["graph"]["forked_from"], Json({{"run", "orig"}, {"seq", 4}}));
  EXPECT_EQ(fork["meta"]["conversationHistory"].size(), 4u);  // PLAN and IMPLEMENT
  EXPECT_GT(LedgerLength(*api_), ledger);

  // With one fix allowed and none made yet, the fork ends at ERROR.
  const Json out = MustCall(*api_, "graph.resume", {{"id", "forked"}});
  EXPECT_EQ(out["status"], "failed");
  EXPECT_EQ(Lines(work_ + "/calls.log"), (std::vector<std::string>{"FIX #6", "TEST #7 try 1"}));
  EXPECT_EQ(CheckpointNodes(*api_, "forked"),
            (std::vector<std::string>{"", "COUNT_FIX", "FIX", "TEST"}));
  // The original is as it was.
  EXPECT_EQ(MustCall(*api_, "graph.checkpoints", {{"id", "orig"}, {"with_state", true}}), before);
  EXPECT_EQ(Show("orig")["status"], "completed");
  // A checkpoint that ends the run is no place to fork from.
  Refused(*api_, "graph.fork", {{"id", "orig"}, {"seq", 11}}, StatusCode::kFailedPrecondition);
  Refused(*api_, "graph.fork", {{"id", "orig"}, {"seq", 99}}, StatusCode::kNotFound);
}

TEST_F(GraphRunTest, BadDefinitionIsRefusedBeforeAnythingRuns) {
  const std::string bad = work_ + "/bad.yaml";
  std::ofstream(bad) << "id: bad\nnodes:\n"
                        "  - {name: A, type: command, command: 'touch ran', then: B}\n"
                        "  - {name: B, type: eval, code: 'x = = 1', then: NOWHERE}\n";
  const int64_t ledger = LedgerLength(*api_);
  const Status s = Refused(*api_, "graph.run", {{"file", bad}, {"workdir", work_}},
                           StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(bad + ": node B: then: no node \"NOWHERE\""), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(bad + ": node B: code: Lua does not compile"), std::string::npos);
  EXPECT_FALSE(fs::exists(work_ + "/ran"));
  EXPECT_EQ(LedgerLength(*api_), ledger);
  EXPECT_TRUE(MustCall(*api_, "run.list", Json::object())["runs"].empty());
}

TEST_F(GraphRunTest, ResumeRefusesAnEditedDefinitionWithoutTheCurrentNode) {
  const std::string file = work_ + "/gated.yaml";
  std::ofstream(file) << kGatedFlow;
  Result<Json> out = InternalError("not run");
  std::thread runner([&] {
    out = api_->Call("graph.run", {{"file", file}, {"id", "e"}, {"workdir", work_}}, Human());
  });
  EXPECT_TRUE(testing::Eventually([&] { return fs::exists(work_ + "/started"); }));
  MustCall(*api_, "graph.pause", {{"id", "e"}});
  std::ofstream(work_ + "/go").put('\n');
  runner.join();
  ASSERT_EQ(Show("e")["cursor"], "B");
  // B is gone from the file: the run cannot go on from where it stands.
  std::ofstream(file, std::ios::trunc) << "id: gated\nnodes:\n"
                                         "  - {name: A, type: command, command: 'true', then: C}\n"
                                         "  - {name: C, type: command, command: 'true', then: END}\n";
  const Status s = Refused(*api_, "graph.resume", {{"id", "e"}}, StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("no longer has node B"), std::string::npos) << s.message();
  EXPECT_EQ(Show("e")["status"], "paused");
}

// An eval that writes its own result key: routing sees the Lua's value, and
// the checkpoint stores the same (one merge of a node's outcome, for both).
TEST_F(GraphRunTest, TheStoredContextIsTheOneRoutingSaw) {
  constexpr char kFlow[] = R"(
id: own-key
nodes:
  - name: SET
    type: eval
    code: "context.lastEvalResult = 'mine'"
    then:
      - when: "state.context.lastEvalResult == 'mine'"
        goto: SAW_MINE
      - goto: SAW_RESULT
  - name: SAW_MINE
    type: eval
    code: "context.route = 'mine'"
    resultKey: routed
    then: END
  - name: SAW_RESULT
    type: eval
    code: "context.route = 'result'"
    resultKey: routed
    then: END
)";
  MustCall(*api_, "graph.run", {{"text", kFlow}, {"id", "k"}});
  const Json run = Show("k");
  EXPECT_EQ(run["context"]["route"], "mine");
  EXPECT_EQ(run["context"]["lastEvalResult"], "mine") << run["context"].dump(2);
}

TEST_F(GraphRunTest, HumanNodeWaitsForTheAnswerAndRoutesOnIt) {
  constexpr char kFlow[] = R"(
id: approve
nodes:
  - name: ASK
    type: human
    question: Ship it?
    choices: [yes, no]
    then:
      - when: "state.context.lastHumanAnswer.answer == 'yes'"
        goto: SHIP
      - goto: ERROR
  - name: SHIP
    type: eval
    code: "context.shipped = true"
    then: END
)";
  Json out = MustCall(*api_, "graph.run", {{"text", kFlow}, {"id", "h"}, {"wait_for_human", false}});
  EXPECT_EQ(out["stopped"], "waiting");
  EXPECT_EQ(out["status"], "paused");
  const std::string question = out["question"].get<std::string>();
  EXPECT_EQ(Show("h")["status"], "paused");
  // The released run has no runner: no commit is taken, not even one that
  // names no runner (found in review).
  Refused(*api_, "graph.commit",
          {{"run", "h"}, {"runner", ""}, {"seq", 1}, {"node", "ASK"}, {"result_key", "x"},
           {"result", Json::object()}, {"next", "SHIP"}},
          StatusCode::kAborted, Actor{"root", "admin"});
  // Resuming while the question is open is refused; the answer releases it.
  Refused(*api_, "graph.resume", {{"id", "h"}}, StatusCode::kFailedPrecondition);
  // A pause asked while the question holds the run takes effect once the
  // human node ends (found in review: the answer used to override it).
  MustCall(*api_, "graph.pause", {{"id", "h"}});
  MustCall(*api_, "question.answer", {{"id", question}, {"choices", {"yes"}}});
  Json paused = MustCall(*api_, "graph.resume", {{"id", "h"}});
  EXPECT_EQ(paused["stopped"], "paused");
  EXPECT_EQ(paused["cursor"], "SHIP");
  Json done = MustCall(*api_, "graph.resume", {{"id", "h"}});
  EXPECT_EQ(done["status"], "completed");
  const Json run = Show("h");
  EXPECT_EQ(run["context"]["shipped"], true);
  EXPECT_EQ(run["context"]["lastHumanAnswer"]["answer"], "yes");
  EXPECT_TRUE(EventKinds(*api_, "h", "graph.node.interrupted").empty());
}

TEST_F(GraphRunTest, RetriesWithBackoffThenRoutesOnTheLastResult) {
  constexpr char kFlow[] = R"(
id: flaky
nodes:
  - name: FLAKY
    type: command
    command: "echo x >> tries; [ $(wc -l < tries) -ge 3 ]"
    retry: {max: 4, backoffMs: 1}
    then: END
)";
  Json out = MustCall(*api_, "graph.run", {{"text", kFlow}, {"id", "f"}, {"workdir", work_}});
  EXPECT_EQ(out["status"], "completed");
  EXPECT_EQ(Lines(work_ + "/tries").size(), 3u);
  const Json events = MustCall(*api_, "ledger.events", {{"run", "f"}, {"kind", "graph.node."}})["events"];
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["payload"]["attempt"], 3);
  EXPECT_EQ(Show("f")["context"]["lastCommandResult"]["success"], true);
}

TEST_F(GraphRunTest, CompactionKeepsTheLatestAQuestionsAndAForksCheckpoints) {
  constexpr char kLoop[] = R"yaml(
id: loop
initialContext: {i: 0}
nodes:
  - name: STEP
    type: eval
    code: "context.i = context.i + 1; table.insert(state.conversationHistory, {type = 'assistant', content = 'm' .. context.i})"
    then:
      - when: "state.context.i < 40"
        goto: STEP
      - goto: END
)yaml";
  MustCall(*api_, "graph.run", {{"text", kLoop}, {"id", "l"}});
  const Json all = MustCall(*api_, "graph.checkpoints", {{"id", "l"}, {"with_state", true}});
  ASSERT_EQ(all["checkpoints"].size(), 41u);
  // Each checkpoint stores one new message, not the conversation so far.
  EXPECT_LT(all["checkpoints"][40]["bytes"].get<int64_t>(), 2 * all["checkpoints"][2]["bytes"].get<int64_t>());
  MustCall(*api_, "graph.fork", {{"id", "l"}, {"seq", 10}, {"new_id", "l-fork"}});

  const Json report = MustCall(*api_, "graph.compact", {{"id", "l"}, {"keep_last", 5}});
  EXPECT_EQ(report["kept"], 6);  // the last 5 and the fork's
  EXPECT_EQ(report["removed"], 35);
  const Json kept = MustCall(*api_, "graph.checkpoints", {{"id", "l"}, {"with_state", true}});
  std::vector<int64_t> seqs;
  for (const Json& c : kept["checkpoints"]) seqs.push_back(c["seq"].get<int64_t>());
  EXPECT_EQ(seqs, (std::vector<int64_t>{10, 36, 37, 38, 39, 40}));
  // Every kept checkpoint still has exactly its old state.
  for (const Json& c : kept["checkpoints"]) {
    EXPECT_EQ(c["state"], all["checkpoints"][c["seq"].get<size_t>()]["state"]) << c["seq"];
  }
  EXPECT_EQ(kept["checkpoints"][0]["whole"], true);
  EXPECT_EQ(kept["checkpoints"][0]["folded"], 10);
  // A fork from a kept one still works; a dropped one is gone, and says so.
  MustCall(*api_, "graph.fork", {{"id", "l"}, {"seq", 10}, {"new_id", "l-fork2"}});
  const Status s = Refused(*api_, "graph.fork", {{"id", "l"}, {"seq", 20}}, StatusCode::kNotFound);
  EXPECT_NE(s.message().find("compacted ones are gone"), std::string::npos);
  Refused(*api_, "graph.compact", {{"id", "l"}}, StatusCode::kInvalidArgument);
}

// What each committed write transaction handed the store: the bytes of its
// statements and their text parameters (Exec and Query alike: an UPDATE ...
// RETURNING is a query), whether it inserted a run, and how many rows it
// added to or deleted from a graph conversation. A wrapper around the Api's
// store (store_wrapper.h), as a counter of what reaches SQLite.
struct WrittenTxn {
  size_t bytes = 0;
  bool inserted_run = false;
  int appended_messages = 0;
  int deleted_messages = 0;
};
struct WriteLog {
  std::mutex mu;
  std::vector<WrittenTxn> committed;
};

class CountingTxn final : public TxnWrapper {
 public:
  CountingTxn(std::unique_ptr<Txn> target, std::shared_ptr<WriteLog> log)
      : TxnWrapper(std::move(target)), log_(std::move(log)) {}
  using Txn::Exec;
  using Txn::Query;
  Result<int64_t> Exec(std::string_view sql, SqlParams params) override {
    Count(sql, params);
    return TxnWrapper::Exec(sql, params);
  }
  Result<std::vector<Row>> Query(std::string_view sql, SqlParams params) override {
    if (!sql.starts_with("SELECT")) Count(sql, params);
    return TxnWrapper::Query(sql, params);
  }
  Status Commit() override {
    Status s = TxnWrapper::Commit();
    if (s.ok() && this_.bytes > 0) {
      std::lock_guard<std::mutex> lock(log_->mu);
      log_->committed.push_back(this_);
    }
    return s;
  }

 private:
  void Count(std::string_view sql, SqlParams params) {
    for (const SqlValue& v : params) {
      if (const auto* text = std::get_if<std::string>(&v)) this_.bytes += text->size();
    }
    this_.bytes += sql.size();
    if (sql.starts_with("INSERT INTO runs")) this_.inserted_run = true;
    if (sql.starts_with("INSERT INTO graph_messages")) ++this_.appended_messages;
    if (sql.starts_with("DELETE FROM graph_messages")) ++this_.deleted_messages;
  }

  std::shared_ptr<WriteLog> log_;
  WrittenTxn this_;
};

using CountingStore = TxnWrappingStore<CountingTxn, WriteLog>;

// A node's commit writes what the node changed (issue 19 item 9): the keys
// it set and the message it appended — not the 64 KB context key it left
// alone (nor the initial context kept in meta.graph), nor the conversation
// so far, 1 KB a message. A command node's process record writes as
// little. The run still shows both whole, its state file too, and a fork,
// a reset and an import keep them right.
TEST_F(GraphRunTest, ACheckpointWritesWhatTheNodeChangedNotTheWholeState) {
  const std::string blob(64 * 1024, 'x');
  const std::string flow = R"yaml(
id: steady
initialContext: {i: 0, blob: ")yaml" + blob + R"yaml("}
nodes:
  - name: STEP
    type: eval
    code: "context.i = context.i + 1; table.insert(state.conversationHistory, {type = 'assistant', content = string.rep('m', 1000) .. context.i})"
    then: RUN
  - name: RUN
    type: command
    command: "true"
    then:
      - when: "state.context.i < 30"
        goto: STEP
      - goto: END
)yaml";
  auto log = std::make_shared<WriteLog>();
  ApiOptions options;
  options.store.location = dir_.File("counted.db");
  options.validate_output = true;
  options.wrap_store = [log](std::unique_ptr<Store> store) -> std::unique_ptr<Store> {
    return std::make_unique<CountingStore>(std::move(store), log);
  };
  Result<std::unique_ptr<Api>> opened = Api::Open(options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Api& api = **opened;
  MustCall(api, "graph.run",
           {{"text", flow}, {"id", "s"}, {"workdir", work_}, {"state_dir", dir_.File("state")}});

  std::vector<WrittenTxn> committed;
  {
    std::lock_guard<std::mutex> lock(log->mu);
    committed = log->committed;
  }
  size_t node_commits = 0;
  size_t small = 0;
  for (const WrittenTxn& t : committed) {
    if (t.inserted_run) continue;  // the start: the whole initial state, once
    EXPECT_EQ(t.deleted_messages, 0) << "a node rewrote the conversation";
    if (t.appended_messages > 0) {
      ++node_commits;
      EXPECT_EQ(t.appended_messages, 1);
    }
    EXPECT_LT(t.bytes, 8u * 1024) << "a write of " << t.bytes
                                  << " bytes: the whole context, meta or conversation again";
    ++small;
  }
  EXPECT_EQ(node_commits, 30u);
  EXPECT_GE(small, 90u);  // 60 commits and 30 process records, at least

  const Json run = MustCall(api, "run.show", {{"id", "s"}});
  EXPECT_EQ(run["context"]["i"], 30);
  EXPECT_EQ(run["context"]["blob"], blob);
  ASSERT_EQ(run["meta"]["conversationHistory"].size(), 30u);
  EXPECT_EQ(run["meta"]["conversationHistory"][29]["content"], std::string(1000, 'm') + "30");
  EXPECT_FALSE(run["meta"]["graph"].contains("processes"));
  const Json listed = MustCall(api, "run.list", {{"profile", "graph"}});
  ASSERT_EQ(listed["runs"].size(), 1u);
  EXPECT_EQ(listed["runs"][0]["meta"]["conversationHistory"].size(), 30u);
  const std::string state_file = dir_.File("state/s.json");
  const Json mirror = Json::parse(Slurp(state_file));
  EXPECT_EQ(mirror["conversationHistory"].size(), 30u);
  EXPECT_EQ(mirror["context"]["i"], 30);
  const Json at20 = MustCall(api, "graph.checkpoint", {{"id", "s"}, {"seq", 20}});
  EXPECT_EQ(at20["state"]["conversationHistory"].size(), 10u);  // 2 nodes a message

  // A fork carries the conversation as it was; the original keeps its own.
  MustCall(api, "graph.fork", {{"id", "s"}, {"seq", 20}, {"new_id", "s-fork"}});
  EXPECT_EQ(MustCall(api, "run.show", {{"id", "s-fork"}})["meta"]["conversationHistory"].size(), 10u);
  EXPECT_EQ(MustCall(api, "graph.resume", {{"id", "s-fork"}})["status"],
            "completed");
  const Json fork = MustCall(api, "run.show", {{"id", "s-fork"}});
  EXPECT_EQ(fork["meta"]["conversationHistory"].size(), 30u);
  EXPECT_EQ(fork["context"]["blob"], blob);
  EXPECT_EQ(MustCall(api, "run.show", {{"id", "s"}})["meta"]["conversationHistory"].size(), 30u);

  // A reset empties it and starts from the initial context.
  const Json reset = MustCall(api, "graph.reset", {{"id", "s"}});
  EXPECT_TRUE(reset["meta"]["conversationHistory"].empty());
  EXPECT_EQ(reset["context"]["i"], 0);
  EXPECT_EQ(MustCall(api, "graph.resume", {{"id", "s"}})["status"], "completed");
  EXPECT_EQ(MustCall(api, "run.show", {{"id", "s"}})["meta"]["conversationHistory"].size(), 30u);

  // The fork's state file imported over the original: its conversation and
  // context replace the original's.
  MustCall(api, "graph.fork", {{"id", "s"}, {"seq", 4}, {"new_id", "s-short"}});
  const Json short_file = Json::parse(Slurp(dir_.File("state/s-short.json")));
  ASSERT_EQ(short_file["conversationHistory"].size(), 2u);
  MustCall(api, "run.import", {{"format", "graph"}, {"content", short_file.dump()}, {"run", "s"}});
  const Json imported = MustCall(api, "run.show", {{"id", "s"}});
  EXPECT_EQ(imported["meta"]["conversationHistory"], short_file["conversationHistory"]);
  EXPECT_EQ(imported["context"]["i"], 2);
  EXPECT_TRUE(MustCall(api, "ledger.verify", Json::object())["ok"].get<bool>());
}

// kill -9 while a node runs, as a user's machine would: `baton graph run` in
// a process of its own, killed inside the second TEST; `baton graph resume`
// runs that TEST again — and only it — with the loop counter where it was.
TEST_F(GraphRunTest, KilledMidNodeResumesRerunningOnlyThatNode) {
  std::ofstream(work_ + "/hang") << "7\n";
  const std::string baton = testing::BatonBin();
  std::vector<std::string> args = {baton, "--store", store_, "graph", "run", work_ + "/workflow.yaml",
                                   "--id", "k", "--workdir", work_, "--state-dir", dir_.File(".graph-state")};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  for (int i = 0; i < 3000 && !fs::exists(work_ + "/hang.pid"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(work_ + "/hang.pid"));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  // The orphaned test command (its `sleep 60`) is left running: the resume
  // ends its process group before TEST runs again.
  fs::remove(work_ + "/hang");

  const Json dead = Show("k");
  EXPECT_EQ(dead["status"], "running");
  EXPECT_EQ(dead["cursor"], "TEST");
  EXPECT_EQ(dead["cursor_index"], 7);
  EXPECT_EQ(dead["context"]["fixAttempts"], 1);

  // Running it again by its id resumes it, as @sys/graph's run(id) did.
  testing::ProcessResult resumed = testing::RunBaton(
      {"--store", store_, "graph", "run", work_ + "/workflow.yaml", "--id", "k", "--workdir", work_});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("run k: completed"), std::string::npos) << resumed.out;
  // TEST #7 ran twice (the second time as try 2); everything else once.
  EXPECT_EQ(Lines(work_ + "/calls.log"),
            (std::vector<std::string>{"PLAN #2", "IMPLEMENT #3", "TEST #4 try 1", "FIX #6",
                                      "TEST #7 try 1", "TEST #7 try 2", "FIX #9", "TEST #10 try 1"}));
  const Json run = Show("k");
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["context"]["fixAttempts"], 2);
  const std::vector<std::string> interrupted = EventKinds(*api_, "k", "graph.node.interrupted");
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_NE(interrupted[0].find("TEST #7 was interrupted (pid " + std::to_string(pid)), std::string::npos)
      << interrupted[0];
  EXPECT_NE(interrupted[0].find(": ended by SIG"), std::string::npos) << interrupted[0];
  const Json events = MustCall(*api_, "ledger.events", {{"run", "k"}, {"kind", "graph.node.completed"}})["events"];
  ASSERT_EQ(events.size(), 11u);
  EXPECT_EQ(events[6]["payload"]["node"], "TEST");
  EXPECT_EQ(events[6]["payload"]["seq"], 7);
  EXPECT_EQ(events[6]["payload"]["attempt"], 2);
  EXPECT_EQ(Json::parse(Slurp(dir_.File(".graph-state/k.json")))["status"], "completed");
  // Once more: a completed run is left as it is.
  testing::ProcessResult again = testing::RunBaton(
      {"--store", store_, "graph", "run", work_ + "/workflow.yaml", "--id", "k"});
  EXPECT_NE(again.out.find("run k: completed; 0 node(s) run"), std::string::npos) << again.out << again.err;
  EXPECT_EQ(Lines(work_ + "/calls.log").size(), 8u);
  EXPECT_TRUE(MustCall(*api_, "ledger.verify", Json::object())["ok"].get<bool>());
}

TEST_F(GraphRunTest, ResetStartsOverFromTheInitialContextKeepingTheHistory) {
  Run({{"id", "r"}, {"state_dir", dir_.File(".graph-state")}});
  const size_t before = CheckpointNodes(*api_, "r").size();
  // The initial context is shown in the meta, but kept beside the run's row
  // (graph_initials), which every node's commit reads and patches.
  EXPECT_EQ(Show("r")["meta"]["graph"]["initial"],
            Json({{"issue", 42}, {"maxFixAttempts", 3}, {"fixAttempts", 0}}));
  if (!testing::OnPostgres()) {
    const testing::ProcessResult meta = testing::RunShell(
        "sqlite3 '" + store_ + "' \"SELECT instr(meta, 'initial') FROM runs WHERE id = 'r'; "
        "SELECT count(*) FROM graph_initials WHERE run_id = 'r'\"");
    EXPECT_EQ(meta.out, "0\n1\n") << meta.err;
  }
  const Json reset = MustCall(*api_, "graph.reset", {{"id", "r"}});
  EXPECT_EQ(reset["status"], "pending");
  EXPECT_EQ(reset["cursor"], "ANALYZE");
  EXPECT_EQ(reset["context"], Json({{"issue", 42}, {"maxFixAttempts", 3}, {"fixAttempts", 0}}));
  EXPECT_TRUE(reset["meta"]["conversationHistory"].empty());
  const Json mirror = Json::parse(Slurp(dir_.File(".graph-state/r.json")));
  EXPECT_EQ(mirror["status"], "pending");
  EXPECT_EQ(mirror["currentNode"], "ANALYZE");
  // The old checkpoints stay; a reset one starts the new part, and the run
  // goes again from there (the fixes file says two were made: one test run).
  const std::vector<std::string> nodes = CheckpointNodes(*api_, "r");
  EXPECT_EQ(nodes.size(), before + 1);
  const Json out = MustCall(*api_, "graph.resume", {{"id", "r"}});
  EXPECT_EQ(out["status"], "completed");
  EXPECT_EQ(out["nodes_run"], 5);
  EXPECT_EQ(Show("r")["context"]["fixAttempts"], 0);
}

TEST_F(GraphRunTest, HttpLlmAndSlashCommandNodesStoreTheirResults) {
  httplib::Server server;
  server.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(Json{{"got", Json::parse(req.body)}, {"auth", req.get_header_value("X-Key")}}.dump(),
                    "application/json");
  });
  server.Post("/v1/chat/completions", [](const httplib::Request& req, httplib::Response& res) {
    const Json body = Json::parse(req.body);
    const bool authed = req.get_header_value("Authorization") == "Bearer sk-test";
    res.set_content(Json{{"model", body["model"]},
                         {"choices", {{{"message", {{"role", "assistant"},
                                                    {"content", authed ? "echo: " + body["messages"][0]["content"].get<std::string>() : "no key"}}}}}},
                         {"usage", {{"prompt_tokens", 3}, {"completion_tokens", 2}}}}
                        .dump(),
                    "application/json");
  });
  server.Get("/missing", [](const httplib::Request&, httplib::Response& res) { res.status = 404; });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  EXPECT_TRUE(testing::Eventually([&] { return server.is_running(); }));
  setenv("GRAPH_TEST_KEY", "sk-test", 1);
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  const std::string flow = "id: io\ninitialContext: {name: ada}\nnodes:\n"
      "  - {name: POST, type: http, method: POST, url: '" + base + "/echo', headers: {X-Key: k1},"
      " body: 'return {who = context.name}', then: ASK}\n"
      "  - {name: ASK, type: llm, model: m1, endpoint: '" + base + "/v1/chat/completions',"
      " apiKeyEnv: GRAPH_TEST_KEY, prompt: 'hi {{context.lastHttpResult.data.got.who}}', then: GONE}\n"
      "  - {name: GONE, type: http, url: '" + base + "/missing', then: SLASH}\n"
      "  - {name: SLASH, type: slash-command, command: /review, agentCommand: [sh, -c, 'echo ran $0'], then: END}\n";
  const Json out = MustCall(*api_, "graph.run", {{"text", flow}, {"id", "io"}, {"workdir", work_}});
  server.stop();
  serving.join();
  EXPECT_EQ(out["status"], "completed");
  const Json ctx = Show("io")["context"];
  EXPECT_EQ(ctx["lastHttpResult"]["status"], 404);
  EXPECT_EQ(ctx["lastHttpResult"]["success"], false);
  const Json at1 = MustCall(*api_, "graph.checkpoint", {{"id", "io"}, {"seq", 1}})["state"]["context"];
  EXPECT_EQ(at1["lastHttpResult"]["data"], Json({{"got", {{"who", "ada"}}}, {"auth", "k1"}}));
  EXPECT_EQ(at1["lastHttpResult"]["status"], 200);
  EXPECT_EQ(ctx["lastLLMResult"]["output"], "echo: hi ada");
  EXPECT_EQ(ctx["lastLLMResult"]["model"], "m1");
  EXPECT_EQ(ctx["lastLLMResult"]["usage"]["completion_tokens"], 2);
  EXPECT_EQ(ctx["lastSlashCommandResult"]["output"], "ran /review\n");
  EXPECT_EQ(ctx["lastSlashCommandResult"]["success"], true);
}

// A resume ends the gone runner's node processes before its take-over's
// transaction (ending one may take a 2 s grace, which would hold every other
// writer); a runner that may be alive keeps its processes, and groups on
// another host are not this host's to end.
TEST(GraphTakeOverTest, OnlyAGoneRunnersGroupsOnThisHostAreEndedBeforeTheTakeOver) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  char sleep_bin[] = "sleep", sixty[] = "60";
  char* argv[] = {sleep_bin, sixty, nullptr};
  pid_t pid = -1;
  ASSERT_EQ(posix_spawnp(&pid, "sleep", nullptr, &attr, argv, environ), 0);
  posix_spawnattr_destroy(&attr);
  std::thread reaper([pid] { waitpid(pid, nullptr, 0); });
  const Json mine = {{"host", HostName()}, {"pgid", pid}, {"start", ProcessStartTicks(pid)}};
  const Json theirs = {{"host", "elsewhere.example"}, {"pgid", pid}, {"start", 1}};
  const Json alive = {{"host", HostName()}, {"pid", getpid()}, {"start", ProcessStartTicks(getpid())}};
  Json run = {{"status", "running"},
              {"cursor", "TEST"},
              {"meta", {{"graph", {{"runner", alive}, {"processes", {mine, theirs}}}}}}};
  const Json nodes = {"PLAN", "TEST"};

  EXPECT_EQ(EndInterruptedProcesses(RunFromJson(run), nodes), Json::array());
  EXPECT_EQ(kill(pid, 0), 0) << "a live runner's node process was ended";
  run["status"] = "paused";
  run["meta"]["graph"]["runner"]["start"] = -5;  // not a start this pid ever had: gone
  run["meta"]["graph"]["runner"]["pid"] = INT_MAX;
  EXPECT_EQ(EndInterruptedProcesses(RunFromJson(run), nodes), Json::array()) << "only a running run is taken over as interrupted";
  EXPECT_EQ(kill(pid, 0), 0);

  run["status"] = "running";
  EXPECT_EQ(EndInterruptedProcesses(RunFromJson(run), Json::array({"PLAN"})), Json::array())
      << "the take-over refuses a run whose node the definition lost: it ends nothing";
  EXPECT_EQ(kill(pid, 0), 0);
  const Json ended = EndInterruptedProcesses(RunFromJson(run), nodes);
  ASSERT_EQ(ended.size(), 1u) << ended.dump();
  EXPECT_EQ(ended[0]["pgid"], pid);
  EXPECT_NE(ended[0]["ended"].get<std::string>().find("SIGTERM"), std::string::npos) << ended.dump();
  reaper.join();
  EXPECT_NE(kill(pid, 0), 0) << "the gone runner's node process still runs";
}

}  // namespace
}  // namespace baton
