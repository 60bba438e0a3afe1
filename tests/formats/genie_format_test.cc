// Genie's seed formats: the wish state (genie-wish) and the task export
// (genie-board). Real files are read and written back byte for byte; images
// are checked against the layout engine/profiles/genie/wishes.cc gives a wish run, and the
// WishStateDocument against the wish.status operation on a store; refusals
// name the field; other profiles' runs are written with notes.

#include "formats/genie_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/profiles/genie/wishes.h"
#include "formats/format.h"
#include "model/wish_md.h"
#include "test_util.h"
#include "util/json_util.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

fs::path SourceDir() {
  if (const char* src = std::getenv("BATON_SOURCE_DIR"); src && *src) return src;
  return BATON_SOURCE_DIR;
}
fs::path DataDir() { return SourceDir() / "tests" / "data" / "genie"; }
fs::path SharedSeeds() { return SourceDir() / ".." / "shared" / "fixtures" / "seeds"; }

std::string MustRead(const fs::path& path) {
  Result<std::string> text = ReadFile(path.string());
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

Json MustParse(std::string_view text) {
  Result<Json> j = ParseJson(text, "test");
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? *j : Json();
}

RunImage MustReadWish(std::string_view text) {
  Result<RunImage> image = ReadGenieWish(text, "state.json");
  EXPECT_TRUE(image.ok()) << image.status().ToString() << "\n" << text;
  return image.ok() ? *image : Json();
}

RunImage MustReadBoard(std::string_view text) {
  Result<RunImage> image = ReadGenieBoard(text, "roadmap.json");
  EXPECT_TRUE(image.ok()) << image.status().ToString();
  return image.ok() ? *image : Json();
}

FormatOutput MustWrite(Result<FormatOutput> out) {
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : FormatOutput{};
}

const Json* TaskByRef(const RunImage& image, const std::string& ref) {
  for (const Json& t : image["tasks"]) {
    if (t["ref"] == ref) return &t;
  }
  ADD_FAILURE() << "no task " << ref;
  return nullptr;
}

bool HasNote(const FormatOutput& out, const std::string& part) {
  for (const std::string& n : out.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

std::string Notes(const FormatOutput& out) {
  std::string all;
  for (const std::string& n : out.notes) all += "\n  " + n;
  return all;
}

// ---- genie-wish: real and fixture files ------------------------------------

TEST(GenieWishTest, RealStateFileReadsAndWritesBackByteForByte) {
  const std::string text = MustRead(DataDir() / "v3-fixes-release.json");
  RunImage image = MustReadWish(text);
  EXPECT_EQ(image["run"]["profile"], "genie");
  EXPECT_EQ(image["run"]["status"], "running");
  EXPECT_EQ(image["run"]["meta"]["slug"], "v3-fixes-release");
  EXPECT_EQ(image["run"]["created_at"], "2026-03-22T18:21:17.256Z");
  ASSERT_EQ(image["tasks"].size(), 3u);
  EXPECT_EQ(image["tasks"][0]["meta"]["completedAt"], "2026-03-22T18:31:29.024Z");
  EXPECT_EQ(MustWrite(WriteGenieWish(image)).text, text);
}

TEST(GenieWishTest, ImageIsLaidOutAsWishCreateLaysOutAWish) {
  RunImage image = MustReadWish(MustRead(DataDir() / "wish-state.json"));
  const Json& run = image["run"];
  EXPECT_EQ(run["machine"], "baton.run");
  EXPECT_EQ(run["title"], "Wish: auth-overhaul");
  EXPECT_EQ(run["meta"]["slug"], "auth-overhaul");
  EXPECT_EQ(run["meta"]["wish_file"], "");
  // The wishes table's signature, computed as engine/profiles/genie/wishes.cc computes it.
  EXPECT_EQ(
      run["meta"]["groupsSignature"],
      WishSignature({{"1", "", {}}, {"2", "", {"1"}}, {"3", "", {"1"}}, {"4", "", {"2", "3"}}}));
  const Json* g2 = TaskByRef(image, "group:2");
  ASSERT_NE(g2, nullptr);
  EXPECT_EQ((*g2)["kind"], "group");
  EXPECT_EQ((*g2)["key"], "2");
  EXPECT_EQ((*g2)["title"], "Group 2");
  EXPECT_EQ((*g2)["position"], 1);
  EXPECT_EQ((*g2)["status"], "in_progress");
  EXPECT_EQ((*g2)["assignee"], "engineer-2");
  EXPECT_EQ((*g2)["depends_on"], Json::array({"group:1"}));
  EXPECT_EQ((*g2)["meta"], (Json{{"startedAt", "2026-03-18T11:05:27.004Z"}}));
  const Json* g4 = TaskByRef(image, "group:4");
  ASSERT_NE(g4, nullptr);
  EXPECT_EQ((*g4)["depends_on"], Json::array({"group:2", "group:3"}));
  EXPECT_TRUE((*g4)["assignee"].is_null());
}

TEST(GenieWishTest, KeepsUnknownKeysAndTheFilesGroupOrder) {
  const std::string text = MustRead(DataDir() / "wish-state-extra.json");
  RunImage image = MustReadWish(text);
  EXPECT_EQ(image["tasks"][0]["key"], "B");  // the file lists B first
  const Json& kept = image["run"]["meta"]["kept"]["genie-wish"];
  EXPECT_EQ(kept["/repoPath"], "/home/felipe/genie");
  EXPECT_EQ(kept["/groups/B/note"], "kept by baton");
  const std::string written = MustWrite(WriteGenieWish(image)).text;
  EXPECT_EQ(MustParse(written), MustParse(text));
  EXPECT_LT(written.find("\"B\""), written.find("\"A\""));
  EXPECT_EQ(written, text);
}

// wish.status lists dependencies by their position; so does the file.
TEST(GenieWishTest, DependenciesAreWrittenInTheirGroupsOrder) {
  const std::string text = R"({"wish":"w","groups":{"1":{"status":"ready","dependsOn":[]},)"
                           R"("2":{"status":"ready","dependsOn":[]},)"
                           R"("3":{"status":"blocked","dependsOn":["2","1"]}}})";
  RunImage image = MustReadWish(text);
  EXPECT_EQ(TaskByRef(image, "group:3")->at("depends_on"), Json::array({"group:2", "group:1"}));
  Json doc = MustParse(MustWrite(WriteGenieWish(image)).text);
  EXPECT_EQ(doc["groups"]["3"]["dependsOn"], Json::array({"1", "2"}));
}

// Each shared WISH.md fixture, as the state Genie's createState writes for
// its groups: groups without dependencies ready, the others blocked.
TEST(GenieWishTest, SharedWishFixturesAsTheStateGenieCreates) {
  struct Case {
    const char* name;
    bool ok;
    const char* error;
  };
  for (const Case& c :
       {Case{"clean-multi-group", true, ""}, Case{"missing-depends-on-field", true, ""},
        Case{"depends-on-dangling", false, "which does not exist"}}) {
    SCOPED_TRACE(c.name);
    Result<WishDocument> doc =
        ParseWishMarkdown(MustRead(SharedSeeds() / "genie" / "wishes" / c.name / "input.md"));
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    Json state{{"wish", c.name},
               {"groups", Json::object()},
               {"createdAt", "2026-04-19T00:00:00.000Z"},
               {"updatedAt", "2026-04-19T00:00:00.000Z"}};
    for (const WishGroup& g : doc->groups) {
      state["groups"][g.name] = {{"status", g.depends_on.empty() ? "ready" : "blocked"},
                                 {"dependsOn", g.depends_on}};
    }
    Result<RunImage> image = ReadGenieWish(state.dump(2), "state.json");
    if (!c.ok) {
      ASSERT_FALSE(image.ok());
      EXPECT_NE(image.status().message().find(c.error), std::string::npos)
          << image.status().message();
      EXPECT_NE(image.status().message().find("/dependsOn/0"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(image.ok()) << image.status().ToString();
    ASSERT_EQ((*image)["tasks"].size(), doc->groups.size());
    if (std::string(c.name) == "clean-multi-group") {
      EXPECT_EQ(TaskByRef(*image, "group:3")->at("depends_on"),
                Json::array({"group:1", "group:2"}));
    }
    EXPECT_EQ(MustParse(MustWrite(WriteGenieWish(*image)).text), state);
  }
}

// ---- genie-wish: refusals -----------------------------------------------------

struct Refusal {
  const char* name;
  std::string text;
  std::vector<std::string> parts;  // each must be in the message
};

void ExpectRefusals(Result<RunImage> (*read)(std::string_view, const std::string&),
                    const std::vector<Refusal>& cases) {
  for (const Refusal& c : cases) {
    Result<RunImage> image = read(c.text, "in.json");
    ASSERT_FALSE(image.ok()) << c.name << " was read";
    EXPECT_EQ(image.status().code(), StatusCode::kInvalidArgument) << c.name;
    const std::string& m = image.status().message();
    EXPECT_EQ(m.rfind("in.json: ", 0), 0u) << c.name << ": " << m;
    for (const std::string& part : c.parts) {
      EXPECT_NE(m.find(part), std::string::npos) << c.name << ": \"" << part << "\" not in " << m;
    }
  }
}

std::string Deep(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

TEST(GenieWishTest, RefusesInvalidFilesNamingThePlace) {
  const std::string ok = MustRead(DataDir() / "wish-state.json");
  const std::string g = R"({"wish":"w","createdAt":"x","updatedAt":"x","groups":)";
  ExpectRefusals(
      ReadGenieWish,
      {
          {"truncated", ok.substr(0, ok.size() / 2), {"not valid JSON", "line"}},
          {"not UTF-8", "{\"wish\":\"w\xff\",\"groups\":{}}", {"not valid UTF-8", "0xFF"}},
          {"deep", "{\"wish\":\"w\",\"groups\":{},\"x\":" + Deep(300) + "}", {"nesting deeper"}},
          {"groups not an object", g + "[]}", {"/groups: must be an object, not an array"}},
          {"status not a string",
           g + R"({"1":{"status":3,"dependsOn":[]}}})",
           {"/groups/1/status: must be a string, not an integer"}},
          {"dependsOn item",
           g + R"({"1":{"status":"ready","dependsOn":[1]}}})",
           {"/groups/1/dependsOn/0: must be a group name"}},
          {"unknown status",
           g + R"({"1":{"status":"failed","dependsOn":[]}}})",
           {"/groups/1/status: unknown status \"failed\"",
            "allowed: blocked, ready, in_progress, done"}},
          {"self",
           g + R"({"1":{"status":"blocked","dependsOn":["1"]}}})",
           {"/groups/1/dependsOn/0", "group \"1\" depends on itself"}},
          {"dangling",
           g + R"({"1":{"status":"blocked","dependsOn":["9"]}}})",
           {"/groups/1/dependsOn/0", "\"9\", which does not exist (groups: 1)"}},
          {"cycle",
           g + R"({"a":{"status":"blocked","dependsOn":["c"]},"b":{"status":"blocked",)"
               R"("dependsOn":["a"]},"c":{"status":"blocked","dependsOn":["b"]}}})",
           {"/groups/a/dependsOn", "cycle: a -> c -> b -> a"}},
          {"no wish", R"({"groups":{}})", {"/wish: is required"}},
          {"top not object", "[1]", {"must be a JSON object"}},
      });
}

// ---- genie-wish: other images -------------------------------------------------

// A Sinfonia-shaped run: steps with Sinfonia's statuses, one after the other.
RunImage SinfoniaImage() {
  Json steps = Json::array();
  const char* statuses[] = {"completed", "in-progress", "pending", "failed"};
  for (int i = 0; i < 4; ++i) {
    Json step{{"ref", "step:" + std::to_string(i + 1)},
              {"key", std::to_string(i + 1)},
              {"kind", "step"},
              {"title", "Step " + std::to_string(i + 1)},
              {"status", statuses[i]},
              {"position", i},
              {"assignee", nullptr},
              {"body", i == 0 ? "The PRD" : ""},
              {"meta", Json::object()},
              {"depends_on", i == 0 ? Json::array() : Json::array({"step:" + std::to_string(i)})}};
    steps.push_back(step);
  }
  steps[3]["depends_on"].push_back("step:99");  // not in the image
  return Json{
      {"image", 1},
      {"run",
       {{"profile", "sinfonia"},
        {"machine", "sinfonia.workflow"},
        {"status", "in-progress"},
        {"title", "Create PRD"},
        {"created_at", "2026-03-05T10:00:00.000Z"},
        {"updated_at", "2026-03-05T11:00:00.000Z"},
        {"meta", Json::object()}}},
      {"tasks", steps},
      {"messages", Json::array({{{"from", "maestro"}, {"to", "libretto"}, {"body", "go"}}})},
      {"history", Json::array({{{"kind", "run.progress"}, {"summary", "started"}},
                               {{"kind", "task.status_changed"}}})}};
}

TEST(GenieWishTest, WritesAnotherProfilesRunWithNotes) {
  FormatOutput out = MustWrite(WriteGenieWish(SinfoniaImage()));
  Json doc = MustParse(out.text);
  EXPECT_EQ(doc["wish"], "create-prd");
  EXPECT_EQ(doc["groups"]["1"]["status"], "done");
  EXPECT_EQ(doc["groups"]["2"]["status"], "in_progress");
  EXPECT_EQ(doc["groups"]["3"]["status"], "blocked");  // pending, step 2 not done
  EXPECT_EQ(doc["groups"]["4"]["status"], "blocked");  // failed
  EXPECT_EQ(doc["groups"]["4"]["dependsOn"], Json::array({"3"}));
  EXPECT_EQ(doc["createdAt"], "2026-03-05T10:00:00.000Z");
  EXPECT_TRUE(HasNote(out, "wish: the run has no wish slug")) << Notes(out);
  EXPECT_TRUE(HasNote(out, "statuses: 4 written in Genie's vocabulary")) << Notes(out);
  EXPECT_TRUE(HasNote(out, "dependencies: 1 on tasks the file does not list")) << Notes(out);
  EXPECT_TRUE(HasNote(out, "messages: a wish state has no messages; 1 not written")) << Notes(out);
  EXPECT_TRUE(HasNote(out, "history: a wish state has no history; 1 events")) << Notes(out);
  EXPECT_TRUE(HasNote(out, "bodies:")) << Notes(out);
  // What it wrote, it reads, and writes again the same.
  RunImage back = MustReadWish(out.text);
  EXPECT_EQ(MustWrite(WriteGenieWish(back)).text, out.text);
}

TEST(GenieWishTest, GenieStatusesGenieFilesLackAreConvertedWithANote) {
  RunImage image = MustReadWish(MustRead(DataDir() / "wish-state.json"));
  image["tasks"][1]["status"] = "failed";
  image["tasks"][2]["status"] = "cancelled";
  FormatOutput out = MustWrite(WriteGenieWish(image));
  Json doc = MustParse(out.text);
  EXPECT_EQ(doc["groups"]["2"]["status"], "blocked");
  EXPECT_EQ(doc["groups"]["3"]["status"], "done");
  EXPECT_TRUE(HasNote(out, "group:2 failed -> blocked")) << Notes(out);
}

TEST(GenieWishTest, RefusesAnImageWithoutARun) {
  Result<FormatOutput> out = WriteGenieWish(Json{{"tasks", Json::array()}});
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition);
}

// ---- WishStateDocument against the wish.status operation ---------------------

// The run's image as engine/interchange/imports.h exports one: the run row and its tasks
// with dependencies as refs (built here from the operations' answers).
RunImage ImageFromStore(Api& api, const std::string& run_id) {
  Json run = testing::MustCall(api, "run.show", {{"id", run_id}});
  Json tasks = testing::MustCall(api, "task.list", {{"run", run_id}})["tasks"];
  std::map<std::string, std::string> refs;
  for (const Json& t : tasks) {
    refs[t["id"]] = t["key"].is_string()
                        ? t["kind"].get<std::string>() + ":" + t["key"].get<std::string>()
                        : t["id"].get<std::string>();
  }
  Json image{{"image", 1}, {"run", run}, {"tasks", Json::array()}};
  for (Json t : tasks) {
    Json deps = testing::MustCall(api, "task.dependencies", {{"task", t["id"]}})["depends_on"];
    t["ref"] = refs[t["id"]];
    t["depends_on"] = Json::array();
    for (const Json& d : deps) t["depends_on"].push_back(refs[d["id"]]);
    image["tasks"].push_back(t);
  }
  return image;
}

TEST(GenieWishTest, WishStateDocumentIsWhatWishStatusReturns) {
  std::unique_ptr<Api> api = testing::OpenApi(":memory:");
  Json created =
      testing::MustCall(*api, "wish.create",
                        {{"slug", "w"},
                         {"groups", Json::array({{{"name", "1"}, {"title", "First"}},
                                                 {{"name", "2"}, {"depends_on", {"1"}}},
                                                 {{"name", "3"}, {"depends_on", {"1", "2"}}}})}},
                        testing::Coordinator());
  testing::MustCall(*api, "wish.start_group",
                    {{"slug", "w"}, {"group", "1"}, {"assignee", "coder"}});
  testing::MustCall(*api, "wish.complete_group", {{"slug", "w"}, {"group", "1"}});
  testing::MustCall(*api, "wish.start_group", {{"slug", "w"}, {"group", "2"}, {"assignee", "eve"}});
  Json status = testing::MustCall(*api, "wish.status", {{"slug", "w"}});
  RunImage image = ImageFromStore(*api, created["run_id"]);
  EXPECT_EQ(WishStateDocument(image), status);

  // The file is that document in Genie's shape, and reads back as the run.
  Json file = MustParse(MustWrite(WriteGenieWish(image)).text);
  Json genie = status;
  for (const char* key : {"run_id", "title", "wish_file", "signature"}) genie.erase(key);
  for (auto& [name, g] : genie["groups"].items()) {
    for (const char* key : {"task_id", "title", "blocked_reason"}) g.erase(key);
  }
  EXPECT_EQ(file, genie);
  RunImage back = MustReadWish(file.dump());
  EXPECT_EQ(back["run"]["meta"]["groupsSignature"], status["signature"]);
  for (const char* ref : {"group:1", "group:2", "group:3"}) {
    EXPECT_EQ(TaskByRef(back, ref)->at("status"), TaskByRef(image, ref)->at("status")) << ref;
    // The store keeps no order of dependencies; compare them as sets.
    std::vector<std::string> a = TaskByRef(back, ref)->at("depends_on");
    std::vector<std::string> b = TaskByRef(image, ref)->at("depends_on");
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << ref;
  }
}

// ---- genie-board: real files -------------------------------------------------

TEST(GenieBoardTest, RealSchemaVersion1ExportReadsAndWritesBackByteForByte) {
  const std::string text = MustRead(DataDir() / "roadmap-v1.json");
  RunImage image = MustReadBoard(text);
  const Json& run = image["run"];
  EXPECT_EQ(run["profile"], "genie");
  EXPECT_EQ(run["status"], "running");
  EXPECT_EQ(run["meta"]["genie_board"]["schemaVersion"], 1);
  EXPECT_EQ(run["meta"]["genie_board"]["boards"], Json::array());
  ASSERT_EQ(image["tasks"].size(), 53u);
  const Json* t = TaskByRef(image, "task:t_mscebl889535b59e");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ((*t)["kind"], "task");
  EXPECT_EQ((*t)["key"], "t_mscebl889535b59e");
  EXPECT_EQ((*t)["status"], "done");
  EXPECT_EQ((*t)["assignee"], "engineer-group1");
  EXPECT_EQ((*t)["created_at"], "2026-08-02T22:52:44.984Z");
  EXPECT_EQ((*t)["meta"]["claimed_by"], "engineer-group1");
  EXPECT_EQ((*t)["meta"]["claimed_at"], 1785712701024);
  EXPECT_EQ((*t)["meta"]["wish"], "lifecycle-lease-busy-grace");
  EXPECT_EQ((*t)["meta"]["group_name"], "group-1");
  const Json* blocked = TaskByRef(image, "task:t_mrxqzo6s8fbb27ec");
  ASSERT_NE(blocked, nullptr);
  EXPECT_EQ((*blocked)["meta"]["blocked_by"], "claude-code");
  EXPECT_EQ(run["meta"]["kept"]["genie-board"]["/task_events"].size(), 26u);
  EXPECT_EQ(run["meta"]["kept"]["genie-board"]["/hire_roster"], Json::array());
  EXPECT_EQ(MustWrite(WriteGenieBoard(image)).text, text);
}

TEST(GenieBoardTest, RealSchemaVersion2ExcerptReadsAndWritesBackByteForByte) {
  const std::string text = MustRead(DataDir() / "roadmap-v2-excerpt.json");
  RunImage image = MustReadBoard(text);
  EXPECT_EQ(image["run"]["title"], "Board: roadmap");
  EXPECT_EQ(image["run"]["meta"]["genie_board"]["meta"].size(), 10u);
  const Json* t = TaskByRef(image, "task:t_mu7g9yhn091e7ed4");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ((*t)["board_column"], "Done");
  EXPECT_EQ((*t)["meta"]["board_id"], "b_mu33ztqda7291be0");
  EXPECT_EQ((*t)["meta"]["heartbeat_at"], 1789765763261);
  EXPECT_TRUE((*t)["meta"]["assigned_agent"].is_null());
  EXPECT_TRUE(TaskByRef(image, "task:t_mua2vjsk62c19ba4")->at("board_column").is_null());
  EXPECT_EQ(MustWrite(WriteGenieBoard(image)).text, text);
}

TEST(GenieBoardTest, DependenciesAndUnknownKeysSurviveTheRoundTrip) {
  const std::string text = MustRead(DataDir() / "roadmap-deps.json");
  RunImage image = MustReadBoard(text);
  EXPECT_EQ(TaskByRef(image, "task:t_mt1aaaa00000003")->at("depends_on"),
            Json::array({"task:t_mt1aaaa00000001", "task:t_mt1aaaa00000002"}));
  const Json& kept = image["run"]["meta"]["kept"]["genie-board"];
  EXPECT_EQ(kept["/exportedBy"], "genie 5.260801.1");
  EXPECT_EQ(kept["/tasks/0/estimate"], "2h");
  const std::string written = MustWrite(WriteGenieBoard(image)).text;
  EXPECT_EQ(MustParse(written), MustParse(text));
}

// Found by the fuzzer: a column only a later task has, listed before a known
// column, moved on the second write.
TEST(GenieBoardTest, ColumnsOnlySomeTasksHaveAreWrittenTheSameTwice) {
  const std::string text =
      R"({"schemaVersion":1,"tasks":[{"id":"t_a","title":"A","status":"ready","odd":1},)"
      R"({"id":"t_b","title":"B","status":"ready","extra":true,"updated_at":5}]})";
  const std::string once = MustWrite(WriteGenieBoard(MustReadBoard(text))).text;
  EXPECT_EQ(MustWrite(WriteGenieBoard(MustReadBoard(once))).text, once);
  Json doc = MustParse(once);
  EXPECT_TRUE(doc["tasks"][0]["updated_at"].is_null());  // every known column, every task
  EXPECT_EQ(doc["tasks"][0]["odd"], 1);
  EXPECT_EQ(doc["tasks"][1]["extra"], true);
  EXPECT_FALSE(doc["tasks"][0].contains("extra"));
  EXPECT_LT(once.find("\"updated_at\": 5"), once.find("\"extra\""));
}

TEST(GenieBoardTest, RefusesInvalidExportsNamingThePlace) {
  const std::string ok = MustRead(DataDir() / "roadmap-deps.json");
  auto with_task = [](const std::string& task, const std::string& deps = "[]") {
    return R"({"schemaVersion":1,"tasks":[{"id":"t_a","title":"A","status":"ready"},)" + task +
           R"(],"task_dependencies":)" + deps + "}";
  };
  const std::string b = R"({"id":"t_b","title":"B","status":"ready"})";
  ExpectRefusals(
      ReadGenieBoard,
      {
          {"truncated", ok.substr(0, 300), {"not valid JSON"}},
          {"not UTF-8",
           "{\"schemaVersion\":1,\"tasks\":[],\"x\":\"\xc3\x28\"}",
           {"not valid UTF-8"}},
          {"deep", "{\"schemaVersion\":1,\"tasks\":" + Deep(400) + "}", {"nesting deeper"}},
          {"no version", R"({"tasks":[]})", {"/schemaVersion: is required"}},
          {"tasks not array", R"({"schemaVersion":1,"tasks":{}})", {"/tasks: must be an array"}},
          {"claimed_at type",
           with_task(R"({"id":"t_b","title":"B","status":"ready","claimed_at":"x"})"),
           {"/tasks/1/claimed_at: must be an integer, not a string"}},
          {"huge time",
           with_task(R"({"id":"t_b","title":"B","status":"ready","created_at":2.7e24})"),
           {"/tasks/1/created_at: must be an integer"}},
          {"lane type",
           with_task(R"({"id":"t_b","title":"B","status":"ready","lane":7})"),
           {"/tasks/1/lane: must be a string"}},
          {"unknown status",
           with_task(R"({"id":"t_b","title":"B","status":"archived"})"),
           {"/tasks/1/status: unknown status \"archived\"",
            "allowed: blocked, ready, in_progress, done"}},
          {"duplicate id",
           with_task(R"({"id":"t_a","title":"A2","status":"ready"})"),
           {"/tasks/1/id", "listed twice"}},
          {"unknown dep",
           with_task(b, R"([{"task_id":"t_b","depends_on_id":"t_x"}])"),
           {"/task_dependencies/0/depends_on_id: no task \"t_x\""}},
          {"self dep",
           with_task(b, R"([{"task_id":"t_b","depends_on_id":"t_b"}])"),
           {"depends on itself"}},
          {"cycle",
           with_task(b, R"([{"task_id":"t_a","depends_on_id":"t_b"},)"
                        R"({"task_id":"t_b","depends_on_id":"t_a"}])"),
           {"/task_dependencies: the dependencies form a cycle: t_a -> t_b -> t_a"}},
          {"board without name",
           R"({"schemaVersion":1,"boards":[{"id":"b"}],"tasks":[]})",
           {"/boards/0/name: is required"}},
      });
}

TEST(GenieBoardTest, WritesAnotherProfilesRunWithNotes) {
  FormatOutput out = MustWrite(WriteGenieBoard(SinfoniaImage()));
  Json doc = MustParse(out.text);
  EXPECT_EQ(doc["schemaVersion"], 1);
  ASSERT_EQ(doc["tasks"].size(), 4u);
  EXPECT_EQ(doc["tasks"][0]["id"], "step:1");
  EXPECT_EQ(doc["tasks"][0]["title"], "Step 1");
  EXPECT_EQ(doc["tasks"][0]["status"], "done");
  EXPECT_EQ(doc["tasks"][2]["status"], "blocked");
  EXPECT_EQ(doc["task_dependencies"][0],
            (Json{{"task_id", "step:2"}, {"depends_on_id", "step:1"}}));
  EXPECT_EQ(doc["hire_roster"], Json::array());
  EXPECT_TRUE(HasNote(out, "tasks: sinfonia tasks written as Genie tasks")) << Notes(out);
  EXPECT_TRUE(HasNote(out, "statuses: 4 written")) << Notes(out);
  EXPECT_TRUE(HasNote(out, "messages: a Genie task export has no messages")) << Notes(out);
  RunImage back = MustReadBoard(out.text);
  EXPECT_EQ(MustWrite(WriteGenieBoard(back)).text, out.text);
}

TEST(GenieBoardTest, AWishRunIsWrittenAsItsGroupsTasks) {
  RunImage image = MustReadWish(MustRead(DataDir() / "wish-state.json"));
  FormatOutput out = MustWrite(WriteGenieBoard(image));
  Json doc = MustParse(out.text);
  ASSERT_EQ(doc["tasks"].size(), 4u);
  const Json& g2 = doc["tasks"][1];
  EXPECT_EQ(g2["id"], "group:2");
  EXPECT_EQ(g2["wish"], "auth-overhaul");
  EXPECT_EQ(g2["group_name"], "2");
  EXPECT_EQ(g2["claimed_by"], "engineer-2");
  EXPECT_EQ(g2["status"], "in_progress");
  EXPECT_EQ(doc["task_dependencies"].size(), 4u);
  EXPECT_TRUE(out.notes.empty()) << Notes(out);
}

TEST(GenieBoardTest, ABoardRunIsWrittenAsAWishWithNotes) {
  RunImage image = MustReadBoard(MustRead(DataDir() / "roadmap-deps.json"));
  FormatOutput out = MustWrite(WriteGenieWish(image));
  Json doc = MustParse(out.text);
  EXPECT_EQ(doc["wish"], "board-roadmap");
  EXPECT_EQ(doc["groups"]["t_mt1aaaa00000003"]["dependsOn"],
            Json::array({"t_mt1aaaa00000001", "t_mt1aaaa00000002"}));
  EXPECT_EQ(doc["groups"]["t_mt1aaaa00000002"]["assignee"], "engineer-2");
  EXPECT_TRUE(HasNote(out, "tasks are written as groups")) << Notes(out);
  EXPECT_TRUE(MustReadWish(out.text).is_object());
}

TEST(GenieFormatsTest, AreRegistered) {
  for (const char* name : {"genie-wish", "genie-board"}) {
    Result<const Format*> f = FindFormat(name);
    ASSERT_TRUE(f.ok()) << name;
    EXPECT_STREQ((*f)->profile, "genie");
  }
}

}  // namespace
}  // namespace baton
