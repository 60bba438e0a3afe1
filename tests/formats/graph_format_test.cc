// The "graph" seed format (formats/graph_format.h): @sys/graph's
// .graph-state/{id}.json read into a graph run and written as the engine's
// JSON.stringify(state, null, 2) writes it; checkpoint file names that never
// collide; refusals naming the field.

#include "formats/graph_format.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "formats/format.h"
#include "util/json_util.h"

namespace baton {
namespace {

std::string Slurp(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}
std::string SeedFile() {
  return std::string(BATON_SOURCE_DIR) + "/fuzz/seeds/graph/state-example.json";
}
std::string DataDir() { return std::string(BATON_SOURCE_DIR) + "/tests/data/graph"; }

Json Parse(const std::string& text) {
  Result<Json> j = ParseJson(text, "test");
  EXPECT_TRUE(j.ok()) << j.status().ToString() << "\n" << text;
  return j.ok() ? *j : Json();
}

RunImage MustRead(const std::string& text, const std::string& source = "state.json") {
  Result<RunImage> image = ReadGraphState(text, source);
  EXPECT_TRUE(image.ok()) << image.status().ToString() << "\n" << text;
  return image.ok() ? *image : Json();
}

FormatOutput MustWrite(const RunImage& image) {
  Result<FormatOutput> out = WriteGraphState(image);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : FormatOutput();
}

TEST(GraphFormatTest, DocumentedExampleReadsIntoAGraphRun) {
  const RunImage image = MustRead(Slurp(SeedFile()), ".graph-state/my-workflow.json");
  const Json& run = image["run"];
  EXPECT_EQ(run["profile"], "graph");
  EXPECT_EQ(run["machine"], "graph.run");
  EXPECT_EQ(run["status"], "running");
  EXPECT_EQ(run["cursor"], "IMPLEMENT");
  EXPECT_EQ(run["updated_at"], "2024-01-15T10:30:00Z");
  EXPECT_EQ(run["meta"]["conversationHistory"], Json::array());
  EXPECT_EQ(run["meta"]["workflow_id"], "my-workflow");
  EXPECT_EQ(run["title"], "my-workflow");
  EXPECT_EQ(run["context"]["completedTasks"], Json::array({"task1"}));
  EXPECT_EQ(run["context"]["lastCommandResult"]["duration"], 1234);
  EXPECT_FALSE(run["meta"].contains("kept"));
}

TEST(GraphFormatTest, DocumentedExampleRoundTrips) {
  const std::string text = Slurp(SeedFile());
  const FormatOutput out = MustWrite(MustRead(text));
  EXPECT_EQ(Parse(out.text), Parse(text));
  EXPECT_TRUE(out.notes.empty());
  // Keys in the interface's order, two-space indentation, no final newline.
  EXPECT_EQ(out.text.rfind("{\n  \"currentNode\": \"IMPLEMENT\",\n  \"status\": \"running\",\n"
                           "  \"updatedAt\": \"2024-01-15T10:30:00Z\",\n"
                           "  \"conversationHistory\": [],\n  \"context\": {\n",
                           0),
            0u)
      << out.text;
  EXPECT_NE(out.text.back(), '\n');
}

// The expected file is what node's JSON.stringify(state, null, 2) wrote for
// the input (keys of the input sorted as the image holds them).
TEST(GraphFormatTest, WritesWhatJsonStringifyWrites) {
  const RunImage image = MustRead(Slurp(DataDir() + "/numbers-and-keys.input.json"));
  EXPECT_EQ(image["run"]["meta"]["kept"]["graph"]["/nodeStates"],
            Json({{"TEST", {{"status", "running"}}}}));
  const FormatOutput out = MustWrite(image);
  EXPECT_EQ(out.text, Slurp(DataDir() + "/numbers-and-keys.expected.json"));
  // And it is canonical.
  EXPECT_EQ(MustWrite(MustRead(out.text)).text, out.text);
}

TEST(GraphFormatTest, MissingOptionalFieldsStayMissing) {
  const std::string text = R"({"currentNode": "PLAN", "status": "pending"})";
  const FormatOutput out = MustWrite(MustRead(text));
  EXPECT_EQ(out.text,
            "{\n  \"currentNode\": \"PLAN\",\n  \"status\": \"pending\",\n"
            "  \"conversationHistory\": [],\n  \"context\": {}\n}");
}

// ------------------------------------------------------------ file names

TEST(GraphFormatTest, FileNamesDoNotCollideWhereGraphsOwnDo) {
  // @sys/graph maps both to workflow_1.json.
  EXPECT_EQ(GraphStateFileName("workflow@1"), "workflow%401.json");
  EXPECT_EQ(GraphStateFileName("workflow#1"), "workflow%231.json");
  EXPECT_EQ(GraphStateFileName("workflow_1"), "workflow_1.json");
  EXPECT_EQ(GraphStateFileName("100%"), "100%25.json");
  EXPECT_EQ(GraphStateFileName("../etc/passwd"), "%2E%2E%2Fetc%2Fpasswd.json");
  EXPECT_EQ(GraphStateFileName("é"), "%C3%A9.json");
  EXPECT_EQ(GraphStateFileName(std::string("a\0b", 3)), "a%00b.json");
  for (const char* id : {"workflow@1", "workflow#1", "workflow_1", "100%", "../etc/passwd", "é", "",
                         "my-workflow"}) {
    Result<std::string> back = GraphIdFromFileName(GraphStateFileName(id));
    ASSERT_TRUE(back.ok()) << id << ": " << back.status().ToString();
    EXPECT_EQ(*back, id);
  }
  Result<std::string> in_dir = GraphIdFromFileName("/tmp/.graph-state/workflow%401.json");
  ASSERT_TRUE(in_dir.ok()) << in_dir.status().ToString();
  EXPECT_EQ(*in_dir, "workflow@1");
}

TEST(GraphFormatTest, FileNameMappingIsInjectiveOnRandomIds) {
  std::mt19937 rng(7);
  std::set<std::string> ids, names;
  for (int i = 0; i < 20000; ++i) {
    std::string id(rng() % 6, '\0');
    // Mostly the bytes that collide under "_", sometimes any byte.
    for (char& c : id) c = rng() % 4 == 0 ? static_cast<char>(rng() % 256) : "_@#%-a.1/"[rng() % 9];
    if (!ids.insert(id).second) continue;
    const std::string name = GraphStateFileName(id);
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(name.find('/'), std::string::npos);
    EXPECT_EQ(name.find('.'), name.size() - 5) << name;
    Result<std::string> back = GraphIdFromFileName(name);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, id);
  }
}

TEST(GraphFormatTest, NamesNoIdMapsToAreRefused) {
  for (const char* name : {"workflow.txt", "a.b.json", "%41.json", "%4.json", "%zz.json",
                           "%2e.json", "work flow.json", "x%.json", "json"}) {
    Result<std::string> id = GraphIdFromFileName(name);
    EXPECT_FALSE(id.ok()) << name << " gave " << (id.ok() ? *id : "");
    if (!id.ok()) {
      EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(id.status().message().find(name), std::string::npos) << id.status().ToString();
    }
  }
}

TEST(GraphFormatTest, SourceNamesThatAreNoCheckpointNameGiveNoWorkflowId) {
  const RunImage image = MustRead(Slurp(SeedFile()), "-");
  EXPECT_FALSE(image["run"]["meta"].contains("workflow_id"));
  EXPECT_EQ(image["run"]["title"], "");
}

// -------------------------------------------------------------- refusals

void ExpectRefusal(const std::string& text, const std::vector<std::string>& parts) {
  Result<RunImage> image = ReadGraphState(text, "wf.json");
  ASSERT_FALSE(image.ok()) << text;
  EXPECT_EQ(image.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(image.status().message().rfind("wf.json: ", 0), 0u) << image.status().ToString();
  for (const std::string& part : parts) {
    EXPECT_NE(image.status().message().find(part), std::string::npos) << part << "\n"
                                                                      << image.status().ToString();
  }
}

TEST(GraphFormatTest, InvalidInputIsRefusedWithItsPlace) {
  ExpectRefusal(R"({"status": "running"})", {"/currentNode: is required"});
  ExpectRefusal(R"({"currentNode": "A", "status": "done"})",
                {"/status: unknown graph.run status \"done\"",
                 "allowed: pending, running, completed, failed, paused"});
  ExpectRefusal(R"({"currentNode": "A", "status": "running", "context": []})",
                {"/context: must be an object, not an array"});
  ExpectRefusal(R"({"currentNode": "A", "status": "running", "conversationHistory": {}})",
                {"/conversationHistory: must be an array, not an object"});
  ExpectRefusal(R"({"currentNode": 7, "status": "running"})",
                {"/currentNode: must be a string, not an integer"});
  ExpectRefusal(R"({"currentNode": "A", "status": "running", "updatedAt": 1})",
                {"/updatedAt: must be a string"});
  const std::string text = Slurp(SeedFile());
  ExpectRefusal(text.substr(0, text.size() - 10), {"line"});
  std::string bad = text;
  bad.replace(bad.find("IMPLEMENT"), 1, "\xc3\x28");
  ExpectRefusal(bad, {"line 2", "not valid UTF-8 (byte 0xC3)"});
  ExpectRefusal(R"({"currentNode": "A", "status": "running", "context": {"x": )" +
                    std::string(300, '[') + std::string(300, ']') + "}}",
                {"nesting deeper than 256 levels"});
  ExpectRefusal("[]", {"top level must be a JSON object"});
}

// ------------------------------------------------------ other profiles

TEST(GraphFormatTest, AnotherProfilesRunIsWrittenWithNotes) {
  const RunImage image = {{"image", 1},
                          {"run",
                           {{"profile", "stigmergy"},
                            {"machine", "stigmergy.project"},
                            {"status", "PROJECT_COMPLETE"},
                            {"title", "shop"},
                            {"cursor", nullptr},
                            {"context", Json::object()},
                            {"meta", {{"system_signal", "EPIC_COMPLETE"}}},
                            {"updated_at", "2026-01-01T00:00:00Z"}}},
                          {"tasks", {{{"kind", "epic"}, {"key", "1"}, {"status", "COMPLETE"}}}},
                          {"history", {{{"kind", "stigmergy.signal"}, {"summary", "done"}}}}};
  const FormatOutput out = MustWrite(image);
  const Json doc = Parse(out.text);
  EXPECT_EQ(doc["status"], "completed");
  EXPECT_EQ(doc["currentNode"], "END");
  EXPECT_EQ(doc["updatedAt"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(doc["context"], Json::object());
  std::string notes;
  for (const std::string& n : out.notes) notes += n + "\n";
  for (const char* part :
       {"status: stigmergy.project status \"PROJECT_COMPLETE\" written as completed",
        "currentNode: the run has no cursor", "tasks: 1 tasks not written",
        "history: 1 history events"}) {
    EXPECT_NE(notes.find(part), std::string::npos) << part << "\n" << notes;
  }
  MustRead(out.text);
}

TEST(GraphFormatTest, AnImageWithoutARunIsRefused) {
  Result<FormatOutput> out = WriteGraphState(Json::object());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace baton
