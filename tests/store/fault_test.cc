// A store that fails mid-batch (issue 19 item 5). The Writer runs over a
// FaultConnection (fault_store.h) on a real SQLite file; each case breaks a
// Commit, RollbackTo, Release or Savepoint, then opens the file anew as a
// restarted baton would and checks that no acknowledged change was lost, no
// caller was told OK for a change that did not commit, each change is there
// with its ledger event or not at all, and the ledger verifies.
//
// Then the latch: after such a failure every write is refused (Unavailable,
// or DataLoss when the cause was) until a new writer is opened; reads keep
// working. FaultApiTest does it all through an Api, which opens that writer.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/ledger/ledger.h"
#include "engine/ledger/writer.h"
#include "fault_store.h"
#include "model/machine.h"
#include "test_util.h"
#include "util/clock.h"

namespace baton::testing {
namespace {

constexpr char kInjected[] = "injected fault: disk I/O error";  // FaultPlan's default

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}
constexpr char kLatchWords[] = "writes are refused until baton reopens it";

bool Contains(const Status& s, std::string_view part) {
  return s.message().find(part) != std::string::npos;
}

// "Unavailable", "OK", ...: what a failed EXPECT_EQ should print.
std::string Code(const Status& s) { return std::string(StatusCodeName(s.code())); }

// What an operation writes, in miniature: a row and its ledger event, in
// the batch's transaction.
Result<Json> PutIn(Txn& txn, const std::string& id) {
  const int64_t now = NowMillis();
  const Actor actor = Human();
  OpContext ctx{txn, actor, MachineSet::Builtin(), "fault.put", FormatTime(now), now, nullptr};
  RETURN_IF_ERROR(txn.Exec("INSERT INTO projects (id, name, created_at, updated_at) "
                           "VALUES (?, ?, ?, ?)",
                           {SqlText(id), SqlText(id), SqlText(ctx.now), SqlText(ctx.now)})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "project.created", .summary = "put " + id}).status());
  return Json(id);
}

WriteFn Put(const std::string& id) {
  return [id](Txn& txn) { return PutIn(txn, id); };
}

// Writes, then fails: the writer rolls it back to its savepoint alone.
WriteFn PutThenFail(const std::string& id) {
  return [id](Txn& txn) -> Result<Json> {
    RETURN_IF_ERROR(PutIn(txn, id).status());
    return AbortedError("changed my mind");
  };
}

// Not one of "results" may claim success: "why" says what failed.
void ExpectNoneOk(const std::vector<Result<Json>>& results, std::string_view why) {
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_FALSE(results[i].ok()) << "item " << i << " was told OK; " << why;
  }
}

using Outcome = std::pair<std::string, Status>;

// "threads" callers at once, each submitting "each" Puts in turn; every
// caller's outcomes in its order. Bounded: a writer that stops answering
// after a failure ends the suite instead of hanging it.
std::vector<std::vector<Outcome>> SubmitFromThreads(Writer& writer, int threads, int each) {
  std::vector<std::vector<Outcome>> seen(threads);
  std::vector<std::future<void>> done;
  done.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    done.push_back(std::async(std::launch::async, [&writer, &seen, t, each] {
      for (int i = 0; i < each; ++i) {
        const std::string id = "g" + std::to_string(t) + "-" + std::to_string(i);
        seen[t].emplace_back(id, writer.Submit(Put(id)).status());
      }
    }));
  }
  for (std::future<void>& f : done) {
    if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      ADD_FAILURE() << "a caller still waits a minute after the injected failure";
      std::abort();  // the writer hung; its callers cannot be joined
    }
  }
  return seen;
}

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  // Closes everything and opens the file anew, as a restarted baton does,
  // with a Writer over a FaultConnection.
  void Open() {
    writer_.reset();
    reader_.reset();
    store_.reset();
    Result<std::unique_ptr<Store>> store = Store::Open({dir_.File("baton.db"), Durability::kFull});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    Result<std::unique_ptr<Connection>> conn = store_->Connect();
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    writer_ = std::make_unique<Writer>(
        std::make_unique<FaultConnection>(std::move(conn).value(), faults_), 16);
    reader_ = std::move(store_->Connect()).value();
  }

  // One call per id; each must be acknowledged, and is then remembered.
  void Acknowledge(const std::vector<std::string>& ids) {
    for (const std::string& id : ids) {
      Result<Json> r = writer_->Submit(Put(id));
      ASSERT_TRUE(r.ok()) << id << ": " << r.status().ToString();
      acked_.push_back(id);
    }
  }

  // Whether "id" committed, asked beside the writer as reads are. Its row
  // and its event commit together; one without the other is a failure.
  bool Present(const std::string& id) {
    Result<std::unique_ptr<Txn>> txn = reader_->Begin(TxnMode::kRead);
    Result<std::vector<Row>> rows = (*txn)->Query(
        "SELECT (SELECT COUNT(*) FROM projects WHERE id = ?), "
        "(SELECT COUNT(*) FROM events WHERE summary = ?)",
        {SqlText(id), SqlText("put " + id)});
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok()) return false;
    EXPECT_EQ((*rows)[0].Int(0), (*rows)[0].Int(1)) << id << " is half there";
    return (*rows)[0].Int(0) == 1;
  }

  // Reopens, then: nothing acknowledged is missing, the chain and the file
  // verify, one event per row, and the new writer takes writes.
  void ReopenAndCheck() {
    Open();
    ASSERT_TRUE(writer_->refusal().ok()) << writer_->refusal().ToString();
    for (const std::string& id : acked_) EXPECT_TRUE(Present(id)) << id << " was acknowledged";
    Result<std::unique_ptr<Txn>> txn = reader_->Begin(TxnMode::kRead);
    Result<VerifyReport> chain = VerifyLedger(**txn);
    ASSERT_TRUE(chain.ok()) << chain.status().ToString();
    EXPECT_TRUE(chain->ok) << "broken at seq " << chain->first_broken_seq << ": " << chain->reason;
    Result<std::vector<Row>> rows = (*txn)->Query("SELECT COUNT(*) FROM projects", {});
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(chain->events, (*rows)[0].Int(0)) << "every row has one event";
    Result<std::vector<std::string>> problems = (*txn)->CheckStructure(/*thorough=*/true);
    ASSERT_TRUE(problems.ok()) << problems.status().ToString();
    EXPECT_TRUE(problems->empty()) << problems->front();
    Acknowledge({"reopened-" + std::to_string(++reopens_)});
  }

  TempDir dir_;
  std::shared_ptr<Faults> faults_ = std::make_shared<Faults>();
  std::unique_ptr<Store> store_;
  std::unique_ptr<Connection> reader_;
  std::unique_ptr<Writer> writer_;  // dies before store_
  std::vector<std::string> acked_;
  int reopens_ = 0;
};

TEST_F(FaultTest, FailedCommitAnswersNoOneOkAndKeepsNothingOfItsBatch) {
  Acknowledge({"a1", "a2", "a3"});
  faults_->Arm({.op = FaultOp::kCommit});
  std::vector<Result<Json>> results = writer_->SubmitAll({Put("b1"), PutThenFail("b2"), Put("b3")});
  ASSERT_EQ(faults_->injected(), 1);
  ASSERT_EQ(results.size(), 3u);
  ExpectNoneOk(results, "its commit failed");
  EXPECT_EQ(Code(results[0].status()), "Unknown") << "in doubt: never a code that says retry";
  // The caller is told why, and that the change may have been made.
  for (size_t i : {0u, 2u}) {
    EXPECT_TRUE(StartsWith(results[i].status().message(), kInjected)) << results[i].status().ToString();
    EXPECT_EQ(results[i].status().details().value("in_doubt", false), true);
  }
  ReopenAndCheck();
  for (const char* id : {"b1", "b2", "b3"}) EXPECT_FALSE(Present(id)) << id;
}

// One fault, and for the latch the code every later write is refused with.
struct Case {
  const char* name;
  FaultPlan plan;
  StatusCode want = StatusCode::kUnavailable;
};

// Savepoint steps that fail mid-batch: the transaction is unusable, so
// every item fails, also those whose own savepoint was already released.
const Case kStepFaults[] = {
    {"the failing item's RollbackTo", {.op = FaultOp::kRollbackTo}},
    {"the first item's Release", {.op = FaultOp::kRelease}},
    {"the failing item's Release", {.op = FaultOp::kRelease, .nth = 2}},
    {"the last item's Savepoint", {.op = FaultOp::kSavepoint, .nth = 3}},
};

TEST_F(FaultTest, FailedSavepointStepFailsTheWholeBatch) {
  Acknowledge({"a1", "a2"});
  int round = 0;
  for (const Case& f : kStepFaults) {
    SCOPED_TRACE(f.name);
    const std::string p = "r" + std::to_string(round++) + "-";
    faults_->Arm(f.plan);
    std::vector<Result<Json>> results =
        writer_->SubmitAll({Put(p + "x"), PutThenFail(p + "y"), Put(p + "z")});
    ASSERT_EQ(faults_->injected(), round) << FaultOpName(f.plan.op) << " did not fail";
    ExpectNoneOk(results, "its batch failed");
    EXPECT_EQ(results[0].status().message(), kInjected);
    ReopenAndCheck();
    for (const char* s : {"x", "y", "z"}) EXPECT_FALSE(Present(p + s)) << p + s;
  }
}

// COMMIT reached the WAL, its fsync failed: the callers hear of the failure
// although the change is durable. The store must still be whole — each
// change with its event, the chain verifying — and "failed" here does not
// mean "nothing happened" (why such a failure must latch and not be retried
// blindly; STYLE.md rule 9).
TEST_F(FaultTest, InDoubtCommitIsNotAcknowledgedAndLeavesAWholeStore) {
  Acknowledge({"a1", "a2"});
  faults_->Arm({.op = FaultOp::kCommit, .apply_first = true});
  std::vector<Result<Json>> results = writer_->SubmitAll({Put("d1"), Put("d2")});
  ASSERT_EQ(faults_->injected(), 1);
  ExpectNoneOk(results, "its commit reported a failure");
  ReopenAndCheck();
  EXPECT_TRUE(Present("d1"));
  EXPECT_TRUE(Present("d2"));
}

TEST_F(FaultTest, GroupCommitFailureAmongConcurrentCallers) {
  Acknowledge({"a1"});
  writer_->StartGroupCommit();
  faults_->Arm({.op = FaultOp::kCommit, .nth = 3});
  std::vector<std::vector<Outcome>> seen = SubmitFromThreads(*writer_, 8, 20);
  EXPECT_EQ(faults_->injected(), 1);
  std::vector<std::string> refused;
  int told_fault = 0;
  for (const std::vector<Outcome>& caller : seen) {
    for (const auto& [id, status] : caller) {
      (status.ok() ? acked_ : refused).push_back(id);
      told_fault += StartsWith(status.message(), kInjected);
    }
  }
  EXPECT_GE(told_fault, 1) << "no caller heard of the failed commit";
  ReopenAndCheck();
  for (const std::string& id : refused) EXPECT_FALSE(Present(id)) << id << " was told it failed";
}

// A busy store changed nothing and is retried, not latched: the latch
// exempts an Unavailable with details {"reason": "store_busy"}, which
// SqliteError is to give a busy store.
TEST_F(FaultTest, BusyCommitDoesNotRefuseLaterWrites) {
  faults_->Arm({.op = FaultOp::kCommit,
                .code = StatusCode::kUnavailable,
                .message = "store is busy, retry: COMMIT: database is locked",
                .details = {{"reason", "store_busy"}}});
  EXPECT_EQ(Code(writer_->Submit(Put("b1")).status()), "Unavailable");
  EXPECT_TRUE(writer_->refusal().ok()) << writer_->refusal().ToString();
  Acknowledge({"b2"});
  ReopenAndCheck();
  EXPECT_FALSE(Present("b1"));
}

// ---- The latch (enable with the writer's refusal after a failed batch). ----

const Case kLatchCases[] = {
    {"commit failed", {.op = FaultOp::kCommit}},
    {"commit in doubt", {.op = FaultOp::kCommit, .apply_first = true}},
    {"rollback failed", {.op = FaultOp::kRollbackTo}},
    {"release failed", {.op = FaultOp::kRelease, .nth = 2}},
    {"commit lost data",
     {.op = FaultOp::kCommit, .code = StatusCode::kDataLoss, .message = "injected: malformed"},
     StatusCode::kDataLoss},
};

TEST_F(FaultTest, FailedBatchRefusesWritesUntilReopened) {
  int round = 0;
  for (const Case& c : kLatchCases) {
    SCOPED_TRACE(c.name);
    const std::string p = "l" + std::to_string(round++) + "-";
    Acknowledge({p + "a"});
    faults_->Arm(c.plan);
    ExpectNoneOk(writer_->SubmitAll({Put(p + "x"), PutThenFail(p + "y")}), "its batch failed");
    const Status refusal = writer_->refusal();
    EXPECT_EQ(Code(refusal), StatusCodeName(c.want)) << refusal.ToString();
    EXPECT_TRUE(Contains(refusal, "the store failed")) << refusal.ToString();
    EXPECT_TRUE(Contains(refusal, kLatchWords)) << refusal.ToString();
    EXPECT_TRUE(Contains(refusal, c.plan.message)) << "names the cause: " << refusal.ToString();
    bool ran = false;
    Result<Json> later = writer_->Submit([&ran](Txn&) -> Result<Json> {
      ran = true;
      return Json(1);
    });
    EXPECT_EQ(Code(later.status()), StatusCodeName(c.want)) << later.status().ToString();
    EXPECT_TRUE(Contains(later.status(), kLatchWords)) << later.status().ToString();
    EXPECT_FALSE(ran) << "a refusing writer ran an operation";
    EXPECT_TRUE(Present(p + "a")) << "reads go around the writer and keep working";
    ReopenAndCheck();  // the reopened writer takes writes again
  }
}

TEST_F(FaultTest, GroupCommitFailureRefusesEveryLaterWrite) {
  writer_->StartGroupCommit();
  faults_->Arm({.op = FaultOp::kCommit, .nth = 2});
  std::vector<std::vector<Outcome>> seen = SubmitFromThreads(*writer_, 8, 20);
  for (const std::vector<Outcome>& caller : seen) {
    // One caller's calls are in order: after its first failure, only refusals.
    std::string first_failed;
    std::vector<std::string> accepted_after;
    for (const auto& [id, status] : caller) {
      if (status.ok()) {
        acked_.push_back(id);
        if (!first_failed.empty()) accepted_after.push_back(id);
      } else {
        if (first_failed.empty()) first_failed = id;
        EXPECT_TRUE(StartsWith(status.message(), kInjected) || Contains(status, kLatchWords))
            << id << ": " << status.ToString();
      }
    }
    EXPECT_TRUE(accepted_after.empty())
        << accepted_after.size() << " calls, the first " << accepted_after.front()
        << ", were accepted after " << first_failed << " failed";
  }
  EXPECT_EQ(Code(writer_->Submit(Put("late")).status()), "Unavailable");
  ReopenAndCheck();
}

}  // namespace
}  // namespace baton::testing

namespace baton::testing {
namespace {

// Through an Api, as baton serve runs it: a commit that fails is answered
// in doubt, the Api drops the latched writer and its store, and the next call
// opens them anew (running the start-up check) and writes again; the store
// holds every acknowledged change and its ledger verifies.
TEST(FaultApiTest, AFailedCommitIsAnsweredInDoubtAndTheNextCallReopensTheStore) {
  // In memory too: reopening must not trade the store for an empty one.
  for (const std::string backend : {"memory", "file", "file+group"}) {
    SCOPED_TRACE(backend);
    TempDir dir;
    auto faults = std::make_shared<Faults>();
    ApiOptions options;
    options.store.location = backend == "memory" ? ":memory:" : dir.File("baton.db");
    options.group_commit = backend == "file+group";
    options.validate_output = true;
    options.wrap_store = [faults](std::unique_ptr<Store> store) -> std::unique_ptr<Store> {
      return std::make_unique<FaultStore>(std::move(store), faults);
    };
    Result<std::unique_ptr<Api>> opened = Api::Open(options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    Api& api = **opened;
    const Json before = MustCall(api, "run.create", {{"profile", "baton"}, {"title", "before"}});

    faults->Arm({.op = FaultOp::kCommit, .apply_first = true});  // fsync failed after the write
    Result<Json> lost = api.Call("run.create", {{"profile", "baton"}, {"title", "in doubt"}},
                                 Human());
    ASSERT_FALSE(lost.ok()) << "a caller was told ok for a commit that failed";
    EXPECT_EQ(lost.status().code(), StatusCode::kUnknown) << lost.status().ToString();
    EXPECT_EQ(lost.status().details().value("in_doubt", false), true);

    const Json after = MustCall(api, "run.create", {{"profile", "baton"}, {"title", "after"}});
    EXPECT_EQ(MustCall(api, "run.show", {{"id", before["id"]}})["title"], "before");
    EXPECT_EQ(MustCall(api, "run.show", {{"id", after["id"]}})["title"], "after");
    EXPECT_TRUE(MustCall(api, "ledger.verify", Json::object())["ok"].get<bool>());
  }
}

}  // namespace
}  // namespace baton::testing
