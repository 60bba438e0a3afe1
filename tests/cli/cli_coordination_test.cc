// The coordination verbs as a user types them: the real binary, real git.

#include <gtest/gtest.h>

#include "test_env.h"
#include "util/json_util.h"

namespace baton {
namespace {

using testing::InitStore;
using testing::BatonBin;
using testing::ProcessResult;
using testing::RunBaton;
using testing::RunShell;

class CliCoordinationTest : public ::testing::Test {
 protected:
  // Runs baton on the test's store as "agent" and parses its JSON output
  // (a refusal prints {"error": {"code", "message"}}).
  Json Baton(std::vector<std::string> args, const std::string& agent = "coder",
             int want_exit = 0, const std::string& role = "agent") {
    std::vector<std::string> full = {"--store", store_, "--agent", agent, "--role", role,
                                     "--output", "json"};
    full.insert(full.end(), args.begin(), args.end());
    ProcessResult r = RunBaton(full);
    EXPECT_EQ(r.exit_code, want_exit) << args[0] << " " << args[1] << ": " << r.out << r.err;
    return Json::parse(r.out, nullptr, false);
  }

  static std::string ErrorOf(const Json& j) { return j["error"]["message"].get<std::string>(); }

  testing::TempDir dir_;
  const std::string store_ = InitStore(dir_.File("baton.db"));
};

TEST_F(CliCoordinationTest, AgentsClaimCompleteAndAreFencedFromTheCommandLine) {
  Json agent = Baton({"agent", "register", "coder", "--agent-role", "implementor", "--status", "idle"});
  EXPECT_EQ(agent["role"], "implementor");
  EXPECT_EQ(agent["status"], "idle");
  Baton({"agent", "register", "reviewer"}, "reviewer");
  const std::string a = Baton({"task", "create", "write the parser"})["id"];
  const std::string b = Baton({"task", "create", "review it", "--depends-on", a})["id"];
  EXPECT_EQ(Baton({"task", "show", b})["status"], "blocked");

  Json claim = Baton({"task", "claim", "--lease-ms", "1"});
  ASSERT_EQ(claim["task"]["id"], a);
  // The lease lapses; the reviewer takes the task over; the coder's late
  // completion exits with Aborted's code (6) and says why.
  Json taken = Baton({"task", "claim", "--task", a}, "reviewer");
  EXPECT_EQ(taken["lease"]["epoch"], 2);
  Json late = Baton({"task", "complete", a, "1"}, "coder", 6);
  EXPECT_NE(ErrorOf(late).find("held by reviewer"), std::string::npos) << late;
  Baton({"task", "complete", a, "2"}, "reviewer");
  EXPECT_EQ(Baton({"task", "show", b})["status"], "ready");
}

TEST_F(CliCoordinationTest, CallsInsideARepositoryScopeThemselvesToItsProject) {
  const std::string repo = dir_.File("repo");
  ASSERT_EQ(RunShell("git init -q " + repo + " && mkdir -p " + repo + "/src/deep").exit_code, 0);
  Json project = Baton({"project", "create", "app", "--repo-path", repo}, "alice", 0, "human");
  auto create_in = [&](const std::string& where, const std::string& title) {
    ProcessResult r = RunShell("cd " + where + " && " + BatonBin() + " --store " + store_ +
                               " --output json task create '" + title + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out, nullptr, false);
  };
  EXPECT_EQ(create_in(repo + "/src/deep", "inside")["project_id"], project["id"]);
  EXPECT_TRUE(create_in(dir_.path(), "outside")["project_id"].is_null());
  // A linked worktree belongs to the same project.
  ASSERT_EQ(RunShell("cd " + repo + " && git -c user.name=t -c user.email=t@t commit -q "
                     "--allow-empty -m init && git worktree add -q " + dir_.File("wt")).exit_code,
            0);
  EXPECT_EQ(create_in(dir_.File("wt"), "in a worktree")["project_id"], project["id"]);
  // Naming a project still wins.
  Baton({"project", "create", "other"}, "alice", 0, "human");
  ProcessResult r = RunShell("cd " + repo + " && " + BatonBin() + " --store " + store_ +
                             " --output json task create named --project other");
  EXPECT_NE(Json::parse(r.out, nullptr, false)["project_id"], project["id"]);
}

TEST_F(CliCoordinationTest, WishFromAWishMdFileAndItsGroups) {
  const std::string fixture = std::string(BATON_SOURCE_DIR) +
                              "/../shared/fixtures/seeds/genie/wishes/clean-multi-group/input.md";
  Json wish = Baton({"wish", "create", "--file", fixture}, "lead", 0, "coordinator");
  EXPECT_EQ(wish["groups"]["1"]["status"], "ready");
  Baton({"wish", "complete-group", "clean-multi-group", "1"});
  Json status = Baton({"wish", "status", "clean-multi-group"});
  EXPECT_EQ(status["groups"]["2"]["status"], "ready");
  EXPECT_EQ(status["groups"]["3"]["status"], "blocked");
  Json blocked = Baton({"wish", "complete-group", "clean-multi-group", "3"}, "coder", 5);
  EXPECT_NE(ErrorOf(blocked).find("unmet dependencies 2 (ready)"), std::string::npos) << blocked;
}

}  // namespace
}  // namespace baton
