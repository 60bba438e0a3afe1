// The "stigmergy" seed format (formats/stigmergy_format.h): .ai/state.json of
// schema 2.0 read and written back, the 3.0 and 3.1 variants read onto the
// 2.0 machine without losing what 2.0 cannot hold, refusals naming the field,
// another profile's run written with notes, and StigmergyDocument equal to
// what `stigmergy.state` answers for a run the profile's operations made.

#include "formats/stigmergy_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "formats/format.h"
#include "test_util.h"
#include "util/json_util.h"

namespace baton {
namespace {

using testing::Coordinator;
using testing::Human;
using testing::MustCall;

std::string FixtureDir() {
  return std::string(BATON_SOURCE_DIR) + "/../shared/fixtures/seeds/stigmergy";
}
std::string DataDir() { return std::string(BATON_SOURCE_DIR) + "/tests/data/stigmergy"; }

std::string Slurp(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

Json Parse(const std::string& text) {
  Result<Json> j = ParseJson(text, "test");
  EXPECT_TRUE(j.ok()) << j.status().ToString() << "\n" << text;
  return j.ok() ? *j : Json();
}

RunImage MustRead(const std::string& text, const std::string& source = "state.json") {
  Result<RunImage> image = ReadStigmergyState(text, source);
  EXPECT_TRUE(image.ok()) << image.status().ToString() << "\n" << text;
  return image.ok() ? *image : Json();
}

FormatOutput MustWrite(const RunImage& image) {
  Result<FormatOutput> out = WriteStigmergyState(image);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : FormatOutput();
}

// What the file becomes after a read and a write, parsed.
Json RoundTrip(const std::string& text) { return Parse(MustWrite(MustRead(text)).text); }

const Json* TaskByRef(const RunImage& image, const std::string& ref) {
  for (const Json& t : image["tasks"]) {
    if (t["ref"] == ref) return &t;
  }
  return nullptr;
}

std::vector<std::string> JsonFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// ---------------------------------------------------------------- fixtures

TEST(StigmergyFormatTest, EveryFixtureAndTestFileReadsWritesAndRereads) {
  std::vector<std::string> files = JsonFiles(FixtureDir());
  const std::vector<std::string> data = JsonFiles(DataDir());
  files.insert(files.end(), data.begin(), data.end());
  ASSERT_GE(files.size(), 3u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const RunImage image = MustRead(Slurp(path), path);
    EXPECT_EQ(image["run"]["profile"], "stigmergy");
    EXPECT_EQ(image["run"]["machine"], "stigmergy.project");
    const FormatOutput first = MustWrite(image);
    const FormatOutput second = MustWrite(MustRead(first.text, "written.json"));
    EXPECT_EQ(first.text, second.text);
    EXPECT_EQ(Parse(first.text)["schema_version"], "2.0");
  }
}

// Issue 18: today's Stigmergy keeps its state in .stigmergy/state/current.json
// (the graph era): *_PHASE statuses, planned tasks without a status, and keys
// 2.0 has no place for, which are kept and written back as they were.
TEST(StigmergyFormatTest, GraphEraCurrentJsonReadsWithItsPhasesAndTasks) {
  const RunImage planning =
      MustRead(Slurp(DataDir() + "/current-planning.json"), "current-planning.json");
  EXPECT_EQ(planning["run"]["status"], "NEEDS_PLANNING");
  int stories = 0;
  for (const Json& t : planning["tasks"]) {
    if (t["kind"] != "story") continue;
    ++stories;
    EXPECT_EQ(t["status"], "PENDING") << t.dump();
  }
  EXPECT_EQ(stories, 2);
  const Json written = Parse(MustWrite(planning).text);
  EXPECT_EQ(written["stigmergy_source"]["project_status"], "PLANNING_PHASE");
  EXPECT_EQ(written["goal"], "Add a login page to the web app");
  EXPECT_EQ(written["project_architecture"]["data_flow"], "Form -> API -> Session");
  EXPECT_EQ(written["fallback_mode"], true);

  const RunImage execution =
      MustRead(Slurp(DataDir() + "/current-execution.json"), "current-execution.json");
  EXPECT_EQ(execution["run"]["status"], "EXECUTION_IN_PROGRESS");
  for (const char* phase : {"ENRICHMENT_PHASE", "ARCHITECTURE_PHASE", "TASK_BREAKDOWN_PHASE",
                            "VALIDATION_PHASE", "REVISION_PHASE", "HUMAN_INPUT_NEEDED", "PAUSED",
                            "ERROR", "COMPLETED", "EXECUTION_COMPLETE"}) {
    Result<RunImage> image = ReadStigmergyState(
        std::string(R"({"project_status": ")") + phase + R"("})", "current.json");
    EXPECT_TRUE(image.ok()) << phase << ": " << image.status().message();
  }
}

TEST(StigmergyFormatTest, V2TemplateReadsAsTheProfileLaysOutARun) {
  const RunImage image = MustRead(Slurp(FixtureDir() + "/state-tmpl.v2.0.json"));
  const Json& run = image["run"];
  EXPECT_EQ(run["status"], "NEEDS_BRIEFING");
  EXPECT_EQ(run["title"], "New Stigmergy Project");
  EXPECT_EQ(run["meta"]["schema_version"], "2.0");
  EXPECT_EQ(run["meta"]["project_name"], "New Stigmergy Project");
  EXPECT_EQ(run["meta"]["autonomy_mode"], "supervised");
  EXPECT_EQ(run["meta"]["system_signal"], "INIT");
  EXPECT_FALSE(run["meta"].contains("kept"));
  EXPECT_TRUE(image["tasks"].empty());
  ASSERT_EQ(image["history"].size(), 1u);
  const Json& h = image["history"][0];
  EXPECT_EQ(h["kind"], "stigmergy.signal");
  EXPECT_EQ(h["time"], "ISO_TIMESTAMP_PLACEHOLDER");
  EXPECT_EQ(h["agent"], "saul");
  EXPECT_EQ(h["summary"], "Project initialized. State file created.");
  EXPECT_EQ(h["files"], Json::array({".ai/state.json"}));
  EXPECT_EQ(h["payload"]["agent_id"], "saul");
  EXPECT_EQ(h["payload"]["signal"], "INIT");
  EXPECT_EQ(h["payload"]["system_signal"], "INIT");
}

TEST(StigmergyFormatTest, V2TemplateRoundTripsToTheSameJson) {
  const std::string text = Slurp(FixtureDir() + "/state-tmpl.v2.0.json");
  EXPECT_EQ(RoundTrip(text), Parse(text));
}

// A 2.0 state in use: epics, stories, history and issues, with keys 2.0 does
// not define at every level.
constexpr char kV2InUse[] = R"({
  "schema_version": "2.0",
  "project_name": "shop",
  "autonomy_mode": "autonomous",
  "project_status": "EXECUTION_HALTED",
  "system_signal": "ESCALATION_REQUIRED",
  "owner": {"team": "web"},
  "project_manifest": {
    "epics": [
      {"epic_id": 2, "title": "checkout", "status": "IN_PROGRESS", "estimate": 5,
       "stories": [
         {"story_id": "2.1", "title": "cart", "status": "COMPLETE", "points": 3},
         {"story_id": "2.2", "title": "pay", "status": "FAILED"}]},
      {"epic_id": 1, "title": "catalog", "status": "COMPLETE", "stories": [
         {"story_id": "1.1", "title": "list", "status": "COMPLETE"}]}
    ],
    "notes": "epic 2 first"
  },
  "history": [
    {"timestamp": "2025-07-10T09:00:00Z", "agent_id": "saul", "signal": "INIT",
     "summary": "Project initialized.", "files_modified": [".ai/state.json"]},
    {"timestamp": "2025-07-10T10:00:00Z", "agent_id": "olivia", "signal": "STORY_COMPLETE",
     "summary": "cart done", "files_modified": ["src/cart.js"], "duration_s": 42},
    {"timestamp": "2025-07-10T11:00:00Z", "agent_id": "olivia", "signal": "ESCALATION_REQUIRED",
     "summary": "pay failed twice", "files_modified": []}
  ],
  "issue_log": [
    {"issue_id": "ISS-1", "timestamp": "2025-07-10T11:00:01Z", "status": "OPEN",
     "summary": "payment API rejects test cards",
     "history_ref": ["2025-07-10T10:00:00Z", "2025-07-10T11:00:00Z"], "severity": "high"}
  ]
})";

TEST(StigmergyFormatTest, V2InUseRoundTripsWithUnknownKeysAndOrder) {
  EXPECT_EQ(RoundTrip(kV2InUse), Parse(kV2InUse));
}

TEST(StigmergyFormatTest, V2InUseReadsIntoEpicsStoriesIssuesAndSignals) {
  const RunImage image = MustRead(kV2InUse);
  EXPECT_EQ(image["run"]["status"], "EXECUTION_HALTED");
  EXPECT_EQ(image["run"]["meta"]["autonomy_mode"], "autonomous");
  const Json& kept = image["run"]["meta"]["kept"]["stigmergy"];
  EXPECT_EQ(kept["/owner"], Json({{"team", "web"}}));
  EXPECT_EQ(kept["/project_manifest/notes"], "epic 2 first");

  const Json* epic2 = TaskByRef(image, "epic:2");
  ASSERT_NE(epic2, nullptr);
  EXPECT_EQ((*epic2)["position"], 1);  // the file's order, not the id's
  EXPECT_EQ((*epic2)["meta"]["kept"]["stigmergy"]["/estimate"], 5);
  const Json* pay = TaskByRef(image, "story:2.2");
  ASSERT_NE(pay, nullptr);
  EXPECT_EQ((*pay)["parent"], "epic:2");
  EXPECT_EQ((*pay)["status"], "FAILED");
  EXPECT_EQ((*pay)["position"], 2);
  const Json* cart = TaskByRef(image, "story:2.1");
  ASSERT_NE(cart, nullptr);
  EXPECT_EQ((*cart)["meta"]["kept"]["stigmergy"]["/points"], 3);
  const Json* issue = TaskByRef(image, "issue:ISS-1");
  ASSERT_NE(issue, nullptr);
  EXPECT_EQ((*issue)["created_at"], "2025-07-10T11:00:01Z");
  EXPECT_EQ((*issue)["title"], "payment API rejects test cards");
  EXPECT_EQ((*issue)["meta"]["history_ref"].size(), 2u);
  EXPECT_EQ((*issue)["meta"]["kept"]["stigmergy"]["/severity"], "high");

  ASSERT_EQ(image["history"].size(), 3u);
  EXPECT_EQ(image["history"][1]["payload"]["kept"]["stigmergy"]["/duration_s"], 42);
  EXPECT_EQ(image["history"][2]["payload"]["system_signal"], "ESCALATION_REQUIRED");
}

TEST(StigmergyFormatTest, EpicIdsKeepTheirType) {
  const std::string text = R"({"project_status": "NEEDS_PLANNING", "project_manifest": {"epics": [
      {"epic_id": "A", "title": "a", "status": "PENDING"},
      {"epic_id": "7", "title": "b", "status": "PENDING"},
      {"epic_id": -1, "title": "c", "status": "PENDING"},
      {"epic_id": 12345678901234567890, "title": "d", "status": "PENDING"}]}})";
  const Json written = RoundTrip(text);
  const Json& epics = written["project_manifest"]["epics"];
  ASSERT_EQ(epics.size(), 4u);
  EXPECT_EQ(epics[0]["epic_id"], "A");
  EXPECT_EQ(epics[1]["epic_id"], "7");
  EXPECT_TRUE(epics[1]["epic_id"].is_string());
  EXPECT_EQ(epics[2]["epic_id"], -1);
  EXPECT_EQ(epics[3]["epic_id"], Parse(text)["project_manifest"]["epics"][3]["epic_id"]);
}

// ------------------------------------------------------------------ 3.x

TEST(StigmergyFormatTest, V3TemplateIsWrittenAs2WithItsOwnDataKept) {
  const std::string text = Slurp(FixtureDir() + "/state-tmpl.v3.0.json");
  const RunImage image = MustRead(text);
  EXPECT_EQ(image["run"]["status"], "NEEDS_BRIEFING");  // from NEEDS_INITIALIZATION
  EXPECT_EQ(image["run"]["meta"]["schema_version"], "2.0");
  EXPECT_EQ(image["run"]["meta"]["system_signal"], "INIT");  // the last history signal
  const FormatOutput out = MustWrite(image);
  const Json written = Parse(out.text);
  const Json original = Parse(text);
  EXPECT_EQ(written["schema_version"], "2.0");
  EXPECT_EQ(written["project_status"], "NEEDS_BRIEFING");
  EXPECT_EQ(written["autonomy_mode"], "supervised");
  EXPECT_EQ(written["stigmergy_source"],
            Json({{"schema_version", "3.0"}, {"project_status", "NEEDS_INITIALIZATION"}}));
  for (const char* key : {"goal", "artifacts_created", "secrets", "project_name", "issue_log"}) {
    EXPECT_EQ(written[key], original[key]) << key;
  }
  EXPECT_TRUE(written["goal"].is_null());
  EXPECT_EQ(written["project_manifest"], Json({{"epics", Json::array()}}));
  ASSERT_EQ(written["history"].size(), 1u);
  const Json& h = written["history"][0];
  EXPECT_EQ(h["id"], "init-001");
  EXPECT_EQ(h["agent_id"], "system");
  EXPECT_EQ(h["signal"], "INIT");
  EXPECT_EQ(h["summary"], "Project initialized. State file created.");
  EXPECT_EQ(h["files_modified"], Json::array());
}

TEST(StigmergyFormatTest, RealV31StateKeepsItsHistoryEntry) {
  const std::string text = Slurp(DataDir() + "/gaming-state.v3.1.json");
  const RunImage image = MustRead(text);
  ASSERT_EQ(image["history"].size(), 1u);
  const Json& e = image["history"][0];
  EXPECT_EQ(e["summary"], "Project initialized. State file created.");  // 3.1's "message"
  EXPECT_EQ(e["agent"], "engine");
  EXPECT_EQ(e["time"], "2025-08-03T10:31:26.724Z");
  EXPECT_TRUE(e["payload"]["signal"].is_null());
  EXPECT_EQ(e["payload"]["kept"]["stigmergy"], Json({{"/id", "init-001"}, {"/source", "system"}}));
  const Json written = Parse(MustWrite(image).text);
  EXPECT_EQ(written["code_indexed"], false);
  EXPECT_EQ(written["stigmergy_source"]["schema_version"], "3.1");
  EXPECT_EQ(written["history"][0]["source"], "system");
  EXPECT_EQ(written["history"][0]["timestamp"], "2025-08-03T10:31:26.724Z");
}

constexpr char kV3Tasks[] = R"({
  "schema_version": "3.0",
  "project_name": "api",
  "goal": "Build the API",
  "project_status": "AWAITING_APPROVAL_PRD",
  "project_manifest": {"tasks": [
    {"id": "T01", "summary": "schema", "agent": "james", "status": "COMPLETED",
     "dependencies": [], "failure_count": 0},
    {"id": "T02", "summary": "handlers", "agent": "james", "status": "FAILED",
     "dependencies": ["T01", "T99"], "failure_count": 2, "branch": "feat/handlers"}]},
  "history": [
    {"id": "h1", "timestamp": "2025-07-20T08:00:00Z", "agent_id": "system", "signal": "GOAL_SET",
     "summary": "Autonomous engine started"}],
  "issue_log": []
})";

TEST(StigmergyFormatTest, V3TasksBecomeStoriesOfOneEpic) {
  const RunImage image = MustRead(kV3Tasks);
  EXPECT_EQ(image["run"]["status"], "NEEDS_PLANNING");
  EXPECT_EQ(image["run"]["meta"]["kept"]["stigmergy"]["/goal"], "Build the API");
  const Json* epic = TaskByRef(image, "epic:1");
  ASSERT_NE(epic, nullptr);
  EXPECT_EQ((*epic)["status"], "IN_PROGRESS");
  const Json* t2 = TaskByRef(image, "story:T02");
  ASSERT_NE(t2, nullptr);
  EXPECT_EQ((*t2)["parent"], "epic:1");
  EXPECT_EQ((*t2)["title"], "handlers");
  EXPECT_EQ((*t2)["status"], "FAILED");
  EXPECT_EQ((*t2)["attempts"], 2);  // LAW V counts failures in attempts
  EXPECT_EQ((*t2)["assignee"], "james");
  EXPECT_EQ((*t2)["depends_on"], Json::array({"story:T01"}));  // T99 is no task of the file
  EXPECT_EQ(TaskByRef(image, "story:T01")->at("status"), "COMPLETE");

  const Json written = Parse(MustWrite(image).text);
  EXPECT_EQ(written["stigmergy_source"],
            Json({{"schema_version", "3.0"}, {"project_status", "AWAITING_APPROVAL_PRD"}}));
  EXPECT_EQ(written["goal"], "Build the API");
  const Json& stories = written["project_manifest"]["epics"][0]["stories"];
  ASSERT_EQ(stories.size(), 2u);
  EXPECT_EQ(stories[0], Json({{"story_id", "T01"},
                              {"title", "schema"},
                              {"status", "COMPLETE"},
                              {"source_status", "COMPLETED"},
                              {"agent", "james"},
                              {"dependencies", Json::array()},
                              {"failure_count", 0}}));
  EXPECT_EQ(stories[1]["dependencies"], Json::array({"T01", "T99"}));
  EXPECT_EQ(stories[1]["branch"], "feat/handlers");
  EXPECT_EQ(written["history"][0]["signal"], "GOAL_SET");
  EXPECT_EQ(written["system_signal"], "GOAL_SET");
}

TEST(StigmergyFormatTest, V3StatusesMapOntoThe20Machine) {
  const struct {
    const char* status;
    const char* before;  // status_before_pause, or nullptr
    const char* want;
  } cases[] = {
      {"NEEDS_INITIALIZATION", nullptr, "NEEDS_BRIEFING"},
      {"AWAITING_APPROVAL_BRIEF", nullptr, "NEEDS_BRIEFING"},
      {"NEEDS_PRD", nullptr, "NEEDS_PLANNING"},
      {"AWAITING_APPROVAL_ARCHITECTURE", nullptr, "NEEDS_PLANNING"},
      {"NEEDS_BLUEPRINT", nullptr, "NEEDS_PLANNING"},
      {"GRAND_BLUEPRINT_PHASE", nullptr, "NEEDS_PLANNING"},
      {"AWAITING_APPROVAL_BLUEPRINT", nullptr, "READY_FOR_EXECUTION"},
      {"AWAITING_EXECUTION_APPROVAL", nullptr, "READY_FOR_EXECUTION"},
      {"READY_FOR_EXECUTION", nullptr, "READY_FOR_EXECUTION"},
      {"EXECUTION_IN_PROGRESS", nullptr, "EXECUTION_IN_PROGRESS"},
      {"AWAITING_QA", nullptr, "EXECUTION_IN_PROGRESS"},
      {"EXECUTION_FAILED", nullptr, "EXECUTION_HALTED"},
      {"PAUSED_BY_USER", nullptr, "EXECUTION_HALTED"},
      {"PAUSED_BY_USER", "EXECUTION_IN_PROGRESS", "EXECUTION_HALTED"},
      {"PAUSED_BY_USER", "GRAND_BLUEPRINT_PHASE", "NEEDS_PLANNING"},
      {"PROJECT_COMPLETE", nullptr, "PROJECT_COMPLETE"},
  };
  for (const auto& c : cases) {
    Json doc = {{"schema_version", "3.1"}, {"project_status", c.status}};
    if (c.before != nullptr) doc["status_before_pause"] = c.before;
    const RunImage image = MustRead(doc.dump());
    EXPECT_EQ(image["run"]["status"], c.want) << c.status << " / " << (c.before ? c.before : "-");
    const Json written = Parse(MustWrite(image).text);
    EXPECT_EQ(written["stigmergy_source"]["project_status"], c.status);
    if (c.before != nullptr) {
      EXPECT_EQ(written["status_before_pause"], c.before);
    }
  }
}

TEST(StigmergyFormatTest, EarlierV2DraftStatusesAreReadAndKept) {
  const std::string text = R"({"schema_version": "2.0", "project_status": "PLANNING_IN_PROGRESS",
    "project_manifest": {"epics": [{"epic_id": 1, "title": "a", "status": "IN_PROGRESS",
      "stories": [{"story_id": "1.1", "title": "x", "status": "QA_PENDING"}]}]},
    "issue_log": [{"issue_id": "I1", "status": "CLOSED", "summary": "s"}]})";
  const RunImage image = MustRead(text);
  EXPECT_EQ(image["run"]["status"], "NEEDS_PLANNING");
  EXPECT_EQ(TaskByRef(image, "story:1.1")->at("status"), "AWAITING_VERIFICATION");
  EXPECT_EQ(TaskByRef(image, "issue:I1")->at("status"), "RESOLVED");
  const Json written = Parse(MustWrite(image).text);
  EXPECT_EQ(written["stigmergy_source"], Json({{"project_status", "PLANNING_IN_PROGRESS"}}));
  EXPECT_EQ(written["project_manifest"]["epics"][0]["stories"][0]["source_status"], "QA_PENDING");
  EXPECT_EQ(written["issue_log"][0]["source_status"], "CLOSED");
}

// ------------------------------------------------------------- refusals

Status Refusal(const std::string& text) {
  Result<RunImage> image = ReadStigmergyState(text, ".ai/state.json");
  EXPECT_FALSE(image.ok()) << text;
  if (image.ok()) return Status();
  EXPECT_EQ(image.status().code(), StatusCode::kInvalidArgument) << image.status().ToString();
  EXPECT_EQ(image.status().message().rfind(".ai/state.json: ", 0), 0u) << image.status().ToString();
  return image.status();
}

void ExpectRefusal(const std::string& text, const std::vector<std::string>& parts) {
  const Status s = Refusal(text);
  for (const std::string& part : parts) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << "\n" << s.ToString();
  }
}

TEST(StigmergyFormatTest, WrongTypesAreRefusedNamingThePointer) {
  ExpectRefusal(R"({"project_status": 3})", {"/project_status: must be a string, not an integer"});
  ExpectRefusal(R"({"project_status": "NEEDS_PLANNING", "project_manifest": {"epics": [
                  {"epic_id": 1, "status": "PENDING", "stories": [
                    {"story_id": "1.1", "status": ["PENDING"]}]}]}})",
                {"/project_manifest/epics/0/stories/0/status: must be a string, not an array"});
  ExpectRefusal(R"({"project_status": "NEEDS_PLANNING", "project_manifest": {"epics": [
                  {"epic_id": 1.5, "status": "PENDING"}]}})",
                {"/project_manifest/epics/0/epic_id: must be an integer or a string"});
  ExpectRefusal(R"({"project_status": "NEEDS_BRIEFING", "history": [{"files_modified": [1]}]})",
                {"/history/0/files_modified/0: must be a string, not an integer"});
  ExpectRefusal(R"({"project_status": "NEEDS_BRIEFING", "history": {}})",
                {"/history: must be an array, not an object"});
  ExpectRefusal(R"({"project_status": "NEEDS_BRIEFING", "issue_log": [{"status": "OPEN"}]})",
                {"/issue_log/0/issue_id: is required"});
  ExpectRefusal(R"({"schema_version": "3.1", "project_status": "NEEDS_PRD",
                  "project_manifest": {"tasks": [{"id": "T1", "status": "PENDING",
                  "failure_count": "two"}]}})",
                {"/project_manifest/tasks/0/failure_count: must be an integer, not a string"});
  ExpectRefusal(R"([1, 2])", {"top level must be a JSON object"});
}

TEST(StigmergyFormatTest, UnknownStatusesAreRefusedListingTheAllowedOnes) {
  ExpectRefusal(R"({"project_status": "DREAMING"})",
                {"/project_status: unknown stigmergy.project status \"DREAMING\"",
                 "allowed: NEEDS_BRIEFING, NEEDS_PLANNING, READY_FOR_EXECUTION, "
                 "EXECUTION_IN_PROGRESS, EXECUTION_HALTED, HUMAN_INPUT_REQUIRED, PROJECT_COMPLETE",
                 "GRAND_BLUEPRINT_PHASE"});
  ExpectRefusal(R"({"project_status": "NEEDS_PLANNING", "project_manifest": {"epics": [
                  {"epic_id": 1, "status": "PENDING", "stories": [
                    {"story_id": "1.1", "status": "SHIPPED"}]}]}})",
                {"/project_manifest/epics/0/stories/0/status: unknown stigmergy.story status",
                 "allowed: PENDING, IN_PROGRESS, AWAITING_VERIFICATION, COMPLETE, FAILED"});
  ExpectRefusal(R"({"project_status": "NEEDS_BRIEFING", "issue_log": [
                  {"issue_id": "I", "status": "WONTFIX"}]})",
                {"/issue_log/0/status", "allowed: OPEN, IN_PROGRESS, RESOLVED, FAILED_TO_RESOLVE"});
  ExpectRefusal(R"({"project_status": "NEEDS_BRIEFING", "autonomy_mode": "yolo"})",
                {"/autonomy_mode", "allowed: supervised, autonomous"});
  ExpectRefusal(R"({"schema_version": "4.0", "project_status": "NEEDS_BRIEFING"})",
                {"/schema_version", "\"4.0\"", "2.0 and 3.x"});
  ExpectRefusal(R"({"project_status": "NEEDS_PLANNING", "project_manifest": {"epics": [
                  {"epic_id": 1, "status": "PENDING", "stories": [
                    {"story_id": "1.1", "status": "PENDING"},
                    {"story_id": "1.1", "status": "PENDING"}]}]}})",
                {"/project_manifest/epics/0/stories/1: story 1.1 appears twice",
                 "/project_manifest/epics/0/stories/0"});
}

TEST(StigmergyFormatTest, BrokenTextIsRefusedWithItsPlace) {
  const std::string text = Slurp(FixtureDir() + "/state-tmpl.v2.0.json");
  ExpectRefusal(text.substr(0, text.size() / 2), {"line"});
  std::string bad = text;
  bad.replace(bad.find("New"), 1, "\xff");
  ExpectRefusal(bad, {"line 3", "not valid UTF-8 (byte 0xFF)"});
  ExpectRefusal(std::string(300, '[') + std::string(300, ']'), {"nesting deeper than 256"});
  const std::string deep = R"({"project_status": "NEEDS_BRIEFING", "x": )" + std::string(400, '[') +
                           std::string(400, ']') + "}";
  ExpectRefusal(deep, {"nesting deeper than 256"});
  ExpectRefusal("", {"empty"});
}

// ------------------------------------------------------ other profiles

TEST(StigmergyFormatTest, AnotherProfilesRunIsWrittenWithNotes) {
  const RunImage image = {{"image", 1},
                          {"run",
                           {{"profile", "sinfonia"},
                            {"machine", "sinfonia.workflow"},
                            {"status", "blocked"},
                            {"title", "create-prd"},
                            {"context", {{"goal", "PRD"}}},
                            {"meta", Json::object()}}},
                          {"tasks",
                           {{{"ref", "step:2"},
                             {"kind", "step"},
                             {"key", "2"},
                             {"title", "draft"},
                             {"status", "in-progress"},
                             {"position", 2}},
                            {{"ref", "step:1"},
                             {"kind", "step"},
                             {"key", "1"},
                             {"title", "gather"},
                             {"status", "completed"},
                             {"position", 1}}}},
                          {"history",
                           {{{"seq", 4},
                             {"kind", "run.progress"},
                             {"time", "2026-03-05T10:00:00Z"},
                             {"agent", "maestro"},
                             {"summary", "step 1 done"},
                             {"payload", Json::object()},
                             {"files", Json::array()}},
                            {{"seq", 5},
                             {"kind", "run.status"},
                             {"time", "2026-03-05T10:00:01Z"},
                             {"summary", "x"},
                             {"payload", Json::object()}}}},
                          {"messages", {{{"from", "a"}, {"to", "b"}, {"body", "hi"}}}}};
  const FormatOutput out = MustWrite(image);
  const Json doc = Parse(out.text);
  EXPECT_EQ(doc["project_status"], "HUMAN_INPUT_REQUIRED");  // sinfonia blocked: waiting
  EXPECT_EQ(doc["project_name"], "create-prd");
  const Json& epics = doc["project_manifest"]["epics"];
  ASSERT_EQ(epics.size(), 1u);
  EXPECT_EQ(epics[0]["status"], "IN_PROGRESS");
  ASSERT_EQ(epics[0]["stories"].size(), 2u);
  EXPECT_EQ(epics[0]["stories"][0],
            Json({{"story_id", "1.1"}, {"title", "gather"}, {"status", "COMPLETE"}}));
  EXPECT_EQ(epics[0]["stories"][1]["status"], "IN_PROGRESS");
  ASSERT_EQ(doc["history"].size(), 1u);  // run.progress, not baton's run.status
  EXPECT_EQ(doc["history"][0]["agent_id"], "maestro");
  EXPECT_EQ(doc["history"][0]["signal"], "");
  std::string notes;
  for (const std::string& n : out.notes) notes += n + "\n";
  for (const char* part : {"status: sinfonia.workflow status \"blocked\"", "tasks: 2 sinfonia",
                           "messages: 1 messages not written", "context:", "history: 1 events"}) {
    EXPECT_NE(notes.find(part), std::string::npos) << part << "\n" << notes;
  }
  // What was written reads back.
  MustRead(out.text);
}

TEST(StigmergyFormatTest, AnImageWithoutARunIsRefused) {
  Result<FormatOutput> out = WriteStigmergyState(Json{{"image", 1}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition);
}

// ------------------------------------------- the stigmergy.state operation

// The run image of "run" built from the store as an export does: tasks with
// parents as refs, the run's ledger events as history.
RunImage ImageFromStore(Api& api, const std::string& run_id) {
  Json run = MustCall(api, "run.show", {{"id", run_id}});
  const Json tasks = MustCall(api, "task.list", {{"run", run_id}, {"limit", 100000}})["tasks"];
  std::map<std::string, std::string> ref_of;
  for (const Json& t : tasks) {
    ref_of[t["id"]] = t["kind"].get<std::string>() + ":" + t["key"].get<std::string>();
  }
  Json image_tasks = Json::array();
  for (const Json& t : tasks) {
    image_tasks.push_back(
        {{"ref", ref_of[t["id"]]},
         {"id", t["id"]},
         {"key", t["key"]},
         {"kind", t["kind"]},
         {"machine", t["machine"]},
         {"parent", t["parent_id"].is_string() ? Json(ref_of[t["parent_id"]]) : Json()},
         {"title", t["title"]},
         {"status", t["status"]},
         {"position", t["position"]},
         {"attempts", t["attempts"]},
         {"meta", t["meta"]},
         {"created_at", t["created_at"]},
         {"updated_at", t["updated_at"]}});
  }
  // Any order: the writer sorts as the operations do.
  std::reverse(image_tasks.begin(), image_tasks.end());
  const Json events =
      MustCall(api, "ledger.events", {{"run", run_id}, {"limit", 100000}})["events"];
  Json history = Json::array();
  for (const Json& e : events) {
    history.push_back({{"seq", e["seq"]},
                       {"kind", e["kind"]},
                       {"time", e["time"]},
                       {"agent", e["actor"]["id"]},
                       {"summary", e["summary"]},
                       {"payload", e["payload"]},
                       {"files", e["files"]}});
  }
  for (const char* key : {"task_counts", "progress", "version", "project_id"}) run.erase(key);
  return Json{{"image", 1}, {"run", run}, {"tasks", image_tasks}, {"history", history}};
}

class StigmergyDocumentTest : public ::testing::Test {
 protected:
  void SetUp() override { api_ = testing::OpenApi(dir_.File("baton.db")); }
  Json On(const std::string& op, Json input, const Actor& actor = Coordinator()) {
    input["run"] = run_;
    return MustCall(*api_, op, input, actor);
  }
  void Story(const std::string& id, const std::string& status) {
    On("stigmergy.story",
       {{"story_id", id}, {"status", status}, {"files_modified", {"src/" + id}}});
  }
  // A project through planning, approval, stories, a failure escalated by
  // LAW V, its issue resolved, and a signal.
  void Busy() {
    run_ = MustCall(*api_, "stigmergy.init", {{"project_name", "shop"}}, Coordinator())["run_id"];
    On("stigmergy.status", {{"status", "NEEDS_PLANNING"}});
    On("stigmergy.manifest",
       {{"epics",
         {{{"epic_id", 2}, {"title", "ui"}, {"stories", {{{"story_id", "2.1"}, {"title", "c"}}}}},
          {{"epic_id", 1},
           {"title", "core"},
           {"stories",
            {{{"story_id", "1.10"}, {"title", "j"}},
             {{"story_id", "1.2"}, {"title", "b"}},
             {{"story_id", "1.1"}, {"title", "a"}}}}}}}});
    On("stigmergy.status", {{"status", "READY_FOR_EXECUTION"}});
    On("approval.approve", {{"subject_kind", "run"}, {"subject", "execution"}}, Human());
    Story("1.1", "IN_PROGRESS");
    Story("1.1", "AWAITING_VERIFICATION");
    Story("1.1", "COMPLETE");
    Story("1.2", "IN_PROGRESS");
    On("stigmergy.story_failed", {{"story_id", "1.2"}, {"reason", "tests fail"}});
    Story("1.2", "IN_PROGRESS");
    On("stigmergy.story_failed", {{"story_id", "1.2"}, {"reason", "tests fail again"}});
    On("stigmergy.resolve_issue", {{"issue_id", "ISS-1"}, {"resolution", "fixed"}});
    On("stigmergy.issue", {{"summary", "flaky CI"}});
    On("stigmergy.signal", {{"signal", "MILESTONE_APPROVED"}, {"summary", "demo ok"}});
  }

  testing::TempDir dir_;
  std::unique_ptr<Api> api_;
  std::string run_;
};

TEST_F(StigmergyDocumentTest, EqualsTheStateOperation) {
  Busy();
  const Json state = On("stigmergy.state", Json::object());
  ASSERT_EQ(state["issue_log"].size(), 2u);
  std::vector<std::string> notes;
  const Json doc = Json(StigmergyDocument(ImageFromStore(*api_, run_), &notes));
  EXPECT_EQ(doc, state) << "document:\n" << doc.dump(2) << "\nstate:\n" << state.dump(2);
  // The order is the operations' (position, then key), not the image's.
  const Json& core = doc["project_manifest"]["epics"][0];
  EXPECT_EQ(core["epic_id"], 1);
  EXPECT_EQ(core["stories"][0]["story_id"], "1.1");
  EXPECT_EQ(core["stories"][2]["story_id"], "1.10");
}

TEST_F(StigmergyDocumentTest, TheStateOperationsAnswerReadsBackToItself) {
  Busy();
  const Json state = On("stigmergy.state", Json::object());
  const RunImage image = MustRead(state.dump(2));
  EXPECT_EQ(image["run"]["status"], "EXECUTION_HALTED");
  const Json* story = TaskByRef(image, "story:1.2");
  ASSERT_NE(story, nullptr);
  EXPECT_EQ((*story)["parent"], "epic:1");
  EXPECT_EQ(Parse(MustWrite(image).text), state);
}

}  // namespace
}  // namespace baton
