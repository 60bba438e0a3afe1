// Issue 15, "What was seen" 1 and 2, "Must exist" 1 and 3: a path a caller
// names is resolved and scoped (roots, never the store's files, whatever the
// spelling), mirror.bind has a role rule, and running commands is a grant.
//
// The project is <tmp>/proj with the store at proj/.baton/baton.db, so the
// default root is proj. Each refusal must leave the store file the same file
// (same inode: a mirror renamed over it makes a new one), the ledger as it
// was, and nothing written outside the roots.

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "test_util.h"

namespace baton::testing {
namespace {

namespace fs = std::filesystem;

Actor WithGrants(Actor a, std::vector<std::string> grants) {
  a.grants = std::move(grants);
  return a;
}

std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    out.insert(it->path().string());
  }
  return out;
}

struct Inode {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const Inode&) const = default;
};

Inode InodeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino};
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class PathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(proj_ + "/.baton");
    fs::create_directories(outside_);
    api_ = OpenApi(store_);
    Json run = MustCall(*api_, "run.import",
                        {{"format", "graph"},
                         {"content", R"({"currentNode": "PLAN", "status": "running", "context": {}})"},
                         {"source", "g.json"}});
    run_ = run["run_id"].get<std::string>();
    store_inode_ = InodeOf(store_);
    outside_before_ = Listing(outside_);
  }

  // The store is the file it was, every event is still there, and nothing
  // was written outside the roots.
  void ExpectStoreIntact(const std::string& what) {
    EXPECT_EQ(InodeOf(store_), store_inode_) << what << ": baton.db was replaced";
    EXPECT_EQ(Listing(outside_), outside_before_) << what << ": a file was written outside the roots";
    Result<Json> verify = api_->Call("ledger.verify", Json::object(), Human());
    ASSERT_TRUE(verify.ok()) << what << ": " << verify.status().ToString();
  }

  Json Bind(const std::string& path) {
    return {{"run", run_}, {"format", "graph"}, {"path", path}};
  }

  TempDir dir_;
  std::string proj_ = dir_.File("proj");
  std::string store_ = proj_ + "/.baton/baton.db";
  std::string outside_ = dir_.File("outside");
  std::unique_ptr<Api> api_;
  std::string run_;
  Inode store_inode_;
  std::set<std::string> outside_before_;
};

struct PathCase {
  std::string name;
  std::function<std::string(const std::string& proj, const std::string& outside)> path;
  StatusCode code;
  std::string says;  // part of the message
};

// Every spelling of the store's files, and paths that leave the roots, as
// mirror.bind paths of a coordinator without grants.
TEST_F(PathsTest, MirrorBindRefusesTheStoreByEverySpellingAndPathsOutsideTheRoots) {
  fs::create_directory_symlink(proj_ + "/.baton", proj_ + "/dbdir");
  fs::create_symlink(store_, proj_ + "/db.json");
  fs::create_hard_link(store_, proj_ + "/hard.json");
  fs::create_directory_symlink(outside_, proj_ + "/out");
  const std::vector<PathCase> cases = {
      {"NUL after the store file", [](auto p, auto) { return p + "/.baton/baton.db" + std::string(1, '\0') + "x"; },
       StatusCode::kInvalidArgument, "control character 0x00"},
      {"NUL in a mirror name", [](auto p, auto) { return p + "/m.json" + std::string(1, '\0') + ".x"; },
       StatusCode::kInvalidArgument, "control character"},
      {"newline", [](auto p, auto) { return p + "/a\nb.json"; }, StatusCode::kInvalidArgument, "0x0a"},
      {"escape", [](auto p, auto) { return p + "/a\x1b[2Jb.json"; }, StatusCode::kInvalidArgument, "0x1b"},
      {"DEL", [](auto p, auto) { return p + "/a\x7f.json"; }, StatusCode::kInvalidArgument, "0x7f"},
      {"the store", [](auto p, auto) { return p + "/.baton/baton.db"; }, StatusCode::kPermissionDenied, "store"},
      {"./", [](auto p, auto) { return p + "/.baton/./baton.db"; }, StatusCode::kPermissionDenied, "store"},
      {"//", [](auto p, auto) { return p + "//.baton//baton.db"; }, StatusCode::kPermissionDenied, "store"},
      {"..", [](auto p, auto) { return p + "/.baton/../.baton/baton.db"; }, StatusCode::kPermissionDenied, "store"},
      {"-wal", [](auto p, auto) { return p + "/.baton/baton.db-wal"; }, StatusCode::kPermissionDenied, "store"},
      {"-shm", [](auto p, auto) { return p + "/.baton/baton.db-shm"; }, StatusCode::kPermissionDenied, "store"},
      {"-journal", [](auto p, auto) { return p + "/.baton/baton.db-journal"; }, StatusCode::kPermissionDenied, "store"},
      {"a file beside it", [](auto p, auto) { return p + "/.baton/head.json"; }, StatusCode::kPermissionDenied, "store's folder"},
      {"through a symlinked folder", [](auto p, auto) { return p + "/dbdir/baton.db"; }, StatusCode::kPermissionDenied, "store"},
      {"-wal through a symlinked folder", [](auto p, auto) { return p + "/dbdir/baton.db-wal"; }, StatusCode::kPermissionDenied, "store"},
      {"a symlink to it", [](auto p, auto) { return p + "/db.json"; }, StatusCode::kPermissionDenied, "store's own file"},
      {"a hard link to it", [](auto p, auto) { return p + "/hard.json"; }, StatusCode::kPermissionDenied, "store's own file"},
      {"outside the roots", [](auto, auto o) { return o + "/x.json"; }, StatusCode::kPermissionDenied, "outside the roots"},
      {".. out of the root", [](auto p, auto) { return p + "/../outside/x.json"; }, StatusCode::kPermissionDenied, "outside the roots"},
      {"a symlink out of the root", [](auto p, auto) { return p + "/out/x.json"; }, StatusCode::kPermissionDenied, "outside the roots"},
      {"a missing folder, .., then a symlink out",
       [](auto p, auto) { return p + "/nope/../out/x.json"; }, StatusCode::kPermissionDenied, "outside the roots"},
      {"relative", [](auto, auto) { return std::string("x.json"); }, StatusCode::kInvalidArgument, "absolute"},
  };
  for (const PathCase& c : cases) {
    const std::string path = c.path(proj_, outside_);
    Status s = Refused(*api_, "mirror.bind", Bind(path), c.code, Coordinator());
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.name << ": " << s.ToString();
    // A commit on the run writes every mirror it has: none may exist.
    MustCall(*api_, "run.patch_context", {{"id", run_}, {"patch", {{"k", c.name}}}}, Coordinator());
    ExpectStoreIntact(c.name);
  }
  EXPECT_EQ(MustCall(*api_, "mirror.list", Json::object())["mirrors"].size(), 0u);
}

TEST_F(PathsTest, TheStoreIsRefusedEvenWithTheGrantPaths) {
  const Actor human = WithGrants(Human(), AllGrants());
  fs::create_directory_symlink(proj_ + "/.baton", dir_.File("elsewhere"));
  for (const std::string& path : {store_, store_ + "-wal", dir_.File("elsewhere") + "/baton.db",
                                  proj_ + "/.baton/x.json"}) {
    Status s = Refused(*api_, "mirror.bind", Bind(path), StatusCode::kPermissionDenied, human);
    EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  }
  // Outside the roots is the grant's to allow.
  Json bound = MustCall(*api_, "mirror.bind", Bind(outside_ + "/x.json"), human);
  EXPECT_EQ(bound["path"], outside_ + "/x.json");
  EXPECT_TRUE(fs::exists(outside_ + "/x.json"));
  outside_before_ = Listing(outside_);
  ExpectStoreIntact("grant");
}

TEST_F(PathsTest, MirrorBindIsForHumansAndCoordinators) {
  Status s = Refused(*api_, "mirror.bind", Bind(proj_ + "/m.json"), StatusCode::kPermissionDenied,
                     WithGrants(Agent(), AllGrants()));
  EXPECT_NE(s.message().find("mirror.bind"), std::string::npos) << s.ToString();
  (void)Refused(*api_, "mirror.unbind", {{"run", run_}}, StatusCode::kPermissionDenied, Agent());
  MustCall(*api_, "mirror.bind", Bind(proj_ + "/m.json"), Coordinator());
  EXPECT_TRUE(fs::exists(proj_ + "/m.json"));
  ExpectStoreIntact("role");
}

// Bound to proj/m/baton.db, then proj/m swapped for a symlink to the
// store's folder: the next write must not rename the mirror over the store.
TEST_F(PathsTest, AFolderSwappedForASymlinkAfterBindIsNotWrittenThrough) {
  fs::create_directory(proj_ + "/m");
  MustCall(*api_, "mirror.bind", Bind(proj_ + "/m/baton.db"), Coordinator());
  ASSERT_TRUE(fs::exists(proj_ + "/m/baton.db"));
  fs::remove_all(proj_ + "/m");
  fs::create_directory_symlink(proj_ + "/.baton", proj_ + "/m");

  MustCall(*api_, "run.patch_context", {{"id", run_}, {"patch", {{"n", 1}}}}, Coordinator());
  ExpectStoreIntact("swapped folder");
  Json failed = MustCall(*api_, "ledger.events", {{"run", run_}, {"kind", "mirror.failed"}});
  ASSERT_EQ(failed["events"].size(), 1u) << failed.dump();
  EXPECT_NE(failed["events"][0]["payload"]["error"].get<std::string>().find("store"),
            std::string::npos)
      << failed.dump();

  // A folder swapped for a symlink to a folder outside the roots is not
  // written through either.
  MustCall(*api_, "mirror.bind", Bind(proj_ + "/n.json"), Coordinator());
  fs::create_directory(proj_ + "/k");
  MustCall(*api_, "mirror.bind", Bind(proj_ + "/k/state.json"), Coordinator());
  fs::remove_all(proj_ + "/k");
  fs::create_directory_symlink(outside_, proj_ + "/k");
  outside_before_ = Listing(outside_);
  MustCall(*api_, "run.patch_context", {{"id", run_}, {"patch", {{"n", 2}}}}, Coordinator());
  ExpectStoreIntact("swapped to outside");
  EXPECT_FALSE(fs::exists(outside_ + "/state.json"));
}

// A hard link to the store made after bind, at the mirror's own path.
TEST_F(PathsTest, AStoreFileLinkedInAfterBindIsNotReplaced) {
  MustCall(*api_, "mirror.bind", Bind(proj_ + "/h.json"), Coordinator());
  fs::remove(proj_ + "/h.json");
  fs::create_hard_link(store_, proj_ + "/h.json");
  MustCall(*api_, "run.patch_context", {{"id", run_}, {"patch", {{"n", 1}}}}, Coordinator());
  EXPECT_EQ(InodeOf(proj_ + "/h.json"), store_inode_);
  ExpectStoreIntact("hard link after bind");
}

// --root replaces the default root; several may be given.
TEST_F(PathsTest, RootsGivenReplaceTheProjectFolder) {
  fs::create_directories(proj_ + "/a");
  fs::create_directories(proj_ + "/b");
  ApiOptions options;
  options.store.location = store_;
  options.roots = {proj_ + "/a", outside_};
  Result<std::unique_ptr<Api>> opened = Api::Open(options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Api& api = **opened;
  MustCall(api, "mirror.bind", Bind(outside_ + "/x.json"), Coordinator());
  MustCall(api, "mirror.bind", Bind(proj_ + "/a/x.json"), Coordinator());
  Status s = Refused(api, "mirror.bind", Bind(proj_ + "/b/x.json"), StatusCode::kPermissionDenied,
                     Coordinator());
  EXPECT_NE(s.message().find("outside the roots " + proj_ + "/a, " + outside_), std::string::npos)
      << s.ToString();
  options.roots = {proj_ + "/none"};
  EXPECT_EQ(Api::Open(options).status().code(), StatusCode::kInvalidArgument);
}

// ---- graph runs: commands are a grant ----

constexpr char kCommandFlow[] =
    "id: g\nnodes:\n  - {name: A, type: command, command: 'touch MARK', then: END}\n";
constexpr char kEvalFlow[] =
    "id: e\nnodes:\n  - {name: A, type: eval, code: 'return 1', then: END}\n";

struct GraphCase {
  std::string name;
  std::function<Json(const std::string& proj, const std::string& outside)> input;
  std::vector<std::string> grants;
  StatusCode code;
  std::string says;
};

TEST_F(PathsTest, GraphRunNeedsGrantsForCommandsInlineDefinitionsAndPathsOutsideTheRoots) {
  fs::create_directories(proj_ + "/work");
  Write(proj_ + "/cmd.yaml", kCommandFlow);
  Write(proj_ + "/eval.yaml", kEvalFlow);
  Write(outside_ + "/eval.yaml", kEvalFlow);
  outside_before_ = Listing(outside_);
  const std::string cwd_flow =
      "id: c\nnodes:\n  - {name: A, type: command, command: 'touch MARK', cwd: '" + outside_ +
      "', then: END}\n";
  Write(proj_ + "/cwd.yaml", cwd_flow);
  Write(proj_ + "/rel.yaml",
        "id: r\nnodes:\n  - {name: A, type: command, command: 'touch MARK', cwd: '../../outside', "
        "then: END}\n");
  const std::string work = proj_ + "/work";
  const std::vector<std::string> kAllButPaths = {"commands", "definitions"};
  const std::vector<GraphCase> cases = {
      {"inline definition with a command node",
       [&](auto, auto) { return Json{{"text", kCommandFlow}, {"workdir", work}}; },
       {}, StatusCode::kPermissionDenied, "definitions"},
      {"inline definition without commands",
       [&](auto, auto) { return Json{{"text", kEvalFlow}, {"workdir", work}}; },
       {"commands"}, StatusCode::kPermissionDenied, "definitions"},
      {"a command node without the grant",
       [&](auto p, auto) { return Json{{"file", p + "/cmd.yaml"}, {"workdir", work}}; },
       {"definitions", "paths"}, StatusCode::kPermissionDenied, "node A is a command node"},
      {"a definition file outside the roots",
       [&](auto, auto o) { return Json{{"file", o + "/eval.yaml"}, {"workdir", work}}; },
       {"commands", "paths"}, StatusCode::kPermissionDenied, "grant \"definitions\" needed"},
      {"a workdir outside the roots",
       [&](auto p, auto o) { return Json{{"file", p + "/cmd.yaml"}, {"workdir", o}}; },
       kAllButPaths, StatusCode::kPermissionDenied, "workdir"},
      {"a state_dir outside the roots",
       [&](auto p, auto o) {
         return Json{{"file", p + "/eval.yaml"}, {"workdir", work}, {"state_dir", o + "/gs"}};
       },
       kAllButPaths, StatusCode::kPermissionDenied, "state_dir"},
      {"a state_dir in the store's folder",
       [&](auto p, auto) {
         return Json{{"file", p + "/eval.yaml"}, {"workdir", work}, {"state_dir", p + "/.baton"}};
       },
       AllGrants(), StatusCode::kPermissionDenied, "store's folder"},
      {"a node cwd outside the roots",
       [&](auto p, auto) { return Json{{"file", p + "/cwd.yaml"}, {"workdir", work}}; },
       kAllButPaths, StatusCode::kPermissionDenied, "cwd"},
      {"a relative node cwd that climbs out",
       [&](auto p, auto) { return Json{{"file", p + "/rel.yaml"}, {"workdir", work}}; },
       kAllButPaths, StatusCode::kPermissionDenied, "\"..\""},
      {"a NUL in the workdir",
       [&](auto p, auto) {
         return Json{{"file", p + "/eval.yaml"}, {"workdir", work + std::string(1, '\0') + "x"}};
       },
       AllGrants(), StatusCode::kInvalidArgument, "control character"},
  };
  for (const GraphCase& c : cases) {
    const Json in = c.input(proj_, outside_);
    Status s = Refused(*api_, "graph.run", in, c.code, WithGrants(Coordinator(), c.grants));
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.name << ": " << s.ToString();
    EXPECT_FALSE(fs::exists(work + "/MARK")) << c.name << ": the command ran";
    EXPECT_FALSE(fs::exists(outside_ + "/MARK")) << c.name << ": the command ran";
    ExpectStoreIntact(c.name);
  }
}

TEST_F(PathsTest, AGraphWithTheGrantsRunsAndTheLedgerSaysWhichGrantsItUsed) {
  fs::create_directories(proj_ + "/work");
  Write(proj_ + "/cmd.yaml", kCommandFlow);
  const Actor coord = WithGrants(Coordinator(), {"commands"});
  Json out = MustCall(*api_, "graph.run",
                      {{"file", proj_ + "/cmd.yaml"}, {"workdir", proj_ + "/work"}, {"id", "g1"}},
                      coord);
  EXPECT_EQ(out["status"], "completed") << out.dump();
  EXPECT_TRUE(fs::exists(proj_ + "/work/MARK"));
  Json started = MustCall(*api_, "ledger.events", {{"run", "g1"}, {"kind", "graph.started"}});
  ASSERT_EQ(started["events"].size(), 1u);
  const Json& runner = started["events"][0]["payload"]["runner"];
  EXPECT_EQ(runner["grants"], Json::array({"commands"})) << runner.dump();
  EXPECT_EQ(runner["caller"]["id"], "coord") << runner.dump();

  // An inline definition with the grant "definitions" too.
  Json inline_run = MustCall(*api_, "graph.run",
                             {{"text", kEvalFlow}, {"workdir", proj_ + "/work"}, {"id", "g2"}},
                             WithGrants(Coordinator(), {"definitions"}));
  EXPECT_EQ(inline_run["status"], "completed") << inline_run.dump();
  ExpectStoreIntact("granted");
}

TEST_F(PathsTest, ResumingACommandGraphNeedsTheGrantToo) {
  fs::create_directories(proj_ + "/work");
  const std::string flow =
      "id: h\nnodes:\n  - {name: Q, type: human, question: 'go?', choices: [yes, no], then: A}\n"
      "  - {name: A, type: command, command: 'touch MARK', then: END}\n";
  Write(proj_ + "/h.yaml", flow);
  Json out = MustCall(*api_, "graph.run",
                      {{"file", proj_ + "/h.yaml"}, {"workdir", proj_ + "/work"}, {"id", "h1"},
                       {"wait_for_human", false}},
                      WithGrants(Human(), AllGrants()));
  ASSERT_EQ(out["stopped"], "waiting") << out.dump();
  Status s = Refused(*api_, "graph.resume", {{"id", "h1"}, {"wait_for_human", false}},
                     StatusCode::kPermissionDenied,
                     Coordinator());
  EXPECT_NE(s.message().find("commands"), std::string::npos) << s.ToString();
  EXPECT_FALSE(fs::exists(proj_ + "/work/MARK"));
}

// ---- other operations that name paths or run commands ----

TEST_F(PathsTest, OtherOperationsScopeTheirPathsAndCommands) {
  fs::create_directories(outside_ + "/wf/steps");
  Write(outside_ + "/GOAL.md", "---\ntitle: t\n---\ngoal\n");
  outside_before_ = Listing(outside_);
  struct Case {
    std::string op;
    Json input;
    Actor actor;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"team.create", {{"name", "t"}, {"repo", outside_}}, Coordinator(), "repo: " + outside_},
      {"team.create", {{"name", "t"}, {"repo", proj_}, {"worktree_root", outside_}}, Coordinator(),
       "worktree_root"},
      {"sgai.start", {{"goal_file", outside_ + "/GOAL.md"}}, Coordinator(), "goal_file"},
      {"sgai.start", {{"goal", "---\ntitle: t\n---\ngoal\n"}, {"workdir", outside_}}, Coordinator(),
       "workdir"},
      {"sinfonia.start", {{"workflow_dir", outside_ + "/wf"}, {"goal", "g"}}, Coordinator(),
       "workflow_dir"},
      {"graph.check", {{"file", outside_ + "/g.yaml"}}, Agent(), "file"},
      {"agent.register", {{"id", "coder"}, {"delivery_command", "touch " + outside_ + "/MARK"}},
       Agent(), "commands"},
      {"mail.deliver", Json::object(), Coordinator(), "commands"},
  };
  for (const Case& c : cases) {
    Status s = Refused(*api_, c.op, c.input, StatusCode::kPermissionDenied, c.actor);
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.op << " " << c.input.dump() << ": "
                                                          << s.ToString();
    ExpectStoreIntact(c.op);
  }
}

}  // namespace
}  // namespace baton::testing
