// The core operations through Api::Call, on every store backend: an in-memory
// SQLite store and a SQLite file (PostgreSQL joins the list with its issue).

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "backend_test.h"
#include "pg_test_db.h"
#include "test_util.h"

namespace baton {
namespace {

using testing::Agent;
using testing::Coordinator;
using testing::Human;
using testing::LedgerLength;
using testing::MustCall;

class ApiTest : public testing::BackendTest {
 protected:
  void SetUp() override {
    api_ = OpenBackend();
  }

  Json NewRun(const std::string& profile) {
    return MustCall(*api_, "run.create", {{"profile", profile}, {"title", "t"}});
  }

  // Calls "op" expecting "code"; checks that the ledger did not grow.
  void ExpectRefused(const std::string& op, const Json& input, StatusCode code,
                     const Actor& actor = Human()) {
    (void)Refused(op, input, code, actor);
  }

  // As ExpectRefused, returning the status for further checks.
  Status Refused(const std::string& op, const Json& input, StatusCode code,
                 const Actor& actor = Human()) {
    return testing::Refused(*api_, op, input, code, actor);
  }

  std::unique_ptr<Api> api_;
};

TEST_P(ApiTest, CreatesRunInItsProfilesInitialState) {
  const struct {
    const char* profile;
    const char* machine;
    const char* initial;
  } cases[] = {{"baton", "baton.run", "pending"},
               {"sgai", "sgai.run", "working"},
               {"graph", "graph.run", "pending"},
               {"stigmergy", "stigmergy.project", "NEEDS_BRIEFING"},
               {"sinfonia", "sinfonia.workflow", "created"}};
  for (const auto& c : cases) {
    Json run = NewRun(c.profile);
    EXPECT_EQ(run["machine"], c.machine) << c.profile;
    EXPECT_EQ(run["status"], c.initial) << c.profile;
    EXPECT_EQ(run["version"], 1) << c.profile;
  }
}

TEST_P(ApiTest, SetStatusFollowsTheMachineAndRecordsTheLedger) {
  Json run = NewRun("sinfonia");
  const std::string id = run["id"];
  Json moved = MustCall(*api_, "run.set_status", {{"id", id}, {"status", "in-progress"}});
  EXPECT_EQ(moved["status"], "in-progress");
  EXPECT_EQ(moved["version"], 2);
  MustCall(*api_, "run.set_status", {{"id", id}, {"status", "complete"}, {"reason", "done"}});
  Json events = MustCall(*api_, "ledger.events", {{"run", id}, {"kind", "run.status"}})["events"];
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1]["payload"]["from"], "in-progress");
  EXPECT_EQ(events[1]["payload"]["to"], "complete");
  EXPECT_EQ(events[1]["actor"]["id"], "alice");
  EXPECT_EQ(events[1]["actor"]["role"], "human");
}

TEST_P(ApiTest, IllegalTransitionNamesStatesAndChangesNothing) {
  Json run = NewRun("sinfonia");
  const std::string id = run["id"];
  MustCall(*api_, "run.set_status", {{"id", id}, {"status", "in-progress"}});
  MustCall(*api_, "run.set_status", {{"id", id}, {"status", "complete"}});
  Status s = Refused("run.set_status", {{"id", id}, {"status", "in-progress"}},
                           StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("complete"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("in-progress"), std::string::npos) << s.message();
  EXPECT_EQ(s.details()["allowed"], Json::array({"complete"}));
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", id}})["version"], 3);
}

TEST_P(ApiTest, TypoInStatusListsAllowedStates) {
  Json run = NewRun("sgai");
  Status s = Refused("run.set_status", {{"id", run["id"]}, {"status", "done"}},
                           StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("agent-done"), std::string::npos) << s.message();
}

TEST_P(ApiTest, ProfileGatedTransitionIsReservedToTheProfilesOperation) {
  // sgai's complete passes the profile's gates, so run.set_status may not
  // take it, not even for the coordinator; the refusal says which op may.
  Json run = NewRun("sgai");
  Status s = Refused("run.set_status", {{"id", run["id"]}, {"status", "complete"}},
                     StatusCode::kFailedPrecondition, Coordinator());
  EXPECT_NE(s.message().find("sgai.apply_workflow_state"), std::string::npos) << s.message();
  Json agent = MustCall(*api_, "sgai.update_workflow_state",
                        {{"run", run["id"]}, {"status", "complete"}}, Agent());
  EXPECT_EQ(agent["status"], "agent-done");
  Json done = MustCall(*api_, "sgai.update_workflow_state",
                       {{"run", run["id"]}, {"status", "complete"}}, Coordinator());
  EXPECT_EQ(done["status"], "complete");
}

TEST_P(ApiTest, OnlyAskOperationsEnterWaitingForHuman) {
  Json run = NewRun("sgai");
  ExpectRefused("run.set_status", {{"id", run["id"]}, {"status", "waiting-for-human"}},
                StatusCode::kFailedPrecondition, Coordinator());
}

TEST_P(ApiTest, StaleExpectVersionIsAbortedAndChangesNothing) {
  Json run = NewRun("baton");
  MustCall(*api_, "run.set_status", {{"id", run["id"]}, {"status", "running"}, {"expect_version", 1}});
  Status s = Refused("run.set_status",
                           {{"id", run["id"]}, {"status", "paused"}, {"expect_version", 1}},
                           StatusCode::kAborted);
  EXPECT_EQ(s.details()["version"], 2);
  ExpectRefused("run.patch_context", {{"id", run["id"]}, {"patch", {{"a", 1}}}, {"expect_version", 7}},
                StatusCode::kAborted);
}

TEST_P(ApiTest, IdempotencyKeyActsOnce) {
  Json input = {{"profile", "baton"}, {"title", "once"}, {"idempotency_key", "k-1"}};
  Json first = MustCall(*api_, "run.create", input);
  const int64_t length = LedgerLength(*api_);
  Json second = MustCall(*api_, "run.create", input);
  EXPECT_EQ(first, second);
  EXPECT_EQ(LedgerLength(*api_), length);
  EXPECT_EQ(MustCall(*api_, "run.list", Json::object())["runs"].size(), 1u);
  // The same key for a different request is refused, not silently replayed.
  input["title"] = "other";
  ExpectRefused("run.create", input, StatusCode::kInvalidArgument);
  // Keys are per caller: another agent's "k-1" is its own.
  MustCall(*api_, "run.create", input, Coordinator());
}

TEST_P(ApiTest, PatchContextIsAShallowMerge) {
  Json run = MustCall(*api_, "run.create", {{"context", {{"a", 1}, {"nested", {{"x", 1}}}}}});
  Json patched = MustCall(*api_, "run.patch_context",
                          {{"id", run["id"]}, {"patch", {{"b", 2}, {"nested", {{"y", 2}}}}}});
  EXPECT_EQ(patched["context"], (Json{{"a", 1}, {"b", 2}, {"nested", {{"y", 2}}}}));
}

TEST_P(ApiTest, ProgressIsAppendedAndShown) {
  Json run = NewRun("sgai");
  MustCall(*api_, "run.add_progress", {{"id", run["id"]}, {"description", "planned"}}, Coordinator());
  MustCall(*api_, "run.add_progress", {{"id", run["id"]}, {"description", "coded"}}, Agent());
  Json shown = MustCall(*api_, "run.show", {{"id", run["id"]}});
  ASSERT_EQ(shown["progress"].size(), 2u);
  EXPECT_EQ(shown["progress"][0]["agent"], "coord");
  EXPECT_EQ(shown["progress"][1]["description"], "coded");
}

TEST_P(ApiTest, TasksTakeTheirMachineFromTheRunsProfile) {
  Json run = NewRun("stigmergy");
  Json story = MustCall(*api_, "task.create", {{"run", run["id"]}, {"title", "s1"}, {"key", "1.1"}});
  EXPECT_EQ(story["machine"], "stigmergy.story");
  EXPECT_EQ(story["status"], "PENDING");
  Json epic = MustCall(*api_, "task.create", {{"run", run["id"]}, {"title", "e1"}, {"kind", "epic"}});
  EXPECT_EQ(epic["machine"], "stigmergy.epic");
  Json issue = MustCall(*api_, "task.create", {{"run", run["id"]}, {"title", "i1"}, {"kind", "issue"}});
  EXPECT_EQ(issue["machine"], "stigmergy.issue");
  EXPECT_EQ(issue["status"], "OPEN");
  MustCall(*api_, "task.set_status", {{"id", issue["id"]}, {"status", "IN_PROGRESS"}});
  ExpectRefused("task.set_status", {{"id", issue["id"]}, {"status", "OPEN"}},
                StatusCode::kFailedPrecondition);
  // A story moves only through the Stigmergy profile's operations.
  Status s = Refused("task.set_status", {{"id", story["id"]}, {"status", "IN_PROGRESS"}},
                     StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("stigmergy.story"), std::string::npos) << s.message();
  ExpectRefused("task.create", {{"run", run["id"]}, {"title", "dup"}, {"key", "1.1"}},
                StatusCode::kAlreadyExists);
  ExpectRefused("task.create", {{"run", run["id"]}, {"title", "x"}, {"kind", "todo"}},
                StatusCode::kInvalidArgument);
  Json listed = MustCall(*api_, "task.list", {{"run", run["id"]}, {"status", "IN_PROGRESS"}});
  ASSERT_EQ(listed["tasks"].size(), 1u);
  EXPECT_EQ(listed["tasks"][0]["id"], issue["id"]);
}

TEST_P(ApiTest, SchemaViolationsNameThePathAndRule) {
  Status s = Refused("run.create", {{"profile", "nope"}}, StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("$.profile"), std::string::npos) << s.message();
  s = Refused("task.create", {{"title", 5}}, StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("$.title"), std::string::npos) << s.message();
  s = Refused("run.set_status", {{"id", "r"}, {"statu", "x"}}, StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("statu"), std::string::npos) << s.message();
  ExpectRefused("run.set_status", {{"id", "r"}, {"status", "x"}, {"expect_version", "1"}},
                StatusCode::kInvalidArgument);
}

TEST_P(ApiTest, UnknownIdsAreNotFound) {
  ExpectRefused("run.set_status", {{"id", "run-missing"}, {"status", "running"}},
                StatusCode::kNotFound);
  ExpectRefused("task.show", {{"id", "task-missing"}}, StatusCode::kNotFound);
  ExpectRefused("project.show", {{"id", "nope"}}, StatusCode::kNotFound);
  ExpectRefused("task.create", {{"run", "run-missing"}, {"title", "x"}}, StatusCode::kNotFound);
  ExpectRefused("no.such_op", Json::object(), StatusCode::kNotFound);
}

TEST_P(ApiTest, OperationRolesAreEnforced) {
  ExpectRefused("run.create", {{"profile", "baton"}}, StatusCode::kPermissionDenied, Agent());
  ExpectRefused("run.create", {{"profile", "baton"}}, StatusCode::kInvalidArgument,
                Actor{"x", "superuser"});
}

TEST_P(ApiTest, ProjectsScopeRunsAndTasks) {
  Json p = MustCall(*api_, "project.create", {{"name", "shop"}, {"repo_path", "/src/shop"}});
  ExpectRefused("project.create", {{"name", "shop"}}, StatusCode::kAlreadyExists);
  Json run = MustCall(*api_, "run.create", {{"project", "shop"}});
  EXPECT_EQ(run["project_id"], p["id"]);
  NewRun("baton");
  EXPECT_EQ(MustCall(*api_, "run.list", {{"project", "shop"}})["runs"].size(), 1u);
  Json task = MustCall(*api_, "task.create", {{"run", run["id"]}, {"title", "t"}});
  EXPECT_EQ(task["project_id"], p["id"]);
}

TEST_P(ApiTest, EveryMutationIsInTheVerifiedLedger) {
  Json run = NewRun("baton");
  MustCall(*api_, "run.set_status", {{"id", run["id"]}, {"status", "running"}});
  MustCall(*api_, "task.create", {{"run", run["id"]}, {"title", "t"}});
  Json verified = MustCall(*api_, "ledger.verify", Json::object());
  EXPECT_EQ(verified["events"], 3);
  Json events = MustCall(*api_, "ledger.events", {{"kind", "task."}})["events"];
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["kind"], "task.created");
}

TEST_P(ApiTest, ConcurrentWritersAllSucceed) {
  Json run = NewRun("baton");
  const std::string id = run["id"];
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        Result<Json> r = api_->Call("run.add_progress",
                                    {{"id", id}, {"description", std::to_string(t * 100 + i)}},
                                    Agent("a" + std::to_string(t)));
        if (!r.ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(MustCall(*api_, "run.show", {{"id", id}})["progress"].size(), 400u);
  // One event per progress note, the run's creation, and each agent's
  // registration by its first call.
  EXPECT_EQ(MustCall(*api_, "ledger.verify", Json::object())["events"], 401 + 8);
}

// writer_stats() may be asked from any thread, also while another thread's
// first call opens the store (a data race ASan and TSan builds catch).
TEST_P(ApiTest, WriterStatsMayBeReadWhileTheStoreOpens) {
  const std::string location = Location("fresh.db");
  ApiOptions options;
  options.store.location = location;
  options.group_commit = GroupCommit();
  Result<std::unique_ptr<Api>> opened_api = Api::Open(options);  // the store opens on first call
  ASSERT_TRUE(opened_api.ok()) << opened_api.status().ToString();
  std::unique_ptr<Api> fresh = std::move(opened_api).value();
  std::atomic<bool> opened{false};
  std::thread reader([&] {
    while (!opened.load()) (void)fresh->writer_stats();
  });
  MustCall(*fresh, "run.create", {{"profile", "baton"}, {"title", "t"}});
  opened = true;
  reader.join();
  EXPECT_GE(fresh->writer_stats().items, 1);
}

BATON_INSTANTIATE_BACKENDS(ApiTest);

// PostgreSQL only: a SQLite file is never disconnected.
TEST(ApiOnPostgresTest, CallsRunOnNewConnectionsAfterTheServerDroppedThem) {
  const std::string location = testing::NewPostgresStore();
  std::unique_ptr<Api> api = testing::OpenApi(location, /*group_commit=*/true);
  MustCall(*api, "run.create", {{"title", "before"}});
  MustCall(*api, "run.list", Json::object());  // a reader is pooled
  testing::DropEveryConnection(location);
  // The writer's connection is gone: the call runs once more on a new one.
  MustCall(*api, "run.create", {{"title", "after"}});
  testing::DropEveryConnection(location);
  // So are the pooled readers'.
  EXPECT_EQ(MustCall(*api, "run.list", Json::object())["runs"].size(), 2u);
  const Json verified = MustCall(*api, "ledger.verify", Json::object());
  EXPECT_EQ(verified["events"], 2) << verified.dump();
}

}  // namespace
}  // namespace baton
