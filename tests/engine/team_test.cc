// Teams through Api::Call, with real git repositories: team.create makes a
// shared clone on the team's branch without touching the origin; bad input
// leaves nothing behind; disband returns the team's work to ready at once.

#include <gtest/gtest.h>

#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>

#include "backend_test.h"
#include "test_util.h"
#include "util/json_util.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::Agent;
using testing::LedgerLength;

// This suite's callers hold every grant: its repositories, clones and
// workflow folders live in temporary folders of their own, outside the
// store's project folder ("paths"; docs/security-paths.md).
using testing::Granted;
Actor Human() { return Granted(testing::Human()); }
Actor Coordinator() { return Granted(testing::Coordinator()); }

Json MustCall(Api& api, const std::string& op, const Json& input, const Actor& actor = Human()) {
  return testing::MustCall(api, op, input, actor);
}

constexpr char kCommit[] = "git -c user.name=t -c user.email=t@example.com commit -q";

std::string Q(const std::string& s) { return "'" + s + "'"; }

// Runs a shell command that must succeed; its stdout without trailing space.
std::string Sh(const std::string& command) {
  testing::ProcessResult r = testing::RunShell(command);
  EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
  while (!r.out.empty() && std::isspace(static_cast<unsigned char>(r.out.back()))) r.out.pop_back();
  return r.out;
}

std::string Slurp(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) names.insert(e.path().filename());
  return names;
}

// An origin repository: main (README) and feature (one more commit, file F).
std::string MakeOrigin(const std::string& dir) {
  Sh("git init -q -b main " + Q(dir) + " && cd " + Q(dir) +
     " && echo one > README && git add README && " + kCommit + " -m one" +
     " && git checkout -q -b feature && echo two > F && git add F && " + kCommit + " -m two" +
     " && git checkout -q main");
  return dir;
}

class TeamTest : public testing::BackendTest {
 protected:
  void SetUp() override {
    api_ = OpenBackend(&time_);
    origin_ = MakeOrigin(dir_.File("origin"));
    root_ = dir_.File("clones");
    for (const char* id : {"ann", "bob", "cid"}) {
      MustCall(*api_, "agent.register", {{"id", id}}, Coordinator());
    }
  }

  // "in" with the origin as repo and root_ as worktree_root unless it says otherwise.
  Json WithDefaults(Json in) const {
    if (!in.contains("repo")) in["repo"] = origin_;
    if (!in.contains("worktree_root")) in["worktree_root"] = root_;
    return in;
  }
  Result<Json> Create(const Json& in) {
    return api_->Call("team.create", WithDefaults(in), Human());
  }

  Json Team(const std::string& name) { return MustCall(*api_, "team.show", {{"name", name}}); }
  Json AgentTeam(const std::string& id) {
    return MustCall(*api_, "agent.show", {{"id", id}})["team"];
  }

  // Calls "op" expecting "code" and checks that the ledger did not grow.
  Status Refused(const std::string& op, const Json& input, StatusCode code,
                 const Actor& actor = Human()) {
    const int64_t before = LedgerLength(*api_);
    Result<Json> r = api_->Call(op, input, actor);
    EXPECT_EQ(r.status().code(), code)
        << op << " " << input.dump() << ": " << r.status().ToString();
    EXPECT_EQ(LedgerLength(*api_), before) << op << " " << input.dump() << " changed the ledger";
    return r.status();
  }

  void ExpectRefused(const std::string& op, const Json& input, StatusCode code,
                     const Actor& actor = Human()) {
    (void)Refused(op, input, code, actor);
  }

  // Puts a git in front of the real one whose clone waits, once the file
  // "hold" exists, until the file "go" does (20 s at most) and writes to
  // "outcome" which came first. Returns the folder these files are in.
  std::string HoldClonesUntilGo() {
    const std::string bin = dir_.File("fake-git");
    fs::create_directories(bin);
    const std::string real = Sh("command -v git");
    std::FILE* f = std::fopen((bin + "/git").c_str(), "w");
    std::fprintf(f,
                 "#!/bin/sh\n"
                 "d=%s\n"
                 "if [ \"$1\" = clone ] && [ -e \"$d/hold\" ]; then\n"
                 "  rm -f \"$d/hold\"; touch \"$d/cloning\"; i=0\n"
                 "  while [ ! -e \"$d/go\" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
                 "  if [ -e \"$d/go\" ]; then echo go > \"$d/outcome\"; "
                 "else echo timeout > \"$d/outcome\"; fi\n"
                 "fi\n"
                 "exec %s \"$@\"\n",
                 Q(bin).c_str(), real.c_str());
    std::fclose(f);
    fs::permissions(bin + "/git", fs::perms::owner_all);
    const char* path = std::getenv("PATH");
    saved_path_ = path == nullptr ? "" : path;
    setenv("PATH", (bin + ":" + saved_path_).c_str(), 1);
    return bin;
  }
  void TearDown() override {
    if (!saved_path_.empty()) setenv("PATH", saved_path_.c_str(), 1);
  }

  testing::FakeTime time_;
  std::unique_ptr<Api> api_;
  std::string saved_path_;
  std::string origin_;
  std::string root_;
};

TEST_P(TeamTest, CreateMakesASharedCloneOnTheTeamBranchAndLeavesTheOriginAlone) {
  const std::string config = Slurp(origin_ + "/.git/config");
  const std::string refs = Sh("git -C " + Q(origin_) + " for-each-ref");
  ASSERT_EQ(Sh("git -C " + Q(origin_) + " config --get core.bare"), "false");

  Result<Json> team = Create({{"name", "feat/login"}, {"members", {"ann"}}});
  ASSERT_TRUE(team.ok()) << team.status().ToString();
  const std::string path = root_ + "/feat/login";
  EXPECT_EQ((*team)["worktree_path"], path);
  EXPECT_EQ((*team)["branch"], "feat/login");
  EXPECT_EQ((*team)["base_branch"], "main");
  EXPECT_EQ((*team)["status"], "in_progress");
  EXPECT_EQ((*team)["repo"], fs::canonical(origin_).string());
  EXPECT_EQ(Sh("git -C " + Q(path) + " rev-parse --abbrev-ref HEAD"), "feat/login");
  EXPECT_EQ(Sh("git -C " + Q(path) + " rev-parse HEAD"),
            Sh("git -C " + Q(origin_) + " rev-parse main"));
  // Objects are borrowed from the origin, not copied.
  const std::string alternates = Slurp(path + "/.git/objects/info/alternates");
  EXPECT_EQ(fs::canonical(alternates.substr(0, alternates.find('\n'))),
            fs::canonical(origin_ + "/.git/objects"));

  // Work in the clone stays in the clone.
  Sh("cd " + Q(path) + " && echo x > work && git add work && " + kCommit + " -m work");
  const std::string work = Sh("git -C " + Q(path) + " rev-parse HEAD");
  EXPECT_NE(testing::RunShell("git -C " + Q(origin_) + " cat-file -e " + work).exit_code, 0)
      << "the clone's commit landed in the origin's object store";
  EXPECT_EQ(Sh("git -C " + Q(origin_) + " for-each-ref"), refs);
  EXPECT_EQ(Slurp(origin_ + "/.git/config"), config);
  EXPECT_EQ(Sh("git -C " + Q(origin_) + " config --get core.bare"), "false");
  EXPECT_EQ(Sh("git -C " + Q(origin_) + " status --porcelain"), "");

  EXPECT_EQ(AgentTeam("ann"), "feat/login");
  Json events = MustCall(*api_, "ledger.events", {{"kind", "team.created"}})["events"];
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["payload"]["path"], path);
  EXPECT_EQ(events[0]["payload"]["branch"], "feat/login");
  EXPECT_EQ(events[0]["payload"]["repo"], fs::canonical(origin_).string());
}

TEST_P(TeamTest, BaseBranchIsChosenOrTheOriginsCurrentOne) {
  Result<Json> t1 = Create({{"name", "t1"}, {"base_branch", "feature"}});
  ASSERT_TRUE(t1.ok()) << t1.status().ToString();
  EXPECT_EQ(Sh("git -C " + Q(root_ + "/t1") + " rev-parse HEAD"),
            Sh("git -C " + Q(origin_) + " rev-parse feature"));
  EXPECT_TRUE(fs::exists(root_ + "/t1/F"));

  Sh("git -C " + Q(origin_) + " checkout -q feature");
  Result<Json> t2 = Create({{"name", "t2"}});
  ASSERT_TRUE(t2.ok()) << t2.status().ToString();
  EXPECT_EQ((*t2)["base_branch"], "feature");
}

TEST_P(TeamTest, BadCreateIsRefusedAndLeavesNothingBehind) {
  ASSERT_TRUE(Create({{"name", "taken"}, {"members", {"bob"}}}).ok());
  fs::create_directories(root_ + "/occupied");
  fs::create_directories(dir_.File("plain"));
  const std::string fresh_root = dir_.File("fresh/deeper");
  const struct {
    Json input;
    StatusCode code;
    std::string says;  // the message names the field and the cause
  } cases[] = {
      {{{"name", "bad..name"}}, StatusCode::kInvalidArgument, "name: \"bad..name\""},
      {{{"name", "-x"}}, StatusCode::kInvalidArgument, "not a valid git branch name"},
      {{{"name", "a"}, {"repo", dir_.File("plain")}},
       StatusCode::kInvalidArgument,
       "is not a git repository"},
      {{{"name", "a"}, {"repo", dir_.File("nowhere")}}, StatusCode::kNotFound, "repo: no folder"},
      {{{"name", "a"}, {"base_branch", "nope"}},
       StatusCode::kNotFound,
       "base_branch: no branch \"nope\""},
      {{{"name", "a"}, {"base_branch", "nope"}}, StatusCode::kNotFound, "feature, main"},
      {{{"name", "a"}, {"members", {"ann", "ghost"}}},
       StatusCode::kNotFound,
       "members: agent: no agent \"ghost\""},
      {{{"name", "a"}, {"leader", "ghost"}}, StatusCode::kNotFound, "leader: agent"},
      {{{"name", "a"}, {"members", {"bob"}}},
       StatusCode::kFailedPrecondition,
       "member of team taken"},
      {{{"name", "a"}, {"wish_run", "run-nope"}}, StatusCode::kNotFound, "wish_run: run"},
      {{{"name", "taken"}}, StatusCode::kAlreadyExists, "name: a team \"taken\" already exists"},
      {{{"name", "occupied"}}, StatusCode::kAlreadyExists, "already exists"},
      // git clones, then refuses `checkout -b main`: the clone must go again,
      // with the folders made for it.
      {{{"name", "main"}, {"worktree_root", fresh_root}},
       StatusCode::kFailedPrecondition,
       "name: git checkout -b main failed"},
  };
  const std::set<std::string> before = Listing(root_);
  for (const auto& c : cases) {
    Status s = Refused("team.create", WithDefaults(c.input), c.code);
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.input.dump() << ": " << s.message();
    EXPECT_EQ(Listing(root_), before) << c.input.dump() << " left something in " << root_;
    EXPECT_EQ(MustCall(*api_, "team.list", Json::object())["teams"].size(), 1u) << c.input.dump();
  }
  EXPECT_FALSE(fs::exists(dir_.File("fresh"))) << "the refused clone's folders stayed";
  EXPECT_TRUE(AgentTeam("ann").is_null());
  EXPECT_EQ(AgentTeam("bob"), "taken");
}

TEST_P(TeamTest, MembersLeaderAndWhoMayChangeThem) {
  Result<Json> made = Create({{"name", "t"}, {"members", {"ann"}}, {"leader", "bob"}});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ((*made)["members"], Json({"ann", "bob"}));
  EXPECT_EQ((*made)["leader"], "bob");

  Json hired = MustCall(*api_, "team.hire", {{"name", "t"}, {"agent", "cid"}});
  EXPECT_EQ(hired["members"], Json({"ann", "bob", "cid"}));
  EXPECT_EQ(AgentTeam("cid"), "t");
  const int64_t ledger = LedgerLength(*api_);
  EXPECT_EQ(MustCall(*api_, "team.hire", {{"name", "t"}, {"agent", "cid"}})["version"],
            hired["version"]);
  EXPECT_EQ(LedgerLength(*api_), ledger) << "hiring a member again changed something";
  ExpectRefused("team.hire", {{"name", "t"}, {"agent", "ghost"}}, StatusCode::kNotFound);
  ExpectRefused("team.hire", {{"name", "nope"}, {"agent", "cid"}}, StatusCode::kNotFound);

  // An agent changes its team only as the leader.
  ExpectRefused("team.fire", {{"name", "t"}, {"agent", "cid"}}, StatusCode::kPermissionDenied,
                Agent("ann"));
  Json fired = MustCall(*api_, "team.fire", {{"name", "t"}, {"agent", "cid"}}, Agent("bob"));
  EXPECT_EQ(fired["members"], Json({"ann", "bob"}));
  EXPECT_TRUE(AgentTeam("cid").is_null());
  Status s = Refused("team.fire", {{"name", "t"}, {"agent", "cid"}}, StatusCode::kNotFound);
  EXPECT_NE(s.message().find("members: ann, bob"), std::string::npos) << s.message();

  Json led = MustCall(*api_, "team.set_leader", {{"name", "t"}, {"agent", "cid"}});
  EXPECT_EQ(led["leader"], "cid");
  EXPECT_EQ(led["members"], Json({"ann", "bob", "cid"}));
  Json leaderless = MustCall(*api_, "team.fire", {{"name", "t"}, {"agent", "cid"}});
  EXPECT_TRUE(leaderless["leader"].is_null());
  ExpectRefused("team.hire", {{"name", "t"}, {"agent", "cid"}, {"expect_version", 1}},
                StatusCode::kAborted);
}

TEST_P(TeamTest, SetStatusFollowsTheMachineAndNamesTheAllowedStates) {
  ASSERT_TRUE(Create({{"name", "t"}}).ok());
  EXPECT_EQ(MustCall(*api_, "team.set_status", {{"name", "t"}, {"status", "blocked"}})["status"],
            "blocked");
  MustCall(*api_, "team.set_status", {{"name", "t"}, {"status", "done"}, {"reason", "merged"}});
  Status s = Refused("team.set_status", {{"name", "t"}, {"status", "blocked"}},
                     StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("status:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("in_progress"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("archived"), std::string::npos) << s.message();
  EXPECT_EQ(s.details()["allowed"], Json({"in_progress", "archived"}));
  ExpectRefused("team.set_status", {{"name", "t"}, {"status", "sleeping"}},
                StatusCode::kInvalidArgument);
  Json events = MustCall(*api_, "ledger.events", {{"kind", "team.status"}})["events"];
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1]["payload"]["reason"], "merged");
}

TEST_P(TeamTest, DisbandReturnsTheTeamsWorkToReadyInOneGo) {
  const std::string run =
      MustCall(*api_, "run.create", {{"profile", "baton"}, {"title", "w"}})["id"];
  auto task = [&](bool in_run) {
    Json in = {{"title", "x"}};
    if (in_run) in["run"] = run;
    return MustCall(*api_, "task.create", in)["id"].get<std::string>();
  };
  auto claim = [&](const std::string& id, const std::string& agent) {
    return MustCall(*api_, "task.claim", {{"task", id}}, Agent(agent))["lease"]["epoch"];
  };
  const std::string by_ann = task(true), by_bob = task(false), by_cid = task(true);
  const std::string waiting = task(true), elsewhere = task(false);
  const Json ann_epoch = claim(by_ann, "ann");
  claim(by_bob, "bob");
  claim(by_cid, "cid");  // not a member, but on the team's wish run
  claim(elsewhere, "cid");
  ASSERT_TRUE(Create({{"name", "t"}, {"members", {"ann", "bob"}}, {"wish_run", run}}).ok());

  const int64_t before = LedgerLength(*api_);
  Json out = MustCall(*api_, "team.disband", {{"name", "t"}, {"reason", "wrap up"}});
  const std::set<std::string> returned(out["returned_tasks"].begin(), out["returned_tasks"].end());
  EXPECT_EQ(returned, std::set<std::string>({by_ann, by_bob, by_cid}));
  for (const std::string& id : {by_ann, by_bob, by_cid, waiting}) {
    Json t = MustCall(*api_, "task.show", {{"id", id}});
    EXPECT_EQ(t["status"], "ready") << id;
    EXPECT_TRUE(t["lease"].is_null()) << id;
  }
  EXPECT_EQ(MustCall(*api_, "task.show", {{"id", elsewhere}})["status"], "in_progress");
  EXPECT_EQ(out["team"]["status"], "archived");
  EXPECT_EQ(out["team"]["members"], Json::array());
  EXPECT_TRUE(AgentTeam("ann").is_null());
  EXPECT_TRUE(AgentTeam("bob").is_null());
  EXPECT_EQ(out["worktree_kept"], root_ + "/t");
  EXPECT_TRUE(fs::exists(root_ + "/t/README")) << "disband removed the clone";

  Json events = MustCall(*api_, "ledger.events", {{"since", before}})["events"];
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["kind"], "team.disbanded");
  const std::set<std::string> listed(events.back()["payload"]["returned_tasks"].begin(),
                                     events.back()["payload"]["returned_tasks"].end());
  EXPECT_EQ(listed, returned);

  ExpectRefused("task.complete", {{"task", by_ann}, {"epoch", ann_epoch}}, StatusCode::kAborted,
                Agent("ann"));
  EXPECT_EQ(MustCall(*api_, "task.show", {{"id", by_ann}})["status"], "ready");
  ExpectRefused("team.disband", {{"name", "t"}}, StatusCode::kFailedPrecondition);
  EXPECT_EQ(MustCall(*api_, "team.list", {{"status", "archived"}})["teams"].size(), 1u);
  EXPECT_EQ(MustCall(*api_, "team.list", {{"status", "in_progress"}})["teams"].size(), 0u);
}

// git runs between two write transactions: while a clone takes its time,
// every other writer goes on, and a second create of the name is refused.
TEST_P(TeamTest, OtherWritersGoOnWhileGitClones) {
  const std::string held = HoldClonesUntilGo();
  Sh("touch " + Q(held + "/hold"));
  Result<Json> team = InternalError("the create has not run");
  std::thread create([&] { team = Create({{"name", "slow"}, {"members", {"ann"}}}); });
  ASSERT_TRUE(testing::Eventually([&] { return fs::exists(held + "/cloning"); }));

  MustCall(*api_, "agent.register", {{"id", "dan"}}, Coordinator());
  Status twice = Refused("team.create", WithDefaults({{"name", "slow"}}), StatusCode::kAlreadyExists);
  EXPECT_NE(twice.message().find("team \"slow\" is being created by alice"), std::string::npos)
      << twice.message();
  Sh("touch " + Q(held + "/go"));
  create.join();
  EXPECT_EQ(Slurp(held + "/outcome"), "go\n") << "the other writers waited for git";
  ASSERT_TRUE(team.ok()) << team.status().ToString();
  EXPECT_EQ((*team)["members"], Json::array({"ann"}));
  EXPECT_EQ(AgentTeam("ann"), "slow");
}

// What changed while git worked is checked again: a member another team
// took meanwhile refuses the create, and its clone and reservation go.
TEST_P(TeamTest, ACreateRefusedAfterItsCloneRemovesTheCloneAndFreesTheName) {
  const std::string held = HoldClonesUntilGo();
  Sh("touch " + Q(held + "/hold"));
  Result<Json> first = InternalError("the create has not run");
  std::thread create([&] { first = Create({{"name", "first"}, {"members", {"ann"}}}); });
  ASSERT_TRUE(testing::Eventually([&] { return fs::exists(held + "/cloning"); }));
  ASSERT_TRUE(Create({{"name", "second"}, {"members", {"ann"}}}).ok());
  Sh("touch " + Q(held + "/go"));
  create.join();
  EXPECT_EQ(first.status().code(), StatusCode::kFailedPrecondition) << first.status().ToString();
  EXPECT_NE(first.status().message().find("member of team second"), std::string::npos)
      << first.status().message();
  EXPECT_EQ(Listing(root_), (std::set<std::string>{"second"}));
  Result<Json> again = Create({{"name", "first"}, {"members", {"bob"}}});
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

// A create whose process died during the clone holds the name until its
// reservation expires; the next create then takes the name over and removes
// the half-made clone. Only the one who reserved may finish or release.
TEST_P(TeamTest, AnAbandonedReservationExpiresAndIsTakenOver) {
  Json reservation = MustCall(*api_, "team.create_reserve", WithDefaults({{"name", "t"}}));
  const std::string tmp = reservation["tmp"].get<std::string>();
  fs::create_directories(tmp + "/.git");  // a clone cut short
  ExpectRefused("team.create_release", {{"name", "t"}, {"token", reservation["token"]}},
                StatusCode::kPermissionDenied, Coordinator());
  ExpectRefused("team.create_finish", {{"name", "t"}, {"token", "tres-wrong"}},
                StatusCode::kNotFound);
  // The repository and branch are the reservation's, not the caller's.
  ExpectRefused("team.create_finish",
                {{"name", "t"}, {"token", reservation["token"]}, {"repo", dir_.File("x")}},
                StatusCode::kInvalidArgument);
  ExpectRefused("team.create_finish", {{"name", "t"}, {"token", reservation["token"]}},
                StatusCode::kFailedPrecondition);  // no clone at the reserved path
  // The name becomes a folder: the step checks it as team.create does.
  for (const std::string& bad : {std::string("victim\0", 7), std::string("../out"),
                                std::string("/etc/x")}) {
    ExpectRefused("team.create_reserve", WithDefaults({{"name", bad}}),
                  StatusCode::kInvalidArgument);
  }
  ExpectRefused("team.create", WithDefaults({{"name", "t"}}), StatusCode::kAlreadyExists);

  time_.Advance(reservation["expires_ms"].get<int64_t>() - time_.NowMillis() + 1);
  Result<Json> team = Create({{"name", "t"}});
  ASSERT_TRUE(team.ok()) << team.status().ToString();
  EXPECT_FALSE(fs::exists(tmp)) << "the abandoned clone stayed";
  EXPECT_EQ(Listing(root_), (std::set<std::string>{"t"}));
  ExpectRefused("team.create_release", {{"name", "t"}, {"token", reservation["token"]}},
                StatusCode::kNotFound);
}

BATON_INSTANTIATE_BACKENDS(TeamTest);

TEST(TeamStoreTest, ClonesGoBesideTheStoreFileByDefault) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.File("store"));
  auto api = testing::OpenApi(dir.File("store/baton.db"));
  const std::string origin = MakeOrigin(dir.File("origin"));
  Json team = MustCall(*api, "team.create", {{"name", "t"}, {"repo", origin}});
  EXPECT_EQ(team["worktree_path"], dir.File("store/teams/t"));
  EXPECT_EQ(Sh("git -C " + Q(dir.File("store/teams/t")) + " rev-parse --abbrev-ref HEAD"), "t");
}

TEST(TeamStoreTest, AnInMemoryStoreNeedsWorktreeRoot) {
  testing::TempDir dir;
  auto api = testing::OpenApi(":memory:");
  Result<Json> r =
      api->Call("team.create", {{"name", "t"}, {"repo", MakeOrigin(dir.File("o"))}}, Human());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("worktree_root: required"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace baton
