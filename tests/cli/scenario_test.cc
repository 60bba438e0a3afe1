// Scenario tests: build/baton run as separate processes, the way users and
// agents run it — many writers at once, kill -9 mid-batch, hand-edited
// ledgers, and every kind of bad input.

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "test_env.h"

namespace baton {
namespace {

using testing::InitStore;
using testing::ProcessResult;
using testing::RunBaton;
using testing::RunShell;
using testing::ServeProcess;
using testing::TempDir;

class ScenarioTest : public ::testing::Test {
 protected:
  // Runs baton on this test's store.
  ProcessResult Baton(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), {"--store", store_});
    return RunBaton(args, env);
  }

  Json BatonJson(std::vector<std::string> args) {
    args.insert(args.begin(), "--output");
    args.insert(args.begin() + 1, "json");
    ProcessResult r = Baton(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Json j = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    return j;
  }

  int64_t LedgerLength() {
    return BatonJson({"status"})["ledger"]["head_seq"].get<int64_t>();
  }

  std::string NewRun(const std::string& profile = "baton") {
    return BatonJson({"run", "create", "--profile", profile})["id"];
  }

  TempDir dir_;
  std::string store_ = InitStore(dir_.File("baton.db"));
};

// ---- tamper detection ------------------------------------------------------

class TamperTest : public ScenarioTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(TamperTest, VerifyNamesTheBrokenRow) {
  const std::string run = NewRun();
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(Baton({"run", "add-progress", run, "step " + std::to_string(i)}).exit_code, 0);
  }
  ASSERT_EQ(Baton({"verify"}).exit_code, 0);
  const std::string mode = GetParam();
  std::string sql;
  int64_t broken = 4;
  if (mode == std::string("alter")) {
    sql = "UPDATE events SET summary = 'forged' WHERE seq = 4";
  } else if (mode == std::string("delete")) {
    sql = "DELETE FROM events WHERE seq = 4";
  } else if (mode == std::string("delete_last")) {
    sql = "DELETE FROM events WHERE seq = 7";
    broken = 7;
  } else {  // swap two rows' positions
    sql = "UPDATE events SET seq = -1 WHERE seq = 4; UPDATE events SET seq = 4 WHERE seq = 5; "
          "UPDATE events SET seq = 5 WHERE seq = -1";
  }
  ProcessResult edit = RunShell("sqlite3 '" + store_ + "' \"" + sql + "\"");
  ASSERT_EQ(edit.exit_code, 0) << edit.err;
  ProcessResult v = Baton({"verify"});
  EXPECT_EQ(v.exit_code, 12) << v.out << v.err;  // DataLoss
  EXPECT_NE(v.err.find("seq " + std::to_string(broken)), std::string::npos) << v.err;
}

INSTANTIATE_TEST_SUITE_P(Ledger, TamperTest,
                         ::testing::Values("alter", "delete", "delete_last", "swap"),
                         [](const auto& info) { return std::string(info.param); });

// ---- many processes --------------------------------------------------------

TEST_F(ScenarioTest, EightProcessesTimesFiveHundredCallsAllSucceed) {
  const std::string run = NewRun();
  const int kProcs = 8;
  const int kCalls = 500;
  std::string script;
  for (int p = 0; p < kProcs; ++p) {
    script += "(for i in $(seq 1 " + std::to_string(kCalls) + "); do '" + testing::BatonBin() +
              "' --store '" + store_ + "' --agent w" + std::to_string(p) +
              " run add-progress " + run + " \"w" + std::to_string(p) +
              "-$i\" >/dev/null || echo FAIL $i; done) & ";
  }
  script += "wait";
  { std::ofstream(dir_.File("writers.sh")) << script << "\n"; }
  ProcessResult r = RunShell("bash '" + dir_.File("writers.sh") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out.substr(0, 2000) << r.err.substr(0, 2000);
  EXPECT_EQ(r.err.find("locked"), std::string::npos) << r.err.substr(0, 2000);
  Json shown = BatonJson({"run", "show", run});
  ASSERT_EQ(shown["progress"].size(), static_cast<size_t>(kProcs * kCalls));
  std::set<std::string> seen;
  for (const Json& p : shown["progress"]) seen.insert(p["description"].get<std::string>());
  EXPECT_EQ(seen.size(), static_cast<size_t>(kProcs * kCalls));
  EXPECT_EQ(shown["version"], 1 + kProcs * kCalls);
  EXPECT_EQ(Baton({"verify"}).exit_code, 0);
}

// ---- kill -9 while batches are being written ---------------------------------

TEST_F(ScenarioTest, KillNineLosesNoAcknowledgedChange) {
  const std::string run = NewRun();
  std::set<std::string> acknowledged;
  std::mutex mu;
  {
    ServeProcess server(store_);
    ASSERT_GT(server.port(), 0);
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int c = 0; c < 12; ++c) {
      clients.emplace_back([&, c] {
        httplib::Client client("127.0.0.1", server.port());
        client.set_bearer_token_auth(server.secret());
        client.set_read_timeout(5, 0);
        for (int i = 0; !stop; ++i) {
          const std::string desc = "c" + std::to_string(c) + "-" + std::to_string(i);
          Json body = {{"id", run}, {"description", desc}};
          auto res = client.Post("/v1/ops/run.add_progress", body.dump(), "application/json");
          if (!res) break;  // the server is gone
          if (res->status == 200) {
            std::lock_guard<std::mutex> lock(mu);
            acknowledged.insert(desc);
          }
        }
      });
    }
    // The kill lands while batches are in flight, once enough were answered.
    EXPECT_TRUE(testing::Eventually([&] {
      std::lock_guard<std::mutex> lock(mu);
      return acknowledged.size() > 200;
    }, 60000));
    EXPECT_EQ(server.Signal(SIGKILL), 128 + SIGKILL);
    stop = true;
    for (auto& t : clients) t.join();
  }
  ASSERT_GT(acknowledged.size(), 50u) << "too few writes happened before the kill";
  Json shown = BatonJson({"run", "show", run});
  std::set<std::string> present;
  for (const Json& p : shown["progress"]) present.insert(p["description"].get<std::string>());
  for (const std::string& d : acknowledged) {
    EXPECT_TRUE(present.count(d)) << "acknowledged change lost: " << d;
  }
  // No half-applied change: the row's version moved once per progress event.
  EXPECT_EQ(shown["version"].get<size_t>(), 1 + present.size());
  ProcessResult v = Baton({"verify"});
  EXPECT_EQ(v.exit_code, 0) << v.err;
}

TEST_F(ScenarioTest, ServeStopsCleanlyOnSigterm) {
  ServeProcess server(store_);
  ASSERT_GT(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  client.set_bearer_token_auth(server.secret());
  auto res = client.Post("/v1/ops/run.create", R"({"profile":"sgai"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  auto bad = client.Post("/v1/ops/run.set_status", R"({"id":"nope","status":"x"})",
                         "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 404) << bad->body;
  auto garbage = client.Post("/v1/ops/run.create", "{not json", "application/json");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->status, 400) << garbage->body;
  EXPECT_EQ(server.Signal(SIGTERM), 0);
  EXPECT_EQ(Baton({"verify"}).exit_code, 0);
}

// Regression: cpp-httplib's listen backlog of 5 made ~0.1% of requests from
// 64 clients connecting at once fail with a read error.
TEST_F(ScenarioTest, SixtyFourClientsConnectingAtOnceAllSucceed) {
  ServeProcess server(store_);
  ASSERT_GT(server.port(), 0);
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 64; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        // A new connection per request maximises connects per second.
        httplib::Client client("127.0.0.1", server.port());
        client.set_bearer_token_auth(server.secret());
        auto res = client.Post("/v1/ops/store.status", "{}", "application/json");
        if (!res || res->status != 200) ++failures;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(failures, 0);
}

// ---- several servers on one store -------------------------------------------

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The chores that must run in one server at a time (the agent reconciler,
// mail delivery) run in the server holding the store's lead; when it is
// killed, another takes them over.
TEST_F(ScenarioTest, TwoServersRunTheOnceOnlyChoresOneAtATime) {
  const std::vector<std::string> flags = {"--agent-timeout-ms", "1000"};
  std::vector<std::unique_ptr<ServeProcess>> servers;
  for (int i = 0; i < 2; ++i) {
    servers.push_back(std::make_unique<ServeProcess>(store_, flags,
                                                     dir_.File("serve-" + std::to_string(i) + ".err")));
  }
  auto says = [&](int i, const std::string& what) {
    return FileText(dir_.File("serve-" + std::to_string(i) + ".err")).find(what) != std::string::npos;
  };
  // One of them finds the lead taken.
  int follower = -1;
  EXPECT_TRUE(testing::Eventually(
      [&] {
        follower = says(0, "another server runs") ? 0 : says(1, "another server runs") ? 1 : -1;
        return follower >= 0;
      },
      30'000));
  ASSERT_GE(follower, 0);
  const int leader = 1 - follower;
  EXPECT_FALSE(says(leader, "another server runs"));
  EXPECT_EQ(servers[leader]->Signal(SIGKILL), 128 + SIGKILL);
  // An agent that falls silent after the leader died is marked lost by the
  // other, which says it took the chores over.
  ASSERT_EQ(Baton({"--agent", "coder", "--role", "agent", "agent", "register"}).exit_code, 0);
  EXPECT_TRUE(testing::Eventually(
      [&] { return BatonJson({"agent", "show", "coder"})["status"] == "lost"; }, 60'000));
  EXPECT_TRUE(says(follower, "this server now runs the agent reconciler"))
      << FileText(dir_.File("serve-" + std::to_string(follower) + ".err"));
}

// ---- bad input: clear message, its exit code, nothing changed ---------------

TEST_F(ScenarioTest, BadInputGetsItsExitCodeAndChangesNothing) {
  const std::string run = NewRun("sinfonia");
  ASSERT_EQ(Baton({"run", "set-status", run, "in-progress"}).exit_code, 0);
  const int64_t before = LedgerLength();
  const struct {
    std::vector<std::string> args;
    int exit_code;
    const char* message;  // must appear in stderr
  } cases[] = {
      {{"run", "create", "--json", "{\"profile\": "}, 2, "not valid JSON"},
      {{"run", "create", "--profile", "nope"}, 2, "$.profile"},
      {{"run", "create", "--json", "{\"titel\": \"x\"}"}, 2, "titel"},
      {{"run", "set-status", "run-missing", "complete"}, 3, "run-missing"},
      {{"run", "set-status", run, "created"}, 5, "allowed next states"},
      {{"run", "set-status", run, "complete", "--expect-version", "1"}, 6, "version"},
      {{"run", "set-status", run, "complete", "--expect-version", "x"}, 2, "integer"},
      {{"task", "show", "task-missing"}, 3, "task-missing"},
      {{"run", "create", "--role", "superuser"}, 2, "role"},
      {{"run", "create", "--role", "agent"}, 8, "requires role"},
      {{"no-such-command"}, 2, ""},
  };
  for (const auto& c : cases) {
    ProcessResult r = Baton(c.args);
    std::string cmd;
    for (const std::string& a : c.args) cmd += a + " ";
    EXPECT_EQ(r.exit_code, c.exit_code) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << cmd << "\n" << r.err;
  }
  EXPECT_EQ(LedgerLength(), before);
  EXPECT_EQ(BatonJson({"run", "show", run})["status"], "in-progress");
}

TEST_F(ScenarioTest, NonDatabaseStoreIsRefusedCleanly) {
  const std::string path = dir_.File("README.txt");
  { std::ofstream(path) << std::string(2048, 'z'); }
  ProcessResult r = RunBaton({"--store", path, "status"});
  EXPECT_EQ(r.exit_code, 12) << r.err;
  EXPECT_NE(r.err.find("not a baton store"), std::string::npos) << r.err;
  std::ifstream in(path);
  std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, std::string(2048, 'z'));
}

TEST_F(ScenarioTest, VerbsAcceptJsonFilesFlagsAndEnvironment) {
  const std::string input = dir_.File("in.json");
  { std::ofstream(input) << R"({"profile": "sgai", "title": "from file"})"; }
  Json run = BatonJson({"run", "create", "--json", "@" + input, "--title", "flag wins"});
  EXPECT_EQ(run["profile"], "sgai");
  EXPECT_EQ(run["title"], "flag wins");
  ProcessResult r = Baton({"--output", "json", "run", "add-progress", run["id"], "hello"},
                          {"BATON_AGENT=coder", "BATON_ROLE=agent"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json events = BatonJson({"log", "--kind", "run.progress"});
  ASSERT_FALSE(events.is_discarded());
  ProcessResult log = Baton({"--output", "json", "log", "--kind", "run.progress"});
  Json last = Json::parse(log.out.substr(0, log.out.find('\n')));
  EXPECT_EQ(last["actor"]["id"], "coder");
  EXPECT_EQ(last["actor"]["role"], "agent");
}

TEST_F(ScenarioTest, MachinesAndOpsNeedNoStore) {
  const std::string none = dir_.File("none.db");
  ProcessResult m = RunBaton({"--store", none, "machines", "sgai.run", "--format", "mermaid"});
  EXPECT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("stateDiagram-v2"), std::string::npos);
  ProcessResult ops = RunBaton({"--store", none, "ops"});
  EXPECT_EQ(ops.exit_code, 0) << ops.err;
  EXPECT_NE(ops.out.find("run.set_status"), std::string::npos);
  EXPECT_FALSE(std::ifstream(none).good()) << "listing machines created a store";
}

TEST_F(ScenarioTest, UserMachinesLoadFromTheStoreFolder) {
  std::filesystem::create_directories(dir_.File("machines"));
  {
    std::ofstream(dir_.File("machines/review.json")) << R"({
      "name": "team.review",
      "states": [{"name": "open", "initial": true}, {"name": "approved", "terminal": true}],
      "transitions": [{"from": "open", "to": "approved", "roles": ["human"]}]})";
  }
  Json run = BatonJson({"run", "create", "--machine", "team.review"});
  EXPECT_EQ(run["status"], "open");
  EXPECT_EQ(Baton({"--agent", "bot", "run", "set-status", run["id"], "approved"}).exit_code, 8);
  EXPECT_EQ(Baton({"run", "set-status", run["id"], "approved"}).exit_code, 0);
  { std::ofstream(dir_.File("machines/broken.json")) << R"({"name": "x", "states": []})"; }
  ProcessResult r = Baton({"status"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("broken.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("states"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace baton
