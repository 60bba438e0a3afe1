// Questions to the human and decisions, through Api::Call on every store
// backend: the waiting state of each profile, content-derived ids, answer
// validation, late answers, and one ledger row per decision.

#include <gtest/gtest.h>

#include <thread>

#include "engine/core/questions.h"
#include "backend_test.h"
#include "test_util.h"
#include "util/sha256.h"

namespace baton {
namespace {

using testing::Agent;
using testing::Coordinator;
using testing::Human;
using testing::LedgerLength;
using testing::MustCall;
using testing::Refused;

Json OneQuestion(const std::string& text, Json choices, bool multi = false) {
  return Json::array({{{"question", text}, {"choices", choices}, {"multiSelect", multi}}});
}

class QuestionTest : public testing::BackendTest {
 protected:
  void SetUp() override {
    api_ = OpenBackend();
  }

  std::string NewRun(const std::string& profile) {
    return MustCall(*api_, "run.create", {{"profile", profile}}, Coordinator())["id"];
  }
  std::string Status(const std::string& run) {
    return MustCall(*api_, "run.show", {{"id", run}})["status"];
  }
  void SetStatus(const std::string& run, const std::string& status) {
    MustCall(*api_, "run.set_status", {{"id", run}, {"status", status}}, Coordinator());
  }
  Json Ask(const std::string& run, const std::string& text = "Ship it?",
           Json choices = {"yes", "no"}, bool multi = false) {
    return MustCall(*api_, "question.ask",
                    {{"run", run}, {"questions", OneQuestion(text, choices, multi)}},
                    Coordinator());
  }

  std::unique_ptr<Api> api_;
};

TEST(QuestionIdTest, IsSgaisHashOfMessageAndGoJson) {
  // Written out by hand as Go's encoding/json marshals MultiChoiceQuestion:
  // field order question, choices, multiSelect; "<" and "&" escaped;
  // isWorkGate present only when true.
  const Json questions = OneQuestion("Use <b> & keep?", {"yes", "no"});
  const std::string go_json =
      "{\"questions\":[{\"question\":\"Use \\u003cb\\u003e \\u0026 keep?\","
      "\"choices\":[\"yes\",\"no\"],\"multiSelect\":false}]}";
  EXPECT_EQ(QuestionId("hello", questions, false), Sha256Hex("hello" + go_json).substr(0, 16));
  const std::string gated = go_json.substr(0, go_json.size() - 1) + ",\"isWorkGate\":true}";
  EXPECT_EQ(QuestionId("hello", questions, true), Sha256Hex("hello" + gated).substr(0, 16));
  EXPECT_EQ(QuestionId("hello", questions, false).size(), 16u);
}

TEST_P(QuestionTest, AskPutsAnSgaiRunInWaitingForHumanAndTheAnswerReturnsIt) {
  const std::string run = NewRun("sgai");
  Json q = Ask(run);
  EXPECT_EQ(q["status"], "open");
  EXPECT_EQ(q["run_status"], "waiting-for-human");
  EXPECT_EQ(q["id"], QuestionId("", OneQuestion("Ship it?", {"yes", "no"}), false));
  EXPECT_EQ(Status(run), "waiting-for-human");
  Json waiting = MustCall(*api_, "store.status", Json::object(), Human())["open_questions"];
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(waiting[0]["id"], q["id"]);
  EXPECT_EQ(waiting[0]["question"], "Ship it?");

  Json answered = MustCall(*api_, "question.answer", {{"id", q["id"]}, {"choices", {"yes"}}}, Human());
  EXPECT_EQ(answered["status"], "answered");
  EXPECT_EQ(answered["answered_by"], "alice");
  EXPECT_EQ(answered["answer"]["answers"], Json::array({Json::array({"yes"})}));
  EXPECT_EQ(answered["run_status"], "working");
  EXPECT_TRUE(MustCall(*api_, "store.status", Json::object(), Human())["open_questions"].empty());
  Json events = MustCall(*api_, "ledger.events", {{"run", run}})["events"];
  std::vector<std::string> kinds;
  for (const Json& e : events) kinds.push_back(e["kind"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"run.created", "run.status", "question.asked",
                                             "question.answered", "run.status"}));
}

TEST_P(QuestionTest, EachProfileWaitsInItsOwnStateAndReturnsWhereItWas) {
  struct Case {
    const char* profile;
    const char* start;    // status set before asking ("" = the initial one)
    const char* waiting;
    const char* after;
  };
  const Case cases[] = {
      {"sgai", "", "waiting-for-human", "working"},
      {"graph", "running", "paused", "running"},
      {"baton", "running", "paused", "running"},
      {"sinfonia", "in-progress", "blocked", "in-progress"},
      {"stigmergy", "", "HUMAN_INPUT_REQUIRED", "NEEDS_BRIEFING"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.profile);
    const std::string run = NewRun(c.profile);
    if (*c.start != '\0') SetStatus(run, c.start);
    Json q = Ask(run, std::string("Which way, ") + c.profile + "?");
    EXPECT_EQ(Status(run), c.waiting);
    EXPECT_EQ(q["run_status"], c.waiting);
    MustCall(*api_, "question.answer", {{"id", q["id"]}, {"choices", {"no"}}}, Human());
    EXPECT_EQ(Status(run), c.after);
  }
}

TEST_P(QuestionTest, AskingTheSameThingTwiceIsOneQuestion) {
  const std::string run = NewRun("sgai");
  Json first = Ask(run);
  const int64_t before = LedgerLength(*api_);
  Json again = Ask(run);
  EXPECT_EQ(again["id"], first["id"]);
  EXPECT_EQ(again["seq"], first["seq"]);
  EXPECT_TRUE(again["asked_again"].get<bool>());
  EXPECT_EQ(LedgerLength(*api_), before);
  EXPECT_EQ(MustCall(*api_, "question.list", {{"run", run}})["questions"].size(), 1u);
  // Different words are a different question.
  EXPECT_NE(Ask(run, "Ship it now?")["id"], first["id"]);
}

TEST_P(QuestionTest, InvalidAnswersAreRefusedAndChangeNothing) {
  const std::string run = NewRun("sgai");
  const std::string single = Ask(run, "Colour?", {"red", "blue"})["id"];
  const std::string multi = Ask(run, "Toppings?", {"ham", "egg", "leek"}, true)["id"];
  const int64_t before = LedgerLength(*api_);
  struct Case {
    const char* name;
    std::string id;
    Json extra;
    StatusCode code;
    Actor actor;
    const char* says;
  };
  const Case cases[] = {
      {"choice not offered", single, {{"choices", {"green"}}}, StatusCode::kInvalidArgument, Human(),
       "\"green\" is not one of the choices (red, blue)"},
      {"two choices on a single select", single, {{"choices", {"red", "blue"}}},
       StatusCode::kInvalidArgument, Human(), "takes one choice, 2 were given"},
      {"the same choice twice", multi, {{"choices", {"egg", "egg"}}}, StatusCode::kInvalidArgument,
       Human(), "chosen twice"},
      {"no choice and no text", single, Json::object(), StatusCode::kInvalidArgument, Human(),
       "choose from (red, blue)"},
      {"answers for the wrong number of parts", single,
       {{"answers", {Json::array({"red"}), Json::array({"blue"})}}}, StatusCode::kInvalidArgument,
       Human(), "2 given for 1 questions"},
      {"an agent answers", single, {{"choices", {"red"}}}, StatusCode::kPermissionDenied,
       Agent("coder"), "question.answer"},
      {"the coordinator answers", single, {{"choices", {"red"}}}, StatusCode::kPermissionDenied,
       Coordinator(), "question.answer"},
      {"unknown id", "0000000000000000", {{"choices", {"red"}}}, StatusCode::kNotFound, Human(),
       "no question with id"},
      {"choices and answers at once", single,
       {{"choices", {"red"}}, {"answers", {Json::array({"red"})}}}, StatusCode::kInvalidArgument,
       Human(), "not both"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json in = c.extra;
    in["id"] = c.id;
    baton::Status s = Refused(*api_, "question.answer", in, c.code, c.actor);
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
  }
  EXPECT_EQ(LedgerLength(*api_), before);
  EXPECT_EQ(Status(run), "waiting-for-human");
  EXPECT_EQ(MustCall(*api_, "question.list", {{"run", run}})["questions"].size(), 2u);
  // A multi-select takes several; free text alone is an answer too.
  MustCall(*api_, "question.answer", {{"id", multi}, {"choices", {"ham", "leek"}}}, Human());
  MustCall(*api_, "question.answer", {{"id", single}, {"text", "purple, actually"}}, Human());
  (void)Refused(*api_, "question.answer", {{"id", single}, {"choices", {"red"}}},
                StatusCode::kFailedPrecondition, Human());
}

TEST_P(QuestionTest, TheRunWaitsUntilItsLastOpenQuestionIsAnswered) {
  const std::string run = NewRun("sgai");
  const std::string a = Ask(run, "First?")["id"];
  const std::string b = Ask(run, "Second?")["id"];
  MustCall(*api_, "question.answer", {{"id", a}, {"choices", {"yes"}}}, Human());
  EXPECT_EQ(Status(run), "waiting-for-human");
  MustCall(*api_, "question.cancel", {{"id", b}, {"reason", "no longer needed"}}, Coordinator());
  EXPECT_EQ(Status(run), "working");
}

TEST_P(QuestionTest, ARunAlreadyHeldStaysHeldAfterTheAnswer) {
  // Paused by a human before the question: the answer does not resume it.
  const std::string run = NewRun("baton");
  SetStatus(run, "running");
  SetStatus(run, "paused");
  const std::string first = Ask(run, "One?")["id"];
  const std::string second = Ask(run, "Two?")["id"];
  MustCall(*api_, "question.answer", {{"id", first}, {"choices", {"yes"}}}, Human());
  MustCall(*api_, "question.answer", {{"id", second}, {"choices", {"yes"}}}, Human());
  EXPECT_EQ(Status(run), "paused");
  // A second question asked while the first holds the run returns it to
  // where the first found it.
  SetStatus(run, "running");
  const std::string a = Ask(run, "Three?")["id"];
  const std::string b = Ask(run, "Four?")["id"];
  MustCall(*api_, "question.answer", {{"id", a}, {"choices", {"no"}}}, Human());
  MustCall(*api_, "question.answer", {{"id", b}, {"choices", {"no"}}}, Human());
  EXPECT_EQ(Status(run), "running");
}

TEST_P(QuestionTest, TheSameWordsInTwoRunsNeedTheRunToBeNamed) {
  const std::string a = NewRun("sgai");
  const std::string b = NewRun("sgai");
  const std::string id =
      MustCall(*api_, "question.ask", {{"run", a}, {"work_gate", true}}, Coordinator())["id"];
  EXPECT_EQ(MustCall(*api_, "question.ask", {{"run", b}, {"work_gate", true}}, Coordinator())["id"],
            id);
  MustCall(*api_, "question.answer", {{"id", id}, {"run", a}, {"choices", {kWorkGateNotYet}}},
           Human());
  // Which run's outcome a waiter wants must be said...
  baton::Status s = Refused(*api_, "question.wait", {{"id", id}, {"timeout_ms", 0}},
                            StatusCode::kInvalidArgument, Coordinator());
  EXPECT_NE(s.message().find("pass run"), std::string::npos) << s.message();
  Json late = MustCall(*api_, "question.wait", {{"id", id}, {"run", a}, {"timeout_ms", 0}},
                       Coordinator());
  EXPECT_EQ(late["run_id"], a);
  EXPECT_EQ(late["status"], "answered");
  // ...but an answer goes to the only run where the question is still open.
  Json answered =
      MustCall(*api_, "question.answer", {{"id", id}, {"choices", {kWorkGateNotYet}}}, Human());
  EXPECT_EQ(answered["run_id"], b);
}

TEST_P(QuestionTest, OnlyTheAskerTakesTheLateAnswer) {
  const std::string run = NewRun("sgai");
  const std::string id = Ask(run)["id"];
  MustCall(*api_, "question.answer", {{"id", id}, {"choices", {"yes"}}}, Human());
  Json looked = MustCall(*api_, "question.wait", {{"id", id}, {"timeout_ms", 0}}, Human());
  EXPECT_EQ(looked["status"], "answered");
  EXPECT_TRUE(looked["delivered_at"].is_null());
  Json taken = MustCall(*api_, "question.wait", {{"id", id}, {"timeout_ms", 0}}, Coordinator());
  EXPECT_FALSE(taken["delivered_at"].is_null());
}

TEST_P(QuestionTest, AFinishedRunCannotWait) {
  const std::string run = NewRun("baton");
  SetStatus(run, "running");
  SetStatus(run, "completed");
  const int64_t before = LedgerLength(*api_);
  baton::Status s = Refused(*api_, "question.ask",
                            {{"run", run}, {"questions", OneQuestion("Again?", {"y", "n"})}},
                            StatusCode::kFailedPrecondition, Coordinator());
  EXPECT_NE(s.message().find("completed"), std::string::npos) << s.message();
  EXPECT_EQ(LedgerLength(*api_), before);
  // Bad shapes name the field.
  s = Refused(*api_, "question.ask",
              {{"run", run}, {"questions", OneQuestion("Pick", {"a", "a"})}},
              StatusCode::kInvalidArgument, Coordinator());
  EXPECT_NE(s.message().find("questions[0].choices[1]: duplicate choice"), std::string::npos)
      << s.message();
  s = Refused(*api_, "question.ask", {{"run", run}, {"questions", Json::array()}},
              StatusCode::kInvalidArgument, Coordinator());
  EXPECT_NE(s.message().find("questions"), std::string::npos) << s.message();
}

TEST_P(QuestionTest, AWaiterThatTimedOutGetsTheLateAnswerNextTime) {
  const std::string run = NewRun("sgai");
  const std::string id = Ask(run)["id"];
  Json gave_up = MustCall(*api_, "question.wait", {{"id", id}, {"timeout_ms", 50}}, Coordinator());
  EXPECT_TRUE(gave_up["timed_out"].get<bool>());
  EXPECT_EQ(gave_up["status"], "open");
  MustCall(*api_, "question.answer", {{"id", id}, {"choices", {"no"}}}, Human());
  Json late = MustCall(*api_, "question.wait", {{"id", id}, {"timeout_ms", 0}}, Coordinator());
  EXPECT_FALSE(late["timed_out"].get<bool>());
  EXPECT_EQ(late["answer"]["answers"][0], Json::array({"no"}));
  EXPECT_FALSE(late["delivered_at"].is_null());
}

TEST_P(QuestionTest, AskingAgainAfterGivingUpReturnsTheLateAnswer) {
  // sgai: "an answer that arrives after an MCP timeout is kept and returned
  // by the next ask".
  const std::string run = NewRun("sgai");
  const std::string id = Ask(run)["id"];
  MustCall(*api_, "question.answer", {{"id", id}, {"choices", {"yes"}}}, Human());
  Json again = Ask(run);
  EXPECT_EQ(again["id"], id);
  EXPECT_EQ(again["status"], "answered");
  EXPECT_EQ(again["answer"]["answers"][0], Json::array({"yes"}));
  EXPECT_EQ(Status(run), "working");
  // Once delivered, the same words are a new question.
  Json fresh = Ask(run);
  EXPECT_EQ(fresh["status"], "open");
  EXPECT_NE(fresh["seq"], again["seq"]);
}

TEST_P(QuestionTest, AWaiterWakesWhenTheHumanAnswers) {
  const std::string run = NewRun("sgai");
  const std::string id = Ask(run)["id"];
  std::thread human([&] {
    EXPECT_TRUE(testing::Eventually([&] { return api_->waiters() > 0; }));  // answer a waiter
    MustCall(*api_, "question.answer", {{"id", id}, {"choices", {"yes"}}}, Human());
  });
  Json got = MustCall(*api_, "question.wait", {{"id", id}, {"timeout_ms", 20000}}, Coordinator());
  human.join();
  EXPECT_FALSE(got["timed_out"].get<bool>());
  EXPECT_EQ(got["status"], "answered");
}

TEST_P(QuestionTest, SgaiWorkGateApprovalStartsBuilding) {
  const std::string run = NewRun("sgai");
  Json q = MustCall(*api_, "question.ask", {{"run", run}, {"work_gate", true}}, Coordinator());
  EXPECT_EQ(q["questions"][0]["question"], kWorkGateQuestion);
  EXPECT_EQ(q["message"], kWorkGateQuestion);
  EXPECT_TRUE(q["work_gate"].get<bool>());
  MustCall(*api_, "question.answer", {{"id", q["id"]}, {"choices", {kWorkGateApproval}}}, Human());
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", run}})["meta"]["interactionMode"], "building");
}

TEST_P(QuestionTest, BlocksMustNameTasks) {
  const std::string run = NewRun("baton");
  SetStatus(run, "running");
  const std::string task =
      MustCall(*api_, "task.create", {{"run", run}, {"title", "deploy"}}, Coordinator())["id"];
  Json q = MustCall(*api_, "question.ask",
                    {{"run", run}, {"questions", OneQuestion("Deploy?", {"y", "n"})},
                     {"blocks", {task}}},
                    Coordinator());
  EXPECT_EQ(q["blocks"], Json::array({task}));
  baton::Status s = Refused(*api_, "question.ask",
                            {{"run", run}, {"questions", OneQuestion("Other?", {"y", "n"})},
                             {"blocks", {"task-nope"}}},
                            StatusCode::kInvalidArgument, Coordinator());
  EXPECT_NE(s.message().find("blocks[0]"), std::string::npos) << s.message();
}

TEST_P(QuestionTest, ADecisionIsOneLedgerRow) {
  const std::string run = NewRun("baton");
  const std::string task =
      MustCall(*api_, "task.create", {{"run", run}, {"title", "review"}}, Coordinator())["id"];
  const int64_t before = LedgerLength(*api_);
  // A subject that does not exist is refused, naming it.
  baton::Status missing = Refused(*api_, "approval.approve",
                                  {{"run", run}, {"subject_kind", "task"}, {"subject", "t-nope"}},
                                  StatusCode::kNotFound, Human());
  EXPECT_NE(missing.message().find("subject"), std::string::npos) << missing.message();
  Json d = MustCall(*api_, "approval.approve",
                    {{"run", run}, {"subject_kind", "task"}, {"subject", task}, {"note", "lgtm"}},
                    Human());
  EXPECT_EQ(d["decision"], "approve");
  EXPECT_EQ(d["reviewer"], "alice");
  EXPECT_EQ(LedgerLength(*api_), before + 1);
  MustCall(*api_, "approval.reject", {{"run", run}, {"subject_kind", "task"}, {"subject", task},
                                      {"note", "tests fail"}},
           Human());
  Json list = MustCall(*api_, "approval.list", {{"run", run}})["decisions"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1]["decision"], "reject");
  EXPECT_EQ(list[1]["note"], "tests fail");
  Json events = MustCall(*api_, "ledger.events", {{"run", run}, {"kind", "decision"}})["events"];
  EXPECT_EQ(events.size(), 2u);
  (void)Refused(*api_, "approval.approve", {{"run", run}, {"subject", "execution"}},
                StatusCode::kPermissionDenied, Agent("coder"));
}

BATON_INSTANTIATE_BACKENDS(QuestionTest);

}  // namespace
}  // namespace baton
