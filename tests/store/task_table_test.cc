// The tasks table read as typed rows (store/tables/task_table.h): a claim or
// a heartbeat reads its task's row once and answers from that row and its
// own UPDATE — what it answers is exactly what task.show reads back
// afterwards, for a first claim, a renewal by the holder, a take-over of an
// expired lease and a heartbeat.

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/store_wrapper.h"
#include "backend_test.h"
#include "test_util.h"

namespace baton {
namespace {

// Every statement text a store's connections ran Query with.
struct QueryLog {
  std::mutex mu;
  std::vector<std::string> sql;
  int64_t Count(std::string_view part) {
    std::lock_guard<std::mutex> lock(mu);
    int64_t n = 0;
    for (const std::string& s : sql) n += s.find(part) != std::string::npos;
    return n;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu);
    sql.clear();
  }
};

class LoggingTxn final : public TxnWrapper {
 public:
  LoggingTxn(std::unique_ptr<Txn> target, std::shared_ptr<QueryLog> log)
      : TxnWrapper(std::move(target)), log_(std::move(log)) {}
  using Txn::Query;
  Result<std::vector<Row>> Query(std::string_view sql, SqlParams params) override {
    {
      std::lock_guard<std::mutex> lock(log_->mu);
      log_->sql.emplace_back(sql);
    }
    return TxnWrapper::Query(sql, params);
  }

 private:
  std::shared_ptr<QueryLog> log_;
};

using LoggingStore = TxnWrappingStore<LoggingTxn, QueryLog>;

class TaskTableTest : public testing::BackendTest {
 protected:
  void SetUp() override {
    ApiOptions options;
    options.store.location = Location();
    options.group_commit = GroupCommit();
    options.validate_output = true;
    options.time = &time_;
    options.wrap_store = [log = log_](std::unique_ptr<Store> store) -> std::unique_ptr<Store> {
      return std::make_unique<LoggingStore>(std::move(store), log);
    };
    Result<std::unique_ptr<Api>> api = Api::Open(options);
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = std::move(api).value();
    for (const char* id : {"ann", "bob"}) {
      testing::MustCall(*api_, "agent.register", {{"id", id}}, testing::Coordinator());
    }
    run_ = testing::MustCall(*api_, "run.create", {{"profile", "baton"}, {"title", "r"}})["id"];
    task_ = testing::MustCall(*api_, "task.create", {{"run", run_}, {"title", "t"}})["id"];
  }

  // Claims task_ as "agent" and checks the answer against the stored row.
  Json Claim(const std::string& agent, int64_t lease_ms = 60000) {
    const Json claimed = testing::MustCall(
        *api_, "task.claim", {{"task", task_}, {"lease_ms", lease_ms}}, testing::Agent(agent));
    const Json shown = testing::MustCall(*api_, "task.show", {{"id", task_}});
    EXPECT_EQ(claimed["task"], shown) << "the claim answered a row the store does not hold";
    EXPECT_EQ(claimed["lease"], shown["lease"]);
    return claimed;
  }

  testing::FakeTime time_;
  std::shared_ptr<QueryLog> log_ = std::make_shared<QueryLog>();
  std::unique_ptr<Api> api_;
  Json run_;
  Json task_;
};

TEST_P(TaskTableTest, AClaimReadsItsTaskOnceAndAnswersWhatItStored) {
  log_->Clear();
  const Json first = Claim("ann");
  // One read of the row by the claim (task.show's is counted apart).
  EXPECT_EQ(log_->Count("FROM tasks WHERE id = ?") - 1, 1) << "the claim read its task again";
  EXPECT_EQ(first["task"]["status"], "in_progress");
  EXPECT_EQ(first["task"]["attempts"], 1);
  EXPECT_EQ(first["lease"]["epoch"], 1);

  const Json again = Claim("ann");  // the holder renews: same epoch, no new attempt
  EXPECT_EQ(again["lease"]["epoch"], 1);
  EXPECT_EQ(again["task"]["attempts"], 1);
  EXPECT_EQ(again["task"]["version"], first["task"]["version"].get<int64_t>() + 1);

  time_.Advance(120000);  // ann's lease has expired: bob takes the task over
  const Json taken = Claim("bob");
  EXPECT_EQ(taken["lease"]["owner"], "bob");
  EXPECT_EQ(taken["lease"]["epoch"], 2);
  EXPECT_EQ(taken["task"]["attempts"], 2);

  log_->Clear();
  time_.Advance(1000);
  const Json beat = testing::MustCall(*api_, "task.heartbeat",
                                      {{"task", task_}, {"epoch", 2}, {"lease_ms", 90000}},
                                      testing::Agent("bob"));
  EXPECT_EQ(log_->Count("FROM tasks WHERE id = ?"), 1) << "the heartbeat read its task again";
  const Json shown = testing::MustCall(*api_, "task.show", {{"id", task_}});
  EXPECT_EQ(beat["task"], shown);
  EXPECT_EQ(beat["lease"], shown["lease"]);
  EXPECT_EQ(beat["task"]["version"], taken["task"]["version"].get<int64_t>() + 1);

  // Completing, and completing again with the same epoch (a retry), answer
  // the stored task; a stale epoch is refused naming the holder.
  const Json done = testing::MustCall(*api_, "task.complete", {{"task", task_}, {"epoch", 2}},
                                      testing::Agent("bob"));
  EXPECT_EQ(done, testing::MustCall(*api_, "task.show", {{"id", task_}}));
  EXPECT_EQ(testing::MustCall(*api_, "task.complete", {{"task", task_}, {"epoch", 2}},
                              testing::Agent("bob")),
            done);
  Result<Json> stale =
      api_->Call("task.complete", {{"task", task_}, {"epoch", 1}}, testing::Agent("ann"));
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted) << stale.status().ToString();
}

BATON_INSTANTIATE_BACKENDS(TaskTableTest);

}  // namespace
}  // namespace baton
