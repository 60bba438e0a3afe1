// What the PostgreSQL backend does that SQLite's suites cannot show: how a
// location is recognised and shown, migrations racing on an empty database,
// a schema newer than the binary, the write lock across connections, and a
// transaction after a failed statement. Everything else runs on both
// backends through BackendTest (tests/testing/backend_test.h).

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <thread>
#include <vector>

#include "pg_test_db.h"
#include "test_env.h"
#include "engine/ledger/writer.h"
#include "store/migrations/migrations.h"
#include "store/postgres/pg_client.h"
#include "store/store.h"

namespace baton {
namespace {

using ::baton::testing::NewEmptyPostgresDatabase;
using ::baton::testing::NewPostgresStore;

std::unique_ptr<Store> MustOpen(const std::string& location, int busy_deadline_ms = 60000) {
  StoreOptions options;
  options.location = location;
  options.busy_deadline_ms = busy_deadline_ms;
  Result<std::unique_ptr<Store>> store = Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) std::abort();
  return std::move(store).value();
}

// A transaction of "mode" on a connection of its own to "store"; aborts the
// test when either cannot be had. The transaction ends before its connection.
struct Session {
  std::unique_ptr<Connection> conn;
  std::unique_ptr<Txn> txn;
};
Session Begin(Store& store, TxnMode mode) {
  Result<std::unique_ptr<Connection>> conn = store.Connect();
  EXPECT_TRUE(conn.ok()) << conn.status().ToString();
  if (!conn.ok()) std::abort();
  Result<std::unique_ptr<Txn>> txn = (*conn)->Begin(mode);
  EXPECT_TRUE(txn.ok()) << txn.status().ToString();
  if (!txn.ok()) std::abort();
  return {std::move(*conn), std::move(*txn)};
}

TEST(StoreLocationTest, TellsADatabaseServerFromAFile) {
  const struct {
    const char* location;
    bool postgres;
  } cases[] = {
      {"postgresql://baton@db.example/baton", true},
      {"postgres://localhost/baton", true},
      {"host=/var/run/postgresql dbname=baton", true},
      {"  dbname = baton", true},
      {"service=baton", true},
      {"require_auth=scram-sha-256 host=db dbname=baton", true},
      {"baton.db", false},
      {"./a=b.db", false},
      {"weird=name.db", false},
      {":memory:", false},
      {"", false},
      {"/srv/postgresql://x", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(IsPostgresLocation(c.location), c.postgres) << c.location;
  }
}

TEST(StoreLocationTest, NeverShowsAPassword) {
  const struct {
    const char* location;
    const char* shown;
  } cases[] = {
      {"postgresql://baton:s3cret@db/baton", "postgresql://baton:***@db/baton"},
      {"postgresql://baton:p@ss@db:5432/baton", "postgresql://baton:***@db:5432/baton"},
      {"postgresql://db/baton?user=a&password=s3cret&sslmode=require",
       "postgresql://db/baton?user=a&password=***&sslmode=require"},
      {"host=db password=s3cret dbname=baton", "host=db password=*** dbname=baton"},
      {"host=db password = 's3 cr\\'et' dbname=baton", "host=db password = *** dbname=baton"},
      {"postgresql://baton@db/baton", "postgresql://baton@db/baton"},
      {"postgresql://u:p?w@db/baton", "postgresql://u:***@db/baton"},
      {"host=db password=ab&cd dbname=baton", "host=db password=*** dbname=baton"},
      {"host=db password=ab\\ cd dbname=baton", "host=db password=*** dbname=baton"},
      {"host=db sslpassword=k3y", "host=db sslpassword=***"},
      {"host=db passfile=/home/me/.pgpass", "host=db passfile=/home/me/.pgpass"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(RedactedLocation(c.location), c.shown) << c.location;
  }
}

TEST(PgClientTest, NumbersPlaceholdersOutsideQuotesAndComments) {
  EXPECT_EQ(NumberPlaceholders("SELECT ? , '?', \"a?\", ? -- ?\n, ?"),
            "SELECT $1 , '?', \"a?\", $2 -- ?\n, $3");
  EXPECT_EQ(NumberPlaceholders("SELECT 'it''s ?', ?"), "SELECT 'it''s ?', $1");
  EXPECT_EQ(NumberPlaceholders("SELECT /* ? */ ?"), "SELECT /* ? */ $1");
}

TEST(PostgresStoreTest, AWrongPasswordIsRefusedWithoutShowingIt) {
  StoreOptions options;
  options.location = "postgresql://nobody:hunter2@127.0.0.1:1/baton?connect_timeout=2";
  Result<std::unique_ptr<Store>> store = Store::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable) << store.status().ToString();
  EXPECT_EQ(store.status().message().find("hunter2"), std::string::npos)
      << store.status().ToString();
  EXPECT_NE(store.status().message().find("nobody:***@"), std::string::npos)
      << store.status().ToString();
}

TEST(PostgresStoreTest, StatusNamesTheBackendAndServer) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  const StoreInfo info = store->info();
  EXPECT_EQ(info.backend, "postgresql");
  EXPECT_EQ(info.schema_version, LatestSchemaVersion());
  EXPECT_NE(info.detail.find("server=PostgreSQL "), std::string::npos) << info.detail;
  EXPECT_NE(info.detail.find("synchronous_commit=on"), std::string::npos) << info.detail;
}

TEST(PostgresStoreTest, ADatabaseWithoutAStoreIsNotFoundUnlessMade) {
  const std::string location = NewEmptyPostgresDatabase();
  StoreOptions options;
  options.location = location;
  options.create_if_missing = false;
  Result<std::unique_ptr<Store>> store = Store::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kNotFound) << store.status().ToString();
  options.create_if_missing = true;
  EXPECT_TRUE(Store::Open(options).ok());
}

TEST(PostgresStoreTest, ServersStartingTogetherApplyEachMigrationOnce) {
  const std::string location = NewEmptyPostgresDatabase();
  std::vector<std::thread> servers;
  std::vector<Status> results(4);
  for (size_t i = 0; i < results.size(); ++i) {
    servers.emplace_back([&, i] {
      StoreOptions options;
      options.location = location;
      Result<std::unique_ptr<Store>> store = Store::Open(options);
      results[i] = store.status();
    });
  }
  for (std::thread& t : servers) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<Store> store = MustOpen(location);
  Session session = Begin(*store, TxnMode::kRead);
  Txn* txn = &*session.txn;
  auto rows = txn->Query("SELECT version, COUNT(*) FROM schema_migrations GROUP BY version "
                            "ORDER BY version",
                            {});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(static_cast<int>(rows->size()), LatestSchemaVersion());
  for (const Row& r : *rows) EXPECT_EQ(r.Int(1), 1) << "version " << r.Int(0);
}

TEST(PostgresStoreTest, ABinaryOlderThanTheSchemaIsRefusedNamingBothVersions) {
  const std::string location = NewPostgresStore();
  {
    std::unique_ptr<Store> store = MustOpen(location);
    Session session = Begin(*store, TxnMode::kWrite);
    Txn* txn = &*session.txn;
    ASSERT_TRUE(txn->Exec("INSERT INTO schema_migrations (version, name, applied_at) "
                             "VALUES (99, 'from the future', 'now')",
                             {})
                    .ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  StoreOptions options;
  options.location = location;
  Result<std::unique_ptr<Store>> store = Store::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("schema version 99"), std::string::npos)
      << store.status().ToString();
  EXPECT_NE(store.status().message().find("(" + std::to_string(LatestSchemaVersion()) + ")"),
            std::string::npos)
      << store.status().ToString();
}

TEST(PostgresStoreTest, OneWriterAtATimeAndABusyStoreIsUnavailable) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore(), /*busy_deadline_ms=*/300);
  auto first = store->Connect();
  auto second = store->Connect();
  ASSERT_TRUE(first.ok() && second.ok());
  auto holding = (*first)->Begin(TxnMode::kWrite);
  ASSERT_TRUE(holding.ok()) << holding.status().ToString();
  auto waiting = (*second)->Begin(TxnMode::kWrite);
  ASSERT_FALSE(waiting.ok());
  EXPECT_TRUE(IsStoreBusy(waiting.status())) << waiting.status().ToString();
  // Readers are never kept waiting by the writer.
  auto reading = (*second)->Begin(TxnMode::kRead);
  ASSERT_TRUE(reading.ok()) << reading.status().ToString();
  reading->reset();
  ASSERT_TRUE((*holding)->Commit().ok());
  auto after = (*second)->Begin(TxnMode::kWrite);
  EXPECT_TRUE(after.ok()) << after.status().ToString();
}

// Runs "sql" on "location"'s database outside baton; the first column of
// the first row ("" when none).
std::string PlainQuery(const std::string& location, const std::string& sql) {
  PGconn* conn = PQconnectdb(location.c_str());
  PGresult* res = PQexec(conn, sql.c_str());
  EXPECT_TRUE(PQresultStatus(res) == PGRES_TUPLES_OK || PQresultStatus(res) == PGRES_COMMAND_OK)
      << sql << ": " << PQresultErrorMessage(res);
  std::string first = PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) : "";
  PQclear(res);
  PQfinish(conn);
  return first;
}

TEST(PostgresStoreTest, AWriterThatWaitedSeesWhatItsPredecessorCommitted) {
  // A database whose sessions default to one snapshot per transaction (a
  // common setting): a writer's snapshot must still be taken after the
  // write lock, or it would append to a ledger head that moved.
  const std::string location = NewPostgresStore();
  PlainQuery(location, R"SQL(DO $$ BEGIN EXECUTE format(
      'ALTER DATABASE %I SET default_transaction_isolation TO ''repeatable read''',
      current_database()); END $$)SQL");
  std::unique_ptr<Store> store = MustOpen(location);
  auto first = store->Connect();
  auto second = store->Connect();
  ASSERT_TRUE(first.ok() && second.ok());
  auto holding = (*first)->Begin(TxnMode::kWrite);
  ASSERT_TRUE(holding.ok()) << holding.status().ToString();
  int64_t seen = -1;
  std::thread waiter([&] {
    auto txn = (*second)->Begin(TxnMode::kWrite);
    ASSERT_TRUE(txn.ok()) << txn.status().ToString();
    auto rows = (*txn)->Query("SELECT COUNT(*) FROM graph_definitions", {});
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    seen = (*rows)[0].Int(0);
  });
  // The second writer waits for the lock before the first commits (in this
  // database: pg_locks shows the whole server's, other suites' too).
  EXPECT_TRUE(::baton::testing::Eventually([&] {
    return PlainQuery(location,
                      "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT "
                      "granted AND database = (SELECT oid FROM pg_database WHERE datname = "
                      "current_database())") == "1";
  }));
  EXPECT_TRUE((*holding)
                  ->Exec("INSERT INTO graph_definitions (hash, text, created_at) "
                         "VALUES ('h', 'x', 'now')",
                         {})
                  .ok());
  EXPECT_TRUE((*holding)->Commit().ok());
  waiter.join();
  EXPECT_EQ(seen, 1);
}

// Whether "lead" is held now; a failure to tell fails the test.
bool Holds(Lead& lead) {
  Result<bool> held = lead.Hold();
  EXPECT_TRUE(held.ok()) << held.status().ToString();
  return held.ok() && *held;
}

TEST(PostgresStoreTest, TheLeadIsOneServersAndPassesWhenItsConnectionEnds) {
  const std::string location = NewPostgresStore();
  std::unique_ptr<Store> first = MustOpen(location);
  std::unique_ptr<Store> second = MustOpen(location);
  std::unique_ptr<Lead> a = std::move(first->OpenLead()).value();
  std::unique_ptr<Lead> b = std::move(second->OpenLead()).value();
  EXPECT_TRUE(Holds(*a));
  EXPECT_FALSE(Holds(*b));
  EXPECT_TRUE(Holds(*a));
  // A restart or failover ends both sessions: the first to ask again takes
  // the lead (once the server has let the old session's lock go), and the
  // other does not.
  testing::DropEveryConnection(location);
  EXPECT_TRUE(testing::Eventually([&] { return Holds(*b); }, 30'000));
  EXPECT_FALSE(Holds(*a));
  // A holder that closes lets go.
  b.reset();
  EXPECT_TRUE(testing::Eventually([&] { return Holds(*a); }, 30'000));
}

TEST(PostgresStoreTest, AFailedStatementFailsTheRestUntilItsSavepointIsRolledBack) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  Session session = Begin(*store, TxnMode::kWrite);
  Txn* txn = &*session.txn;
  Txn& t = *txn;
  ASSERT_TRUE(t.Savepoint("op").ok());
  const char* insert =
      "INSERT INTO graph_definitions (hash, text, created_at) VALUES (?, 'x', 'now')";
  ASSERT_TRUE(t.Exec(insert, {SqlText("a")}).ok());
  Result<int64_t> twice = t.Exec(insert, {SqlText("a")});
  EXPECT_EQ(twice.status().code(), StatusCode::kAlreadyExists) << twice.status().ToString();
  Result<int64_t> after = t.Exec(insert, {SqlText("b")});
  EXPECT_EQ(after.status().code(), StatusCode::kAlreadyExists) << after.status().ToString();
  EXPECT_NE(after.status().message().find("an earlier statement"), std::string::npos);
  ASSERT_TRUE(t.RollbackTo("op").ok());
  ASSERT_TRUE(t.Exec(insert, {SqlText("c")}).ok());
  ASSERT_TRUE(t.Commit().ok());
  auto read = session.conn->Begin(TxnMode::kRead);
  ASSERT_TRUE(read.ok());
  auto rows = (*read)->Query("SELECT hash FROM graph_definitions ORDER BY hash", {});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].Str(0), "c");
}

int64_t CountRows(Txn& txn, const char* sql) {
  Result<std::vector<Row>> rows = txn.Query(sql, {});
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? (*rows)[0].Int(0) : -1;
}

constexpr char kInsertDefinition[] =
    "INSERT INTO graph_definitions (hash, text, created_at) VALUES (?, 'x', 'now')";

TEST(PostgresStoreTest, AHeldBackWriteTravelsWithTheNextCallAndFailsThatCall) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  Session session = Begin(*store, TxnMode::kWrite);
  Txn& t = *session.txn;
  ASSERT_TRUE(t.Savepoint("op").ok());
  ASSERT_TRUE(t.ExecLater(kInsertDefinition, {SqlText("a")}).ok());
  // The next statement sends it first: the read sees it.
  EXPECT_EQ(CountRows(t, "SELECT COUNT(*) FROM graph_definitions"), 1);
  ASSERT_TRUE(t.Release("op").ok());
  ASSERT_TRUE(t.Savepoint("op").ok());
  // Held back, so not refused yet; the release that sends it is.
  EXPECT_TRUE(t.ExecLater(kInsertDefinition, {SqlText("a")}).ok());
  Status released = t.Release("op");
  EXPECT_EQ(released.code(), StatusCode::kAlreadyExists) << released.ToString();
  ASSERT_TRUE(t.RollbackTo("op").ok());
  ASSERT_TRUE(t.Release("op").ok());
  ASSERT_TRUE(t.Commit().ok());

  // One that fails at the commit: nothing of the transaction is kept, and
  // the connection serves the next one.
  auto second = session.conn->Begin(TxnMode::kWrite);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_TRUE((*second)->ExecLater(kInsertDefinition, {SqlText("b")}).ok());
  ASSERT_TRUE((*second)->ExecLater(kInsertDefinition, {SqlText("a")}).ok());
  Status committed = (*second)->Commit();
  EXPECT_EQ(committed.code(), StatusCode::kAlreadyExists) << committed.ToString();
  second->reset();
  auto read = session.conn->Begin(TxnMode::kRead);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(CountRows(**read, "SELECT COUNT(*) FROM graph_definitions"), 1);
}

std::vector<std::string> Definitions(Txn& txn) {
  std::vector<std::string> out;
  Result<std::vector<Row>> rows = txn.Query("SELECT hash FROM graph_definitions ORDER BY hash", {});
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  if (rows.ok()) {
    for (const Row& row : *rows) out.push_back(row.Str(0));
  }
  return out;
}

TEST(PostgresStoreTest, ARollbackUndoesWhatWasHeldBackAfterItsSavepointWithoutSendingIt) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  Session session = Begin(*store, TxnMode::kWrite);
  Txn& t = *session.txn;
  ASSERT_TRUE(t.Exec(kInsertDefinition, {SqlText("a")}).ok());
  ASSERT_TRUE(t.Savepoint("op").ok());
  // Would fail if sent: the operation fails some other way first.
  ASSERT_TRUE(t.ExecLater(kInsertDefinition, {SqlText("a")}).ok());
  ASSERT_TRUE(t.ExecLater(kInsertDefinition, {SqlText("b")}).ok());
  Status rolled_back = t.RollbackTo("op");
  ASSERT_TRUE(rolled_back.ok()) << rolled_back.ToString();
  ASSERT_TRUE(t.Release("op").ok());
  EXPECT_EQ(Definitions(t), (std::vector<std::string>{"a"}));
  ASSERT_TRUE(t.Commit().ok());
}

// A read transaction's BEGIN waits for its first statement; whatever sends
// it (here the prepare of a statement held back), the transaction is ended
// on the server, and the connection's next one starts afresh.
TEST(PostgresStoreTest, AReadTransactionIsEndedWhateverSentItsBegin) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  Session session = Begin(*store, TxnMode::kRead);
  ASSERT_TRUE(session.txn->ExecLater("SELECT ?::bigint", {SqlInt(1)}).ok());
  session.txn.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Result<std::unique_ptr<Txn>> next = session.conn->Begin(TxnMode::kRead);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  // now() is when the transaction began: this one, not the one before.
  Result<std::vector<Row>> age =
      (*next)->Query("SELECT (extract(epoch FROM statement_timestamp() - now()) * 1000)::bigint", {});
  ASSERT_TRUE(age.ok()) << age.status().ToString();
  EXPECT_LT((*age)[0].Int(0), 100) << "the read transaction before it was never ended";
}

TEST(PostgresStoreTest, AStatementThatCannotBePreparedFindsItsSavepointToRollBackTo) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  Session session = Begin(*store, TxnMode::kWrite);
  Txn& t = *session.txn;
  ASSERT_TRUE(t.Savepoint("op").ok());
  ASSERT_TRUE(t.ExecLater(kInsertDefinition, {SqlText("b")}).ok());
  // Its prepare fails and aborts the transaction: the savepoint and the
  // write held back before it were sent first.
  EXPECT_FALSE(t.Exec("INSERT INTO no_such_table (x) VALUES (?)", {SqlInt(1)}).ok());
  Status rolled_back = t.RollbackTo("op");
  ASSERT_TRUE(rolled_back.ok()) << rolled_back.ToString();
  ASSERT_TRUE(t.Release("op").ok());
  ASSERT_TRUE(t.Exec(kInsertDefinition, {SqlText("c")}).ok());
  EXPECT_EQ(Definitions(t), (std::vector<std::string>{"c"}));
  ASSERT_TRUE(t.Commit().ok());
}

TEST(PostgresStoreTest, AHeldBackWriteThatFailsFailsOnlyItsOwnItemOfABatch) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  Writer writer(std::move(store->Connect()).value(), 16);
  auto insert = [](const std::string& hash) {
    return [hash](Txn& txn) -> Result<Json> {
      RETURN_IF_ERROR(txn.ExecLater(kInsertDefinition, {SqlText(hash)}));
      return Json(hash);
    };
  };
  std::vector<Result<Json>> results =
      writer.SubmitAll({insert("a"), insert("b"), insert("a"), insert("d")});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_TRUE(results[1].ok());
  EXPECT_EQ(results[2].status().code(), StatusCode::kAlreadyExists) << results[2].status().ToString();
  EXPECT_TRUE(results[3].ok()) << results[3].status().ToString();
  EXPECT_EQ(writer.stats().batches, 1);
  Session check = Begin(*store, TxnMode::kRead);
  EXPECT_EQ(CountRows(*check.txn, "SELECT COUNT(*) FROM graph_definitions"), 3);
}

TEST(PostgresStoreTest, TextWithANulByteIsInvalidAndNamesTheParameter) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  Session session = Begin(*store, TxnMode::kWrite);
  Txn* txn = &*session.txn;
  Result<int64_t> r =
      txn->Exec("INSERT INTO graph_definitions (hash, text, created_at) VALUES (?, ?, 'now')",
                   {SqlText("a"), SqlText(std::string("x\0y", 3))});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find("parameter 2"), std::string::npos);
}

TEST(PostgresStoreTest, AHeldBackWriteWithANulByteIsRefusedAtOnce) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  Session session = Begin(*store, TxnMode::kWrite);
  Status nul = session.txn->ExecLater(kInsertDefinition, {SqlText(std::string("x\0y", 3))});
  EXPECT_EQ(nul.code(), StatusCode::kInvalidArgument) << nul.ToString();
  EXPECT_NE(nul.message().find("parameter 1"), std::string::npos) << nul.ToString();
}

TEST(PostgresStoreTest, IntegersKeepSixtyFourBitsAndTextOrdersByteByByte) {
  std::unique_ptr<Store> store = MustOpen(NewPostgresStore());
  Session session = Begin(*store, TxnMode::kWrite);
  Txn* txn = &*session.txn;
  const int64_t big = int64_t{1} << 53;
  for (const char* name : {"b", "B", "a", "_"}) {
    ASSERT_TRUE(txn->Exec("INSERT INTO web_sessions (id_hash, proof_hash, credential, agent_id, "
                             "role, created_at, expires_ms) VALUES (?, '', '', '', '', '', ?)",
                             {SqlText(name), SqlInt(big)})
                    .ok());
  }
  auto rows = txn->Query("SELECT id_hash, expires_ms + 1 FROM web_sessions ORDER BY id_hash", {});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::string order;
  for (const Row& r : *rows) {
    order += r.Str(0);
    EXPECT_EQ(r.Int(1), big + 1);
  }
  EXPECT_EQ(order, "B_ab");  // as SQLite's BINARY collation orders them
}

}  // namespace
}  // namespace baton
