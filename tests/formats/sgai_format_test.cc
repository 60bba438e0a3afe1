// The sgai format: .sgai/state.json (sgai-RICH and the legacy shapes) read
// into a run image laid out as the sgai operations lay out a run, written
// back as sgai writes it, and SgaiDocument rendering a run of the sgai
// operations exactly as the sgai.state operation does.

#include "formats/sgai_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/ledger/ledger.h"
#include "formats/reader.h"
#include "store/store.h"
#include "test_util.h"

namespace baton {
namespace {

using testing::Agent;
using testing::Coordinator;
using testing::Human;
using testing::MustCall;

std::string FixturePath(const std::string& name) {
  return std::string(BATON_SOURCE_DIR) + "/../shared/fixtures/seeds/sgai/" + name;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

RunImage MustRead(const std::string& text) {
  Result<RunImage> image = ReadSgaiState(text, "state.json");
  EXPECT_TRUE(image.ok()) << image.status().message();
  return image.ok() ? *image : Json();
}

FormatOutput MustWrite(const RunImage& image) {
  Result<FormatOutput> out = WriteSgaiState(image);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : FormatOutput{};
}

Json RoundTrip(const std::string& text) { return Json::parse(MustWrite(MustRead(text)).text); }

// A sgai-RICH state.json with every field and a little of everything.
const char kRichState[] = R"({
  "status": "agent-done",
  "task": "",
  "progress": [
    {"timestamp": "2026-05-01T10:00:00Z", "agent": "coordinator", "description": "planned"},
    {"timestamp": "2026-05-01T10:05:00Z", "agent": "sgai", "description": "Handing off to planner"}
  ],
  "humanMessage": "",
  "multiChoiceQuestion": {
    "questions": [{"question": "Build?", "choices": ["yes", "no"], "multiSelect": false}],
    "isWorkGate": true
  },
  "messages": [
    {"id": 3, "fromAgent": "coordinator", "toAgent": "planner", "body": "plan it", "read": true,
     "readAt": "2026-05-01T10:06:00Z", "readBy": "planner", "createdAt": "2026-05-01T10:01:00Z"},
    {"id": 7, "fromAgent": "planner", "toAgent": "coder:openai/gpt-5.5", "body": "code <it> & ship",
     "read": false, "createdAt": "2026-05-01T10:07:00Z"}
  ],
  "goalChecksum": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
  "visitCounts": {"coder": 0, "coordinator": 1, "planner": 2},
  "currentAgent": "planner",
  "todos": [
    {"id": "1", "content": "outline", "status": "completed", "priority": "high"},
    {"id": "2", "content": "estimate", "status": "in_progress", "priority": "low"}
  ],
  "projectTodos": [
    {"id": "p1", "content": "release notes", "status": "pending", "priority": "medium"}
  ],
  "agentSequence": [
    {"agent": "coordinator", "startTime": "2026-05-01T10:00:00Z", "isCurrent": false},
    {"agent": "planner", "startTime": "2026-05-01T10:05:00Z", "isCurrent": true}
  ],
  "sessionId": "ses_42",
  "cost": {
    "totalCost": 1.75,
    "totalTokens": {"input": 115, "output": 3, "reasoning": 0, "cacheRead": 6, "cacheWrite": 0},
    "byAgent": [
      {"agent": "coordinator", "cost": 0.75,
       "tokens": {"input": 15, "output": 2, "reasoning": 0, "cacheRead": 4, "cacheWrite": 0},
       "steps": [
         {"stepId": "s1", "agent": "coordinator", "sessionId": "ses_41", "cost": 0.5,
          "tokens": {"input": 10, "output": 1, "reasoning": 0, "cacheRead": 2, "cacheWrite": 0},
          "timestamp": "2026-05-01T10:02:00Z"},
         {"stepId": "s2", "agent": "coordinator", "cost": 0.25,
          "tokens": {"input": 5, "output": 1, "reasoning": 0, "cacheRead": 2, "cacheWrite": 0},
          "timestamp": "2026-05-01T10:03:00Z"}]},
      {"agent": "planner", "cost": 1,
       "tokens": {"input": 100, "output": 1, "reasoning": 0, "cacheRead": 2, "cacheWrite": 0},
       "steps": [
         {"stepId": "s3", "agent": "planner", "cost": 1,
          "tokens": {"input": 100, "output": 1, "reasoning": 0, "cacheRead": 2, "cacheWrite": 0},
          "timestamp": "2026-05-01T10:06:00Z"}]}
    ]
  },
  "interactionMode": "building",
  "modelStatuses": {"planner:openai/gpt-5.5": "model-working"},
  "currentModel": "planner:openai/gpt-5.5",
  "summary": "Ship the thing",
  "summaryManual": true
})";

TEST(SgaiFormatTest, GoldenFixtureReadsIntoTheProfilesLayout) {
  const RunImage image = MustRead(ReadText(FixturePath("golden_state.json")));
  const Json& run = image["run"];
  EXPECT_EQ(run["profile"], "sgai");
  EXPECT_EQ(run["machine"], "sgai.run");
  EXPECT_EQ(run["status"], "working");
  const Json& meta = run["meta"];
  EXPECT_EQ(meta["task"], "Verify Go-TypeScript state.json contract");
  EXPECT_EQ(meta["goalChecksum"].get<std::string>().size(), 64u);
  EXPECT_EQ(meta["visitCounts"], Json({{"coder", 0}, {"coordinator", 1}, {"planner", 1}}));
  EXPECT_EQ(meta["currentAgent"], "planner");
  EXPECT_EQ(meta["agentSequence"][1]["agent"], "planner");
  EXPECT_FALSE(meta.contains("interactionMode")) << "the file has none";
  EXPECT_FALSE(meta.contains("kept")) << "the golden file has no unknown keys";

  ASSERT_EQ(image["history"].size(), 2u);
  EXPECT_EQ(image["history"][0]["kind"], "run.progress");
  EXPECT_EQ(image["history"][0]["time"], "2025-01-01T00:00:00.000Z");
  EXPECT_EQ(image["history"][1]["payload"],
            Json({{"agent", "coordinator"}, {"description", "Step 2 completed"}}));

  ASSERT_EQ(image["messages"].size(), 2u);
  EXPECT_EQ(image["messages"][0]["from"], "coordinator");
  EXPECT_EQ(image["messages"][0]["to"], "planner");
  EXPECT_EQ(image["messages"][0]["read"], false);
  EXPECT_EQ(image["messages"][0]["meta"]["sgai_id"], 1);
  EXPECT_EQ(image["messages"][1]["read_at"], "2025-01-01T12:00:00.000Z");
  EXPECT_EQ(image["messages"][1]["read_by"], "coder");

  ASSERT_EQ(image["questions"].size(), 1u);
  EXPECT_EQ(image["questions"][0]["message"], "Golden file test message");
  EXPECT_EQ(image["questions"][0]["status"], "open");
  EXPECT_TRUE(image["tasks"].empty());
  EXPECT_TRUE(image["usage"].empty()) << "byAgent is null";
}

TEST(SgaiFormatTest, GoldenFixtureWritesBackAsSgaiWroteIt) {
  const std::string golden = ReadText(FixturePath("golden_state.json"));
  const FormatOutput out = MustWrite(MustRead(golden));
  EXPECT_EQ(Json::parse(out.text), Json::parse(golden));
  EXPECT_EQ(out.text, golden) << "Go's MarshalIndent bytes";
  EXPECT_TRUE(out.notes.empty());
}

TEST(SgaiFormatTest, RichStateReadsEveryFieldAndWritesItBack) {
  const RunImage image = MustRead(kRichState);
  const Json& meta = image["run"]["meta"];
  EXPECT_EQ(image["run"]["status"], "agent-done");
  EXPECT_EQ(meta["sessionId"], "ses_42");
  EXPECT_EQ(meta["interactionMode"], "building");
  EXPECT_EQ(meta["modelStatuses"]["planner:openai/gpt-5.5"], "model-working");
  EXPECT_EQ(meta["currentModel"], "planner:openai/gpt-5.5");
  EXPECT_EQ(meta["summary"], "Ship the thing");
  EXPECT_EQ(meta["summaryManual"], true);
  EXPECT_EQ(image["run"]["title"], "Ship the thing");

  // Todos as sgai.todo_write makes them (CreateTodo).
  ASSERT_EQ(image["tasks"].size(), 3u);
  const Json& todo = image["tasks"][1];
  EXPECT_EQ(todo["kind"], "todo");
  EXPECT_EQ(todo["key"], "todo:planner:2");
  EXPECT_EQ(todo["assignee"], "planner");
  EXPECT_EQ(todo["status"], "in_progress");
  EXPECT_EQ(todo["priority"], 0);
  EXPECT_EQ(todo["position"], 1);
  EXPECT_EQ(todo["meta"], Json({{"todo_id", "2"}, {"priority", "low"}}));
  const Json& project = image["tasks"][2];
  EXPECT_EQ(project["kind"], "project_todo");
  EXPECT_EQ(project["key"], "project_todo:p1");
  EXPECT_TRUE(project["assignee"].is_null());
  EXPECT_EQ(project["priority"], 1);

  ASSERT_EQ(image["usage"].size(), 3u);
  EXPECT_EQ(
      image["usage"][0],
      Json({{"agent", "coordinator"},
            {"model", nullptr},
            {"step_id", "s1"},
            {"session_id", "ses_41"},
            {"cost", 0.5},
            {"tokens",
             {{"input", 10}, {"output", 1}, {"reasoning", 0}, {"cacheRead", 2}, {"cacheWrite", 0}}},
            {"time", "2026-05-01T10:02:00Z"}}));
  EXPECT_EQ(image["usage"][2]["agent"], "planner");

  ASSERT_EQ(image["questions"].size(), 1u);
  EXPECT_EQ(image["questions"][0]["work_gate"], true);
  EXPECT_EQ(image["questions"][0]["questions"][0]["choices"], Json({"yes", "no"}));
  EXPECT_EQ(image["messages"][1]["meta"]["sgai_id"], 7);

  EXPECT_EQ(RoundTrip(kRichState), Json::parse(kRichState));
}

TEST(SgaiFormatTest, WriterPrintsAsGoDoes) {
  const std::string text = MustWrite(MustRead(kRichState)).text;
  EXPECT_NE(text.find("\"code \\u003cit\\u003e \\u0026 ship\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"cost\": 1,"), std::string::npos) << "whole floats without .0";
  EXPECT_EQ(text.find("\"model\""), std::string::npos) << "steps without a model have none";
  EXPECT_LT(text.find("\"status\""), text.find("\"task\""));
  EXPECT_LT(text.find("\"sessionId\""), text.find("\"cost\""));
  EXPECT_LT(text.find("\"cost\""), text.find("\"interactionMode\""));
  EXPECT_NE(text.back(), '\n');
}

TEST(SgaiFormatTest, UnknownKeysAreKeptAndWrittenBack) {
  Json doc = Json::parse(kRichState);
  doc["workGateApproved"] = true;
  doc["future"] = {{"nested", {1, 2, 3}}};
  doc["messages"][1]["priority"] = "urgent";
  doc["todos"][0]["origin"] = "opencode";
  doc["progress"][0]["tool"] = "update_workflow_state";
  doc["cost"]["dollars"] = {{"total", 1.75}};
  doc["cost"]["byAgent"][1]["steps"][0]["dollars"] = {{"total", 1}};
  doc["multiChoiceQuestion"]["questionId"] = "abcd";
  const RunImage image = MustRead(doc.dump());
  const Json& kept = image["run"]["meta"]["kept"]["sgai"];
  EXPECT_EQ(kept["/future"], doc["future"]);
  EXPECT_EQ(kept["/messages/1/priority"], "urgent");
  EXPECT_EQ(kept["/cost/byAgent/1/steps/0/dollars"], Json({{"total", 1}}));
  EXPECT_EQ(RoundTrip(doc.dump()), doc);
}

// The TypeScript plugin's shape (sgai-SNAP): "message" for humanMessage,
// read messages in "messageHistory", no ids, a "navigate" request.
TEST(SgaiFormatTest, LegacyShapeReadsIntoTheSameImage) {
  const Json legacy = Json::parse(R"({
    "status": "working",
    "message": "Which database?",
    "task": "pick a store",
    "progress": [{"timestamp": "2025-01-01T00:00:00Z", "agent": "lead", "description": "one"},
                 "a plain note"],
    "messages": [{"fromAgent": "lead", "toAgent": "dev", "body": "go"}],
    "messageHistory": [{"fromAgent": "dev", "toAgent": "qa", "body": "done",
                        "readAt": "2025-01-01T12:00:00Z", "readBy": "qa", "tag": "x"}],
    "goalChecksum": "ab",
    "navigate": {"to": "qa", "reason": "tests next"},
    "visitCounts": {"lead": 1},
    "currentAgent": "dev"
  })");
  const Json current = Json::parse(R"({
    "status": "working",
    "task": "pick a store",
    "progress": [{"timestamp": "2025-01-01T00:00:00Z", "agent": "lead", "description": "one"},
                 {"timestamp": "", "agent": "", "description": "a plain note"}],
    "humanMessage": "Which database?",
    "messages": [{"id": 1, "fromAgent": "lead", "toAgent": "dev", "body": "go", "read": false},
                 {"id": 2, "fromAgent": "dev", "toAgent": "qa", "body": "done", "read": true,
                  "readAt": "2025-01-01T12:00:00Z", "readBy": "qa"}],
    "goalChecksum": "ab",
    "visitCounts": {"lead": 1},
    "currentAgent": "dev"
  })");
  const RunImage a = MustRead(legacy.dump());
  RunImage b = MustRead(current.dump());
  EXPECT_TRUE(a["history"][1]["time"].is_null()) << "a plain note has no time";
  b["history"][1]["time"] = nullptr;
  for (const char* list : {"tasks", "history", "usage", "questions"}) {
    EXPECT_EQ(a[list], b[list]) << list;
  }
  ASSERT_EQ(a["messages"].size(), 2u);
  EXPECT_EQ(a["messages"][1]["read"], true) << "messageHistory holds read messages";
  Json written = RoundTrip(legacy.dump());
  EXPECT_EQ(written["navigate"], legacy["navigate"]) << "kept as an unknown key";
  EXPECT_EQ(written["messages"][1]["tag"], "x") << "kept where the message went";
  written.erase("navigate");
  written["messages"][1].erase("tag");
  EXPECT_EQ(written, current);

  // Beside a humanMessage the old key cannot be mapped: it is kept.
  Json both = legacy;
  both["humanMessage"] = "Newer question";
  Json out = RoundTrip(both.dump());
  EXPECT_EQ(out["humanMessage"], "Newer question");
  EXPECT_EQ(out["message"], "Which database?");

  Json snap = current;
  snap["status"] = "human-communication";
  EXPECT_EQ(MustRead(snap.dump())["run"]["status"], "waiting-for-human");
}

TEST(SgaiFormatTest, WritingIsCanonical) {
  Json unknown = Json::parse(kRichState);
  unknown["zzz"] = {1.0, "<b>"};
  unknown["messages"].push_back({{"fromAgent", "x"}, {"body", "no id"}});
  for (const std::string& text :
       {ReadText(FixturePath("golden_state.json")), std::string(kRichState), unknown.dump(),
        std::string(R"({"status":"complete","messageHistory":[{"body":"b"}],"message":"m"})"),
        std::string(R"({"todos":[{"id":"a"}],"cost":{"byAgent":[{"steps":[{"cost":1e-7}]}]}})")}) {
    const std::string once = MustWrite(MustRead(text)).text;
    const std::string twice = MustWrite(MustRead(once)).text;
    EXPECT_EQ(twice, once) << text;
  }
}

std::string DataPath(const std::string& name) {
  return std::string(BATON_SOURCE_DIR) + "/tests/data/sgai/" + name;
}

// sgai writes "status": "" after a hand-off (no omitempty in its struct):
// the fresh workflow's status, and the file round-trips byte for byte after
// the first write.
TEST(SgaiFormatTest, AnEmptyStatusIsTheInitialStatus) {
  const std::string text = ReadText(DataPath("handoff-empty-status.json"));
  ASSERT_FALSE(text.empty());
  const RunImage image = MustRead(text);
  EXPECT_EQ(image["run"]["status"], "working");
  EXPECT_EQ(image["run"]["meta"]["currentAgent"], "backend-go-developer");
  const std::string once = MustWrite(image).text;
  const std::string twice = MustWrite(MustRead(once)).text;
  EXPECT_EQ(twice, once);
  EXPECT_EQ(Json::parse(once)["status"], "working");
}

TEST(SgaiFormatTest, RefusesInvalidFilesNamingWhereAndWhy) {
  struct Case {
    std::string text;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"", "empty"},
      {R"({"status": "working", "task": )", "line 1"},
      {"{\"task\": \"caf\xC3\"}", "not valid UTF-8"},
      {"[1, 2]", "top level must be a JSON object"},
      {std::string(300, '[') + std::string(300, ']'), "state.json"},
      {R"({"status": "running"})",
       "/status: unknown status \"running\" (sgai.run allows working, agent-done, complete, "
       "waiting-for-human)"},
      {R"({"messages": [{"id": 1}, {"id": 2, "read": "yes"}]})",
       "/messages/1/read: must be a boolean, not a string"},
      {R"({"todos": [{"id": "1", "status": "doing"}]})",
       "/todos/0/status: unknown status \"doing\" (sgai.todo allows pending, in_progress, "
       "completed, cancelled)"},
      {R"({"projectTodos": [{"id": "1"}, {"id": "1"}]})",
       "/projectTodos/1/id: \"1\" appears twice"},
      {R"({"todos": [{"content": "no id"}]})", "/todos/0/id: is required"},
      {R"({"visitCounts": {"coder": "1"}})", "/visitCounts/coder: must be an integer"},
      {R"({"modelStatuses": {"a:m": 1}})", "/modelStatuses/a:m: must be a string"},
      {R"({"agentSequence": [{"agent": "a", "isCurrent": "yes"}]})",
       "/agentSequence/0/isCurrent: must be a boolean"},
      {R"({"cost": {"byAgent": [{"steps": [{"tokens": {"input": 1.5}}]}]}})",
       "/cost/byAgent/0/steps/0/tokens/input: must be an integer"},
      {R"({"multiChoiceQuestion": {"questions": [{"choices": ["a", 2]}]}})",
       "/multiChoiceQuestion/questions/0/choices/1: must be a string"},
      {R"({"progress": {"a": 1}})", "/progress: must be an array, not an object"},
  };
  for (const Case& c : cases) {
    Result<RunImage> r = ReadSgaiState(c.text, "state.json");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(r.status().message().find("state.json"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.want), std::string::npos)
        << "input: " << c.text.substr(0, 80) << "\nmessage: " << r.status().message();
  }
}

TEST(SgaiFormatTest, AnImageOfAnotherProfileIsWrittenWithNotes) {
  const Json image = {
      {"image", 1},
      {"run",
       {{"profile", "stigmergy"},
        {"machine", "stigmergy.project"},
        {"status", "HUMAN_INPUT_REQUIRED"},
        {"title", "Ship v2"},
        {"meta", {{"schema_version", "2.0"}}}}},
      {"tasks",
       {{{"ref", "epic:1"},
         {"key", "1"},
         {"kind", "epic"},
         {"status", "IN_PROGRESS"},
         {"title", "Epic"}},
        {{"ref", "story:1.1"},
         {"key", "1.1"},
         {"kind", "story"},
         {"status", "AWAITING_VERIFICATION"},
         {"title", "Story one"},
         {"priority", 2}},
        {{"ref", "story:1.2"},
         {"key", "1.2"},
         {"kind", "story"},
         {"status", "COMPLETE"},
         {"title", "Story two"}},
        {{"ref", "story:1.3"},
         {"key", "1.3"},
         {"kind", "story"},
         {"status", "FAILED"},
         {"title", "Story three"}}}},
      {"history",
       {{{"seq", 4},
         {"kind", "stigmergy.signal"},
         {"time", "2026-02-01T00:00:00Z"},
         {"agent", "saul"},
         {"summary", "dispatch 1.1"},
         {"payload", Json::object()}},
        {{"seq", 5},
         {"kind", "task.created"},
         {"time", "2026-02-01T00:00:01Z"},
         {"agent", "saul"},
         {"summary", "created"},
         {"payload", Json::object()}}}},
      {"approvals", {{{"subject_kind", "story"}, {"subject", "1.2"}, {"decision", "approve"}}}},
      {"messages", {{{"from", "saul"}, {"to", "dev"}, {"body", "go"}, {"read", false}}}}};
  const FormatOutput out = MustWrite(image);
  const Json doc = Json::parse(out.text);
  EXPECT_EQ(doc["status"], "waiting-for-human");
  EXPECT_EQ(doc["summary"], "Ship v2");
  ASSERT_EQ(doc["projectTodos"].size(), 4u);
  EXPECT_EQ(doc["projectTodos"][0]["status"], "in_progress");
  EXPECT_EQ(doc["projectTodos"][1], Json({{"id", "1.1"},
                                          {"content", "Story one"},
                                          {"status", "in_progress"},
                                          {"priority", "high"}}));
  EXPECT_EQ(doc["projectTodos"][2]["status"], "completed");
  EXPECT_EQ(doc["projectTodos"][3]["status"], "cancelled") << "sgai.todo has no failed";
  EXPECT_TRUE(doc["todos"].empty());
  ASSERT_EQ(doc["progress"].size(), 1u);
  EXPECT_EQ(doc["progress"][0]["description"], "dispatch 1.1");
  EXPECT_EQ(doc["messages"][0]["id"], 1);
  auto noted = [&](const std::string& what) {
    for (const std::string& n : out.notes) {
      if (n.find(what) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(noted("status: stigmergy.project status \"HUMAN_INPUT_REQUIRED\""));
  EXPECT_TRUE(noted("tasks: 3 stigmergy story task(s)"));
  EXPECT_TRUE(noted("tasks: 1 stigmergy epic task(s)"));
  EXPECT_TRUE(noted("approvals: 1"));
  EXPECT_TRUE(noted("run.meta: stigmergy's run fields (schema_version)"));
  EXPECT_TRUE(noted("history: 1 stigmergy history event(s)"));
  // What it wrote is a sgai file: it reads back and writes the same.
  EXPECT_EQ(MustWrite(MustRead(out.text)).text, out.text);

  EXPECT_EQ(WriteSgaiState(Json{{"image", 1}}).status().code(), StatusCode::kFailedPrecondition);
}

// ---- SgaiDocument against the sgai.state operation ----

// The image of one run, built from the store's rows as docs/formats.md
// describes it (what engine/interchange/imports.h exports).
Json ImageFromStore(const std::string& db, const std::string& run_id) {
  Result<std::unique_ptr<Store>> store = Store::Open({.location = testing::TestStoreLocation(db)});
  EXPECT_TRUE(store.ok());
  auto conn = (*store)->Connect();
  auto begun = (*conn)->Begin(TxnMode::kRead);
  Txn& txn = **begun;
  auto rows = [&](const std::string& sql) {
    Result<std::vector<Row>> r = txn.Query(sql, {SqlText(run_id)});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : std::vector<Row>();
  };
  auto text_or_null = [](const Row& r, size_t i) { return r.IsNull(i) ? Json() : Json(r.Str(i)); };
  const Row run =
      rows("SELECT id, profile, machine, status, title, meta FROM runs WHERE id = ?")[0];
  Json image = {{"image", 1},
                {"run",
                 {{"id", run.Str(0)},
                  {"profile", run.Str(1)},
                  {"machine", run.Str(2)},
                  {"status", run.Str(3)},
                  {"title", run.Str(4)},
                  {"meta", Json::parse(run.Str(5))}}},
                {"tasks", Json::array()},
                {"messages", Json::array()},
                {"history", Json::array()},
                {"usage", Json::array()},
                {"questions", Json::array()}};
  for (const Row& r : rows("SELECT id, key, kind, title, status, priority, position, assignee, "
                           "meta, created_at FROM tasks WHERE run_id = ? ORDER BY id DESC")) {
    image["tasks"].push_back({{"id", r.Str(0)},
                              {"key", text_or_null(r, 1)},
                              {"kind", r.Str(2)},
                              {"title", r.Str(3)},
                              {"status", r.Str(4)},
                              {"priority", r.Int(5)},
                              {"position", r.Int(6)},
                              {"assignee", text_or_null(r, 7)},
                              {"meta", Json::parse(r.Str(8))},
                              {"created_at", r.Str(9)}});
  }
  for (const Row& r : rows("SELECT sender, recipient, body, read, read_at, read_by, created_at, "
                           "meta FROM messages WHERE run_id = ? ORDER BY seq")) {
    image["messages"].push_back({{"from", r.Str(0)},
                                 {"to", r.Str(1)},
                                 {"body", r.Str(2)},
                                 {"read", r.Int(3) != 0},
                                 {"read_at", text_or_null(r, 4)},
                                 {"read_by", text_or_null(r, 5)},
                                 {"created_at", r.Str(6)},
                                 {"meta", Json::parse(r.Str(7))}});
  }
  Result<Json> events = ListEvents(txn, {.run_id = run_id, .limit = 1 << 20});
  EXPECT_TRUE(events.ok());
  for (const Json& e : *events) {
    image["history"].push_back({{"seq", e["seq"]},
                                {"kind", e["kind"]},
                                {"time", e["time"]},
                                {"agent", e["actor"]["id"]},
                                {"summary", e["summary"]},
                                {"payload", e["payload"]},
                                {"files", e["files"]}});
  }
  // Listed newest first: the writer must order by seq itself.
  for (const Row& r : rows("SELECT seq, agent, model, step_id, session_id, cost, input_tokens, "
                           "output_tokens, reasoning_tokens, cache_read_tokens, "
                           "cache_write_tokens, created_at FROM usage WHERE run_id = ? "
                           "ORDER BY seq DESC")) {
    image["usage"].push_back({{"seq", r.Int(0)},
                              {"agent", r.Str(1)},
                              {"model", r.Str(2)},
                              {"step_id", r.Str(3)},
                              {"session_id", r.Str(4)},
                              {"cost", r.Real(5)},
                              {"tokens",
                               {{"input", r.Int(6)},
                                {"output", r.Int(7)},
                                {"reasoning", r.Int(8)},
                                {"cacheRead", r.Int(9)},
                                {"cacheWrite", r.Int(10)}}},
                              {"time", r.Str(11)}});
  }
  for (const Row& r : rows("SELECT seq, id, message, questions, work_gate, status, asked_by, "
                           "created_at FROM questions WHERE run_id = ? ORDER BY seq")) {
    image["questions"].push_back({{"seq", r.Int(0)},
                                  {"id", r.Str(1)},
                                  {"message", r.Str(2)},
                                  {"questions", Json::parse(r.Str(3))},
                                  {"work_gate", r.Int(4) != 0},
                                  {"status", r.Str(5)},
                                  {"asked_by", r.Str(6)},
                                  {"created_at", r.Str(7)}});
  }
  return image;
}

class SgaiDocumentTest : public ::testing::Test {
 protected:
  void SetUp() override { api_ = testing::OpenApi(db_); }

  Json Call(const std::string& op, const Json& in, const Actor& actor = Coordinator()) {
    return MustCall(*api_, op, in, actor);
  }
  // SgaiDocument of the run's image, as the JSON sgai.state returns.
  Json Document(const std::string& run, std::vector<std::string>* notes = nullptr) {
    return Json::parse(SgaiDocument(ImageFromStore(db_, run), notes).dump());
  }

  testing::TempDir dir_;
  std::string db_ = dir_.File("baton.db");
  std::unique_ptr<Api> api_;
};

TEST_F(SgaiDocumentTest, EqualsTheStateOperationForARunOfTheSgaiOperations) {
  std::ofstream(dir_.File("GOAL.md"))
      << "---\nflow: |\n  \"planner\" -> \"coder\"\n---\n# Goal\nShip it.\n";
  const std::string run =
      Call("sgai.start", {{"goal_file", dir_.File("GOAL.md")}})["run"]["id"].get<std::string>();
  EXPECT_EQ(Document(run), Call("sgai.state", {{"run", run}})) << "a fresh run";

  Call("sgai.update_workflow_state",
       {{"run", run}, {"status", "working"}, {"task", "plan"}, {"add_progress", "started"}});
  Call("sgai.todo_write",
       {{"run", run},
        {"todos",
         {{{"id", "c1"}, {"content", "split"}, {"status", "completed"}, {"priority", "high"}}}}});
  Call("sgai.todo_write",
       {{"run", run},
        {"project", true},
        {"todos",
         {{{"id", "p2"}, {"content", "docs"}, {"status", "pending"}, {"priority", "low"}},
          {{"id", "p1"}, {"content", "ship"}, {"status", "in_progress"}}}}});
  Call("sgai.todo_write",  // p2 comes off the list: archived, key null
       {{"run", run},
        {"project", true},
        {"todos", {{{"id", "p1"}, {"content", "ship"}, {"status", "in_progress"}}}}});
  Call("sgai.update_workflow_state", {{"run", run}, {"status", "agent-done"}});
  Call("sgai.handoff", {{"run", run}, {"to", "planner"}});
  Call("sgai.todo_write",
       {{"run", run},
        {"todos",
         {{{"id", "1"}, {"content", "outline"}, {"status", "in_progress"}},
          {{"id", "2"}, {"content", "estimate"}, {"status", "pending"}, {"priority", "high"}}}}},
       Agent("planner"));
  Call("sgai.todo_write",  // an agent who is not current: its list is not shown
       {{"run", run}, {"todos", {{{"id", "x"}, {"content", "early"}, {"status", "pending"}}}}},
       Agent("coder"));
  Call("agent.register", {{"id", "planner"}}, Agent("planner"));
  Call("mail.send", {{"to", "planner"}, {"body", "first"}, {"run", run}});
  Call("mail.send", {{"to", "planner"}, {"body", "second <b>"}, {"run", run}});
  Call("mail.inbox", Json::object(), Agent("planner"));
  Call("mail.send", {{"to", "planner"}, {"body", "third"}, {"run", run}});
  for (const auto& [agent, cost] :
       {std::pair{"planner", 0.5}, {"coordinator", 0.25}, {"planner", 1.0}}) {
    Call("sgai.usage_add", {{"run", run},
                            {"agent", agent},
                            {"model", "openai/gpt-5.5"},
                            {"session_id", std::string(agent) == "planner" ? "ses_1" : ""},
                            {"cost", cost},
                            {"tokens", {{"input", 10}, {"output", 1}, {"cacheRead", 2}}}});
  }
  Call("sgai.model_status", {{"run", run}, {"model", "openai/gpt-5.5"}, {"status", "model-done"}});
  Call("sgai.set", {{"run", run}, {"summary", "Ship it"}, {"session_id", "ses_9"}}, Human());
  Call("question.ask", {{"run", run},
                        {"message", "Which store?"},
                        {"questions", {{{"question", "DB?"}, {"choices", {"sqlite", "pg"}}}}}});

  const Json state = Call("sgai.state", {{"run", run}});
  std::vector<std::string> notes;
  const Json document = Document(run, &notes);
  EXPECT_EQ(document, state) << "document: " << document.dump(2) << "\nstate: " << state.dump(2);
  // The run had every kind of row the document shows.
  EXPECT_EQ(state["todos"].size(), 2u);
  EXPECT_EQ(state["projectTodos"].size(), 1u);
  EXPECT_EQ(state["messages"].size(), 3u);
  EXPECT_EQ(state["cost"]["byAgent"].size(), 2u);
  EXPECT_TRUE(state.contains("multiChoiceQuestion"));
  EXPECT_GE(state["progress"].size(), 2u) << "progress and a hand-off";
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("1 todo(s) of agents other than the current (planner)"),
            std::string::npos)
      << notes[0];

  // Written, read and written again, the run's document is unchanged.
  const RunImage image = ImageFromStore(db_, run);
  const FormatOutput out = MustWrite(image);
  EXPECT_EQ(Json::parse(out.text), state);
  const RunImage again = MustRead(out.text);
  EXPECT_EQ(Json::parse(SgaiDocument(again, nullptr).dump()), state);
}

TEST_F(SgaiDocumentTest, ARunCreatedWithoutSgaiMetaGetsSgaisDefaults) {
  const std::string run =
      Call("run.create", {{"profile", "sgai"}, {"meta", {{"task", "t"}}}})["id"];
  EXPECT_EQ(Document(run), Call("sgai.state", {{"run", run}}));
}

}  // namespace
}  // namespace baton
