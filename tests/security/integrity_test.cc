// Issue 15, "What was seen" 6 and 7: integrity beyond the hash chain.
//
//   6. `baton verify` said "ledger OK" on a file with a zeroed B-tree page;
//      edits to state tables (runs.status, a lease epoch, an inserted admin
//      token) were invisible to it; the server kept appending onto a chain
//      someone edited.
//   7. Truncating the WAL after a crash silently dropped acknowledged
//      operations and verify still said OK.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace baton::testing {
namespace {

// Runs "sql" on "store" with the sqlite3 shell, as someone editing the file
// behind baton's back would.
void RawSql(const std::string& store, const std::string& sql) {
  ProcessResult r = RunShell("sqlite3 '" + store + "' \"" + sql + "\"");
  ASSERT_EQ(r.exit_code, 0) << sql << "\n" << r.err;
}

std::string RawValue(const std::string& store, const std::string& sql) {
  ProcessResult r = RunShell("sqlite3 '" + store + "' \"" + sql + "\"");
  EXPECT_EQ(r.exit_code, 0) << sql << "\n" << r.err;
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

Status Verify(Api& api, bool deep) {
  Result<Json> r = api.Call("ledger.verify", Json{{"deep", deep}}, Human());
  return r.status();
}

// A store with a run, a claimed task, a registered agent and a token: each
// state table has a row the ledger speaks about.
struct Seeded {
  std::string run, task, agent = "coder", token;
};

Seeded Seed(Api& api) {
  Seeded s;
  s.run = MustCall(api, "run.create", {{"profile", "baton"}, {"title", "integrity"}})["id"];
  s.task = MustCall(api, "task.create", {{"run", s.run}, {"title", "held"}})["id"];
  MustCall(api, "task.create", {{"run", s.run}, {"title", "other"}});
  MustCall(api, "agent.register", {{"id", s.agent}}, Agent(s.agent));
  Json claim = MustCall(api, "task.claim", {{"task", s.task}}, Agent(s.agent));
  MustCall(api, "task.heartbeat", {{"task", s.task}, {"epoch", claim["lease"]["epoch"]}},
           Agent(s.agent));
  s.token = MustCall(api, "token.create", {{"holder", "bot"}, {"holder_role", "agent"}})["id"];
  MustCall(api, "run.set_status", {{"id", s.run}, {"status", "running"}});
  return s;
}

// ---- 6a: a zeroed B-tree page ------------------------------------------------

TEST(IntegrityTest, ZeroedBtreePageFailsVerifyWithSqlitesMessage) {
  TempDir dir;
  const std::string store = dir.File("baton.db");
  {
    auto api = OpenApi(store);
    const std::string run = MustCall(*api, "run.create", {{"profile", "baton"}})["id"];
    for (int i = 0; i < 60; ++i) {
      MustCall(
          *api, "task.create",
          {{"run", run}, {"title", "task " + std::to_string(i)}, {"body", std::string(300, 'x')}});
    }
    ASSERT_TRUE(Verify(*api, false).ok());
  }  // the last connection closes: the WAL is checkpointed into the file
  const int64_t page_size = std::stoll(RawValue(store, "PRAGMA page_size"));
  // A leaf page of the tasks table: the chain walk never reads it.
  const int64_t page = std::stoll(
      RawValue(store, "SELECT MAX(pageno) FROM dbstat WHERE name = 'tasks' AND pagetype = 'leaf'"));
  ASSERT_GT(page, 1);
  {
    std::fstream f(store, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekp((page - 1) * page_size);
    const std::string zeros(static_cast<size_t>(page_size), '\0');
    f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  auto api = OpenApi(store);
  Result<Json> v = api->Call("ledger.verify", Json::object(), Human());
  ASSERT_FALSE(v.ok()) << "verify passed a store whose tasks page " << page
                       << " is zeros: " << v->dump();
  EXPECT_EQ(v.status().code(), StatusCode::kDataLoss) << v.status().message();
  const Json details = v.status().details();
  const Json structure = details.is_object() ? details.value("structure", Json()) : Json();
  ASSERT_TRUE(structure.is_array() && !structure.empty()) << details.dump();
  // SQLite's own words are in the message.
  EXPECT_NE(v.status().message().find(structure[0].get<std::string>()), std::string::npos)
      << v.status().message();
  // And from the CLI: a non-zero exit naming the structure check.
  ProcessResult cli = RunBaton({"--store", store, "verify"});
  EXPECT_EQ(cli.exit_code, 12) << cli.out << cli.err;  // DataLoss
  EXPECT_NE(cli.err.find("database structure"), std::string::npos) << cli.err;
}

// ---- 6b: edits to the state tables -----------------------------------------

struct Edit {
  const char* name;
  // SQL with $RUN, $TASK, $AGENT, $TOKEN replaced by the seeded rows.
  const char* sql;
  const char* table;
  const char* row;  // "$TASK" etc., or a literal id
  const char* field;
};

const Edit kEdits[] = {
    {"run_status", "UPDATE runs SET status = 'completed' WHERE id = '$RUN'", "runs", "$RUN",
     "status"},
    {"task_status", "UPDATE tasks SET status = 'done' WHERE id = '$TASK'", "tasks", "$TASK",
     "status"},
    {"lease_epoch", "UPDATE tasks SET lease_epoch = lease_epoch + 7 WHERE id = '$TASK'", "tasks",
     "$TASK", "lease_epoch"},
    {"lease_owner", "UPDATE tasks SET lease_owner = 'mallory' WHERE id = '$TASK'", "tasks", "$TASK",
     "lease_owner"},
    {"lease_expiry",
     "UPDATE tasks SET lease_expires_at = lease_expires_at + 86400000 WHERE id = '$TASK'", "tasks",
     "$TASK", "lease_expires_at"},
    {"admin_token_inserted",
     "INSERT INTO tokens (id, hash, agent_id, role, note, created_by, created_at) VALUES "
     "('tok-evil', 'deadbeef', 'mallory', 'admin', '', 'mallory', '2026-01-01T00:00:00Z')",
     "tokens", "tok-evil", "(row)"},
    {"token_role", "UPDATE tokens SET role = 'admin' WHERE id = '$TOKEN'", "tokens", "$TOKEN",
     "role"},
    {"token_revoked_forged",
     "UPDATE tokens SET revoked_at = '2026-01-01T00:00:00Z' WHERE id = '$TOKEN'", "tokens",
     "$TOKEN", "revoked"},
    {"agent_status", "UPDATE agents SET status = 'done' WHERE id = '$AGENT'", "agents", "$AGENT",
     "status"},
    {"agent_role", "UPDATE agents SET role = 'admin' WHERE id = '$AGENT'", "agents", "$AGENT",
     "role"},
};

void PrintTo(const Edit& e, std::ostream* os) { *os << e.name << ": " << e.sql; }

std::string Fill(std::string text, const Seeded& s) {
  for (auto [key, value] : {std::pair<std::string, std::string>{"$RUN", s.run},
                            {"$TASK", s.task},
                            {"$AGENT", s.agent},
                            {"$TOKEN", s.token}}) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key)) {
      text.replace(at, key.size(), value);
    }
  }
  return text;
}

class StateEditTest : public ::testing::TestWithParam<Edit> {};

TEST_P(StateEditTest, DeepVerifyNamesTheRowAndField) {
  const Edit& e = GetParam();
  TempDir dir;
  const std::string store = dir.File("baton.db");
  Seeded seeded;
  {
    auto api = OpenApi(store);
    seeded = Seed(*api);
    Status clean = Verify(*api, true);
    ASSERT_TRUE(clean.ok()) << "an untouched store fails verify --deep: " << clean.message();
  }
  const std::string sql = Fill(e.sql, seeded);
  RawSql(store, sql);
  auto api = OpenApi(store);
  // The chain and the structure are whole: plain verify has nothing to say.
  EXPECT_TRUE(Verify(*api, false).ok()) << sql;
  Status deep = Verify(*api, true);
  ASSERT_FALSE(deep.ok()) << "verify --deep missed: " << sql;
  EXPECT_EQ(deep.code(), StatusCode::kDataLoss) << deep.message();
  const std::string row = Fill(e.row, seeded);
  bool named = false;
  const Json details = deep.details();
  for (const Json& m :
       details.is_object() ? details.value("mismatches", Json::array()) : Json::array()) {
    if (m["table"] == e.table && m["row"] == row && m["field"] == e.field) named = true;
  }
  EXPECT_TRUE(named) << sql << "\nwanted " << e.table << " " << row << " " << e.field
                     << "\ngot: " << deep.details().dump();
  EXPECT_NE(deep.message().find(row), std::string::npos) << deep.message();
}

INSTANTIATE_TEST_SUITE_P(Tables, StateEditTest, ::testing::ValuesIn(kEdits),
                         [](const auto& info) { return std::string(info.param.name); });

// A store that went through claims, releases, failures, completions, an
// agent's moves and a revoked token still agrees with its ledger.
TEST(IntegrityTest, DeepVerifyPassesAfterOrdinaryWork) {
  auto api = OpenApi(":memory:");
  Seeded s = Seed(*api);
  Json t = MustCall(*api, "task.show", {{"id", s.task}});
  const Json epoch = t["lease"]["epoch"];
  MustCall(*api, "task.release", {{"task", s.task}, {"epoch", epoch}}, Agent(s.agent));
  Json again = MustCall(*api, "task.claim", {{"task", s.task}}, Agent(s.agent));
  MustCall(*api, "task.fail", {{"task", s.task}, {"epoch", again["lease"]["epoch"]}},
           Agent(s.agent));
  const std::string done = MustCall(*api, "task.create", {{"title", "finish"}})["id"];
  Json claim = MustCall(*api, "task.claim", {{"task", done}}, Agent(s.agent));
  MustCall(*api, "task.complete", {{"task", done}, {"epoch", claim["lease"]["epoch"]}},
           Agent(s.agent));
  MustCall(*api, "agent.set_status", {{"id", s.agent}, {"status", "idle"}}, Agent(s.agent));
  MustCall(*api, "agent.register", {{"id", "lead"}, {"role", "coordinator"}}, Coordinator());
  MustCall(*api, "token.revoke", {{"id", s.token}});
  Status deep = Verify(*api, true);
  EXPECT_TRUE(deep.ok()) << deep.message() << "\n" << deep.details().dump();
}

// ---- 6c: appending onto an edited chain --------------------------------------

TEST(IntegrityTest, EditedEventPayloadRefusesWritesNamingTheSeq) {
  TempDir dir;
  const std::string store = dir.File("baton.db");
  std::string run;
  {
    auto api = OpenApi(store);
    run = MustCall(*api, "run.create", {{"profile", "baton"}})["id"];
    for (int i = 0; i < 5; ++i) {
      MustCall(*api, "run.add_progress",
               {{"id", run}, {"description", "step " + std::to_string(i)}});
    }
  }
  const int64_t head = std::stoll(RawValue(store, "SELECT MAX(seq) FROM events"));
  const int64_t edited = head - 2;
  RawSql(store, "UPDATE events SET payload = '{\\\"description\\\":\\\"forged\\\"}' WHERE seq = " +
                    std::to_string(edited));
  auto api = OpenApi(store);
  Result<Json> write =
      api->Call("run.add_progress", {{"id", run}, {"description", "more"}}, Human());
  ASSERT_FALSE(write.ok()) << "a write was appended onto a chain edited at seq " << edited;
  EXPECT_EQ(write.status().code(), StatusCode::kDataLoss) << write.status().message();
  EXPECT_NE(write.status().message().find("seq " + std::to_string(edited)), std::string::npos)
      << write.status().message();
  EXPECT_EQ(std::stoll(RawValue(store, "SELECT MAX(seq) FROM events")), head);
  // Reads keep working.
  EXPECT_EQ(MustCall(*api, "run.show", {{"id", run}})["id"], run);
  // And a new process (the CLI, the server) refuses too.
  ProcessResult cli = RunBaton({"--store", store, "run", "add-progress", run, "cli"});
  EXPECT_EQ(cli.exit_code, 12) << cli.out << cli.err;
  EXPECT_NE(cli.err.find("seq " + std::to_string(edited)), std::string::npos) << cli.err;
}

// ---- 7: acknowledged writes lost with the WAL ----------------------------------

TEST(IntegrityTest, TruncatedWalRefusesWritesUntilTheLossIsAccepted) {
  TempDir dir;
  const std::string store = dir.File("baton.db");
  std::string run;
  int64_t before = 0;
  {
    auto api = OpenApi(store);
    run = MustCall(*api, "run.create", {{"profile", "baton"}})["id"];
    before = LedgerLength(*api);
  }  // checkpointed: what follows lives only in the WAL
  constexpr int kAcknowledged = 5;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A writer that is killed with its acknowledged commits still in the WAL.
    Result<std::unique_ptr<Api>> api = Api::Open(ApiOptions{.store = {.location = store}});
    bool ok = api.ok();
    for (int i = 0; ok && i < kAcknowledged; ++i) {
      ok = (*api)
               ->Call("run.add_progress",
                      {{"id", run}, {"description", "acknowledged " + std::to_string(i)}}, Human())
               .ok();
    }
    const char byte = ok ? 'y' : 'n';
    (void)!write(ready[1], &byte, 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(byte, 'y') << "the child's writes failed";
  ASSERT_GT(std::filesystem::file_size(store + "-wal"), 0u);
  std::filesystem::resize_file(store + "-wal", 0);

  const std::string missing =
      std::to_string(before + 1) + ".." + std::to_string(before + kAcknowledged);
  auto api = OpenApi(store);
  EXPECT_EQ(LedgerLength(*api), before) << "the truncation did not drop the commits";
  Result<Json> write =
      api->Call("run.add_progress", {{"id", run}, {"description", "after"}}, Human());
  ASSERT_FALSE(write.ok()) << "a write was accepted on a store missing events " << missing;
  EXPECT_EQ(write.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(write.status().message().find("the store is missing events " + missing +
                                          " that were acknowledged"),
            std::string::npos)
      << write.status().message();
  EXPECT_EQ(MustCall(*api, "run.show", {{"id", run}})["id"], run);  // reads work
  Status verify = Verify(*api, false);
  EXPECT_EQ(verify.code(), StatusCode::kDataLoss) << verify.message();
  EXPECT_NE(verify.message().find("missing events " + missing), std::string::npos)
      << verify.message();
  // Only the human or an admin accepts a loss.
  EXPECT_EQ(api->Call("store.accept_loss", Json::object(), Agent()).status().code(),
            StatusCode::kPermissionDenied);
  api.reset();

  ProcessResult cli_verify = RunBaton({"--store", store, "verify"});
  EXPECT_EQ(cli_verify.exit_code, 12) << cli_verify.out << cli_verify.err;
  ProcessResult accept = RunBaton({"--store", store, "--output", "json", "store", "accept-loss"});
  ASSERT_EQ(accept.exit_code, 0) << accept.out << accept.err;
  Json accepted = Json::parse(accept.out, nullptr, false);
  EXPECT_EQ(accepted["from"], before + 1) << accept.out;
  EXPECT_EQ(accepted["to"], before + kAcknowledged) << accept.out;

  api = OpenApi(store);
  Json loss = MustCall(*api, "ledger.events", {{"kind", "store.loss_accepted"}});
  ASSERT_EQ(loss["events"].size(), 1u) << loss.dump();
  EXPECT_EQ(loss["events"][0]["payload"]["to"], before + kAcknowledged);
  MustCall(*api, "run.add_progress", {{"id", run}, {"description", "writes work again"}});
  EXPECT_TRUE(Verify(*api, false).ok());
  EXPECT_TRUE(Verify(*api, true).ok()) << Verify(*api, true).message();
  // A second acceptance has nothing to accept.
  EXPECT_EQ(api->Call("store.accept_loss", Json::object(), Human()).status().code(),
            StatusCode::kFailedPrecondition);
}

// The witness follows every committed batch.
TEST(IntegrityTest, WitnessFileHoldsTheHeadAfterEachWrite) {
  TempDir dir;
  const std::string store = dir.File("baton.db");
  auto api = OpenApi(store);
  const std::string run = MustCall(*api, "run.create", {{"profile", "baton"}})["id"];
  for (int i = 0; i < 3; ++i) {
    MustCall(*api, "run.add_progress", {{"id", run}, {"description", std::to_string(i)}});
    std::ifstream in(store + ".head");
    Json witness = Json::parse(in, nullptr, false);
    ASSERT_TRUE(witness.is_object()) << "no witness record beside " << store;
    Json status = MustCall(*api, "store.status", Json::object());
    EXPECT_EQ(witness["seq"], status["ledger"]["head_seq"]) << witness.dump();
    EXPECT_EQ(witness["hash"], status["ledger"]["head_hash"]) << witness.dump();
  }
}

// The writer keeps the witness file open between commits: a file removed,
// renamed over or moved away while it runs (or removed while another link
// keeps it) is written again at its path at the next commit, and a symbolic
// link planted at its path is not followed — the file it names keeps its
// bytes.
TEST(IntegrityTest, AWitnessFileRemovedOrReplacedIsWrittenAgainAndASymlinkIsNotFollowed) {
  namespace fs = std::filesystem;
  TempDir dir;
  const std::string store = dir.File("baton.db");
  const std::string witness = store + ".head";
  auto api = OpenApi(store);
  const std::string run = MustCall(*api, "run.create", {{"profile", "baton"}})["id"];
  auto head_seq = [&] {
    std::ifstream in(witness);
    Json record = Json::parse(in, nullptr, false);
    return record.is_object() ? record["seq"] : Json();
  };
  // A note written; the witness then holds its seq.
  auto write = [&](const std::string& what) {
    const Json seq =
        MustCall(*api, "run.add_progress", {{"id", run}, {"description", what}})["seq"];
    EXPECT_EQ(head_seq(), seq) << what;
  };
  write("first");
  fs::remove(witness);
  write("after removal");
  {
    std::ofstream other(dir.File("other"));
    other << "{}";
  }
  fs::rename(dir.File("other"), witness);
  write("after a rename over it");
  EXPECT_EQ(fs::file_size(witness), 160u);
  fs::rename(witness, dir.File("moved.head"));
  write("after it was moved away");
  fs::create_hard_link(witness, dir.File("linked.head"));
  fs::remove(witness);
  write("after a second link kept it");

  const std::string target = dir.File("precious.txt");
  const std::string precious(4096, 'p');
  {
    std::ofstream out(target);
    out << precious;
  }
  fs::remove(witness);
  fs::create_symlink(target, witness);
  MustCall(*api, "run.add_progress", {{"id", run}, {"description", "through a symlink?"}});
  // The commit stood; the witness was refused.
  EXPECT_TRUE(fs::is_symlink(witness));
  // verify names the rule (it does not read the file the link names).
  Status verified = Verify(*api, false);
  EXPECT_NE(verified.message().find("is a symbolic link; a witness is never read or written"),
            std::string::npos)
      << verified.ToString();
  std::ifstream in(target);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, precious) << "the witness was written through a symlink";
}

// A store restored from an older copy, its witness file gone with it: the
// seed-file mirror still carries the head it was written at, and that is
// enough to refuse writes onto a store that lost acknowledged commits.
TEST(IntegrityTest, AMirrorWitnessesTheHeadWhenTheWitnessFileIsGoneToo) {
  namespace fs = std::filesystem;
  TempDir dir;
  const std::string store = dir.File("baton.db");
  const std::string mirror = dir.File("state.json");
  std::string run;
  {
    auto api = OpenApi(store);
    run = MustCall(*api, "run.create", {{"profile", "graph"}})["id"];
    MustCall(*api, "mirror.bind", {{"run", run}, {"format", "graph"}, {"path", mirror}});
  }
  // The copy a backup would hold (the last connection checkpointed the WAL).
  fs::copy_file(store, dir.File("backup.db"));
  {
    auto api = OpenApi(store);
    for (int i = 0; i < 3; ++i) {
      MustCall(*api, "run.add_progress", {{"id", run}, {"description", std::to_string(i)}});
    }
  }
  ProcessResult attr = RunShell("python3 -c \"import os; print(os.getxattr('" + mirror +
                                "', 'user.baton.head').decode())\"");
  ASSERT_EQ(attr.exit_code, 0) << "the mirror carries no head: " << attr.err;
  // Restore the older copy; the witness file goes with the newer store.
  for (const char* suffix : {"", "-wal", "-shm", ".head"}) fs::remove(store + suffix);
  fs::copy_file(dir.File("backup.db"), store);

  auto api = OpenApi(store);
  Result<Json> write =
      api->Call("run.add_progress", {{"id", run}, {"description", "onto the past"}}, Human());
  ASSERT_FALSE(write.ok()) << "a write went onto a store missing acknowledged events";
  EXPECT_EQ(write.status().code(), StatusCode::kDataLoss) << write.status().ToString();
  EXPECT_NE(write.status().ToString().find("missing events"), std::string::npos)
      << write.status().ToString();
  EXPECT_NE(write.status().ToString().find(mirror), std::string::npos)
      << "the refusal should name the mirror that saw the head: " << write.status().ToString();
}

}  // namespace
}  // namespace baton::testing
