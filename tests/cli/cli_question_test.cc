// A human stops a run with a question and starts it again with an answer,
// as users do it: the real binary, `baton serve` killed with SIGKILL while a
// waiter is blocked, and `baton question answer` from the command line.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "test_env.h"
#include "util/json_util.h"

namespace baton {
namespace {

using testing::InitStore;
using testing::BatonBin;
using testing::ProcessResult;
using testing::RunBaton;
using testing::RunShell;
using testing::ServeProcess;

class CliQuestionTest : public ::testing::Test {
 protected:
  Json Baton(std::vector<std::string> args, const std::string& agent, const std::string& role,
             int want_exit = 0) {
    std::vector<std::string> full = {"--store", store_, "--agent", agent, "--role", role,
                                     "--output", "json"};
    full.insert(full.end(), args.begin(), args.end());
    ProcessResult r = RunBaton(full);
    EXPECT_EQ(r.exit_code, want_exit) << args[0] << " " << args[1] << ": " << r.out << r.err;
    return Json::parse(r.out, nullptr, false);
  }

  // POSTs an operation to a running server as the coordinator, with its token.
  std::string Post(int port, const std::string& op, const Json& body) {
    if (coord_token_.empty()) coord_token_ = testing::MakeToken(store_, "coord", "coordinator");
    return "curl -s -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer " +
           coord_token_ + "' --data '" + body.dump() + "' http://127.0.0.1:" + std::to_string(port) +
           "/v1/ops/" + op;
  }

  testing::TempDir dir_;
  const std::string store_ = InitStore(dir_.File("baton.db"));
  std::string coord_token_;
};

TEST_F(CliQuestionTest, AnOpenQuestionSurvivesAKilledServerAndTheAnswerResumesTheRun) {
  const std::string run = Baton({"run", "create", "--profile", "sgai"}, "coord", "coordinator")["id"];
  const Json questions = Json::array(
      {{{"question", "Deploy to production?"}, {"choices", {"yes", "not yet"}}}});
  std::string id;
  {
    ServeProcess server(store_);
    ProcessResult asked =
        RunShell(Post(server.port(), "question.ask", {{"run", run}, {"questions", questions}}));
    ASSERT_EQ(asked.exit_code, 0) << asked.err;
    Json q = Json::parse(asked.out, nullptr, false);
    ASSERT_TRUE(q.contains("id")) << asked.out;
    id = q["id"];
    // A waiter blocks on the server; then the server dies mid-wait.
    RunShell("(" + Post(server.port(), "question.wait", {{"id", id}, {"timeout_ms", 60000}}) +
             " > " + dir_.File("waiter.out") + " 2>&1 &)");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(server.Signal(SIGKILL), 128 + SIGKILL);
  }
  // Restarted: the run still waits, with its question.
  ServeProcess restarted(store_);
  EXPECT_EQ(Baton({"run", "show", run}, "coord", "coordinator")["status"], "waiting-for-human");
  Json open = Baton({"question", "list", "--run", run}, "alice", "human")["questions"];
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0]["id"], id);
  EXPECT_EQ(open[0]["questions"][0]["question"], "Deploy to production?");

  // The asker gives up waiting before the human answers.
  Json gave_up = Baton({"question", "wait", id, "--timeout-ms", "100"}, "coord", "coordinator");
  EXPECT_TRUE(gave_up["timed_out"].get<bool>());
  // An agent may not answer; a wrong choice is refused; neither changes anything.
  Json refused = Baton({"question", "answer", id, "--choices", "yes"}, "coder", "agent", 8);
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("human"), std::string::npos);
  Baton({"question", "answer", id, "--choices", "maybe"}, "alice", "human", 2);
  EXPECT_EQ(Baton({"run", "show", run}, "coord", "coordinator")["status"], "waiting-for-human");

  Json answered = Baton({"question", "answer", id, "--choices", "not yet", "--text", "after the freeze"},
                        "alice", "human");
  EXPECT_EQ(answered["run_status"], "working");
  EXPECT_EQ(Baton({"run", "show", run}, "coord", "coordinator")["status"], "working");
  // The waiter that timed out gets the late answer on its next wait, at once.
  Json late = Baton({"question", "wait", id, "--timeout-ms", "0"}, "coord", "coordinator");
  EXPECT_FALSE(late["timed_out"].get<bool>());
  EXPECT_EQ(late["answer"]["answers"][0], Json::array({"not yet"}));
  EXPECT_EQ(late["answer"]["text"], "after the freeze");
  // The ledger tells the story and its chain is whole.
  Json events = Baton({"ledger", "events", "--run", run, "--kind", "question."}, "alice", "human");
  std::vector<std::string> kinds;
  for (const Json& e : events["events"]) kinds.push_back(e["kind"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"question.asked", "question.answered",
                                             "question.delivered"}));
  EXPECT_TRUE(Baton({"ledger", "verify"}, "alice", "human")["ok"].get<bool>());
}

TEST_F(CliQuestionTest, JsonArraysOfObjectsAndRepeatedFlagsBothReachTheOperation) {
  const std::string run = Baton({"run", "create", "--profile", "sgai"}, "coord", "coordinator")["id"];
  // A JSON array of objects on one flag (CLI11 would split "[...]" at its commas).
  Json q = Baton({"question", "ask", "--run", run, "--questions",
                  R"([{"question":"Which, exactly?","choices":["a, b","c"]},)"
                  R"({"question":"And?","choices":["x","y","z"],"multiSelect":true}])"},
                 "coord", "coordinator");
  ASSERT_EQ(q["questions"].size(), 2u) << q;
  EXPECT_EQ(q["questions"][0]["choices"][0], "a, b");
  Json a = Baton({"question", "answer", q["id"], "--answers", R"([["a, b"],["x","z"]])"}, "alice",
                 "human");
  EXPECT_EQ(a["answer"]["answers"][1], Json::array({"x", "z"}));
  // Repeated flags build a list of plain strings.
  Json q2 = Baton({"question", "ask", "--run", run, "--questions",
                   R"([{"question":"Pick","choices":["p","q","r"],"multiSelect":true}])"},
                  "coord", "coordinator");
  Json a2 = Baton({"question", "answer", q2["id"], "--choices", "p", "--choices", "r"}, "alice",
                  "human");
  EXPECT_EQ(a2["answer"]["answers"][0], Json::array({"p", "r"}));
}

}  // namespace
}  // namespace baton
