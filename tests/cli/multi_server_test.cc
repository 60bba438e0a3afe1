// Several `baton serve` on one PostgreSQL database, as a team runs them on
// several machines (issue 20, docs/postgres.md): agents spread over three
// servers claim every task exactly once; a server killed with batches in
// flight loses nothing it acknowledged while the others keep serving, and
// its agents' leases lapse and are taken through another; a human's answer
// given anywhere reaches the agent waiting on any server, and a stream on
// one server shows what was done on another.

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "pg_test_db.h"
#include "test_env.h"

namespace baton {
namespace {

using testing::ProcessResult;
using testing::ServeProcess;

struct Answer {
  int status = -1;  // -1: no answer (the server is gone)
  Json body;
};

// One caller's connection to one server, as the bearer of "token".
class Caller {
 public:
  Caller(int port, const std::string& token) : client_("127.0.0.1", port) {
    client_.set_bearer_token_auth(token);
    client_.set_read_timeout(60, 0);
  }
  Answer Call(const std::string& op, const Json& input) {
    auto res = client_.Post("/v1/ops/" + op, input.dump(), "application/json");
    if (!res) return {};
    return {res->status, Json::parse(res->body, nullptr, false)};
  }

 private:
  httplib::Client client_;
};

class MultiServerOnPostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    location_ = testing::NewEmptyPostgresDatabase();
    testing::InitStore(location_);
    for (int i = 0; i < 3; ++i) {
      servers_.push_back(std::make_unique<ServeProcess>(
          location_, std::vector<std::string>{}, dir_.File("serve-" + std::to_string(i) + ".err")));
    }
  }

  // The human at server "i" (each server has a link of its own).
  Caller Human(int i) { return Caller(servers_[i]->port(), servers_[i]->secret()); }

  ProcessResult Baton(std::vector<std::string> args) {
    args.insert(args.begin(), {"--store", location_, "--output", "json"});
    return testing::RunBaton(args);
  }

  testing::TempDir dir_;
  std::string location_;
  std::vector<std::unique_ptr<ServeProcess>> servers_;
};

TEST_F(MultiServerOnPostgresTest, ThirtyTwoAgentsOnThreeServersClaimEveryTaskOnce) {
  constexpr int kTasks = 2000;
  constexpr int kAgents = 32;
  std::mutex mu;
  std::string first_error;
  auto note_error = [&](const std::string& what, const Answer& a) {
    std::lock_guard<std::mutex> lock(mu);
    if (first_error.empty()) first_error = what + ": " + std::to_string(a.status) + " " + a.body.dump();
  };
  // The tasks, made through the three servers at once.
  std::vector<std::thread> makers;
  for (int s = 0; s < 3; ++s) {
    makers.emplace_back([&, s] {
      Caller human = Human(s);
      for (int i = s; i < kTasks; i += 3) {
        Answer a = human.Call("task.create", {{"title", "t" + std::to_string(i)}});
        if (a.status != 200) note_error("task.create", a);
      }
    });
  }
  for (std::thread& t : makers) t.join();
  ASSERT_EQ(first_error, "");

  std::vector<std::string> tokens;
  for (int i = 0; i < kAgents; ++i) {
    tokens.push_back(testing::MakeToken(location_, "agent-" + std::to_string(i), "agent"));
  }
  std::vector<std::vector<std::string>> done(kAgents);
  std::vector<std::thread> agents;
  for (int i = 0; i < kAgents; ++i) {
    agents.emplace_back([&, i] {
      Caller me(servers_[i % 3]->port(), tokens[i]);
      for (;;) {
        Answer claim = me.Call("task.claim", Json::object());
        if (claim.status != 200) return note_error("task.claim", claim);
        if (!claim.body["claimed"].get<bool>()) return;
        const std::string id = claim.body["task"]["id"];
        Answer finished =
            me.Call("task.complete", {{"task", id}, {"epoch", claim.body["lease"]["epoch"]}});
        if (finished.status != 200) return note_error("task.complete " + id, finished);
        done[i].push_back(id);
      }
    });
  }
  for (std::thread& t : agents) t.join();
  EXPECT_EQ(first_error, "");
  std::map<std::string, int> times;
  std::vector<int> per_server(3, 0);
  for (int i = 0; i < kAgents; ++i) {
    for (const std::string& id : done[i]) ++times[id];
    per_server[i % 3] += static_cast<int>(done[i].size());
  }
  EXPECT_EQ(times.size(), static_cast<size_t>(kTasks));
  for (const auto& [id, n] : times) EXPECT_EQ(n, 1) << id << " was completed " << n << " times";
  for (int s = 0; s < 3; ++s) EXPECT_GT(per_server[s], 0) << "server " << s << " did no work";
  ProcessResult verified = Baton({"verify"});
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

TEST_F(MultiServerOnPostgresTest, AServerKilledMidBatchLosesNothingAndItsLeasesPassToAnother) {
  const std::string run = Human(0).Call("run.create", {{"title", "kill -9"}}).body["id"];
  // An agent holds a task through server 0 with a short lease.
  const std::string holder_token = testing::MakeToken(location_, "holder", "agent");
  const std::string task = Human(0).Call("task.create", {{"title", "leased"}}).body["id"];
  Answer held = Caller(servers_[0]->port(), holder_token)
                    .Call("task.claim", {{"task", task}, {"lease_ms", 2000}});
  ASSERT_EQ(held.status, 200) << held.body.dump();

  std::mutex mu;
  std::set<std::string> acknowledged;
  std::atomic<int> after_kill{0};
  std::atomic<bool> killed{false};
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < 12; ++c) {
    clients.emplace_back([&, c] {
      Caller human = Human(c % 3);
      for (int i = 0; !stop; ++i) {
        const std::string desc = "c" + std::to_string(c) + "-" + std::to_string(i);
        Answer a = human.Call("run.add_progress", {{"id", run}, {"description", desc}});
        if (a.status == -1) break;  // its server is gone
        if (a.status != 200) continue;
        std::lock_guard<std::mutex> lock(mu);
        acknowledged.insert(desc);
        if (killed) ++after_kill;
      }
    });
  }
  auto acks = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return acknowledged.size();
  };
  EXPECT_TRUE(testing::Eventually([&] { return acks() > 300; }, 60'000));
  EXPECT_EQ(servers_[0]->Signal(SIGKILL), 128 + SIGKILL);
  killed = true;
  // The other two keep serving.
  EXPECT_TRUE(testing::Eventually([&] { return after_kill > 200; }, 60'000));
  stop = true;
  for (std::thread& t : clients) t.join();

  ProcessResult shown = Baton({"run", "show", run});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const Json run_now = Json::parse(shown.out);
  std::set<std::string> present;
  for (const Json& p : run_now["progress"]) present.insert(p["description"].get<std::string>());
  for (const std::string& d : acknowledged) {
    EXPECT_TRUE(present.count(d)) << "acknowledged change lost: " << d;
  }
  EXPECT_EQ(run_now["version"].get<size_t>(), 1 + present.size());

  // The dead server's agent's lease lapses; another agent takes the task
  // through server 1, and the old holder's late completion is refused.
  Caller taker(servers_[1]->port(), testing::MakeToken(location_, "taker", "agent"));
  Answer taken;
  EXPECT_TRUE(testing::Eventually(
      [&] {
        taken = taker.Call("task.claim", {{"task", task}});
        return taken.status == 200 && taken.body["claimed"].get<bool>();
      },
      30'000))
      << taken.status << " " << taken.body.dump();
  EXPECT_EQ(taken.body["lease"]["epoch"], 2);
  Answer late = Caller(servers_[2]->port(), holder_token)
                    .Call("task.complete", {{"task", task}, {"epoch", held.body["lease"]["epoch"]}});
  EXPECT_EQ(late.status, 409) << late.body.dump();
  ProcessResult verified = Baton({"verify"});
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

TEST_F(MultiServerOnPostgresTest, AnAnswerGivenAnywhereReachesTheAgentWaitingOnAnyServer) {
  Caller coordinator(servers_[0]->port(), testing::MakeToken(location_, "coord", "coordinator"));
  const std::string run =
      coordinator.Call("run.create", {{"profile", "sgai"}}).body["id"];
  auto ask = [&](const std::string& text) {
    const Json questions = Json::array(
        {{{"question", text}, {"choices", {"yes", "no"}}, {"multiSelect", false}}});
    return coordinator.Call("question.ask", {{"run", run}, {"questions", questions}})
        .body["id"]
        .get<std::string>();
  };
  // Answered through the command line, on no server at all.
  const std::string first = ask("Ship it?");
  Answer waited;
  std::thread waiter([&] {
    waited = coordinator.Call("question.wait", {{"id", first}, {"timeout_ms", 30'000}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the wait has begun
  ProcessResult answered = Baton({"question", "answer", first, "--choices", "yes"});
  EXPECT_EQ(answered.exit_code, 0) << answered.out << answered.err;
  waiter.join();
  EXPECT_EQ(waited.status, 200);
  EXPECT_EQ(waited.body["status"], "answered") << waited.body.dump();

  // Answered through server 2, as the dashboard there does.
  const std::string second = ask("And this?");
  std::thread waiter2([&] {
    waited = coordinator.Call("question.wait", {{"id", second}, {"timeout_ms", 30'000}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Human(2).Call("question.answer", {{"id", second}, {"choices", {"no"}}}).status, 200);
  waiter2.join();
  EXPECT_EQ(waited.body["status"], "answered") << waited.body.dump();

  // A stream on server 0 shows a run made through server 1.
  std::string streamed;
  std::thread stream([&] {
    httplib::Client client("127.0.0.1", servers_[0]->port());
    client.set_read_timeout(30, 0);
    client.Get(
        "/v1/events", {{"Authorization", "Bearer " + servers_[0]->secret()}},
        [](const httplib::Response&) { return true; },
        [&](const char* data, size_t n) {
          streamed.append(data, n);
          return streamed.find("run.created") == std::string::npos;
        });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the stream has begun
  Answer made = Human(1).Call("run.create", {{"title", "made on server 1"}});
  ASSERT_EQ(made.status, 200);
  stream.join();
  EXPECT_NE(streamed.find(made.body["id"].get<std::string>()), std::string::npos)
      << streamed.substr(0, 2000);
}

TEST_F(MultiServerOnPostgresTest, ServersGivenOneSecretFileShareTheHumansLink) {
  // Without one, each server makes its own: the human's link works on one.
  EXPECT_NE(servers_[0]->secret(), servers_[1]->secret());
  EXPECT_EQ(Caller(servers_[1]->port(), servers_[0]->secret()).Call("run.list", Json::object()).status,
            401);
  ProcessResult no_file = Baton({"url"});
  EXPECT_NE(no_file.exit_code, 0);
  EXPECT_NE((no_file.out + no_file.err).find("--secret-file"), std::string::npos) << no_file.out;

  // With one file for all (as a load balancer needs), one link works on each.
  const std::string file = dir_.File("human.secret");
  ServeProcess a(location_, {"--secret-file", file}, dir_.File("a.err"));
  ServeProcess b(location_, {"--secret-file", file}, dir_.File("b.err"));
  ASSERT_FALSE(a.secret().empty());
  EXPECT_EQ(a.secret(), b.secret());
  EXPECT_EQ(Caller(b.port(), a.secret()).Call("run.list", Json::object()).status, 200);
  EXPECT_EQ(std::filesystem::status(file).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ProcessResult url = Baton({"url", "--listen", "baton.example:443", "--secret-file", file});
  EXPECT_EQ(url.exit_code, 0) << url.err;
  EXPECT_NE(url.out.find("#token=" + a.secret()), std::string::npos) << url.out;
}

}  // namespace
}  // namespace baton
