// The change bell between servers on one PostgreSQL database
// (ops/doorbell.h): what one server commits wakes another's waiters without
// their reading the store, rings are coalesced, carry the ledger head, and
// come back after the server dropped the bell's connection.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ops/api.h"
#include "pg_test_db.h"
#include "test_env.h"
#include "test_util.h"
#include "util/clock.h"

namespace baton {
namespace {

using testing::Coordinator;
using testing::Eventually;
using testing::Human;
using testing::MustCall;

// An Api as `baton serve` opens one, listening, whose waiters would read the
// store only once a minute: within a test, only a ring wakes them.
std::unique_ptr<Api> Server(const std::string& location) {
  ApiOptions options;
  options.store.location = location;
  options.group_commit = true;
  options.validate_output = true;
  options.change_poll_ms = 60'000;
  Result<std::unique_ptr<Api>> api = Api::Open(options);
  EXPECT_TRUE(api.ok()) << api.status().ToString();
  if (!api.ok()) std::abort();
  Status s = (*api)->HearOtherServers();
  EXPECT_TRUE(s.ok()) << s.ToString();
  // Its bell connects on the doorbell's own thread.
  EXPECT_TRUE(testing::Eventually([&] { return (*api)->doorbell_stats().connects >= 1; }, 30'000));
  return std::move(api).value();
}

int64_t Head(Api& api) {
  const Json got = MustCall(
      api, "ledger.events", {{"before", int64_t{1} << 53}, {"limit", 1}, {"summary_only", true}});
  return got["events"].empty() ? 0 : got["events"][0]["seq"].get<int64_t>();
}

// Bounds for a broken build, not measurements.
constexpr int64_t kPatience = 30'000;

TEST(DoorbellOnPostgresTest, AWaiterOnOneServerGetsTheAnswerGivenOnAnother) {
  const std::string location = testing::NewPostgresStore();
  std::unique_ptr<Api> a = Server(location);
  std::unique_ptr<Api> b = Server(location);
  const std::string run =
      MustCall(*a, "run.create", {{"profile", "sgai"}}, Coordinator())["id"];
  const Json questions = Json::array(
      {{{"question", "Ship it?"}, {"choices", {"yes", "no"}}, {"multiSelect", false}}});
  const std::string id = MustCall(*a, "question.ask", {{"run", run}, {"questions", questions}},
                                  Coordinator())["id"];
  ASSERT_TRUE(Eventually([&] { return b->doorbell_stats().heard > 0; }, kPatience));
  EXPECT_EQ(a->doorbell_stats().heard, 0) << "a server hears no ring but the others'";

  Json waited;
  std::thread waiter([&] {
    waited = MustCall(*a, "question.wait", {{"id", id}, {"timeout_ms", 30'000}}, Coordinator());
  });
  ASSERT_TRUE(Eventually([&] { return a->waiters() == 1; }, kPatience));
  const auto answered_at = std::chrono::steady_clock::now();
  MustCall(*b, "question.answer", {{"id", id}, {"choices", {"yes"}}}, Human());
  waiter.join();
  // With a minute between reads, only B's ring can have woken A's waiter
  // before its half-minute timeout (after which it reads once more).
  EXPECT_EQ(waited["status"], "answered") << waited.dump();
  EXPECT_LT(std::chrono::steady_clock::now() - answered_at, std::chrono::seconds(20))
      << "the waiter woke at its timeout, not at the ring";
  EXPECT_GE(a->doorbell_stats().heard, 1);
  EXPECT_LE(a->doorbell_stats().heard, b->doorbell_stats().rings);
}

TEST(DoorbellOnPostgresTest, ManyCommitsShareRingsAndTheLastCarriesTheHead) {
  const std::string location = testing::NewPostgresStore();
  std::unique_ptr<Api> a = Server(location);
  std::unique_ptr<Api> b = Server(location);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&b, t] {
      for (int i = 0; i < 25; ++i) {
        MustCall(*b, "run.create", {{"title", "run " + std::to_string(t) + "." + std::to_string(i)}});
      }
    });
  }
  for (std::thread& w : writers) w.join();
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  const int64_t head = Head(*b);
  ASSERT_TRUE(Eventually([&] { return a->doorbell_stats().last_heard_seq == head; }, kPatience))
      << "A last heard " << a->doorbell_stats().last_heard_seq << ", the head is " << head;
  // At most one ring per 50 ms, and one more for the last commits.
  EXPECT_LE(b->doorbell_stats().rings, elapsed / 50 + 2) << "100 commits in " << elapsed << " ms";
  // A hears no ring B did not send. B counts a ring once its NOTIFY has
  // returned, which may be after A heard it: allow B that moment.
  EXPECT_TRUE(Eventually([&] { return a->doorbell_stats().heard <= b->doorbell_stats().rings; },
                         kPatience))
      << "A heard " << a->doorbell_stats().heard << " rings, B sent "
      << b->doorbell_stats().rings;
}

TEST(DoorbellOnPostgresTest, TheLastCommitIsRungBeforeTheServerCloses) {
  const std::string location = testing::NewPostgresStore();
  std::unique_ptr<Api> a = Server(location);
  std::unique_ptr<Api> b = Server(location);
  MustCall(*b, "run.create", {{"title", "one"}});
  MustCall(*b, "run.create", {{"title", "two"}});
  const int64_t head = Head(*b);
  b.reset();  // as a CLI command exits right after its commit
  EXPECT_TRUE(Eventually([&] { return a->doorbell_stats().last_heard_seq == head; }, kPatience))
      << "A last heard " << a->doorbell_stats().last_heard_seq << ", the head is " << head;
}

TEST(DoorbellOnPostgresTest, ABellWhoseConnectionWasDroppedListensAgain) {
  const std::string location = testing::NewPostgresStore();
  std::unique_ptr<Api> a = Server(location);
  std::unique_ptr<Api> b = Server(location);
  testing::DropEveryConnection(location);
  ASSERT_TRUE(Eventually([&] { return a->doorbell_stats().connects >= 2; }, kPatience));
  MustCall(*b, "run.create", {{"title", "after the restart"}});
  const int64_t head = Head(*b);
  EXPECT_TRUE(Eventually([&] { return a->doorbell_stats().last_heard_seq == head; }, kPatience))
      << "A last heard " << a->doorbell_stats().last_heard_seq << ", the head is " << head;
}

// Processes sharing a SQLite file find each other's commits by reading it.
TEST(DoorbellTest, ASqliteStoreHasNoBell) {
  std::unique_ptr<Api> api = testing::OpenApi(":memory:");
  MustCall(*api, "run.create", {{"title", "one"}});
  EXPECT_EQ(api->doorbell_stats().connects, 0);
  EXPECT_EQ(api->change_poll_millis(), 250);
}

}  // namespace
}  // namespace baton
