// Seed files through the store: every fixture imports and exports back the
// same document, runs convert between formats, bad files change nothing, and
// mirrors follow each commit (docs/formats.md).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "engine/interchange/imports.h"
#include "engine/ledger/witness.h"
#include "formats/format.h"
#include "formats/lifecycle.h"
#include "model/profile.h"
#include "util/atomic_file.h"
#include "test_util.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::Human;
using testing::MustCall;
using testing::Refused;
using testing::TempDir;

// The user at the terminal: binds mirrors anywhere but the store (the
// mirrors here live in their own temporary folder, outside the store's).
Actor Terminal() { return Actor{"alice", "human", AllGrants()}; }

const std::string kSeeds = BATON_SOURCE_DIR "/../shared/fixtures/seeds/";

std::string Read(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

struct Sample {
  std::string format;
  std::string path;
  bool exact;  // export gives back the same JSON document
};

// Every state file we hold, and the format that reads it: the fixtures of
// ../shared, plus files of real runs kept beside the tests and fuzz seeds.
std::vector<Sample> Samples() {
  std::vector<Sample> samples = {
      {"sgai", kSeeds + "sgai/golden_state.json", true},
      {"stigmergy", kSeeds + "stigmergy/state-tmpl.v2.0.json", true},
      // 3.0 is read and written as 2.0: not the same document.
      {"stigmergy", kSeeds + "stigmergy/state-tmpl.v3.0.json", false},
      {"sinfonia", kSeeds + "sinfonia/handoffs/s-20260305-003/workflow.md", false},
  };
  const std::pair<const char*, const char*> folders[] = {
      {"graph", "/fuzz/seeds/graph"},
      {"genie-wish", "/fuzz/seeds/genie-wish"},
      {"genie-board", "/fuzz/seeds/genie-board"},
  };
  for (const auto& [format, folder] : folders) {
    std::error_code ec;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(std::string(BATON_SOURCE_DIR) + folder, ec)) {
      if (e.is_regular_file()) files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) samples.push_back({format, f, true});
  }
  return samples;
}

// The run machine of a profile's runs.
std::string TargetMachine(const std::string& profile) {
  Result<const Profile*> p = FindProfile(profile);
  return p.ok() ? (*p)->run_machine : "";
}

Json Import(Api& api, const std::string& format, const std::string& path,
            const std::string& run = "") {
  Json in = {{"format", format}, {"content", Read(path)}, {"source", path}};
  if (!run.empty()) in["run"] = run;
  return MustCall(api, "run.import", in);
}

std::string Export(Api& api, const std::string& run, const std::string& format) {
  Json out = MustCall(api, "run.export", {{"run", run}, {"format", format}});
  return out.is_object() ? out.value("content", "") : "";
}

class FormatStoreTest : public ::testing::Test {
 protected:
  RunImage ExportImageForTest(const std::string& run) {
    Result<std::unique_ptr<Store>> store = Store::Open({.location = testing::TestStoreLocation(dir_.File("baton.db"))});
    EXPECT_TRUE(store.ok());
    Result<std::unique_ptr<Connection>> conn = (*store)->Connect();
    Result<std::unique_ptr<Txn>> txn = (*conn)->Begin(TxnMode::kRead);
    Result<RunImage> image = ExportImage(**txn, run);
    EXPECT_TRUE(image.ok()) << image.status().ToString();
    return image.ok() ? *image : RunImage();
  }

  TempDir dir_;
  std::unique_ptr<Api> api_ = testing::OpenApi(dir_.File("baton.db"));
};

TEST_F(FormatStoreTest, EveryFixtureImportsAndExportsBackTheSameDocument) {
  for (const Sample& s : Samples()) {
    SCOPED_TRACE(s.format + " " + s.path);
    Json imported = Import(*api_, s.format, s.path);
    ASSERT_TRUE(imported.is_object());
    EXPECT_TRUE(imported["created"].get<bool>());
    const std::string run = imported["run_id"].get<std::string>();
    const std::string text = Export(*api_, run, s.format);
    if (s.exact) {
      EXPECT_EQ(Json::parse(text), Json::parse(Read(s.path)));
    }
    // Whatever the format, what it writes reads back into the same run.
    Result<const Format*> f = FindFormat(s.format);
    ASSERT_TRUE(f.ok());
    Result<RunImage> original = (*f)->read(Read(s.path), s.path);
    Result<RunImage> again = (*f)->read(text, "exported");
    ASSERT_TRUE(original.ok()) << original.status().ToString();
    ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << text;
    EXPECT_EQ((*again)["run"]["status"], (*original)["run"]["status"]);
    // The same structure: the same tasks (steps, stories, groups, todos)
    // with the same keys and statuses, in the same order.
    const Json a = again->value("tasks", Json::array());
    const Json o = original->value("tasks", Json::array());
    ASSERT_EQ(a.size(), o.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].value("key", Json()), o[i].value("key", Json())) << i;
      EXPECT_EQ(a[i].value("status", Json()), o[i].value("status", Json())) << i;
    }
    EXPECT_EQ(again->value("approvals", Json::array()).size(),
              original->value("approvals", Json::array()).size());
    // The ledger says where the run came from.
    Json events = MustCall(*api_, "ledger.events", {{"run", run}, {"kind", "run.imported"}});
    ASSERT_EQ(events["events"].size(), 1u);
    EXPECT_EQ(events["events"][0]["payload"]["format"], s.format);
  }
}

// A file added to ../shared/fixtures/seeds must be imported above or named
// here with the suite that reads it.
TEST_F(FormatStoreTest, EveryFixtureFileIsReadBySomeSuite) {
  std::set<std::string> imported;
  for (const Sample& s : Samples()) imported.insert(fs::weakly_canonical(s.path).string());
  const std::pair<const char*, const char*> elsewhere[] = {
      {"SOURCES.md", "the fixtures' provenance"},
      {"graph/README.txt", "says there are no graph files (fuzz/seeds/graph holds the documented one)"},
      {"sgai/GOAL", "GOAL.md flow graphs: sgai_flow_test"},
      {"genie/wishes/", "WISH.md lint cases: wish_md_test"},
      {"genie/board-templates.json", "embedded as src/model/board_templates.json (below)"},
      {"sinfonia/workflows/", "workflow definitions and steps: sinfonia_test"},
      {"sinfonia/handoffs/s-20260305-003/dispatch-", "envelopes: ASessionFolderImports..."},
      {"sinfonia/handoffs/s-20260305-003/return-", "envelopes: ASessionFolderImports..."},
  };
  for (const auto& e : fs::recursive_directory_iterator(kSeeds)) {
    if (!e.is_regular_file()) continue;
    const std::string path = fs::weakly_canonical(e.path()).string();
    const std::string rel = fs::relative(e.path(), kSeeds).string();
    bool covered = imported.contains(path);
    for (const auto& [prefix, why] : elsewhere) covered = covered || rel.rfind(prefix, 0) == 0;
    EXPECT_TRUE(covered) << rel << " is read by no suite";
  }
  // board_test checks the built-in templates, which are this file verbatim.
  EXPECT_EQ(Read(kSeeds + "genie/board-templates.json"),
            Read(BATON_SOURCE_DIR "/src/model/board_templates.json"));
}

TEST_F(FormatStoreTest, ASessionFolderImportsWithItsHandOffEnvelopes) {
  const std::string folder = kSeeds + "sinfonia/handoffs/s-20260305-003/";
  Json envelopes = Json::array();
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) {
    if (e.path().filename() != "workflow.md") names.push_back(e.path().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) envelopes.push_back({{"name", n}, {"content", Read(n)}});
  ASSERT_EQ(envelopes.size(), 6u);
  Json imported = MustCall(*api_, "run.import",
                           {{"format", "sinfonia"},
                            {"content", Read(folder + "workflow.md")},
                            {"source", folder + "workflow.md"},
                            {"envelopes", envelopes}});
  ASSERT_TRUE(imported.is_object());
  EXPECT_EQ(imported["counts"].value("handoffs", 0), 6) << imported;
  Json out = MustCall(*api_, "run.export", {{"run", imported["run_id"]}, {"format", "sinfonia"}});
  ASSERT_TRUE(out.is_object());
  // The hand-offs are the run's, in sequence order, with their personas.
  RunImage image = ExportImageForTest(imported["run_id"].get<std::string>());
  ASSERT_EQ(image["handoffs"].size(), 6u);
  EXPECT_EQ(image["handoffs"][0]["id"], "s-20260305-003-001");
  EXPECT_EQ(image["handoffs"][0]["target"], "amadeus");
  EXPECT_EQ(image["handoffs"][1]["type"], "return");
  EXPECT_EQ(image["handoffs"][1]["source"], "amadeus");
  EXPECT_EQ(image["handoffs"][5]["meta"]["file"], "return-03-rondo.md");

  // A file Sinfonia's recovery would skip is skipped, named with the reason
  // in the result and in the ledger, and the rest imports (issue 18).
  std::unique_ptr<Api> fresh = testing::OpenApi(dir_.File("fresh.db"));
  envelopes.push_back({{"name", "bad.md"}, {"content", "---\nsequence: seven\n---\n"}});
  Json again = MustCall(*fresh, "run.import",
                        {{"format", "sinfonia"},
                         {"content", Read(folder + "workflow.md")},
                         {"envelopes", envelopes}});
  EXPECT_EQ(again["counts"].value("handoffs", 0), 6) << again;
  ASSERT_FALSE(again["notes"].empty());
  EXPECT_EQ(again["notes"][0], "envelope skipped: bad.md: line 2: sequence: \"seven\" is not a "
                               "whole number");
  Json events = MustCall(*fresh, "ledger.events", {{"run", again["run_id"]}, {"kind", "run.imported"}});
  EXPECT_EQ(events["events"][0]["payload"]["notes"][0], again["notes"][0]);
}

TEST_F(FormatStoreTest, EveryRunConvertsToEveryFormatThatReadsItBack) {
  for (const Sample& s : Samples()) {
    Json imported = Import(*api_, s.format, s.path);
    ASSERT_TRUE(imported.is_object());
    const std::string run = imported["run_id"].get<std::string>();
    for (const Format& target : AllFormats()) {
      SCOPED_TRACE(s.format + " " + s.path + " as " + target.name);
      Result<Json> out = api_->Call("run.export", {{"run", run}, {"format", target.name}}, Human());
      if (!out.ok()) {
        // Only a run the target cannot express at all is refused, saying why.
        EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition) << out.status().ToString();
        continue;
      }
      Result<RunImage> back = target.read((*out)["content"].get<std::string>(), "converted");
      ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << (*out)["content"];
      // The status keeps its phase (pending, active, waiting, done,
      // failed) across vocabularies. Genie's files hold no run status: it is
      // derived from the groups' or tasks' on reading.
      if (std::string(target.profile) == "genie") continue;
      const Json shown = MustCall(*api_, "run.show", {{"id", run}});
      const std::string machine = shown["machine"].get<std::string>();
      const std::string status = shown["status"].get<std::string>();
      const std::string target_machine = TargetMachine(target.profile);
      const std::string expected =
          machine == target_machine
              ? status
              : StatusFor(target_machine, PhaseOf(machine, status).value_or(Phase::kActive));
      EXPECT_EQ((*back)["run"]["status"], expected) << status << " as " << target.name;
    }
  }
}

TEST_F(FormatStoreTest, StigmergyStoriesBecomeSinfoniaStepsWithTheirPhase) {
  TempDir files;
  const std::string path = files.File("state.json");
  ASSERT_TRUE(WriteFileAtomically(path, R"({
    "schema_version": "2.0", "project_name": "shop", "autonomy_mode": "autonomous",
    "project_status": "EXECUTION_IN_PROGRESS", "system_signal": "STORY_CREATED",
    "project_manifest": {"epics": [{"epic_id": 1, "title": "checkout", "status": "IN_PROGRESS",
      "stories": [{"story_id": "1.1", "title": "cart", "status": "COMPLETE"},
                  {"story_id": "1.2", "title": "pay", "status": "IN_PROGRESS"}]}]},
    "history": [], "issue_log": []})").ok());
  Json imported = Import(*api_, "stigmergy", path);
  ASSERT_TRUE(imported.is_object());
  Json out = MustCall(*api_, "run.export",
                      {{"run", imported["run_id"]}, {"format", "sinfonia"}});
  Result<RunImage> index = ReadSinfoniaIndex(out["content"].get<std::string>(), "converted");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)["run"]["status"], "in-progress");
  std::map<std::string, std::string> status_of;
  for (const Json& t : (*index)["tasks"]) status_of[t.value("key", "")] = t.value("status", "");
  EXPECT_EQ(status_of["1.1"], "completed") << out["content"];   // COMPLETE
  EXPECT_EQ(status_of["1.2"], "in-progress") << out["content"]; // IN_PROGRESS
  EXPECT_FALSE(out["notes"].empty());
}

TEST_F(FormatStoreTest, BadFilesAreRefusedNamingThePlaceAndChangeNothing) {
  const std::string golden = Read(kSeeds + "sgai/golden_state.json");
  const std::string stig = Read(kSeeds + "stigmergy/state-tmpl.v2.0.json");
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "[";
  struct Case {
    std::string format, content, expect;
  } cases[] = {
      {"sgai", golden.substr(0, golden.size() / 2), "line"},
      {"sgai", std::string("{\"status\": \"working\", \"task\": \"a\xff\"}"), "UTF-8"},
      {"sgai", R"({"status": "working", "progress": "not a list"})", "/progress"},
      {"sgai", R"({"status": "dancing"})", "status"},
      {"sgai", "{\"status\": " + deep, "deep"},
      {"stigmergy", stig.substr(0, stig.size() - 3), "line"},
      {"stigmergy", R"({"schema_version": "2.0", "project_status": 7})", "/project_status"},
      {"sinfonia", "---\nworkflow_id: w\nworkflow_status: in-progress\n", "line"},
      {"sinfonia", "---\nworkflow_id: w\n---\n## Steps\n\xc3\x28\n", "UTF-8"},
      {"graph", R"({"currentNode": 3, "status": "running"})", "/currentNode"},
      {"graph", R"({"currentNode": "A", "status": "sleeping"})", "status"},
      {"genie-wish", R"({"wish": "w", "groups": {"a": {"status": "ready", "dependsOn": ["b"]}}})", "b"},
      {"genie-board", "{\"schemaVersion\": 1, \"tasks\": [", "line"},
  };
  Json before = MustCall(*api_, "store.status", Json::object());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.format + ": " + c.content.substr(0, 80));
    Status refused = Refused(*api_, "run.import",
                             {{"format", c.format}, {"content", c.content}, {"source", "bad.file"}},
                             StatusCode::kInvalidArgument);
    EXPECT_NE(refused.message().find("bad.file"), std::string::npos) << refused.ToString();
    EXPECT_NE(refused.message().find(c.expect), std::string::npos) << refused.ToString();
  }
  Json after = MustCall(*api_, "store.status", Json::object());
  EXPECT_EQ(after["counts"], before["counts"]);
}

TEST_F(FormatStoreTest, ImportingAgainUpdatesTheRunWithoutRepeatingItsHistory) {
  const std::string path = kSeeds + "sgai/golden_state.json";
  Json first = Import(*api_, "sgai", path);
  ASSERT_TRUE(first.is_object());
  const std::string run = first["run_id"].get<std::string>();
  Json second = Import(*api_, "sgai", path, run);
  ASSERT_TRUE(second.is_object());
  EXPECT_FALSE(second["created"].get<bool>());
  EXPECT_EQ(second["counts"].value("messages", 0), 0) << second;
  EXPECT_EQ(second["counts"].value("history", 0), 0) << second;
  EXPECT_EQ(Json::parse(Export(*api_, run, "sgai")), Json::parse(Read(path)));
  // A file of another profile cannot update this run.
  Refused(*api_, "run.import",
          {{"format", "stigmergy"},
           {"content", Read(kSeeds + "stigmergy/state-tmpl.v2.0.json")},
           {"run", run}},
          StatusCode::kFailedPrecondition);
}

// ---- Mirrors -------------------------------------------------------------

std::string GraphState(const std::string& node) {
  return R"({"currentNode": ")" + node + R"(", "status": "running",
    "updatedAt": "2024-01-15T10:30:00Z", "conversationHistory": [], "context": {"n": 1}})";
}

class MirrorTest : public FormatStoreTest {
 protected:
  std::string ImportGraph() {
    Json out = MustCall(*api_, "run.import",
                        {{"format", "graph"}, {"content", GraphState("PLAN")}, {"source", "g.json"}});
    return out.is_object() ? out["run_id"].get<std::string>() : "";
  }
  TempDir files_;
};

TEST_F(MirrorTest, BindingWritesTheFileAndEachCommitRewritesIt) {
  const std::string run = ImportGraph();
  const std::string path = files_.File("PLAN.json");
  MustCall(*api_, "mirror.bind", {{"run", run}, {"format", "graph"}, {"path", path}}, Terminal());
  Json file = Json::parse(Read(path));
  EXPECT_EQ(file["currentNode"], "PLAN");
  EXPECT_EQ(file["context"]["n"], 1);

  MustCall(*api_, "run.patch_context", {{"id", run}, {"patch", {{"n", 2}}}});
  EXPECT_EQ(Json::parse(Read(path))["context"]["n"], 2);
  // Nothing but the file itself is left in the folder.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(files_.path())) entries += e.exists() ? 1 : 0;
  EXPECT_EQ(entries, 1);

  Json list = MustCall(*api_, "mirror.list", {{"run", run}});
  ASSERT_EQ(list["mirrors"].size(), 1u);
  EXPECT_TRUE(list["mirrors"][0]["ok"].get<bool>());
}

TEST_F(MirrorTest, AFailingMirrorIsReportedAndNeverBlocksTheCommit) {
  const std::string run = ImportGraph();
  const std::string folder = files_.File("state");
  fs::create_directory(folder);
  const std::string path = folder + "/g.json";
  MustCall(*api_, "mirror.bind", {{"run", run}, {"format", "graph"}, {"path", path}}, Terminal());
  fs::remove_all(folder);  // the mirror's folder goes away

  Json patched = MustCall(*api_, "run.patch_context", {{"id", run}, {"patch", {{"n", 3}}}});
  ASSERT_TRUE(patched.is_object());  // the commit stands
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", run}})["context"]["n"], 3);
  Json failed = MustCall(*api_, "ledger.events", {{"run", run}, {"kind", "mirror.failed"}});
  ASSERT_EQ(failed["events"].size(), 1u);
  EXPECT_NE(failed["events"][0]["payload"]["error"].get<std::string>().find(folder),
            std::string::npos);
  Json status = MustCall(*api_, "store.status", Json::object());
  ASSERT_EQ(status["mirrors"].size(), 1u);
  EXPECT_FALSE(status["mirrors"][0]["ok"].get<bool>());

  // The same failure again is not a new event; the folder back, the next
  // commit writes the file and says the mirror recovered.
  MustCall(*api_, "run.patch_context", {{"id", run}, {"patch", {{"n", 4}}}});
  EXPECT_EQ(MustCall(*api_, "ledger.events", {{"run", run}, {"kind", "mirror.failed"}})["events"]
                .size(),
            1u);
  fs::create_directory(folder);
  MustCall(*api_, "run.patch_context", {{"id", run}, {"patch", {{"n", 5}}}});
  EXPECT_EQ(Json::parse(Read(path))["context"]["n"], 5);
  EXPECT_EQ(MustCall(*api_, "ledger.events", {{"run", run}, {"kind", "mirror.recovered"}})["events"]
                .size(),
            1u);
  EXPECT_TRUE(MustCall(*api_, "store.status", Json::object())["mirrors"][0]["ok"].get<bool>());
}

TEST_F(MirrorTest, BadBindingsAreRefused) {
  const std::string run = ImportGraph();
  Refused(*api_, "mirror.bind", {{"run", run}, {"format", "graph"}, {"path", "relative.json"}},
          StatusCode::kInvalidArgument, Terminal());
  Refused(*api_, "mirror.bind",
          {{"run", run}, {"format", "graph"}, {"path", files_.File("no/such/folder.json")}},
          StatusCode::kInvalidArgument, Terminal());
  Refused(*api_, "mirror.bind", {{"run", "run-nope"}, {"format", "graph"}, {"path", files_.File("a.json")}},
          StatusCode::kNotFound, Terminal());
  const std::string other = ImportGraph();
  MustCall(*api_, "mirror.bind", {{"run", run}, {"format", "graph"}, {"path", files_.File("a.json")}}, Terminal());
  Refused(*api_, "mirror.bind", {{"run", other}, {"format", "graph"}, {"path", files_.File("a.json")}},
          StatusCode::kAlreadyExists, Terminal());
}

// An Api as `baton serve` opens one: each mirror rewritten by the mirror
// thread at most once per "delay_ms" (ops/mirror_queue.h).
std::unique_ptr<Api> OpenServingApi(const std::string& location, int delay_ms) {
  ApiOptions options;
  options.store.location = testing::TestStoreLocation(location);
  if (options.store.location != location) options.roots = {PathScope::DefaultRoot(location)};
  options.group_commit = true;
  options.validate_output = true;
  options.mirror_delay_ms = delay_ms;
  Result<std::unique_ptr<Api>> api = Api::Open(options);
  EXPECT_TRUE(api.ok()) << api.status().ToString();
  if (!api.ok()) return nullptr;
  EXPECT_TRUE((*api)->EnsureStore().ok());
  return std::move(api).value();
}

// Polls "done" for up to a minute; false if it never held.
template <typename F>
bool Eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST_F(MirrorTest, AServerFoldsCommitsIntoOneRewriteAndWritesWhatIsDueBeforeItStops) {
  api_.reset();
  // A delay no test waits out: only an idle mirror and the stop write.
  std::unique_ptr<Api> api = OpenServingApi(dir_.File("baton.db"), 600000);
  ASSERT_NE(api, nullptr);
  Json imported = MustCall(*api, "run.import",
                           {{"format", "graph"}, {"content", GraphState("PLAN")}, {"source", "g.json"}});
  const std::string run = imported["run_id"];
  const std::string path = files_.File("PLAN.json");
  MustCall(*api, "mirror.bind", {{"run", run}, {"format", "graph"}, {"path", path}}, Terminal());
  // The binding's commit finds the mirror idle: written at once.
  ASSERT_TRUE(Eventually([&] { return api->mirror_stats().written == 1; }));
  EXPECT_EQ(Json::parse(Read(path))["context"]["n"], 1);

  for (int n = 2; n <= 6; ++n) {
    MustCall(*api, "run.patch_context", {{"id", run}, {"patch", {{"n", n}}}});
  }
  // Five commits wait for the delay; the file is the binding's still, whole.
  EXPECT_EQ(api->mirror_stats().due, 6);
  EXPECT_EQ(api->mirror_stats().written, 1);
  EXPECT_EQ(Json::parse(Read(path))["context"]["n"], 1);

  // Stopping writes them, in one rewrite of the run as it stands.
  api->Shutdown();
  EXPECT_EQ(api->mirror_stats().written, 2);
  EXPECT_EQ(Json::parse(Read(path))["context"]["n"], 6);
  EXPECT_TRUE(ReadMirrorHead(path).has_value());
}

TEST_F(MirrorTest, AServerRewritesAtStartTheMirrorsAStoppedOneLeftBehind) {
  const std::string behind = ImportGraph();
  const std::string current = ImportGraph();
  const std::string a = files_.File("a.json");
  const std::string b = files_.File("b.json");
  MustCall(*api_, "mirror.bind", {{"run", behind}, {"format", "graph"}, {"path", a}}, Terminal());
  MustCall(*api_, "mirror.bind", {{"run", current}, {"format", "graph"}, {"path", b}}, Terminal());
  // A process killed between a commit and the rewrite: the file and the
  // head it carries are those from before the commit.
  const std::string before = Read(a);
  const std::optional<Witness> head = ReadMirrorHead(a);
  ASSERT_TRUE(head.has_value());
  MustCall(*api_, "run.patch_context", {{"id", behind}, {"patch", {{"n", 7}}}});
  api_.reset();
  ASSERT_TRUE(WriteFileAtomically(a, before).ok());
  const int fd = ::open(a.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  WriteMirrorHead(fd, head->head);
  ::close(fd);
  ASSERT_EQ(Json::parse(Read(a))["context"]["n"], 1);

  std::unique_ptr<Api> api = OpenServingApi(dir_.File("baton.db"), 50);
  ASSERT_NE(api, nullptr);
  // Only the one behind is due; it is rewritten without a commit.
  EXPECT_EQ(api->mirror_stats().due, 1);
  const int64_t store_head = MustCall(*api, "store.status", Json::object())["ledger"]["head_seq"];
  EXPECT_TRUE(Eventually([&] {
    const std::optional<Witness> now = ReadMirrorHead(a);
    return now && now->head.seq == store_head && Json::parse(Read(a))["context"]["n"] == 7;
  }));
}

}  // namespace
}  // namespace baton
