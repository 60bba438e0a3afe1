// Issue 16: what needs the human, as one read (inbox.list) the dashboard's
// home page, the CLI and MCP share; and the reads the dashboard's run page
// is made of (run.list's filters and counts, task.list's dependencies,
// ledger.events' paging back, run.usage, mail.list).

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "test_util.h"

namespace baton::testing {
namespace {

const std::string kSinfoniaFixture =
    BATON_SOURCE_DIR "/../shared/fixtures/seeds/sinfonia/workflows/create-prd";

class InboxTest : public ::testing::Test {
 protected:
  void SetUp() override { api_ = OpenApi(dir_.File("baton.db"), false, &time_); }

  Json Call(const std::string& op, const Json& in, const Actor& who = Granted(Coordinator())) {
    return MustCall(*api_, op, in, who);
  }
  Json Inbox(const Json& in = Json::object()) { return Call("inbox.list", in, Human()); }
  // The items of "kind", in order.
  Json Items(const std::string& kind, const Json& in = Json::object()) {
    Json out = Json::array();
    const Json inbox = Inbox(in);
    for (const Json& item : inbox["items"]) {
      if (item["kind"] == kind) out.push_back(item);
    }
    return out;
  }
  std::string NewRun(const std::string& profile, const std::string& title) {
    return Call("run.create", {{"profile", profile}, {"title", title}})["id"];
  }

  TempDir dir_;
  testing::FakeTime time_;
  std::unique_ptr<Api> api_;
};

TEST_F(InboxTest, EmptyStoreNeedsNothing) {
  Json inbox = Inbox();
  EXPECT_EQ(inbox["count"], 0);
  EXPECT_TRUE(inbox["items"].empty());
}

TEST_F(InboxTest, OpenQuestionsAndTheWorkGateWaitWithTheirRunAndAsker) {
  const std::string run = NewRun("sgai", "add exports");
  Call("question.ask",
       {{"run", run},
        {"message", "the schema question"},
        {"questions", {{{"question", "Which database?"}, {"choices", {"sqlite", "postgres"}}}}}},
       Agent("coder"));
  const std::string other = NewRun("sgai", "second");
  Call("question.ask", {{"run", other}, {"work_gate", true}}, Agent("planner"));

  Json questions = Items("question");
  ASSERT_EQ(questions.size(), 2u) << Inbox().dump(2);
  EXPECT_EQ(questions[0]["run_id"], run);
  EXPECT_EQ(questions[0]["run_title"], "add exports");
  EXPECT_EQ(questions[0]["profile"], "sgai");
  EXPECT_EQ(questions[0]["from"], "coder");
  EXPECT_EQ(questions[0]["title"], "Which database?");
  EXPECT_EQ(questions[0]["body"], "the schema question");
  EXPECT_EQ(questions[0]["ref"]["question"]["questions"][0]["choices"][1], "postgres");
  EXPECT_EQ(questions[0]["actions"], Json({"answer", "dismiss"}));
  EXPECT_GE(questions[0]["waited_ms"].get<int64_t>(), 0);
  EXPECT_EQ(questions[1]["from"], "planner");
  EXPECT_EQ(questions[1]["title"].get<std::string>().rfind("Work gate: ", 0), 0u);
  EXPECT_EQ(questions[1]["ref"]["question"]["work_gate"], true);

  // Scoped to one run; answered questions leave.
  EXPECT_EQ(Items("question", {{"run", other}}).size(), 1u);
  Call("question.answer",
       {{"id", questions[0]["ref"]["question"]["id"]}, {"run", run}, {"answers", {{"sqlite"}}}},
       Human());
  ASSERT_EQ(Items("question").size(), 1u);
  EXPECT_EQ(Items("question")[0]["run_id"], other);
}

TEST_F(InboxTest, ASinfoniaStepReturnedForReviewIsAnApproval) {
  const std::string run = Call("sinfonia.start",
                               {{"workflow_dir", kSinfoniaFixture}, {"goal", "Write the PRD"}},
                               Granted(Coordinator()))["run_id"];
  EXPECT_TRUE(Items("approval").empty());
  const std::string handoff =
      Call("sinfonia.handoff", {{"run", run},
                                {"type", "return"},
                                {"source", "libretto"},
                                {"target", "maestro"},
                                {"body", "the draft is ready"}})["id"];
  Json approvals = Items("approval");
  ASSERT_EQ(approvals.size(), 1u) << Inbox().dump(2);
  EXPECT_EQ(approvals[0]["from"], "libretto");
  EXPECT_EQ(approvals[0]["body"], "the draft is ready");
  EXPECT_EQ(approvals[0]["ref"]["subject_kind"], "handoff");
  EXPECT_EQ(approvals[0]["ref"]["subject"], handoff);
  // What the page sends for "reject": the item's ref plus the reason.
  Json reject = approvals[0]["ref"];
  reject.erase("step");
  reject["note"] = "the scope section is missing";
  Call("approval.reject", reject, Human());
  EXPECT_TRUE(Items("approval").empty());
  EXPECT_EQ(Call("run.show", {{"id", run}})["status"], "blocked");
  Json artifacts = Call("sinfonia.state", {{"run", run}})["artifacts"];
  ASSERT_EQ(artifacts.size(), 2u);
  EXPECT_EQ(artifacts[1]["type"], "revision");  // the work goes back to its producer
  EXPECT_EQ(artifacts[1]["notes"], "maestro → libretto");
}

TEST_F(InboxTest, ASupervisedStigmergyProjectReadyToExecuteWaitsForTheHuman) {
  const std::string run =
      Call("stigmergy.init", {{"project_name", "demo"}, {"autonomy_mode", "supervised"}})["run_id"];
  Call("stigmergy.status", {{"run", run}, {"status", "NEEDS_PLANNING"}});
  Call("stigmergy.manifest",
       {{"run", run},
        {"epics",
         {{{"epic_id", 1}, {"title", "core"}, {"stories", {{{"story_id", "1.1"}, {"title", "a"}}}}}}}});
  Call("stigmergy.status", {{"run", run}, {"status", "READY_FOR_EXECUTION"}});
  Json approvals = Items("approval");
  ASSERT_EQ(approvals.size(), 1u) << Inbox().dump(2);
  EXPECT_EQ(approvals[0]["ref"], Json({{"run", run}, {"subject_kind", "run"}, {"subject", "execution"}}));
  Call("approval.approve", approvals[0]["ref"], Human());
  EXPECT_TRUE(Items("approval").empty());

  Call("stigmergy.status", {{"run", run}, {"status", "EXECUTION_IN_PROGRESS"}});
  Call("stigmergy.story", {{"run", run}, {"story_id", "1.1"}, {"status", "IN_PROGRESS"}});
  Call("stigmergy.story", {{"run", run}, {"story_id", "1.1"}, {"status", "AWAITING_VERIFICATION"}});
  approvals = Items("approval");
  ASSERT_EQ(approvals.size(), 1u);
  EXPECT_EQ(approvals[0]["ref"]["subject_kind"], "story");
  EXPECT_EQ(approvals[0]["ref"]["subject"], "1.1");
}

TEST_F(InboxTest, ACardInAHumanGatedColumnWaitsWithTheColumnsItMayMoveTo) {
  Call("board.create",
       {{"name", "release"},
        {"columns",
         {{{"name", "build"}, {"gate", "agent"}},
          {{"name", "review"}, {"gate", "human"}},
          {{"name", "shipped"}}}}},
       Human());
  const std::string task = Call("task.create", {{"title", "cut 1.0"}})["id"];
  Call("board.add_task", {{"board", "release"}, {"task", task}, {"column", "review"}}, Human());
  Json cards = Items("board_card");
  ASSERT_EQ(cards.size(), 1u) << Inbox().dump(2);
  EXPECT_EQ(cards[0]["title"], "cut 1.0");
  EXPECT_EQ(cards[0]["ref"]["task"], task);
  EXPECT_EQ(cards[0]["ref"]["column"], "review");
  EXPECT_EQ(cards[0]["ref"]["next_columns"], Json({"build", "shipped"}));
  Call("board.move", {{"task", task}, {"column", "shipped"}}, Human());
  EXPECT_TRUE(Items("board_card").empty());
}

TEST_F(InboxTest, AnEscalatedMessageAndAFailedMirrorWait) {
  Call("agent.register", {{"id", "coder"}}, Agent("coder"));
  const std::string id =
      Call("mail.send", {{"to", "coder"}, {"body", "rebase please"}}, Agent("lead"))["messages"][0]["id"];
  for (int i = 0; i < 2; ++i) {
    Call("mail.record_delivery",
         {{"id", id}, {"ok", false}, {"error", "tmux: no session"}, {"max_attempts", 2}},
         SystemActor());
  }
  Json messages = Items("message");
  ASSERT_EQ(messages.size(), 1u) << Inbox().dump(2);
  EXPECT_EQ(messages[0]["from"], "lead");
  EXPECT_EQ(messages[0]["body"], "rebase please");
  EXPECT_NE(messages[0]["title"].get<std::string>().find("escalated"), std::string::npos);

  const std::string run = NewRun("sgai", "mirrored");
  const std::string path = dir_.File("state.json");
  Call("mirror.bind", {{"run", run}, {"format", "sgai"}, {"path", path}}, Granted(Human()));
  Call("mirror.report",
       {{"path", path}, {"run", run}, {"format", "sgai"}, {"error", "disk full"}}, SystemActor());
  Json mirrors = Items("mirror");
  ASSERT_EQ(mirrors.size(), 1u) << Inbox().dump(2);
  EXPECT_EQ(mirrors[0]["ref"]["last_error"], "disk full");
  EXPECT_EQ(mirrors[0]["run_id"], run);
}

TEST_F(InboxTest, AnAgentSilentPastItsLeaseStillHoldingTasksWaits) {
  Call("agent.register", {{"id", "coder"}}, Agent("coder"));
  const std::string run = NewRun("baton", "work");
  const std::string task = Call("task.create", {{"run", run}, {"title", "port the parser"}})["id"];
  Json claimed = Call("task.claim", {{"run", run}, {"lease_ms", 1}}, Agent("coder"));
  ASSERT_EQ(claimed["task"]["id"], task) << claimed.dump();
  time_.Advance(20);
  Json lost = Items("lost_agent");
  ASSERT_EQ(lost.size(), 1u) << Inbox().dump(2);
  EXPECT_EQ(lost[0]["from"], "coder");
  EXPECT_EQ(lost[0]["body"], "port the parser");
  EXPECT_EQ(lost[0]["ref"]["tasks"], Json({task}));
  EXPECT_EQ(lost[0]["run_id"], run);
  // The reconciler frees the task: nothing is held any more.
  Call("agent.reconcile", {{"lost_after_ms", 0}}, Human());
  EXPECT_TRUE(Items("lost_agent").empty());
}

TEST_F(InboxTest, DismissHidesAnItemUntilItChangesAndOnlyTheHumanDismisses) {
  const std::string run = NewRun("sgai", "r");
  Call("question.ask", {{"run", run}, {"work_gate", true}}, Agent("coder"));
  const std::string item = Items("question")[0]["id"];
  Refused(*api_, "inbox.dismiss", {{"item", item}}, StatusCode::kPermissionDenied, Agent("coder"));
  Refused(*api_, "inbox.dismiss", {{"item", "question:999"}}, StatusCode::kNotFound, Human());
  const int64_t before = LedgerLength(*api_);
  Call("inbox.dismiss", {{"item", item}, {"note", "later"}}, Human());
  EXPECT_EQ(LedgerLength(*api_), before + 1);
  EXPECT_EQ(Inbox()["count"], 0);
  Json events = Call("ledger.events", {{"kind", "inbox.dismissed"}});
  ASSERT_EQ(events["events"].size(), 1u);
  EXPECT_EQ(events["events"][0]["payload"]["item"], item);
  EXPECT_EQ(events["events"][0]["run_id"], run);
  // Dismissing twice: nothing under that id needs the human any more.
  Refused(*api_, "inbox.dismiss", {{"item", item}}, StatusCode::kNotFound, Human());
  // A new question is a new item.
  Call("question.ask",
       {{"run", run}, {"questions", {{{"question", "Ship it?"}, {"choices", {"yes", "no"}}}}}},
       Agent("coder"));
  EXPECT_EQ(Inbox()["count"], 1);
}

TEST_F(InboxTest, ItemsAreOldestFirstAndCountedByKind) {
  const std::string a = NewRun("sgai", "a");
  Call("question.ask", {{"run", a}, {"work_gate", true}}, Agent("coder"));
  Call("board.create", {{"name", "b"}, {"columns", {{{"name", "hold"}, {"gate", "human"}}, {{"name", "done"}}}}},
       Human());
  const std::string task = Call("task.create", {{"title", "t"}})["id"];
  Call("board.add_task", {{"board", "b"}, {"task", task}}, Human());
  Json inbox = Inbox();
  ASSERT_EQ(inbox["count"], 2);
  EXPECT_EQ(inbox["by_kind"], Json({{"question", 1}, {"board_card", 1}}));
  EXPECT_LE(inbox["items"][0]["since"].get<std::string>(), inbox["items"][1]["since"].get<std::string>());
}

TEST_F(InboxTest, RunListFiltersByTextCountsByStatusAndSortsByActivity) {
  const std::string a = NewRun("baton", "add login page");
  const std::string b = NewRun("baton", "fix login bug");
  NewRun("sgai", "unrelated");
  Call("run.set_status", {{"id", a}, {"status", "running"}}, Human());
  Json out = Call("run.list", {{"text", "LOGIN"}, {"counts", true}, {"order", "activity"}});
  ASSERT_EQ(out["runs"].size(), 2u);
  EXPECT_EQ(out["runs"][0]["id"], a);  // changed last
  EXPECT_EQ(out["counts"], Json({{"pending", 1}, {"running", 1}}));
  // The counts ignore the status filter, the list does not.
  out = Call("run.list", {{"text", "login"}, {"status", "running"}, {"counts", true}});
  EXPECT_EQ(out["runs"].size(), 1u);
  EXPECT_EQ(out["counts"]["pending"], 1);
  // LIKE's wildcards are matched as text.
  EXPECT_TRUE(Call("run.list", {{"text", "%"}})["runs"].empty());
  EXPECT_FALSE(Call("run.list", Json::object()).contains("counts"));
}

TEST_F(InboxTest, TaskListGivesDependenciesAndLedgerEventsPagesBack) {
  const std::string run = NewRun("baton", "graph");
  const std::string a = Call("task.create", {{"run", run}, {"title", "a"}})["id"];
  const std::string b = Call("task.create", {{"run", run}, {"title", "b"}, {"depends_on", {a}}})["id"];
  Json tasks = Call("task.list", {{"run", run}, {"with_dependencies", true}})["tasks"];
  ASSERT_EQ(tasks.size(), 2u);
  for (const Json& t : tasks) {
    EXPECT_EQ(t["depends_on"], t["id"] == b ? Json({a}) : Json::array()) << t.dump();
  }
  EXPECT_FALSE(Call("task.list", {{"run", run}})["tasks"][0].contains("depends_on"));

  const int64_t head = LedgerLength(*api_);
  Json page = Call("ledger.events", {{"before", head}, {"limit", 2}})["events"];
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0]["seq"], head - 2);
  EXPECT_EQ(page[1]["seq"], head - 1);
  Call("run.add_progress", {{"id", run}, {"description", "half way"}}, Agent("coder"));
  Json mine = Call("ledger.events", {{"actor", "coder"}})["events"];
  ASSERT_EQ(mine.size(), 2u) << mine.dump();
  EXPECT_EQ(mine[0]["kind"], "agent.registered") << "its first call registered it";
  EXPECT_EQ(mine[1]["kind"], "run.progress");
}

TEST_F(InboxTest, RunUsageSumsPerAgentAndModel) {
  const std::string run = NewRun("sgai", "costly");
  for (int i = 0; i < 3; ++i) {
    Call("sgai.usage_add",
         {{"run", run}, {"agent", i < 2 ? "coder" : "reviewer"}, {"model", "m1"}, {"cost", 0.5},
          {"tokens", {{"input", 100}, {"output", 10}}}},
         Agent(i < 2 ? "coder" : "reviewer"));
  }
  Json usage = Call("run.usage", {{"run", run}});
  ASSERT_EQ(usage["rows"].size(), 2u) << usage.dump(2);
  EXPECT_EQ(usage["rows"][0]["agent"], "coder");
  EXPECT_EQ(usage["rows"][0]["steps"], 2);
  EXPECT_DOUBLE_EQ(usage["rows"][0]["cost"].get<double>(), 1.0);
  EXPECT_EQ(usage["total"]["input_tokens"], 300);
  Refused(*api_, "run.usage", {{"run", "run-000000000000"}}, StatusCode::kNotFound);
}

TEST_F(InboxTest, MailListReadsEveryAgentsMessagesWithoutMarkingThemRead) {
  Call("agent.register", {{"id", "coder"}}, Agent("coder"));
  Call("mail.send", {{"to", "coder"}, {"body", "one"}}, Agent("lead"));
  Call("mail.send", {{"to", "coder"}, {"body", "two"}}, Agent("lead"));
  Json all = Call("mail.list", {{"agent", "coder"}}, Human())["messages"];
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["body"], "one");
  EXPECT_FALSE(all[0]["read"].get<bool>());
  EXPECT_EQ(Call("mail.list", {{"agent", "coder"}, {"unread_only", true}}, Human())["messages"].size(), 2u);
  Refused(*api_, "mail.list", Json::object(), StatusCode::kPermissionDenied, Agent("coder"));
}

}  // namespace
}  // namespace baton::testing
