// The Stigmergy profile (issue #4 item 4) through Api::Call: the supervised
// gate, LAW V escalation, epics following their stories, saul's dispatch
// order and the history that is the ledger. docs/profiles/stigmergy.md.

#include <gtest/gtest.h>

#include <functional>

#include "test_util.h"
#include "util/json_util.h"

namespace baton {
namespace {

using testing::Agent;
using testing::Coordinator;
using testing::Human;
using testing::LedgerLength;
using testing::MustCall;

std::string SharedDir() {
  if (const char* env = std::getenv("BATON_SHARED_DIR")) return env;
  return std::string(BATON_SOURCE_DIR) + "/../shared";
}

class StigmergyTest : public ::testing::Test {
 protected:
  void SetUp() override { api_ = testing::OpenApi(dir_.File("baton.db")); }

  Json Call(const std::string& op, Json input, const Actor& actor = Coordinator()) {
    return MustCall(*api_, op, input, actor);
  }
  Json On(const std::string& run, const std::string& op, Json input = Json::object(),
          const Actor& actor = Coordinator()) {
    input["run"] = run;
    return Call(op, input, actor);
  }
  void ExpectRefused(const std::string& op, const Json& input, StatusCode code,
                     const Actor& actor = Coordinator()) {
    (void)Refused(op, input, code, actor);
  }
  Status Refused(const std::string& op, const Json& input, StatusCode code,
                 const Actor& actor = Coordinator()) {
    return testing::Refused(*api_, op, input, code, actor);
  }

  std::string Init(const std::string& mode = "supervised") {
    return Call("stigmergy.init", {{"project_name", "demo"}, {"autonomy_mode", mode}})["run_id"];
  }
  // Epic 1 {1.1, 1.2} and epic 2 {2.1}, planned: READY_FOR_EXECUTION.
  void Plan(const std::string& run) {
    On(run, "stigmergy.status", {{"status", "NEEDS_PLANNING"}});
    On(run, "stigmergy.manifest",
       {{"epics",
         {{{"epic_id", 1},
           {"title", "core"},
           {"stories",
            {{{"story_id", "1.1"}, {"title", "a"}}, {{"story_id", "1.2"}, {"title", "b"}}}}},
          {{"epic_id", 2},
           {"title", "ui"},
           {"stories", {{{"story_id", "2.1"}, {"title", "c"}}}}}}}});
    On(run, "stigmergy.status", {{"status", "READY_FOR_EXECUTION"}});
  }
  void Approve(const std::string& run, const Actor& actor = Human()) {
    On(run, "approval.approve", {{"subject_kind", "run"}, {"subject", "execution"}}, actor);
  }
  // Planned, approved (when supervised) and executing.
  std::string Executing(const std::string& mode = "supervised") {
    const std::string run = Init(mode);
    Plan(run);
    if (mode == "supervised") Approve(run);
    On(run, "stigmergy.status", {{"status", "EXECUTION_IN_PROGRESS"}});
    return run;
  }
  Json Story(const std::string& run, const std::string& id, const std::string& status) {
    return On(run, "stigmergy.story", {{"story_id", id}, {"status", status}});
  }
  void Finish(const std::string& run, const std::string& id) {
    Story(run, id, "IN_PROGRESS");
    Story(run, id, "AWAITING_VERIFICATION");
    Story(run, id, "COMPLETE");
  }
  Json Fail(const std::string& run, const std::string& id) {
    return On(run, "stigmergy.story_failed", {{"story_id", id}, {"reason", "tests fail"}});
  }
  Json State(const std::string& run) { return On(run, "stigmergy.state"); }
  std::string ProjectStatus(const std::string& run) { return State(run)["project_status"]; }
  Json Epic(const std::string& run, int n) {
    return State(run)["project_manifest"]["epics"][n - 1];
  }

  testing::TempDir dir_;
  std::unique_ptr<Api> api_;
};

using StigmergyProfile = StigmergyTest;
using StigmergyDispatcher = StigmergyTest;

TEST_F(StigmergyProfile, InitMatchesTheV2Template) {
  Result<Json> tmpl =
      ParseJson(*ReadFile(SharedDir() + "/fixtures/seeds/stigmergy/state-tmpl.v2.0.json"), "tmpl");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  const std::string run = Call("stigmergy.init", Json::object())["run_id"];
  Json state = State(run);
  for (const char* key : {"schema_version", "project_name", "autonomy_mode", "project_status",
                          "system_signal", "project_manifest", "issue_log"}) {
    EXPECT_EQ(state[key], (*tmpl)[key]) << key;
  }
  ASSERT_EQ(state["history"].size(), 1u);
  EXPECT_EQ(state["history"][0]["signal"], "INIT");
  EXPECT_EQ(state["history"][0]["agent_id"], "coord");
  EXPECT_EQ(state["history"][0]["summary"], "Project initialized.");
}

TEST_F(StigmergyProfile, SupervisedExecutionNeedsHumanApproval) {
  const std::string run = Init("supervised");
  Plan(run);
  const int64_t before = LedgerLength(*api_);
  Status s = Refused("stigmergy.status", {{"run", run}, {"status", "EXECUTION_IN_PROGRESS"}},
                     StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("supervised: a human must approve execution (baton approval approve"),
            std::string::npos)
      << s.ToString();
  // Starting a story would start execution: the same gate.
  ExpectRefused("stigmergy.story", {{"run", run}, {"story_id", "1.1"}, {"status", "IN_PROGRESS"}},
                StatusCode::kFailedPrecondition);
  // Nor can the generic run.set_status go around it: the machine reserves the
  // transition to the profile's operations.
  s = Refused("run.set_status", {{"id", run}, {"status", "EXECUTION_IN_PROGRESS"}},
              StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("stigmergy.status"), std::string::npos) << s.ToString();
  EXPECT_EQ(LedgerLength(*api_), before);
  EXPECT_EQ(ProjectStatus(run), "READY_FOR_EXECUTION");
  Approve(run);
  EXPECT_EQ(State(run)["system_signal"], "MILESTONE_APPROVED");
  Json started = Story(run, "1.1", "IN_PROGRESS");
  EXPECT_EQ(started["project_status"], "EXECUTION_IN_PROGRESS");
}

TEST_F(StigmergyProfile, AutonomousExecutionStartsWithoutApproval) {
  const std::string run = Init("autonomous");
  Plan(run);
  On(run, "stigmergy.status", {{"status", "EXECUTION_IN_PROGRESS"}});
  EXPECT_EQ(ProjectStatus(run), "EXECUTION_IN_PROGRESS");
}

TEST_F(StigmergyProfile, AgentApprovalDoesNotOpenTheGate) {
  const std::string run = Init("supervised");
  Plan(run);
  const Json approve = {{"run", run}, {"subject_kind", "run"}, {"subject", "execution"}};
  ExpectRefused("approval.approve", approve, StatusCode::kPermissionDenied, Agent("bob"));
  Status s = Refused("approval.approve", approve, StatusCode::kPermissionDenied, Coordinator());
  EXPECT_NE(s.message().find("only a human"), std::string::npos) << s.ToString();
  ExpectRefused("stigmergy.status", {{"run", run}, {"status", "EXECUTION_IN_PROGRESS"}},
                StatusCode::kFailedPrecondition);
}

TEST_F(StigmergyProfile, RejectionHaltsExecutionAndKeepsTheGateClosed) {
  const std::string run = Executing("supervised");
  On(run, "approval.reject", {{"subject_kind", "run"}, {"subject", "execution"}}, Human());
  EXPECT_EQ(ProjectStatus(run), "EXECUTION_HALTED");
  ExpectRefused("stigmergy.status", {{"run", run}, {"status", "EXECUTION_IN_PROGRESS"}},
                StatusCode::kFailedPrecondition);
  Approve(run);
  On(run, "stigmergy.status", {{"status", "EXECUTION_IN_PROGRESS"}});
  EXPECT_EQ(ProjectStatus(run), "EXECUTION_IN_PROGRESS");
}

TEST_F(StigmergyProfile, ReplanningRevokesTheApproval) {
  const std::string run = Init("supervised");
  Plan(run);
  Approve(run);
  On(run, "stigmergy.status", {{"status", "NEEDS_PLANNING"}});
  On(run, "stigmergy.status", {{"status", "READY_FOR_EXECUTION"}});
  Status s = Refused("stigmergy.status", {{"run", run}, {"status", "EXECUTION_IN_PROGRESS"}},
                     StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("predates the replanning"), std::string::npos) << s.ToString();
}

TEST_F(StigmergyProfile, CoordinatorCannotMakeTheProjectAutonomous) {
  const std::string run = Init("supervised");
  ExpectRefused("stigmergy.set_autonomy", {{"run", run}, {"mode", "autonomous"}},
                StatusCode::kPermissionDenied, Coordinator());
  On(run, "stigmergy.set_autonomy", {{"mode", "autonomous"}}, Human());
  On(run, "stigmergy.set_autonomy", {{"mode", "supervised"}}, Coordinator());
  EXPECT_EQ(State(run)["autonomy_mode"], "supervised");
}

TEST_F(StigmergyProfile, FirstFailureDoesNotEscalate) {
  const std::string run = Executing();
  Story(run, "1.1", "IN_PROGRESS");
  Story(run, "1.2", "IN_PROGRESS");
  Json out = Fail(run, "1.1");
  EXPECT_EQ(out["story"]["attempts"], 1);
  EXPECT_TRUE(out["issue_id"].is_null());
  Fail(run, "1.2");  // another story's first failure: still no escalation
  Json state = State(run);
  EXPECT_EQ(state["project_status"], "EXECUTION_IN_PROGRESS");
  EXPECT_EQ(state["system_signal"], "STORY_CREATED");
  EXPECT_TRUE(state["issue_log"].empty());
  EXPECT_EQ(state["project_manifest"]["epics"][0]["stories"][0]["status"], "FAILED");
}

TEST_F(StigmergyProfile, SecondFailureOfSameStoryEscalates) {
  const std::string run = Executing();
  Story(run, "1.1", "IN_PROGRESS");
  const int64_t first = Fail(run, "1.1")["history_seq"];
  Story(run, "1.1", "IN_PROGRESS");  // the retry LAW V allows
  Json out = Fail(run, "1.1");
  EXPECT_EQ(out["story"]["attempts"], 2);
  EXPECT_EQ(out["issue_id"], "ISS-1");
  Json state = State(run);
  EXPECT_EQ(state["system_signal"], "ESCALATION_REQUIRED");
  EXPECT_EQ(state["project_status"], "EXECUTION_HALTED");
  ASSERT_EQ(state["issue_log"].size(), 1u);
  const Json& issue = state["issue_log"][0];
  EXPECT_EQ(issue["issue_id"], "ISS-1");
  EXPECT_EQ(issue["status"], "OPEN");
  EXPECT_EQ(issue["history_ref"], Json::array({first, out["history_seq"]}));
  // The refs are history entries: the two failures.
  for (const Json& ref : issue["history_ref"]) {
    bool found = false;
    for (const Json& h : state["history"]) {
      if (h["seq"] == ref) found = h["summary"].get<std::string>().find("story 1.1 failed") == 0;
    }
    EXPECT_TRUE(found) << ref;
  }
  // Execution resumes only once the issue is resolved.
  ExpectRefused("stigmergy.status", {{"run", run}, {"status", "EXECUTION_IN_PROGRESS"}},
                StatusCode::kFailedPrecondition);
  On(run, "stigmergy.resolve_issue", {{"issue_id", "ISS-1"}, {"resolution", "fixed"}});
  On(run, "stigmergy.status", {{"status", "EXECUTION_IN_PROGRESS"}});
  EXPECT_EQ(State(run)["issue_log"][0]["status"], "RESOLVED");
}

TEST_F(StigmergyProfile, GenericStatusChangesCannotGoAroundLawV) {
  const std::string run = Executing("autonomous");
  Story(run, "1.1", "IN_PROGRESS");
  std::string story_id;
  const Json stories = Call("task.list", {{"run", run}, {"kind", "story"}})["tasks"];
  for (const Json& t : stories) {
    if (t["key"] == "1.1") story_id = t["id"];
  }
  ASSERT_FALSE(story_id.empty());
  const int64_t before = LedgerLength(*api_);
  Status s = Refused("task.set_status", {{"id", story_id}, {"status", "FAILED"}},
                     StatusCode::kFailedPrecondition, Agent("dexter"));
  EXPECT_NE(s.message().find("stigmergy.story_failed"), std::string::npos) << s.ToString();
  EXPECT_EQ(LedgerLength(*api_), before);
}

TEST_F(StigmergyProfile, DecisionsWaitWhileAQuestionIsOpen) {
  // The answer returns the project to where the question found it, so a
  // decision taken meanwhile would be undone: it waits for the answer.
  const std::string run = Executing("supervised");
  const std::string q =
      Call("question.ask",
           {{"run", run}, {"questions", {{{"question", "Go on?"}, {"choices", {"yes", "no"}}}}}})["id"];
  const int64_t before = LedgerLength(*api_);
  Status s = Refused("approval.reject", {{"run", run}, {"subject_kind", "run"}, {"subject", "execution"}},
                     StatusCode::kFailedPrecondition, Human());
  EXPECT_NE(s.message().find(q), std::string::npos) << s.ToString();
  EXPECT_EQ(LedgerLength(*api_), before);
  Call("question.answer", {{"id", q}, {"choices", {"yes"}}}, Human());
  EXPECT_EQ(ProjectStatus(run), "EXECUTION_IN_PROGRESS");
  Call("approval.reject", {{"run", run}, {"subject_kind", "run"}, {"subject", "execution"}}, Human());
  EXPECT_EQ(ProjectStatus(run), "EXECUTION_HALTED");
}

TEST_F(StigmergyProfile, EpicCompletesWhenAllStoriesDo) {
  const std::string run = Executing();
  Story(run, "1.1", "IN_PROGRESS");
  EXPECT_EQ(Epic(run, 1)["status"], "IN_PROGRESS");
  EXPECT_EQ(Epic(run, 2)["status"], "PENDING");
  Story(run, "1.1", "AWAITING_VERIFICATION");
  Json done = Story(run, "1.1", "COMPLETE");
  EXPECT_EQ(done["epic"]["status"], "IN_PROGRESS");
  EXPECT_EQ(done["system_signal"], "STORY_COMPLETE");
  Story(run, "1.2", "IN_PROGRESS");
  Story(run, "1.2", "AWAITING_VERIFICATION");
  done = Story(run, "1.2", "COMPLETE");
  EXPECT_EQ(done["epic"]["status"], "COMPLETE");
  EXPECT_EQ(done["system_signal"], "EPIC_COMPLETE");
  EXPECT_EQ(Epic(run, 1)["status"], "COMPLETE");
  // A complete epic takes no new story.
  Status s = Refused("stigmergy.manifest",
                     {{"run", run},
                      {"epics",
                       {{{"epic_id", 1},
                         {"title", "core"},
                         {"stories", {{{"story_id", "1.3"}, {"title", "late"}}}}}}}},
                     StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("epics[0].stories[0]"), std::string::npos) << s.ToString();
}

TEST_F(StigmergyProfile, StoryVerificationByApproval) {
  const std::string run = Executing();
  Story(run, "2.1", "IN_PROGRESS");
  Story(run, "2.1", "AWAITING_VERIFICATION");
  On(run, "approval.reject", {{"subject_kind", "story"}, {"subject", "2.1"}}, Human());
  EXPECT_EQ(Epic(run, 2)["stories"][0]["status"], "IN_PROGRESS");
  Story(run, "2.1", "AWAITING_VERIFICATION");
  On(run, "approval.approve", {{"subject_kind", "story"}, {"subject", "2.1"}}, Coordinator());
  EXPECT_EQ(Epic(run, 2)["status"], "COMPLETE");
}

TEST_F(StigmergyProfile, ProjectCompleteRequiresAllEpics) {
  const std::string run = Executing();
  Finish(run, "1.1");
  Finish(run, "1.2");
  Status s = Refused("stigmergy.status", {{"run", run}, {"status", "PROJECT_COMPLETE"}},
                     StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("epic 2 is PENDING"), std::string::npos) << s.ToString();
  Finish(run, "2.1");
  On(run, "stigmergy.status", {{"status", "PROJECT_COMPLETE"}});
  EXPECT_EQ(ProjectStatus(run), "PROJECT_COMPLETE");
}

TEST_F(StigmergyProfile, BadManifestIsRefusedNamingTheField) {
  const std::string run = Init();
  Plan(run);
  auto manifest = [&](Json epics) { return Json{{"run", run}, {"epics", epics}}; };
  const struct {
    Json epics;
    const char* field;
  } cases[] = {
      {{{{"epic_id", 3}, {"title", "x"}}, {{"epic_id", 3}, {"title", "y"}}}, "epics[1].epic_id"},
      {{{{"epic_id", 1},
         {"title", "core"},
         {"stories", {{{"story_id", "2.1"}, {"title", "wrong epic"}}}}}},
       "epics[0].stories[0].story_id"},
      {{{{"epic_id", 1},
         {"title", "core"},
         {"stories",
          {{{"story_id", "1.1"}, {"title", "a"}}, {{"story_id", "1.1"}, {"title", "b"}}}}}},
       "epics[0].stories[1].story_id"},
  };
  for (const auto& c : cases) {
    Status s = Refused("stigmergy.manifest", manifest(c.epics), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(c.field), std::string::npos)
        << c.epics.dump() << ": " << s.ToString();
  }
  // The same manifest again changes no item.
  Json again = On(run, "stigmergy.manifest",
                  {{"epics",
                    {{{"epic_id", 2},
                      {"title", "ui"},
                      {"stories", {{{"story_id", "2.1"}, {"title", "c"}}}}}}}});
  EXPECT_TRUE(again["changes"].empty()) << again.dump();
  EXPECT_EQ(State(run)["project_manifest"]["epics"].size(), 2u);
}

TEST_F(StigmergyProfile, UnknownSignalIsRefusedListingTheVocabulary) {
  const std::string run = Init();
  Status s =
      Refused("stigmergy.signal", {{"run", run}, {"signal", "DONE"}}, StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("INIT, STORY_CREATED, STORY_COMPLETE, EPIC_COMPLETE"),
            std::string::npos)
      << s.ToString();
  ExpectRefused("stigmergy.issue", {{"run", run}, {"summary", "x"}, {"history_ref", {999}}},
                StatusCode::kInvalidArgument);
  ExpectRefused("stigmergy.story", {{"run", run}, {"story_id", "9.9"}, {"status", "IN_PROGRESS"}},
                StatusCode::kNotFound);
  const std::string sgai = Call("run.create", {{"profile", "sgai"}})["id"];
  ExpectRefused("stigmergy.signal", {{"run", sgai}, {"signal", "INIT"}},
                StatusCode::kInvalidArgument);
}

TEST_F(StigmergyDispatcher, HistoryIsTheLedger) {
  const std::string run = Executing("autonomous");
  Story(run, "1.1", "IN_PROGRESS");
  On(run, "stigmergy.signal",
     {{"signal", "STORY_COMPLETE"},
      {"summary", "olivia verified"},
      {"files_modified", {"src/a.cc"}}},
     Agent("olivia"));
  Json state = State(run);
  Json events = Call("ledger.events", {{"run", run}, {"kind", "stigmergy.signal"}});
  ASSERT_TRUE(events.contains("events")) << events.dump();
  const Json& ev = events["events"];
  ASSERT_EQ(state["history"].size(), ev.size());
  for (size_t i = 0; i < ev.size(); ++i) {
    const Json& h = state["history"][i];
    EXPECT_EQ(h["seq"], ev[i]["seq"]) << i;
    EXPECT_EQ(h["timestamp"], ev[i]["time"]) << i;
    EXPECT_EQ(h["summary"], ev[i]["summary"]) << i;
    EXPECT_EQ(h["files_modified"], ev[i]["files"]) << i;
  }
  const Json& last = state["history"].back();
  EXPECT_EQ(last["agent_id"], "olivia");
  EXPECT_EQ(last["signal"], "STORY_COMPLETE");
  EXPECT_EQ(last["files_modified"], Json::array({"src/a.cc"}));
  // Nothing else stores a history: the run holds only the profile fields.
  Json shown = Call("run.show", {{"id", run}});
  EXPECT_FALSE(shown["meta"].contains("history"));
  EXPECT_FALSE(shown["context"].contains("history"));
}

// saul.md's rules, one case per rule, each set up so that the rules above it
// do not match while (where possible) rules below it would.
TEST_F(StigmergyDispatcher, RuleOrderFirstMatchWins) {
  struct Case {
    const char* name;
    std::function<std::string()> setup;  // returns the run
    int rule;
    Json agent;
    const char* reason;
  };
  auto issue_everywhere = [&] {  // an OPEN issue beats briefing, signals, all
    const std::string run = Init("autonomous");
    On(run, "stigmergy.signal", {{"signal", "EPIC_COMPLETE"}});
    On(run, "stigmergy.issue", {{"summary", "flaky build"}});
    return run;
  };
  auto ready = [&] {
    const std::string run = Init("autonomous");
    Plan(run);
    On(run, "stigmergy.signal", {{"signal", "STORY_CREATED"}});
    return run;
  };
  auto created = [&](const std::string& mode) {
    return [&, mode] {
      const std::string run = Executing(mode);
      Story(run, "1.1", "IN_PROGRESS");
      return run;
    };
  };
  auto epic_done = [&] {
    const std::string run = Executing("autonomous");
    Finish(run, "1.1");
    Finish(run, "1.2");
    return run;
  };
  auto escalation = [&] {
    const std::string run = Executing("autonomous");
    On(run, "stigmergy.signal", {{"signal", "ESCALATION_REQUIRED"}});
    return run;
  };
  auto escalation_logged = [&] {
    const std::string run = escalation();
    const std::string id = On(run, "stigmergy.issue", {{"summary", "x"}})["issue_id"];
    On(run, "stigmergy.resolve_issue", {{"issue_id", id}});
    return run;
  };
  auto all_done = [&] {
    const std::string run = epic_done();
    Finish(run, "2.1");
    On(run, "stigmergy.signal", {{"signal", "STORY_COMPLETE"}});
    return run;
  };
  auto story_done = [&] {
    const std::string run = Executing("autonomous");
    Finish(run, "1.1");
    return run;
  };
  const Case cases[] = {
      {"open issue", issue_everywhere, 1, "@dexter", "issue ISS-1 is OPEN"},
      {"needs briefing", [&] { return Init("autonomous"); }, 2, "@mary", "NEEDS_BRIEFING"},
      {"needs planning",
       [&] {
         const std::string run = Init("autonomous");
         On(run, "stigmergy.status", {{"status", "NEEDS_PLANNING"}});
         return run;
       },
       3, "@john", "NEEDS_PLANNING"},
      {"ready", ready, 4, "@bob", "next story 1.1 is PENDING"},
      {"story created, autonomous", created("autonomous"), 5, "@olivia", "STORY_CREATED"},
      {"story created, supervised", created("supervised"), 9, nullptr, "supervised"},
      {"epic complete", epic_done, 6, "@metis", "EPIC_COMPLETE"},
      {"escalation", escalation, 7, "@dexter", "ESCALATION_REQUIRED"},
      {"escalation already logged", escalation_logged, 9, nullptr, "no rule matched"},
      {"all epics complete", all_done, 8, nullptr, "all 2 epics are COMPLETE"},
      {"otherwise", story_done, 9, nullptr, "no rule matched"},
      {"a question waits for the human",
       [&] {
         const std::string run = issue_everywhere();
         Call("question.ask",
              {{"run", run},
               {"questions", {{{"question", "Which database?"}, {"choices", {"sqlite", "pg"}}}}}});
         return run;
       },
       9, nullptr, "a question to the human is open"},
  };
  for (const Case& c : cases) {
    const std::string run = c.setup();
    const int64_t before = LedgerLength(*api_);
    Json next = On(run, "stigmergy.next");
    EXPECT_EQ(LedgerLength(*api_), before) << c.name << ": next must not write";
    EXPECT_EQ(next["rule"], c.rule) << c.name << ": " << next.dump();
    EXPECT_EQ(next["agent"], c.agent) << c.name << ": " << next.dump();
    EXPECT_NE(next["reason"].get<std::string>().find(c.reason), std::string::npos)
        << c.name << ": " << next.dump();
  }
}

}  // namespace
}  // namespace baton
