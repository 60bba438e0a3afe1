// `baton store migrate` (store.migrate, store/copy_store.h): a whole SQLite
// store into an empty PostgreSQL database, all or nothing.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ops/api.h"
#include "pg_test_db.h"
#include "test_env.h"
#include "test_util.h"

namespace baton {
namespace {

using testing::Coordinator;
using testing::Granted;
using testing::Human;
using testing::MustCall;
using testing::TempDir;

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kSeeds = std::string(BATON_SOURCE_DIR) + "/../shared/fixtures/seeds/";
const std::string kData = std::string(BATON_SOURCE_DIR) + "/tests/data/";

// A store holding rows of every kind: runs imported from each seed system's
// files, tasks claimed, agents, mail and chat, a question, a board, a
// mirror. The runs and the formats they export to.
std::vector<std::pair<std::string, std::string>> FillStore(Api& api, const std::string& dir) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"sgai", kSeeds + "sgai/golden_state.json"},
      {"stigmergy", kSeeds + "stigmergy/state-tmpl.v3.0.json"},
      {"sinfonia", kSeeds + "sinfonia/handoffs/s-20260305-003/workflow.md"},
      {"genie-wish", kData + "genie/wish-state.json"},
      {"genie-board", kData + "genie/roadmap-v2-excerpt.json"},
      {"graph", kData + "graph/numbers-and-keys.input.json"},
  };
  std::vector<std::pair<std::string, std::string>> runs;
  for (const auto& [format, path] : files) {
    const Json imported =
        MustCall(api, "run.import", {{"format", format}, {"content", FileText(path)}}, Human());
    runs.emplace_back(imported["run_id"].get<std::string>(), format);
  }
  const std::string run = runs.front().first;
  MustCall(api, "agent.register", {{"id", "coder"}}, testing::Agent("coder"));
  const std::string task =
      MustCall(api, "task.create", {{"title", "write it"}}, Coordinator())["id"];
  MustCall(api, "task.claim", {{"task", task}}, testing::Agent("coder"));
  MustCall(api, "mail.send", {{"to", "coder"}, {"body", "look at the parser"}}, Coordinator());
  MustCall(api, "chat.post", {{"channel", "general"}, {"body", "hello"}}, Coordinator());
  const Json questions = Json::array(
      {{{"question", "Ship it?"}, {"choices", {"yes", "no"}}, {"multiSelect", false}}});
  MustCall(api, "question.ask", {{"run", run}, {"questions", questions}}, Coordinator());
  MustCall(api, "board.create",
           {{"name", "sprint"}, {"columns", {{{"name", "hold"}, {"gate", "human"}}, {{"name", "done"}}}}},
           Coordinator());
  MustCall(api, "mirror.bind",
           {{"run", run}, {"format", "sgai"}, {"path", dir + "/state.json"}}, Granted(Human()));
  return runs;
}

TEST(StoreMigrateOnPostgresTest, EveryRowArrivesAndEveryExportIsByteEqual) {
  TempDir dir;
  std::unique_ptr<Api> source = testing::OpenApi(dir.File("baton.db"));
  const auto runs = FillStore(*source, dir.path());
  // Rows PostgreSQL refuses in the order they were made: a task on a board
  // (the tasks table is older than the boards one), and a task whose parent
  // is more than a page of rows after it.
  const std::string task = MustCall(*source, "task.create", {{"title", "on the board"}})["id"];
  MustCall(*source, "board.add_task", {{"board", "sprint"}, {"task", task}}, Coordinator());
  const std::string parent = MustCall(*source, "task.create", {{"title", "parent"}})["id"];
  MustCall(*source, "task.create", {{"title", "child"}, {"parent", parent}});
  const std::string sql =
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600) "
      "INSERT INTO tasks (id, kind, title, machine, status, created_at, updated_at) "
      "SELECT 'filler-' || i, kind, 'filler', machine, status, created_at, updated_at "
      "FROM n, tasks WHERE tasks.id = '" + parent + "'; "
      "UPDATE tasks SET rowid = (SELECT max(rowid) + 1 FROM tasks) WHERE id = '" + parent + "';";
  ASSERT_EQ(testing::RunShell("sqlite3 '" + dir.File("baton.db") + "' \"" + sql + "\"").exit_code, 0);
  const std::string location = testing::NewEmptyPostgresDatabase();

  const Json migrated = MustCall(
      *source, "store.migrate", {{"from", dir.File("baton.db")}, {"to", location}}, Human());
  EXPECT_EQ(migrated["ledger"]["events"], testing::LedgerLength(*source));
  EXPECT_GT(migrated["rows"].get<int64_t>(), 50) << migrated.dump();

  std::unique_ptr<Api> target = testing::OpenApi(location);
  const Json verified = MustCall(*target, "ledger.verify", Json::object());
  EXPECT_EQ(verified["events"], testing::LedgerLength(*source)) << verified.dump();
  EXPECT_EQ(MustCall(*target, "store.status", Json::object())["counts"],
            MustCall(*source, "store.status", Json::object())["counts"]);
  for (const auto& [run, format] : runs) {
    const Json in = {{"run", run}, {"format", format}};
    EXPECT_EQ(MustCall(*target, "run.export", in)["content"],
              MustCall(*source, "run.export", in)["content"])
        << run << " as " << format;
  }
  // The copy goes on as a store of its own: new rows get new ids.
  MustCall(*target, "mail.send", {{"to", "coder"}, {"body", "after the move"}}, Coordinator());
  MustCall(*target, "run.create", {{"title", "after the move"}});
  EXPECT_EQ(MustCall(*target, "ledger.verify", Json::object())["events"],
            testing::LedgerLength(*source) + 2);
}

TEST(StoreMigrateOnPostgresTest, ATargetWithRowsIsRefusedAndAFailedCopyKeepsNothing) {
  TempDir dir;
  std::unique_ptr<Api> source = testing::OpenApi(dir.File("baton.db"));
  FillStore(*source, dir.path());

  // A database that already holds a store.
  const std::string used = testing::NewPostgresStore();
  MustCall(*testing::OpenApi(used), "run.create", {{"title", "already here"}});
  Status s = testing::Refused(*source, "store.migrate",
                              {{"from", dir.File("baton.db")}, {"to", used}},
                              StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("already holds 1 rows in runs"), std::string::npos) << s.message();

  // A source whose chain is broken: the copy runs to the end, the check
  // refuses, and the target keeps nothing.
  const std::string empty = testing::NewEmptyPostgresDatabase();
  ASSERT_EQ(testing::RunShell("sqlite3 '" + dir.File("baton.db") +
                              "' \"UPDATE events SET summary = 'forged' WHERE seq = 3\"")
                .exit_code,
            0);
  s = testing::Refused(*source, "store.migrate", {{"from", dir.File("baton.db")}, {"to", empty}},
                       StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("seq 3"), std::string::npos) << s.message();
  EXPECT_EQ(MustCall(*testing::OpenApi(empty), "store.status", Json::object())["ledger"]["head_seq"],
            0);

  // The store's own file named with a NUL after it, or relatively, goes
  // through the path rules like any other.
  s = testing::Refused(*source, "store.migrate",
                       {{"from", dir.File("baton.db") + std::string(1, '\0') + "x"}, {"to", empty}},
                       StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("from"), std::string::npos) << s.message();
  testing::Refused(*source, "store.migrate", {{"from", "baton.db"}, {"to", empty}},
                   StatusCode::kInvalidArgument);

  // Only to a PostgreSQL database, and only the human.
  s = testing::Refused(*source, "store.migrate",
                       {{"from", dir.File("baton.db")}, {"to", dir.File("other.db")}},
                       StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("to:"), std::string::npos) << s.message();
  testing::Refused(*source, "store.migrate", {{"from", dir.File("baton.db")}, {"to", empty}},
                   StatusCode::kPermissionDenied, Coordinator());
}

}  // namespace
}  // namespace baton
