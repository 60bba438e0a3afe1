// Property test for issue 19: whichever events row is edited behind baton's
// back, and whichever of its columns, `baton verify` names that row's seq.
//
// One store is filled through real operations (runs, tasks, claims, leases,
// progress, mail), then each round edits one random column of one random
// row in a fresh copy with the SQLite C API — as someone holding the file
// would — and asks ledger.verify, and in the first rounds the CLI too, where
// the chain breaks. A failure names BATON_SEED and the round; setting
// BATON_SEED to the printed value replays the same edits.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>

#include "test_util.h"

namespace baton::testing {
namespace {

constexpr int kRounds = 20;
constexpr int kCliRounds = 2;  // each spawns a process: a couple is enough
constexpr int64_t kMinEvents = 200;
// Every column of the events table (src/store/migrations): each one is
// either hashed or is the link between rows, so none may change unseen.
const char* const kColumns[] = {"seq",     "time",    "run_id", "actor_id", "actor_role", "kind",
                                "summary", "payload", "files",  "refs",     "prev_hash",  "hash"};

uint32_t BaseSeed() {
  const char* env = std::getenv("BATON_SEED");
  return env != nullptr ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : 19;
}

// One cycle of ordinary work: a run with progress, tasks claimed and
// finished three ways, and mail. "i" varies the outcomes and the sizes.
void DoSomeWork(Api& api, int i) {
  const std::string n = std::to_string(i);
  const std::string agent = "agent-" + std::to_string(i % 3);
  const std::string run =
      MustCall(api, "run.create", {{"profile", "baton"}, {"title", "r" + n}})["id"];
  MustCall(api, "run.set_status", {{"id", run}, {"status", "running"}});
  MustCall(api, "run.add_progress", {{"id", run}, {"description", std::string(i % 7 + 1, 'p')}});
  for (int k = 0; k < 3; ++k) {
    const std::string task =
        MustCall(api, "task.create",
                 {{"run", run},
                  {"title", "t" + n + "." + std::to_string(k)},
                  {"body", std::string(40 * static_cast<size_t>(k), 'b')}})["id"];
    const Json claim = MustCall(api, "task.claim", {{"task", task}}, Agent(agent));
    const Json fence = {{"task", task}, {"epoch", claim["lease"]["epoch"]}};
    MustCall(api, "task.heartbeat", fence, Agent(agent));
    const char* end = k == 0 ? "task.complete" : (k == 1 ? "task.fail" : "task.release");
    MustCall(api, end, fence, Agent(agent));
  }
  MustCall(api, "mail.send", {{"to", agent}, {"body", "note " + n}});
  MustCall(api, "run.add_progress", {{"id", run}, {"description", "done " + n}});
}

// The one store every round copies; built once, its last connection closed
// so that the file holds every commit.
class LedgerTamperTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto api = OpenApi(Store());
    for (int i = 0; LedgerLength(*api) < kMinEvents; ++i) DoSomeWork(*api, i);
    events_ = LedgerLength(*api);
    Result<Json> clean = api->Call("ledger.verify", Json::object(), Human());
    ASSERT_TRUE(clean.ok()) << "the untouched store fails verify: " << clean.status().ToString();
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Store() { return dir_->File("baton.db"); }

  static TempDir* dir_;
  static int64_t events_;
};

TempDir* LedgerTamperTest::dir_ = nullptr;
int64_t LedgerTamperTest::events_ = 0;

// A copy of the store and its witness file in "into"; returns its path.
std::string CopyStore(const std::string& from, const TempDir& into) {
  namespace fs = std::filesystem;
  std::string to = into.File("baton.db");
  for (const char* suffix : {"", "-wal", ".head"}) {
    if (fs::exists(from + suffix)) fs::copy_file(from + suffix, to + suffix);
  }
  return to;
}

// A value that differs from "old" (nullopt: SQL NULL): one character
// changed, one added or one dropped. NULL becomes text, and text never
// becomes "" when it was NULL, which the hash could not tell apart.
std::string Altered(const std::optional<std::string>& old, std::mt19937& rng) {
  if (!old.has_value()) return "forged";
  std::string v = *old;
  const int how = std::uniform_int_distribution<int>(0, v.empty() ? 1 : 2)(rng);
  if (how == 1) return v + "0";
  const size_t at = std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng);
  if (how == 2) return v.erase(at, 1);
  // Another hex digit keeps a hash looking like a hash.
  v[at] = v[at] == '0' ? '1' : '0';
  return v;
}

// The text in "column" of row "seq"; nullopt for NULL.
std::optional<std::string> ReadCell(sqlite3* db, const std::string& column, int64_t seq) {
  const std::string sql = "SELECT " + column + " FROM events WHERE seq = ?";
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  sqlite3_bind_int64(stmt, 1, seq);
  std::optional<std::string> out;
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_ROW) << sql << " " << seq << ": " << sqlite3_errmsg(db);
  if (sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  return out;
}

// Sets "column" of row "seq" to "value" (an integer for seq, text otherwise).
void WriteCell(sqlite3* db, const std::string& column, int64_t seq, const std::string& value) {
  const std::string sql = "UPDATE events SET " + column + " = ? WHERE seq = ?";
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  if (column == "seq") {
    sqlite3_bind_int64(stmt, 1, std::stoll(value));
  } else {
    sqlite3_bind_text(stmt, 1, value.c_str(), -1, SQLITE_TRANSIENT);
  }
  sqlite3_bind_int64(stmt, 2, seq);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE) << sql << ": " << sqlite3_errmsg(db);
  EXPECT_EQ(sqlite3_changes(db), 1) << sql << " " << seq << " changed no row";
  sqlite3_finalize(stmt);
}

// Edits "column" of row "seq" in the store file; returns "old -> new" for
// the failure message. A new seq moves the row past the end of the chain.
std::string Tamper(const std::string& store, const std::string& column, int64_t seq,
                   std::mt19937& rng) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(store.c_str(), &db), SQLITE_OK) << store;
  const std::optional<std::string> old = ReadCell(db, column, seq);
  const std::string now =
      column == "seq"
          ? std::to_string(seq + 1000 + std::uniform_int_distribution<int64_t>(0, 1000)(rng))
          : Altered(old, rng);
  WriteCell(db, column, seq, now);
  sqlite3_close(db);
  return (old ? "\"" + *old + "\"" : std::string("NULL")) + " -> \"" + now + "\"";
}

TEST_F(LedgerTamperTest, VerifyNamesTheSeqOfWhicheverRowWasEdited) {
  const uint32_t base = BaseSeed();
  std::printf("BATON_SEED=%u (%lld events)\n", base, static_cast<long long>(events_));
  ASSERT_GE(events_, kMinEvents);
  for (int round = 0; round < kRounds; ++round) {
    std::mt19937 rng(base + static_cast<uint32_t>(round));
    // The ends of the chain first (the genesis link, the head), then any row.
    const int64_t seq = round == 0   ? 1
                        : round == 1 ? events_
                                     : std::uniform_int_distribution<int64_t>(1, events_)(rng);
    // Columns in turn from a random one, so that every column is hit.
    const std::string column = kColumns[(round + base) % std::size(kColumns)];
    TempDir copy;
    const std::string store = CopyStore(Store(), copy);
    const std::string change = Tamper(store, column, seq, rng);
    SCOPED_TRACE(::testing::Message() << "BATON_SEED=" << base << ", round " << round
                                      << ": events row " << seq << ", " << column << " " << change);
    if (HasFailure()) return;

    // The exact seq, and the message a user reads says it: "seq 12:" so
    // that seq 1 is not found inside seq 123.
    const std::string named = "ledger verification failed at seq " + std::to_string(seq) + ":";
    {
      auto api = OpenApi(store);
      Result<Json> v = api->Call("ledger.verify", Json::object(), Human());
      ASSERT_FALSE(v.ok()) << "verify passed: " << v->dump();
      EXPECT_EQ(v.status().code(), StatusCode::kDataLoss) << v.status().ToString();
      const Json details = v.status().details();
      EXPECT_EQ(details.value("first_broken_seq", int64_t{0}), seq) << v.status().ToString();
      EXPECT_NE(v.status().message().find(named), std::string::npos) << v.status().message();
    }
    if (round < kCliRounds) {
      ProcessResult cli = RunBaton({"--store", store, "verify"});
      EXPECT_EQ(cli.exit_code, 12) << cli.out << cli.err;  // DataLoss
      EXPECT_NE(cli.err.find(named), std::string::npos) << cli.err;
    }
    if (HasFailure()) return;  // one replayable failure, not twenty
  }
}

// verify --since N --since-hash H, from a verify that answered N events
// and head H: it walks only what came after N, so it names an edit there and
// an edit of event N itself (its content, or its stored hash), and does not
// see one before N (a whole verify does). N alone, or past the end, is
// refused.
TEST_F(LedgerTamperTest, VerifySinceACheckpointWalksWhatCameAfterIt) {
  TempDir copy;
  const std::string store = CopyStore(Store(), copy);
  Json checkpoint;
  int64_t now = 0;
  {
    auto api = OpenApi(store);
    checkpoint = MustCall(*api, "ledger.verify", Json::object());
    ASSERT_EQ(checkpoint["events"], events_);
    DoSomeWork(*api, 1000);
    now = LedgerLength(*api);
  }
  ASSERT_GT(now, events_ + 5);
  const Json since = {{"since", events_}, {"since_hash", checkpoint["head_hash"]}};
  auto verify = [&](const Json& in) {
    auto api = OpenApi(store);
    return api->Call("ledger.verify", in, Human());
  };
  Result<Json> clean = verify(since);
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();
  EXPECT_EQ((*clean)["events"], now);
  EXPECT_EQ((*clean)["structure"], "not checked (since)");
  ProcessResult cli = RunBaton({"--store", store, "verify", "--since", std::to_string(events_),
                                "--since-hash", checkpoint["head_hash"].get<std::string>()});
  EXPECT_EQ(cli.exit_code, 0) << cli.out << cli.err;
  EXPECT_NE(cli.out.find("database structure not checked (since)"), std::string::npos) << cli.out;

  Result<Json> beyond = verify({{"since", now + 1}, {"since_hash", checkpoint["head_hash"]}});
  EXPECT_EQ(beyond.status().code(), StatusCode::kNotFound) << beyond.status().ToString();
  Result<Json> unanchored = verify({{"since", events_}});
  EXPECT_EQ(unanchored.status().code(), StatusCode::kInvalidArgument)
      << "a seq alone would trust whatever chain now leads to it";

  std::mt19937 rng(BaseSeed());
  auto first_broken = [&](const Json& in) {
    Result<Json> v = verify(in);
    EXPECT_EQ(v.status().code(), StatusCode::kDataLoss) << v.status().ToString();
    return v.status().details().value("first_broken_seq", int64_t{0});
  };
  Tamper(store, "payload", events_ - 3, rng);  // before the checkpoint
  EXPECT_TRUE(verify(since).ok()) << "since walked before its checkpoint";
  EXPECT_EQ(first_broken(Json::object()), events_ - 3);

  Tamper(store, "summary", events_ + 2, rng);  // after it
  EXPECT_EQ(first_broken(since), events_ + 2);

  // The checkpoint's own event: its content, then its stored hash.
  TempDir copy2;
  const std::string edited = CopyStore(store, copy2);
  Tamper(edited, "kind", events_, rng);
  {
    auto api = OpenApi(edited);
    Result<Json> v = api->Call("ledger.verify", since, Human());
    EXPECT_EQ(v.status().details().value("first_broken_seq", int64_t{0}), events_)
        << v.status().ToString();
  }
  Tamper(store, "hash", events_, rng);
  Result<Json> moved = verify(since);
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.status().details().value("first_broken_seq", int64_t{0}), events_)
      << moved.status().ToString();
  EXPECT_NE(moved.status().message().find("not the since_hash verified before"),
            std::string::npos)
      << moved.status().message();
}

}  // namespace
}  // namespace baton::testing
