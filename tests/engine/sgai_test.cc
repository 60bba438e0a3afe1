// The sgai profile through Api::Call: GOAL.md in, sgai-RICH's
// update_workflow_state rules and completion gates, todo lists, hand-offs,
// usage and the state document in .sgai/state.json's shape.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_util.h"

namespace baton {
namespace {

using testing::Agent;
using testing::LedgerLength;

// This suite's human and coordinator hold every grant: completing a run whose
// GOAL.md has a completion gate runs the script ("commands"), and each
// GOAL.md lives in a temporary folder of its own ("paths";
// docs/security-paths.md).
using testing::Granted;
Actor Human() { return Granted(testing::Human()); }
Actor Coordinator() { return Granted(testing::Coordinator()); }

Json MustCall(Api& api, const std::string& op, const Json& input, const Actor& actor = Human()) {
  return testing::MustCall(api, op, input, actor);
}

Status Refused(Api& api, const std::string& op, const Json& input, StatusCode code,
               const Actor& actor = Human()) {
  return testing::Refused(api, op, input, code, actor);
}

constexpr char kPlannerCoder[] = "\"planner\" -> \"coder\"\n";

std::string Goal(const std::string& flow, const std::string& body, const std::string& extra = "") {
  std::string text = "---\nflow: |\n";
  std::istringstream lines(flow);
  for (std::string line; std::getline(lines, line);) text += "  " + line + "\n";
  return text + extra + "---\n" + body;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

class SgaiProfile : public ::testing::Test {
 protected:
  void SetUp() override { api_ = testing::OpenApi(dir_.File("baton.db")); }

  // Writes GOAL.md and starts (or resumes) from it.
  Json Start(const std::string& goal, Json extra = Json::object()) {
    Write(dir_.File("GOAL.md"), goal);
    extra["goal_file"] = dir_.File("GOAL.md");
    return MustCall(*api_, "sgai.start", extra);
  }
  std::string StartRun(const std::string& goal) {
    return Start(goal)["run"]["id"].get<std::string>();
  }
  Json Update(const std::string& run, const std::string& status, const Actor& actor,
              Json extra = Json::object()) {
    extra["run"] = run;
    extra["status"] = status;
    return MustCall(*api_, "sgai.update_workflow_state", extra, actor);
  }
  Json State(const std::string& run) { return MustCall(*api_, "sgai.state", {{"run", run}}); }
  std::string Status(const std::string& run) {
    return MustCall(*api_, "run.show", {{"id", run}})["status"];
  }
  Json Todo(const std::string& id, const std::string& status) {
    return {{"id", id}, {"content", "do " + id}, {"status", status}, {"priority", "high"}};
  }
  // A vector, not a Json: "{Todo(...)}" with one element is an array of one
  // for GCC but a copy of the object for Clang.
  void WriteTodos(const std::string& run, const Actor& actor, const std::vector<Json>& todos,
                  bool project = false) {
    Json in = {{"run", run}, {"todos", Json(todos)}};
    if (project) in["project"] = true;
    MustCall(*api_, "sgai.todo_write", in, actor);
  }
  Json Events(const std::string& run, const std::string& kind) {
    return MustCall(*api_, "ledger.events", {{"run", run}, {"kind", kind}})["events"];
  }

  testing::TempDir dir_;
  std::unique_ptr<Api> api_;
};

TEST_F(SgaiProfile, NonCoordinatorCompleteIsDowngradedToAgentDone) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  Json out = Update(run, "complete", Agent("planner"), {{"task", "planning"}});
  EXPECT_EQ(out["status"], "agent-done");
  EXPECT_TRUE(out["downgraded"].get<bool>());
  EXPECT_EQ(Status(run), "agent-done");
  EXPECT_EQ(State(run)["task"], "") << "the task is cleared on agent-done";
  Json events = Events(run, "sgai.workflow_state");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["actor"]["id"], "planner") << "the change is the caller's";
  EXPECT_TRUE(events[0]["payload"]["downgraded"].get<bool>());
}

// sgai.update_workflow_state changes the run as its caller in a context of
// its own: the run's seed-file mirror must still be rewritten after it.
TEST_F(SgaiProfile, AWorkflowStateChangeRewritesTheRunsMirror) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  const std::string path = dir_.File("mirror-state.json");
  MustCall(*api_, "mirror.bind", {{"run", run}, {"format", "sgai"}, {"path", path}},
           testing::Granted(testing::Human()));
  Update(run, "agent-done", Agent("planner"), {{"task", "planning"}});
  std::ifstream in(path);
  const Json mirrored = Json::parse(in);
  EXPECT_EQ(mirrored["status"], "agent-done") << mirrored.dump(2);
}

TEST_F(SgaiProfile, CoordinatorCompletesWhenNoGateBlocks) {
  const std::string run =
      StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n", "completionGateScript: \"exit 0\"\n"));
  Json out = Update(run, "complete", Coordinator());
  EXPECT_EQ(out["status"], "complete");
  EXPECT_TRUE(out["reverted"].is_null());
  EXPECT_TRUE(out["gate_script"]["ok"].get<bool>());
  EXPECT_EQ(Status(run), "complete");
  // complete is terminal: a later update is refused and changes nothing.
  EXPECT_FALSE(Refused(*api_, "sgai.update_workflow_state", {{"run", run}, {"status", "working"}},
                       StatusCode::kFailedPrecondition, Coordinator())
                   .ok());
}

TEST_F(SgaiProfile, AgentDoneRefusedWhileCallerHasOpenTodos) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  WriteTodos(run, Agent("planner"), {Todo("1", "in_progress"), Todo("2", "completed")});
  const size_t progress = State(run)["progress"].size();
  baton::Status refused =
      Refused(*api_, "sgai.update_workflow_state",
              {{"run", run}, {"status", "agent-done"}, {"task", "x"}, {"add_progress", "done"}},
              StatusCode::kFailedPrecondition, Agent("planner"));
  EXPECT_NE(refused.message().find("do 1"), std::string::npos) << refused.ToString();
  EXPECT_EQ(refused.message().find("do 2"), std::string::npos) << "completed todos do not block";
  // A downgraded complete meets the same check.
  EXPECT_FALSE(Refused(*api_, "sgai.update_workflow_state", {{"run", run}, {"status", "complete"}},
                       StatusCode::kFailedPrecondition, Agent("planner"))
                   .ok());
  EXPECT_EQ(Status(run), "working");
  EXPECT_EQ(State(run)["progress"].size(), progress);
  // The coordinator is exempt from the check.
  WriteTodos(run, Coordinator(), {Todo("c1", "pending")});
  EXPECT_EQ(Update(run, "agent-done", Coordinator())["status"], "agent-done");
  Update(run, "working", Coordinator());
  WriteTodos(run, Agent("planner"), {Todo("1", "cancelled"), Todo("2", "completed")});
  EXPECT_EQ(Update(run, "agent-done", Agent("planner"))["status"], "agent-done");
}

TEST_F(SgaiProfile, CompletionGateOpenProjectTodosReverts) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  EXPECT_FALSE(Refused(*api_, "sgai.todo_write",
                       {{"run", run}, {"todos", Json::array({Todo("p1", "pending")})}, {"project", true}},
                       StatusCode::kPermissionDenied, Agent("planner"))
                   .ok());
  WriteTodos(run, Coordinator(), {Todo("p1", "pending")}, /*project=*/true);
  Json out = Update(run, "complete", Coordinator(), {{"add_progress", "all done"}});
  EXPECT_EQ(out["status"], "working");
  EXPECT_EQ(out["reverted"]["gate"], "open_todos");
  EXPECT_EQ(Status(run), "working");
  Json state = State(run);
  ASSERT_EQ(state["messages"].size(), 1u);
  EXPECT_EQ(state["messages"][0]["fromAgent"], "environment");
  EXPECT_EQ(state["messages"][0]["toAgent"], "coordinator");
  EXPECT_NE(state["messages"][0]["body"].get<std::string>().find("1 pending TODO"),
            std::string::npos);
  EXPECT_EQ(state["progress"].back()["description"], "all done");
  Json gates = Events(run, "sgai.gate");
  ASSERT_EQ(gates.size(), 1u);
  EXPECT_EQ(gates[0]["payload"]["gate"], "open_todos");
  // Closing the project todo lets complete stand.
  WriteTodos(run, Coordinator(), {Todo("p1", "completed")}, /*project=*/true);
  EXPECT_EQ(State(run)["projectTodos"][0]["status"], "completed");
  // The environment message is still unread: sgai redirects to its recipient.
  out = Update(run, "complete", Coordinator());
  EXPECT_EQ(out["reverted"]["gate"], "unread_messages");
  EXPECT_EQ(out["reverted"]["redirect_to"], "coordinator");
}

TEST_F(SgaiProfile, FailingGateScriptRevertsToWorkingWithMessage) {
  const std::string run =
      StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n",
                    "completionGateScript: \"pwd; echo gate-broke >&2; exit 1\"\n"));
  Json out = Update(run, "complete", Coordinator());
  EXPECT_EQ(out["status"], "working");
  EXPECT_EQ(out["reverted"]["gate"], "completion_gate_script");
  EXPECT_EQ(out["gate_script"]["exit_code"], 1);
  EXPECT_EQ(Status(run), "working");
  Json messages = State(run)["messages"];
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["toAgent"], "coordinator");
  const std::string body = messages[0]["body"];
  EXPECT_NE(body.find("gate-broke"), std::string::npos) << body;
  EXPECT_NE(body.find(dir_.path()), std::string::npos) << "runs in the workdir: " << body;
  EXPECT_EQ(Events(run, "sgai.gate")[0]["payload"]["gate"], "completion_gate_script");
}

TEST_F(SgaiProfile, RetrospectiveNotVisitedRevertsToAgentDone) {
  const std::string run =
      StartRun(Goal("\"planner\" -> \"coder\" -> \"retrospective\"\n", "# Goal\nShip it.\n"));
  Json out = Update(run, "complete", Coordinator());
  EXPECT_EQ(out["status"], "agent-done");
  EXPECT_EQ(out["reverted"]["gate"], "retrospective");
  Json messages = State(run)["messages"];
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["toAgent"], "retrospective");
  // The runner follows the message; entering retrospective switches the mode.
  Json next = MustCall(*api_, "sgai.next_agent", {{"run", run}});
  EXPECT_EQ(next["agent"], "retrospective");
  MustCall(*api_, "sgai.handoff", {{"run", run}}, Coordinator());
  Json state = State(run);
  EXPECT_EQ(state["interactionMode"], "retrospective");
  EXPECT_EQ(state["visitCounts"]["retrospective"], 1);
  // With retrospective: no, the gate does not apply.
  testing::TempDir other;
  Write(other.File("GOAL.md"),
        Goal("\"coder\" -> \"retrospective\"\n", "# Other\n", "retrospective: \"no\"\n"));
  const std::string run2 =
      MustCall(*api_, "sgai.start", {{"goal_file", other.File("GOAL.md")}})["run"]["id"];
  EXPECT_EQ(Update(run2, "complete", Coordinator())["status"], "complete");
}

TEST_F(SgaiProfile, StatusIgnoredWhileWaitingButTaskAndProgressApply) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  MustCall(*api_, "question.ask",
           {{"run", run},
            {"message", "Which database?"},
            {"questions",
             {{{"question", "Which?"}, {"choices", {"sqlite", "pg"}}, {"multiSelect", false}}}}},
           Coordinator());
  ASSERT_EQ(Status(run), "waiting-for-human");
  Json out = Update(run, "agent-done", Agent("planner"),
                    {{"task", "reading the schema"}, {"add_progress", "read the docs"}});
  EXPECT_EQ(out["status"], "waiting-for-human");
  EXPECT_TRUE(out["status_preserved"].get<bool>());
  EXPECT_EQ(Status(run), "waiting-for-human");
  Json state = State(run);
  EXPECT_EQ(state["task"], "reading the schema");
  EXPECT_EQ(state["progress"].back()["agent"], "planner");
  EXPECT_EQ(state["progress"].back()["description"], "read the docs");
  EXPECT_EQ(state["humanMessage"], "Which database?");
  EXPECT_EQ(state["multiChoiceQuestion"]["questions"][0]["question"], "Which?");
}

TEST_F(SgaiProfile, ResumeWhenGoalBodyUnchanged) {
  const std::string body = "# Goal\nShip it.\n";
  Json first = Start(Goal(kPlannerCoder, body));
  EXPECT_FALSE(first["resumed"].get<bool>());
  const std::string run = first["run"]["id"];
  Update(run, "agent-done", Agent("planner"));
  // Front matter edits do not restart the workflow; they apply on resume.
  Json again = Start(Goal(kPlannerCoder, body, "models:\n  coder: \"m/x\"\n"));
  EXPECT_TRUE(again["resumed"].get<bool>()) << again.dump();
  EXPECT_EQ(again["run"]["id"], run);
  EXPECT_NE(again["reason"].get<std::string>().find("unchanged"), std::string::npos);
  EXPECT_EQ(again["run"]["meta"]["models"]["coder"], "m/x");
  EXPECT_EQ(Status(run), "agent-done");
  EXPECT_EQ(MustCall(*api_, "run.list", {{"profile", "sgai"}})["runs"].size(), 1u);
}

// `baton ledger archive` takes a finished run's sgai.started event with the
// rest of its events: the next start still finds it (by its workdir) and
// carries its interaction mode over.
TEST_F(SgaiProfile, AStartAfterTheOldRunWasArchivedStillFollowsIt) {
  const std::string goal =
      Goal(kPlannerCoder, "# Goal\nShip it.\n", "completionGateScript: \"exit 0\"\n");
  const std::string old = StartRun(goal);
  MustCall(*api_, "sgai.set", {{"run", old}, {"interaction_mode", "building"}}, Human());
  EXPECT_EQ(Update(old, "complete", Coordinator())["status"], "complete");
  const Json archived =
      MustCall(*api_, "ledger.archive", {{"before", "1000000"}, {"file", dir_.File("a.jsonl.gz")}});
  ASSERT_GT(archived["events"].get<int64_t>(), 0);
  EXPECT_TRUE(MustCall(*api_, "ledger.events", {{"kind", "sgai.started"}})["events"].empty());
  const Json next = Start(goal);
  EXPECT_FALSE(next["resumed"].get<bool>());
  EXPECT_EQ(next["previous_run"], old) << next.dump();
  EXPECT_EQ(State(next["run"]["id"])["interactionMode"], "building");
}

TEST_F(SgaiProfile, FreshWhenGoalBodyChanged) {
  const std::string old = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  MustCall(*api_, "sgai.set", {{"run", old}, {"interaction_mode", "building"}}, Human());
  MustCall(*api_, "sgai.handoff", {{"run", old}}, Coordinator());
  const Json old_before = MustCall(*api_, "run.show", {{"id", old}});
  Json fresh = Start(Goal(kPlannerCoder, "# Goal\nShip it, and the docs.\n"));
  EXPECT_FALSE(fresh["resumed"].get<bool>());
  EXPECT_NE(fresh["reason"].get<std::string>().find("changed"), std::string::npos);
  EXPECT_EQ(fresh["previous_run"], old);
  const std::string run = fresh["run"]["id"];
  EXPECT_NE(run, old);
  Json state = State(run);
  EXPECT_EQ(state["interactionMode"], "building") << "only interactionMode carries over";
  EXPECT_EQ(state["visitCounts"], Json({{"coordinator", 1}, {"planner", 0}, {"coder", 0}}));
  EXPECT_EQ(state["currentAgent"], "coordinator");
  // The old run is kept as it was.
  const Json old_after = MustCall(*api_, "run.show", {{"id", old}});
  EXPECT_EQ(old_after["meta"], old_before["meta"]);
  EXPECT_EQ(old_after["status"], old_before["status"]);
  // fresh forces a new run even when the body is unchanged; an auto start is
  // self-drive, as sgai's start computes it.
  Json forced = Start(Goal(kPlannerCoder, "# Goal\nShip it, and the docs.\n"),
                      {{"fresh", true}, {"auto", true}});
  EXPECT_FALSE(forced["resumed"].get<bool>());
  EXPECT_EQ(forced["previous_run"], run);
  EXPECT_EQ(forced["run"]["meta"]["interactionMode"], "self-drive");
  // continuousModePrompt makes it continuous whatever else was asked.
  Json continuous = Start(
      Goal(kPlannerCoder, "# Goal\nShip it, and the docs.\n", "continuousModePrompt: \"watch\"\n"),
      {{"interaction_mode", "building"}});
  EXPECT_TRUE(continuous["resumed"].get<bool>());
  EXPECT_EQ(continuous["run"]["meta"]["interactionMode"], "continuous");
}

TEST_F(SgaiProfile, HandoffCountsVisitsAndSequence) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  Update(run, "agent-done", Coordinator());
  Json h = MustCall(*api_, "sgai.handoff", {{"run", run}, {"to", "planner"}}, Coordinator());
  EXPECT_EQ(h["to"], "planner");
  EXPECT_EQ(h["reason"], "explicit");
  EXPECT_EQ(Status(run), "working");
  WriteTodos(run, Agent("planner"), {Todo("1", "pending")});
  // The same agent again: one more visit, no new sequence entry, todos kept.
  MustCall(*api_, "sgai.handoff", {{"run", run}, {"to", "planner"}}, Coordinator());
  Json state = State(run);
  EXPECT_EQ(state["visitCounts"]["planner"], 2);
  ASSERT_EQ(state["agentSequence"].size(), 2u);
  EXPECT_FALSE(state["agentSequence"][0]["isCurrent"].get<bool>());
  EXPECT_TRUE(state["agentSequence"][1]["isCurrent"].get<bool>());
  EXPECT_EQ(state["todos"].size(), 1u);
  MustCall(*api_, "sgai.model_status",
           {{"run", run}, {"model", "m/a"}, {"status", "model-working"}}, Agent("planner"));
  EXPECT_EQ(State(run)["currentModel"], "planner:m/a");
  // Another agent: the planner's todos are reset, model statuses cleared.
  h = MustCall(*api_, "sgai.handoff", {{"run", run}, {"to", "coder"}}, Coordinator());
  EXPECT_EQ(h["to"], "coder");
  state = State(run);
  EXPECT_EQ(state["currentAgent"], "coder");
  EXPECT_EQ(state["agentSequence"].size(), 3u);
  EXPECT_EQ(state["agentSequence"][2]["agent"], "coder");
  EXPECT_EQ(state["modelStatuses"], Json::object());
  EXPECT_EQ(state["currentModel"], "");
  EXPECT_TRUE(
      MustCall(*api_, "sgai.todo_read", {{"run", run}, {"agent", "planner"}})["todos"].empty());
  EXPECT_EQ(Events(run, "sgai.handoff").size(), 3u);
  // Terminal agent hands back to the coordinator.
  EXPECT_EQ(MustCall(*api_, "sgai.next_agent", {{"run", run}})["reason"],
            "terminal_to_coordinator");
  EXPECT_FALSE(Refused(*api_, "sgai.handoff", {{"run", run}, {"to", "nobody"}},
                       StatusCode::kInvalidArgument, Coordinator())
                   .ok());
  EXPECT_FALSE(
      Refused(*api_, "sgai.handoff", {{"run", run}}, StatusCode::kPermissionDenied, Agent("coder"))
          .ok());
}

TEST_F(SgaiProfile, HandoffWithoutUnreadMailFollowsTheFlow) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  // The coordinator hands to the flow's first entry, that agent to its
  // successor, the terminal agent back to the coordinator.
  Json next = MustCall(*api_, "sgai.next_agent", {{"run", run}});
  EXPECT_EQ(next["agent"], "planner");
  EXPECT_EQ(next["reason"], "coordinator_to_entry");
  Update(run, "agent-done", Coordinator());
  EXPECT_EQ(MustCall(*api_, "sgai.handoff", {{"run", run}}, Coordinator())["to"], "planner");
  Update(run, "agent-done", Agent("planner"));
  next = MustCall(*api_, "sgai.next_agent", {{"run", run}});
  EXPECT_EQ(next["agent"], "coder");
  EXPECT_EQ(next["reason"], "dag_successor");
  EXPECT_EQ(MustCall(*api_, "sgai.handoff", {{"run", run}}, Coordinator())["to"], "coder");
  next = MustCall(*api_, "sgai.next_agent", {{"run", run}});
  EXPECT_EQ(next["agent"], "coordinator");
  EXPECT_EQ(next["reason"], "terminal_to_coordinator");
}

TEST_F(SgaiProfile, NextAgentIsFirstUnreadRecipient) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  // Without unread mail the flow decides: the coordinator hands to the entry.
  Json next = MustCall(*api_, "sgai.next_agent", {{"run", run}});
  EXPECT_EQ(next["reason"], "coordinator_to_entry");
  EXPECT_EQ(next["agent"], "planner");
  MustCall(*api_, "agent.register", {{"id", "coder"}}, Agent("coder"));
  MustCall(*api_, "mail.send", {{"to", "coder"}, {"body", "fix the tests"}, {"run", run}},
           Coordinator());
  const int64_t before = LedgerLength(*api_);
  next = MustCall(*api_, "sgai.next_agent", {{"run", run}});
  EXPECT_EQ(next["agent"], "coder");
  EXPECT_EQ(next["reason"], "unread_message");
  EXPECT_EQ(LedgerLength(*api_), before) << "next_agent is read-only";
  Json messages = State(run)["messages"];
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["id"], 1);
  EXPECT_FALSE(messages[0]["read"].get<bool>());
}

TEST_F(SgaiProfile, UsageRollsUpByAgent) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  EXPECT_TRUE(State(run)["cost"]["byAgent"].is_null());
  auto add = [&](const std::string& agent, double cost, int64_t input) {
    MustCall(*api_, "sgai.usage_add",
             {{"run", run},
              {"agent", agent},
              {"model", "m/a"},
              {"step_id", "s" + agent},
              {"cost", cost},
              {"tokens", {{"input", input}, {"output", 1}, {"cacheRead", 2}}}},
             Coordinator());
  };
  add("planner", 0.5, 10);
  add("planner", 0.25, 5);
  add("coder", 1.0, 100);
  Json cost = State(run)["cost"];
  EXPECT_DOUBLE_EQ(cost["totalCost"].get<double>(), 1.75);
  EXPECT_EQ(cost["totalTokens"]["input"], 115);
  EXPECT_EQ(cost["totalTokens"]["output"], 3);
  EXPECT_EQ(cost["totalTokens"]["cacheRead"], 6);
  ASSERT_EQ(cost["byAgent"].size(), 2u);
  EXPECT_EQ(cost["byAgent"][0]["agent"], "planner");
  EXPECT_DOUBLE_EQ(cost["byAgent"][0]["cost"].get<double>(), 0.75);
  EXPECT_EQ(cost["byAgent"][0]["steps"].size(), 2u);
  EXPECT_EQ(cost["byAgent"][1]["tokens"]["input"], 100);
  EXPECT_FALSE(Refused(*api_, "sgai.usage_add", {{"run", run}, {"model", "m"}, {"cost", -1}},
                       StatusCode::kInvalidArgument, Coordinator())
                   .ok());
}

// Every key of sgai's golden state.json is in sgai.state with the same JSON type.
TEST_F(SgaiProfile, StateDocumentHasGoldenShape) {
  std::ifstream in(BATON_SOURCE_DIR "/../shared/fixtures/seeds/sgai/golden_state.json");
  ASSERT_TRUE(in) << "golden_state.json missing";
  const Json golden = Json::parse(in);
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  MustCall(*api_, "run.add_progress", {{"id", run}, {"description", "Step 1 completed"}},
           Coordinator());
  MustCall(*api_, "agent.register", {{"id", "planner"}}, Agent("planner"));
  MustCall(*api_, "mail.send", {{"to", "planner"}, {"body", "hi"}, {"run", run}}, Coordinator());
  MustCall(*api_, "question.ask",
           {{"run", run},
            {"message", "Golden file test message"},
            {"questions", {{{"question", "Go?"}, {"choices", {"yes", "no"}}}}}},
           Coordinator());
  const Json state = State(run);
  auto same_type = [](const Json& a, const Json& b) {
    return a.type_name() == std::string(b.type_name()) || (a.is_number() && b.is_number());
  };
  for (auto it = golden.begin(); it != golden.end(); ++it) {
    ASSERT_TRUE(state.contains(it.key())) << it.key();
    if (it.key() == "cost") continue;  // byAgent is null until usage is recorded
    EXPECT_TRUE(same_type(state[it.key()], it.value())) << it.key() << ": " << state[it.key()];
  }
  for (const char* list : {"progress", "messages", "agentSequence"}) {
    ASSERT_FALSE(state[list].empty()) << list;
    for (auto it = golden[list][0].begin(); it != golden[list][0].end(); ++it) {
      EXPECT_TRUE(state[list][0].contains(it.key())) << list << "." << it.key();
    }
  }
  for (auto it = golden["cost"].begin(); it != golden["cost"].end(); ++it) {
    EXPECT_TRUE(state["cost"].contains(it.key())) << "cost." << it.key();
  }
  EXPECT_EQ(state["cost"]["totalTokens"].size(), golden["cost"]["totalTokens"].size());
  EXPECT_EQ(state["goalChecksum"].get<std::string>().size(), 64u);
  for (const char* key : {"todos", "projectTodos", "interactionMode", "modelStatuses",
                          "currentModel", "summary", "summaryManual", "sessionId"}) {
    EXPECT_TRUE(state.contains(key)) << key;
  }
}

TEST_F(SgaiProfile, InternalApplyIsNotForCallers) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  const Json in = {{"run", run},
                   {"caller", {{"id", "coordinator"}, {"role", "coordinator"}}},
                   {"status", "complete"}};
  for (const Actor& actor : {Coordinator(), Agent("planner"), Human()}) {
    EXPECT_FALSE(
        Refused(*api_, "sgai.apply_workflow_state", in, StatusCode::kPermissionDenied, actor).ok());
  }
  EXPECT_EQ(Status(run), "working");
}

// sgai's GOAL.md since mid-2026 lists `agents:` and one `model:` instead of
// a flow (issue 18): the same run as the flow naming those agents, the model
// the coordinator's.
TEST_F(SgaiProfile, AgentsAndModelFrontMatterGiveTheRunOfTheEquivalentFlow) {
  Result<std::string> goal = ReadFile(BATON_SOURCE_DIR "/tests/data/sgai/goal-agents-model.md");
  ASSERT_TRUE(goal.ok()) << goal.status().message();
  Json listed = Start(*goal);
  testing::TempDir other;
  Write(other.File("GOAL.md"), "---\nflow: |\n  \"go\"\n  \"react\"\n---\n# Goal\n");
  Json flowed = MustCall(*api_, "sgai.start", {{"goal_file", other.File("GOAL.md")}});
  EXPECT_EQ(listed["run"]["meta"]["flow"], flowed["run"]["meta"]["flow"]);
  EXPECT_EQ(listed["run"]["meta"]["flow"]["agents"], Json({"coordinator", "go", "react"}));
  EXPECT_EQ(listed["run"]["meta"]["visitCounts"], flowed["run"]["meta"]["visitCounts"]);
  EXPECT_EQ(listed["run"]["meta"]["models"],
            Json({{"coordinator", "anthropic/claude-opus-4-6 (max)"}}));

  for (const char* bad : {"---\nagents: go\n---\n# Goal\n", "---\nagents:\n  - [a]\n---\n# Goal\n",
                          "---\nmodel:\n  - a\n---\n# Goal\n"}) {
    Write(dir_.File("GOAL.md"), bad);
    baton::Status s = Refused(*api_, "sgai.start", {{"goal_file", dir_.File("GOAL.md")}},
                              StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(std::string(bad).find("model") != std::string::npos ? "model:" : "agents:"),
              std::string::npos)
        << s.message();
  }
}

TEST_F(SgaiProfile, FlowFileResolvedInsideGoalFolderOnly) {
  Write(dir_.File("flow.dot"), "\"a\" -> \"b\"\n");
  Json started = Start("---\nflow: \"@flow.dot\"\n---\n# Goal\n");
  EXPECT_EQ(started["run"]["meta"]["flow"]["agents"], Json({"coordinator", "a", "b"}));
  Write(dir_.File("GOAL.md"), "---\nflow: \"@../escape.dot\"\n---\n# Goal\n");
  EXPECT_FALSE(Refused(*api_, "sgai.start", {{"goal_file", dir_.File("GOAL.md")}},
                       StatusCode::kInvalidArgument)
                   .ok());
  EXPECT_FALSE(Refused(*api_, "sgai.start", {{"goal_file", dir_.File("missing.md")}},
                       StatusCode::kInvalidArgument)
                   .ok());
}

TEST_F(SgaiProfile, AnAgentNamedCoordinatorIsStillAnAgent) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  Json out = Update(run, "complete", Actor{"coordinator", "agent"});
  EXPECT_TRUE(out["downgraded"].get<bool>());
  EXPECT_EQ(Status(run), "agent-done");
}

TEST_F(SgaiProfile, AStaleGateResultRunsTheScriptAgain) {
  // A result for another script (say, before a resume edited the front
  // matter) is not accepted: the internal operation asks for a new run.
  const std::string run = StartRun(
      Goal(kPlannerCoder, "# Goal\nShip it.\n", "completionGateScript: \"exit 1\"\n"));
  Json in = {{"run", run},
             {"status", "complete"},
             {"caller", {{"id", "coord"}, {"role", "coordinator"}}},
             {"gate", {{"ok", true}, {"exit_code", 0}, {"output", ""}, {"script", "exit 0"},
                       {"workdir", dir_.path()}}}};
  Json out = MustCall(*api_, "sgai.apply_workflow_state", in, Actor{"baton", "admin"});
  EXPECT_TRUE(out["gate_needed"].get<bool>());
  EXPECT_EQ(Status(run), "working");
  // Through the real operation the script runs and fails: the run reverts.
  out = Update(run, "complete", Coordinator());
  EXPECT_EQ(out["reverted"]["gate"], "completion_gate_script");
  EXPECT_EQ(Status(run), "working");
}

TEST_F(SgaiProfile, CompletingACompleteRunRunsNoGateAgain) {
  Write(dir_.File("count.sh"), "echo x >> " + dir_.File("count") + "\n");
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n",
                                        "completionGateScript: \"sh count.sh\"\n"));
  EXPECT_EQ(Update(run, "complete", Coordinator())["status"], "complete");
  const int64_t before = LedgerLength(*api_);
  EXPECT_EQ(Update(run, "complete", Coordinator())["status"], "complete");
  EXPECT_EQ(LedgerLength(*api_), before);
  std::ifstream count(dir_.File("count"));
  std::string all((std::istreambuf_iterator<char>(count)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "x\n");
}

TEST_F(SgaiProfile, FrontMatterOfTheWrongTypeIsRefused) {
  struct Case {
    const char* extra;
    const char* says;
  };
  const Case cases[] = {
      {"completionGateScript:\n  - make test\n", "completionGateScript: must be a single value"},
      {"retrospective: [1]\n", "retrospective: must be a single value"},
      {"models: 5\n", "models: must map agents"},
      {"models:\n  coder: {a: 1}\n", "models.coder: must be a model or a list"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.extra);
    Write(dir_.File("GOAL.md"), Goal(kPlannerCoder, "# Goal\n", c.extra));
    const int64_t before = LedgerLength(*api_);
    baton::Status s = Refused(*api_, "sgai.start", {{"goal_file", dir_.File("GOAL.md")}},
                              StatusCode::kInvalidArgument, Coordinator());
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
    EXPECT_EQ(LedgerLength(*api_), before);
  }
  Write(dir_.File("GOAL.md"), "---\nflow:\n  a: 1\n---\n# Goal\n");
  baton::Status s = Refused(*api_, "sgai.start", {{"goal_file", dir_.File("GOAL.md")}},
                            StatusCode::kInvalidArgument, Coordinator());
  EXPECT_NE(s.message().find("flow: must be a DOT string"), std::string::npos) << s.message();
  // A goal file that is not a regular file is refused, not read forever.
  s = Refused(*api_, "sgai.start", {{"goal_file", "/dev/zero"}}, StatusCode::kInvalidArgument,
              Coordinator());
  EXPECT_NE(s.message().find("not a regular file"), std::string::npos) << s.message();
}

TEST_F(SgaiProfile, TodoWriteTakesAnyStatusAsTheWholeListIsReplaced) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  WriteTodos(run, Agent("planner"), {Todo("1", "cancelled"), Todo("2", "completed")});
  WriteTodos(run, Agent("planner"), {Todo("1", "completed"), Todo("2", "cancelled")});
  Json todos = MustCall(*api_, "sgai.todo_read", {{"run", run}, {"agent", "planner"}})["todos"];
  ASSERT_EQ(todos.size(), 2u);
  EXPECT_EQ(todos[0]["status"], "completed");
  EXPECT_EQ(todos[1]["status"], "cancelled");
}

TEST_F(SgaiProfile, OnlyAHumanChangesTheInteractionMode) {
  const std::string run = StartRun(Goal(kPlannerCoder, "# Goal\nShip it.\n"));
  (void)Refused(*api_, "sgai.set", {{"run", run}, {"interaction_mode", "building"}},
                StatusCode::kPermissionDenied, Coordinator());
  MustCall(*api_, "sgai.set", {{"run", run}, {"interaction_mode", "building"}}, Human());
  EXPECT_EQ(State(run)["interactionMode"], "building");
}

TEST_F(SgaiProfile, StoredMetaOfTheWrongTypeIsAnErrorNotACrash) {
  const std::string run =
      MustCall(*api_, "run.create", {{"profile", "sgai"}, {"meta", {{"currentAgent", 5}}}},
               Coordinator())["id"];
  const int64_t before = LedgerLength(*api_);
  Result<Json> r = api_->Call("sgai.handoff", {{"run", run}, {"to", "planner"}}, Coordinator());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(LedgerLength(*api_), before);
  EXPECT_TRUE(api_->Call("run.show", {{"id", run}}, Coordinator()).ok());
}

}  // namespace
}  // namespace baton
