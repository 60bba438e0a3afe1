// The store seam and its SQLite backend: migrations, concurrency, errors.

#include "store/store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "engine/ledger/writer.h"
#include "store/migrations/migrations.h"
#include "store/tables/graph_context_table.h"
#include "store/tables/graph_message_table.h"
#include "store/tables/run_table.h"
#include "test_env.h"

namespace baton {
namespace {

using testing::TempDir;

std::unique_ptr<Store> MustOpen(const std::string& location,
                                Durability d = Durability::kFull) {
  Result<std::unique_ptr<Store>> store = Store::Open({location, d});
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) std::abort();
  return std::move(store).value();
}

int64_t CountRows(Store& store, const std::string& sql) {
  auto conn = store.Connect();
  auto txn = (*conn)->Begin(TxnMode::kRead);
  auto rows = (*txn)->Query(sql, {});
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? (*rows)[0].Int(0) : -1;
}

// Makes "txn"'s store what migration 10 left (for tests of a store made
// before migrations 11 and 12; 13 to 15 go too, as they came after them).
void UndoMigrationsFromEleven(Txn& txn) {
  for (const char* sql :
       {"DROP TRIGGER projects_added", "DROP TRIGGER projects_removed", "DROP TRIGGER runs_added",
        "DROP TRIGGER runs_removed", "DROP TRIGGER tasks_added", "DROP TRIGGER tasks_removed",
        "DROP TABLE row_counts", "DROP INDEX events_run_kind", "DROP INDEX runs_updated",
        "DROP INDEX questions_open", "DROP TABLE ledger_archives", "DROP TABLE graph_initials",
        "DROP TABLE graph_context_values",
        "DELETE FROM schema_migrations WHERE version >= 11"}) {
    ASSERT_TRUE(txn.Exec(sql, {}).ok()) << sql;
  }
}

// Makes the store at "path" what migration 10 left, then "change" to it,
// in one transaction.
void WriteOldStore(const std::string& path, const std::function<void(Txn&)>& change) {
  auto store = MustOpen(path);
  auto conn = store->Connect();
  ASSERT_TRUE(conn.ok());
  auto txn = (*conn)->Begin(TxnMode::kWrite);
  ASSERT_TRUE(txn.ok());
  UndoMigrationsFromEleven(**txn);
  change(**txn);
  ASSERT_TRUE((*txn)->Commit().ok());
}

TEST(StoreTest, NewStoreIsMigratedWithWalAndDurability) {
  TempDir dir;
  // A missing folder is never made: a mistyped path is refused.
  Result<std::unique_ptr<Store>> missing = Store::Open({dir.File("sub/dir/baton.db")});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir.File("sub")));
  auto store = MustOpen(dir.File("baton.db"), Durability::kNormal);
  StoreInfo info = store->info();
  EXPECT_EQ(info.backend, "sqlite");
  EXPECT_EQ(info.schema_version, LatestSchemaVersion());
  EXPECT_EQ(info.durability, Durability::kNormal);
  EXPECT_NE(info.detail.find("journal_mode=wal"), std::string::npos) << info.detail;
  EXPECT_NE(info.detail.find("synchronous=NORMAL"), std::string::npos) << info.detail;
  EXPECT_EQ(CountRows(*store, "SELECT COUNT(*) FROM schema_migrations"),
            static_cast<int64_t>(AllMigrations().size()));
}

TEST(StoreTest, ReopeningIsIdempotent) {
  TempDir dir;
  MustOpen(dir.File("b.db"));
  auto again = MustOpen(dir.File("b.db"));
  EXPECT_EQ(CountRows(*again, "SELECT COUNT(*) FROM schema_migrations"),
            static_cast<int64_t>(AllMigrations().size()));
}

// Migration 10 on a store made before it: a graph run's conversation moves
// from its meta into graph_messages, message by message and each as the
// JSON text it was (objects, text, numbers to their last digit, true,
// null, arrays), and the run loads as it did. What is no conversation stays
// in meta as it was: a graph run's conversationHistory that is not an
// array, a meta that is not JSON, and any other profile's meta.
TEST(StoreTest, MigrationTenMovesAGraphConversationOutOfTheRunRow) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  const std::string history_text =
      R"([{"type":"user","content":"hi \"you\""},"plain text",3,0.30000000000000004,)"
      R"(12345678901234567890,-0.0,true,false,null,[1,"two"]])";
  const Json history = Json::parse(history_text);
  const std::string meta_text = R"({"conversationHistory":)" + history_text + R"(,"graph":{"attempt":0}})";
  struct OldRun {
    const char* id;
    const char* profile;
    std::string meta;
  };
  const std::vector<OldRun> old_runs = {
      {"graph-run", "graph", meta_text},
      {"baton-run", "baton", meta_text},
      {"odd-run", "graph", R"({"conversationHistory":"legacy text"})"},
      {"broken-run", "graph", "not json"},
  };
  // The store as baton wrote it before migration 10.
  WriteOldStore(path, [&](Txn& txn) {
    for (const char* sql : {"DROP TABLE graph_messages",
                            "DELETE FROM schema_migrations WHERE version = 10"}) {
      ASSERT_TRUE(txn.Exec(sql, {}).ok()) << sql;
    }
    for (const OldRun& r : old_runs) {
      ASSERT_TRUE(txn.Exec("INSERT INTO runs (id, profile, machine, status, title, context, "
                           "meta, version, created_at, updated_at) VALUES (?, ?, 'graph.run', "
                           "'running', '', '{}', ?, 1, 'now', 'now')",
                           {SqlText(r.id), SqlText(r.profile), SqlText(r.meta)})
                      .ok());
    }
  });
  auto store = MustOpen(path);
  EXPECT_EQ(CountRows(*store, "SELECT COUNT(*) FROM graph_messages"),
            static_cast<int64_t>(history.size()));
  auto conn = store->Connect();
  ASSERT_TRUE(conn.ok());
  auto txn = (*conn)->Begin(TxnMode::kRead);
  ASSERT_TRUE(txn.ok());
  // Each message is its old text, digit for digit.
  Result<std::vector<Row>> texts =
      (*txn)->Query("SELECT message FROM graph_messages WHERE run_id = 'graph-run' ORDER BY idx", {});
  ASSERT_TRUE(texts.ok());
  std::string joined = "[";
  for (const Row& r : *texts) joined += (joined.size() > 1 ? "," : "") + r.Str(0);
  EXPECT_EQ(joined + "]", history_text);
  Result<std::vector<Row>> metas = (*txn)->Query("SELECT id, meta FROM runs ORDER BY id", {});
  ASSERT_TRUE(metas.ok());
  std::map<std::string, std::string> stored;
  for (const Row& r : *metas) stored[r.Str(0)] = r.Str(1);
  EXPECT_EQ(stored["graph-run"], R"({"graph":{"attempt":0}})");
  for (const OldRun& r : old_runs) {
    if (r.id != std::string("graph-run")) {
      EXPECT_EQ(stored[r.id], r.meta) << r.id;
    }
  }

  Result<baton::Run> graph = LoadRunRow(**txn, "graph-run");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(graph->meta, Json::parse(meta_text));
  Result<baton::Run> bare = LoadRunRow(**txn, "graph-run", RunConversation::kWithout);
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->meta.contains("conversationHistory"));
  Result<baton::Run> odd = LoadRunRow(**txn, "odd-run");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->meta["conversationHistory"], "legacy text");
}

// Migrations 11 and 12 on a store that already holds rows: the counts baton
// status shows start from what is there, and the triggers keep them from
// then on.
TEST(StoreTest, MigrationsElevenAndTwelveCountTheRowsThereAndKeepCounting) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  auto insert_run = [](Txn& txn, const std::string& id) {
    ASSERT_TRUE(txn.Exec("INSERT INTO runs (id, profile, machine, status, title, context, meta, "
                         "version, created_at, updated_at) VALUES (?, 'baton', 'baton.run', "
                         "'running', '', '{}', '{}', 1, 'now', 'now')",
                         {SqlText(id)})
                    .ok());
  };
  WriteOldStore(path, [&](Txn& txn) {
    for (const char* id : {"a", "b", "c"}) insert_run(txn, id);
  });
  auto store = MustOpen(path);
  EXPECT_EQ(CountRows(*store, "SELECT n FROM row_counts WHERE name = 'runs'"), 3);
  EXPECT_EQ(CountRows(*store, "SELECT n FROM row_counts WHERE name = 'tasks'"), 0);
  auto conn = store->Connect();
  ASSERT_TRUE(conn.ok());
  {
    auto txn = (*conn)->Begin(TxnMode::kWrite);
    ASSERT_TRUE(txn.ok());
    insert_run(**txn, "d");
    ASSERT_TRUE((*txn)->Exec("DELETE FROM runs WHERE id = 'a'", {}).ok());
    insert_run(**txn, "e");
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  {
    auto txn = (*conn)->Begin(TxnMode::kWrite);
    ASSERT_TRUE(txn.ok());
    insert_run(**txn, "rolled-back");
  }  // never committed: rolled back
  EXPECT_EQ(CountRows(*store, "SELECT n FROM row_counts WHERE name = 'runs'"), 4);
  EXPECT_EQ(CountRows(*store, "SELECT COUNT(*) FROM runs"), 4);
}

// A graph commit's context patch: keys set and removed, whatever they are
// spelled with — dots and brackets the path syntax would read, quotes and
// backslashes JSON escapes, text beyond ASCII — and the rest left as it was.
TEST(StoreTest, PatchingARunContextSetsAndRemovesOnlyTheNamedKeys) {
  TempDir dir;
  auto store = MustOpen(dir.File("p.db"));
  auto conn = store->Connect();
  ASSERT_TRUE(conn.ok());
  const Json before = {{"keep", {{"nested", {1, 2}}}}, {"a.b", 1}, {"gone", true},
                       {"q\"uote", 1}, {"back\\slash", 1}, {"ünï", 1}};
  baton::Run run{.id = "r", .profile = "graph", .machine = "graph.run", .status = "running",
          .context = before, .meta = {{"conversationHistory", Json::array()}},
          .created_at = "now", .updated_at = "now"};
  {
    auto txn = (*conn)->Begin(TxnMode::kWrite);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(InsertRunRow(**txn, run).ok());
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  struct Case {
    Json set;
    Json unset;
  };
  const std::vector<Case> cases = {
      {{{"a.b", {{"x", 1}}}, {"new[0]", "n"}}, Json::array({"gone"})},  // by path
      {{{"q\"uote", 2}}, Json::array({"back\\slash"})},                 // the long way
      {{{"ünï", "two"}}, Json::array({"missing"})},
      {Json::object(), Json::array()},
  };
  Json expected = before;
  for (const Case& c : cases) {
    for (auto it = c.set.begin(); it != c.set.end(); ++it) expected[it.key()] = it.value();
    for (const Json& k : c.unset) expected.erase(k.get<std::string>());
    auto txn = (*conn)->Begin(TxnMode::kWrite);
    ASSERT_TRUE(txn.ok());
    Status s = PatchGraphContextRow(**txn, "r", c.set, c.unset);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE((*txn)->Commit().ok());
    auto read = (*conn)->Begin(TxnMode::kRead);
    ASSERT_TRUE(read.ok());
    Result<baton::Run> loaded = LoadRunRow(**read, "r");
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->context, expected) << c.set.dump() << " " << c.unset.dump();
    if (&c == &cases[0]) {
      // Edited by path: json_set adds a new key at the end of the stored
      // text, where writing the context whole would have sorted it in.
      Result<std::vector<Row>> text = (*read)->Query("SELECT context FROM runs", {});
      ASSERT_TRUE(text.ok());
      const std::string stored = (*text)[0].Str(0);
      EXPECT_GT(stored.find("new[0]"), stored.find("keep")) << stored;
      EXPECT_GT(stored.find("new[0]"), stored.find("q\\\"uote")) << stored;
    }
  }
  // A context that is no object is replaced by one holding what was set.
  auto txn = (*conn)->Begin(TxnMode::kWrite);
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE((*txn)->Exec("UPDATE runs SET context = '[1, 2]'", {}).ok());
  ASSERT_TRUE(PatchGraphContextRow(**txn, "r", {{"a", 1}}, Json::array()).ok());
  Result<baton::Run> loaded = LoadRunRow(**txn, "r");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->context, Json({{"a", 1}}));
}

// A graph run's large context values (issue 21 item 3) live one per row
// beside its row, so a node's patch of a small key does not make the
// storage engine re-read them; a value moves between the two as it grows
// or shrinks, and every reader sees the context whole. Another run's
// context stays in its row whatever its size.
TEST(StoreTest, AGraphRunsLargeContextValuesLiveBesideItsRow) {
  TempDir dir;
  auto store = MustOpen(dir.File("c.db"));
  auto conn = store->Connect();
  ASSERT_TRUE(conn.ok());
  const std::string big(kSplitContextBytes, 'b');
  auto run_with = [&](const std::string& id, const std::string& profile) {
    return baton::Run{.id = id, .profile = profile, .machine = "graph.run", .status = "running",
                      .context = {{"blob", big}, {"n", 1}},
                      .meta = {{"conversationHistory", Json::array()}},
                      .created_at = "now", .updated_at = "now"};
  };
  auto write = [&](const std::function<Status(Txn&)>& change) {
    auto txn = (*conn)->Begin(TxnMode::kWrite);
    ASSERT_TRUE(txn.ok());
    Status s = change(**txn);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE((*txn)->Commit().ok());
  };
  // What the row holds, what is apart, and what a reader sees.
  auto stored = [&](const std::string& id) {
    const std::string row = CountRows(*store, "SELECT length(context) FROM runs WHERE id = '" + id +
                                                  "'") >= int64_t(kSplitContextBytes)
                                ? "in row"
                                : "small row";
    std::string apart;
    auto read = (*conn)->Begin(TxnMode::kRead);
    Result<std::vector<Row>> keys = (*read)->Query(
        "SELECT key FROM graph_context_values WHERE run_id = ? ORDER BY key", {SqlText(id)});
    // A key is stored as its JSON text.
    for (const Row& r : *keys) apart += Json::parse(r.Str(0)).get<std::string>() + " ";
    return row + "; apart: " + apart;
  };
  auto context = [&](const std::string& id) {
    auto read = (*conn)->Begin(TxnMode::kRead);
    Result<baton::Run> loaded = LoadRunRow(**read, id);
    EXPECT_TRUE(loaded.ok());
    return loaded.ok() ? loaded->context : Json();
  };
  write([&](Txn& txn) { return InsertRunRow(txn, run_with("g", "graph")); });
  write([&](Txn& txn) { return InsertRunRow(txn, run_with("plain", "baton")); });
  EXPECT_EQ(stored("g"), "small row; apart: blob ");
  EXPECT_EQ(stored("plain"), "in row; apart: ");
  EXPECT_EQ(context("g"), Json({{"blob", big}, {"n", 1}}));
  EXPECT_EQ(context("plain"), Json({{"blob", big}, {"n", 1}}));

  // A node sets a small key: the value apart is not touched.
  write([&](Txn& txn) { return PatchGraphContextRow(txn, "g", {{"n", 2}}, Json::array()); });
  EXPECT_EQ(stored("g"), "small row; apart: blob ");
  EXPECT_EQ(context("g"), Json({{"blob", big}, {"n", 2}}));
  // The large value shrinks into the row; a small one grows out of it.
  write([&](Txn& txn) {
    return PatchGraphContextRow(txn, "g", {{"blob", "small"}, {"n", big + "n"}}, Json::array());
  });
  EXPECT_EQ(stored("g"), "small row; apart: n ");
  EXPECT_EQ(context("g"), Json({{"blob", "small"}, {"n", big + "n"}}));
  // Removed, from wherever it is.
  write([&](Txn& txn) { return PatchGraphContextRow(txn, "g", Json::object(), {"n", "blob"}); });
  EXPECT_EQ(stored("g"), "small row; apart: ");
  EXPECT_EQ(context("g"), Json::object());
  // A key both set and removed is removed, large or not.
  write([&](Txn& txn) {
    return PatchGraphContextRow(txn, "g", {{"both", big}, {"small", 1}}, {"both", "small"});
  });
  EXPECT_EQ(stored("g"), "small row; apart: ");
  EXPECT_EQ(context("g"), Json::object());
  // Keys JSON spells with escapes (a NUL, bytes that are not UTF-8, which
  // JSON text repairs): one value each, the last one set.
  const std::string nul("a\0b", 3);
  const std::string not_utf8 = "k\xff";
  write([&](Txn& txn) {
    return PatchGraphContextRow(txn, "g", {{nul, big}, {not_utf8, big}}, Json::array());
  });
  EXPECT_EQ(context("g"), Json({{nul, big}, {"k\xef\xbf\xbd", big}}));
  write([&](Txn& txn) {
    return PatchGraphContextRow(txn, "g", {{nul, "small"}, {not_utf8, "small"}}, Json::array());
  });
  EXPECT_EQ(stored("g"), "small row; apart: ");
  EXPECT_EQ(context("g"), Json({{nul, "small"}, {"k\xef\xbf\xbd", "small"}}));
  const std::string repaired = "k\xef\xbf\xbd";  // as the stored text spells it
  write([&](Txn& txn) { return PatchGraphContextRow(txn, "g", {{nul, big}}, {repaired}); });
  EXPECT_EQ(context("g"), Json({{nul, big}}));
  write([&](Txn& txn) { return PatchGraphContextRow(txn, "g", Json::object(), {nul}); });
  EXPECT_EQ(context("g"), Json::object());
  // Written whole (a reset), then the run stored whole (a status change).
  write([&](Txn& txn) {
    return StoreGraphContextRow(txn, "g", {{"x", big}, {"y", big}, {"z", 0}});
  });
  EXPECT_EQ(stored("g"), "small row; apart: x y ");
  baton::Run whole = run_with("g", "graph");
  write([&](Txn& txn) { return StoreRunRow(txn, whole, "later"); });
  EXPECT_EQ(stored("g"), "small row; apart: blob ");
  // Listed runs come whole too.
  auto read = (*conn)->Begin(TxnMode::kRead);
  Result<std::vector<baton::Run>> listed = ListRunRows(**read, RunFilter{.limit = 10});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  for (const baton::Run& r : *listed) EXPECT_EQ(r.context, Json({{"blob", big}, {"n", 1}})) << r.id;
}

TEST(StoreTest, ProcessesOpeningANewStoreAtOnceAllSucceed) {
  TempDir dir;
  const std::string path = dir.File("race.db");
  std::vector<pid_t> children;
  for (int i = 0; i < 6; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      Result<std::unique_ptr<Store>> s = Store::Open({path, Durability::kFull});
      if (!s.ok()) std::fprintf(stderr, "child: %s\n", s.status().ToString().c_str());
      _exit(s.ok() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed to open";
  }
  auto store = MustOpen(path);
  EXPECT_EQ(CountRows(*store, "SELECT COUNT(*) FROM schema_migrations"),
            static_cast<int64_t>(AllMigrations().size()));
}

// Whether "lead" is held now; a failure to tell fails the test.
bool Holds(Lead& lead) {
  Result<bool> held = lead.Hold();
  EXPECT_TRUE(held.ok()) << held.status().ToString();
  return held.ok() && *held;
}

std::unique_ptr<Lead> MustOpenLead(Store& store) {
  Result<std::unique_ptr<Lead>> lead = store.OpenLead();
  EXPECT_TRUE(lead.ok()) << lead.status().ToString();
  if (!lead.ok()) std::abort();
  return std::move(lead).value();
}

TEST(StoreTest, TheLeadIsOneHoldersAndFreedWhenItsProcessDies) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  std::unique_ptr<Store> first = MustOpen(path);
  std::unique_ptr<Store> second = MustOpen(path);
  std::unique_ptr<Lead> a = MustOpenLead(*first);
  std::unique_ptr<Lead> b = MustOpenLead(*second);
  EXPECT_TRUE(Holds(*a));
  EXPECT_FALSE(Holds(*b));
  EXPECT_TRUE(Holds(*a));
  a.reset();  // lets go
  EXPECT_TRUE(Holds(*b));
  b.reset();

  // A process killed while it holds the lead leaves it free.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    Result<std::unique_ptr<Store>> s = Store::Open({path, Durability::kFull});
    Result<std::unique_ptr<Lead>> lead = s.ok() ? (*s)->OpenLead() : s.status();
    Result<bool> holds = lead.ok() ? (*lead)->Hold() : lead.status();
    const char held = holds.ok() && *holds ? 'y' : 'n';
    (void)!write(ready[1], &held, 1);
    pause();
    _exit(0);
  }
  char held = 0;
  ASSERT_EQ(read(ready[0], &held, 1), 1);
  EXPECT_EQ(held, 'y');
  std::unique_ptr<Lead> c = MustOpenLead(*first);
  EXPECT_FALSE(Holds(*c));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(Holds(*c));
  close(ready[0]);
  close(ready[1]);

  // A store in memory is this process's alone.
  std::unique_ptr<Store> memory = MustOpen(":memory:");
  EXPECT_TRUE(Holds(*MustOpenLead(*memory)));
}

TEST(StoreTest, NonDatabaseFileIsRefusedAndLeftAlone) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  const std::string text(4096, 'x');
  { std::ofstream(path) << text; }
  Result<std::unique_ptr<Store>> store = Store::Open({path, Durability::kFull});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(store.status().message().find(path), std::string::npos) << store.status().message();
  std::ifstream in(path);
  std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, text);
}

TEST(StoreTest, FolderAsStoreIsInvalidArgument) {
  TempDir dir;
  Result<std::unique_ptr<Store>> store = Store::Open({dir.path(), Durability::kFull});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
}

TEST(StoreTest, ConstraintViolationsMapToCodes) {
  auto store = MustOpen(":memory:");
  auto conn = std::move(store->Connect()).value();
  auto txn = std::move(conn->Begin(TxnMode::kWrite)).value();
  const char* insert =
      "INSERT INTO projects (id, name, created_at, updated_at) VALUES (?, ?, 'x', 'x')";
  ASSERT_TRUE(txn->Exec(insert, {SqlText("p1"), SqlText("a")}).ok());
  EXPECT_EQ(txn->Exec(insert, {SqlText("p1"), SqlText("b")}).status().code(),
            StatusCode::kAlreadyExists);
  Status fk = txn->Exec("INSERT INTO runs (id, project_id, profile, machine, status, "
                        "created_at, updated_at) VALUES ('r', 'nope', 'p', 'm', 's', 'x', 'x')",
                        {})
                  .status();
  EXPECT_EQ(fk.code(), StatusCode::kFailedPrecondition) << fk.ToString();
}

TEST(StoreTest, UncommittedTransactionRollsBack) {
  auto store = MustOpen(":memory:");
  auto conn = std::move(store->Connect()).value();
  {
    auto txn = std::move(conn->Begin(TxnMode::kWrite)).value();
    ASSERT_TRUE(txn->Exec("INSERT INTO projects (id, name, created_at, updated_at) "
                          "VALUES ('p', 'n', 'x', 'x')", {}).ok());
  }
  EXPECT_EQ(CountRows(*store, "SELECT COUNT(*) FROM projects"), 0);
}

TEST(WriterTest, FailingItemRollsBackAloneInItsBatch) {
  auto store = MustOpen(":memory:");
  Writer writer(std::move(store->Connect()).value(), 16);
  auto insert = [](const std::string& id) {
    return [id](Txn& txn) -> Result<Json> {
      RETURN_IF_ERROR(txn.Exec("INSERT INTO projects (id, name, created_at, updated_at) "
                               "VALUES (?, ?, 'x', 'x')",
                               {SqlText(id), SqlText(id)})
                          .status());
      return Json(id);
    };
  };
  std::vector<WriteFn> fns = {insert("a"), insert("b"),
                              [](Txn& txn) -> Result<Json> {
                                // Writes, then fails: its write must vanish.
                                RETURN_IF_ERROR(txn.Exec("INSERT INTO projects (id, name, "
                                                         "created_at, updated_at) VALUES "
                                                         "('c', 'c', 'x', 'x')", {})
                                                    .status());
                                return AbortedError("changed my mind");
                              },
                              insert("a"), insert("d")};
  std::vector<Result<Json>> results = writer.SubmitAll(std::move(fns));
  ASSERT_EQ(results.size(), 5u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_TRUE(results[1].ok());
  EXPECT_EQ(results[2].status().code(), StatusCode::kAborted);
  EXPECT_EQ(results[3].status().code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(results[4].ok());
  EXPECT_EQ(CountRows(*store, "SELECT COUNT(*) FROM projects"), 3);
  EXPECT_EQ(CountRows(*store, "SELECT COUNT(*) FROM projects WHERE id = 'c'"), 0);
  EXPECT_EQ(writer.stats().batches, 1);
}

TEST(WriterTest, GroupCommitBatchesConcurrentCallers) {
  TempDir dir;
  auto store = MustOpen(dir.File("g.db"));
  Writer writer(std::move(store->Connect()).value(), 256);
  writer.StartGroupCommit();
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        const std::string id = "p" + std::to_string(next++);
        Result<Json> r = writer.Submit([id](Txn& txn) -> Result<Json> {
          RETURN_IF_ERROR(txn.Exec("INSERT INTO projects (id, name, created_at, updated_at) "
                                   "VALUES (?, ?, 'x', 'x')",
                                   {SqlText(id), SqlText(id)})
                              .status());
          return Json(id);
        });
        if (!r.ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  writer.Stop();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(CountRows(*store, "SELECT COUNT(*) FROM projects"), 1600);
  // Sixteen callers at once must share commits.
  EXPECT_LT(writer.stats().batches, 1600);
  EXPECT_EQ(writer.stats().items, 1600);
}

TEST(WriterTest, StoppedWriterRefusesWithUnavailable) {
  auto store = MustOpen(":memory:");
  Writer writer(std::move(store->Connect()).value(), 4);
  writer.StartGroupCommit();
  writer.Stop();
  Result<Json> r = writer.Submit([](Txn&) -> Result<Json> { return Json(1); });
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace baton
