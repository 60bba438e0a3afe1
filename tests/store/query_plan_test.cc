// Reads of one object cost what that object holds, whatever the store has
// seen (issue 21): every statement that run.show, task.show, agent.show,
// ledger.events of one run and store.status run is planned, on each backend,
// without reading a table that grows with history from end to end (but for
// an index walked in order up to a LIMIT, with nothing to skip), and a
// statement that names one run finds its rows through that run.
//
// The statements are the ones the operations really send: a wrapping store
// asks the database for each one's plan, with its own parameters, inside the
// same transaction. On PostgreSQL sequential scans are priced out first
// (enable_seqscan = off), so that what is left is what the indexes allow, not
// what a small table makes cheapest.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "backend_test.h"
#include "store/store_wrapper.h"
#include "test_util.h"

namespace baton {
namespace {

// Tables whose rows accumulate as the store is used.
const std::vector<std::string> kGrowing = {
    "events",   "runs",           "tasks",    "task_deps",         "messages",
    "chat_messages", "questions", "handoffs", "approvals",         "sessions",
    "usage",    "graph_checkpoints", "graph_messages", "graph_context_values", "idempotency",
    "inbox_dismissals"};

bool Growing(const std::string& table) {
  for (const std::string& t : kGrowing) {
    if (t == table) return true;
  }
  return false;
}

struct Plan {
  std::string sql;
  std::vector<std::string> lines;  // EXPLAIN's, one per plan row
};

struct PlanLog {
  std::mutex mu;
  bool on = false;
  std::vector<Plan> plans;
};

class ExplainingTxn final : public TxnWrapper {
 public:
  ExplainingTxn(std::unique_ptr<Txn> target, std::shared_ptr<PlanLog> log)
      : TxnWrapper(std::move(target)), log_(std::move(log)) {}
  using Txn::Query;
  Result<std::vector<Row>> Query(std::string_view sql, SqlParams params) override {
    bool on;
    {
      std::lock_guard<std::mutex> lock(log_->mu);
      on = log_->on;
    }
    if (on && (sql.substr(0, 6) == "SELECT" || sql.substr(0, 4) == "WITH")) Explain(sql, params);
    return TxnWrapper::Query(sql, params);
  }

 private:
  void Explain(std::string_view sql, SqlParams params) {
    const bool pg = dialect() == SqlDialect::kPostgres;
    if (pg) {
      ASSERT_TRUE(TxnWrapper::Exec("SET LOCAL enable_seqscan = off", {}).ok());
    }
    Result<std::vector<Row>> rows = TxnWrapper::Query(
        std::string(pg ? "EXPLAIN " : "EXPLAIN QUERY PLAN ") + std::string(sql), params);
    if (pg) {
      ASSERT_TRUE(TxnWrapper::Exec("SET LOCAL enable_seqscan = on", {}).ok());
    }
    ASSERT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    Plan plan{std::string(sql), {}};
    for (const Row& r : *rows) plan.lines.push_back(r.Str(pg ? 0 : 3));  // SQLite: "detail"
    std::lock_guard<std::mutex> lock(log_->mu);
    log_->plans.push_back(std::move(plan));
  }

  std::shared_ptr<PlanLog> log_;
};

using ExplainingStore = TxnWrappingStore<ExplainingTxn, PlanLog>;

// The table each name in "sql"'s FROM and JOIN clauses stands for: SQLite
// names a table by its alias in a plan ("SCAN e" for "FROM events e").
std::map<std::string, std::string> Aliases(const std::string& sql) {
  static const std::regex kFrom(R"((?:FROM|JOIN) (\w+)(?: AS)?(?: (\w+))?)");
  static const std::set<std::string> kNotAlias = {"WHERE", "JOIN", "LEFT", "INNER", "ON",
                                                  "ORDER", "GROUP", "LIMIT", "USING", "CROSS"};
  std::map<std::string, std::string> tables;
  for (auto it = std::sregex_iterator(sql.begin(), sql.end(), kFrom); it != std::sregex_iterator();
       ++it) {
    const std::string table = (*it)[1];
    tables[table] = table;
    if ((*it)[2].matched && kNotAlias.count((*it)[2]) == 0) tables[(*it)[2]] = table;
  }
  return tables;
}

// What is wrong with "plan", or "" — see the file's comment.
std::string Fault(const Plan& plan) {
  const std::map<std::string, std::string> aliases = Aliases(plan.sql);
  const bool names_a_run = plan.sql.find("run_id = ?") != std::string::npos;
  // An index walked in its order with nothing to skip stops at the LIMIT.
  const bool walk_stops = plan.sql.find(" LIMIT ") != std::string::npos &&
                          plan.sql.find(" WHERE ") == std::string::npos;
  // SQLite: "SCAN events", "SEARCH events USING INDEX events_kind (kind=?)".
  static const std::regex kSqlite(
      R"(^(SCAN|SEARCH) (\w+))"
      R"((?: USING (?:COVERING )?INDEX \w+ \((.*)\)| USING INTEGER PRIMARY KEY \((.*)\))?)");
  // PostgreSQL: "Seq Scan on events", "Index Scan using events_kind on events e".
  static const std::regex kPgNode(
      R"(((?:Seq|Index|Index Only|Bitmap Heap) Scan)(?: Backward)?(?: using \w+)? on (\w+))");
  for (size_t i = 0; i < plan.lines.size(); ++i) {
    const std::string& line = plan.lines[i];
    std::smatch m;
    if (std::regex_search(line, m, kSqlite) && m.position(0) == 0) {
      const auto named = aliases.find(m[2]);
      const std::string table = named == aliases.end() ? m[2].str() : named->second;
      if (!Growing(table)) continue;
      const std::string cond = m[3].matched ? m[3].str() : m[4].str();
      const bool ordered = line.find(" USING INDEX ") != std::string::npos ||
                           line.find(" USING COVERING INDEX ") != std::string::npos;
      if (m[1] == "SCAN" && !(ordered && walk_stops)) return "reads all of " + table + ": " + line;
      if (table == "events" && names_a_run && cond.find("run_id=") == std::string::npos) {
        return "finds one run's events without the run: " + line;
      }
      continue;
    }
    if (!std::regex_search(line, m, kPgNode)) continue;
    const std::string table = m[2];
    if (!Growing(table)) continue;
    if (m[1] == "Seq Scan") return "reads all of " + table + ": " + line;
    // The node's details follow it, until the next node.
    std::string cond;
    for (size_t j = i + 1; j < plan.lines.size() && plan.lines[j].find("->") == std::string::npos;
         ++j) {
      if (plan.lines[j].find("Index Cond:") != std::string::npos ||
          plan.lines[j].find("Recheck Cond:") != std::string::npos) {
        cond += plan.lines[j];
      }
    }
    if (cond.empty() && !(m[1] != "Bitmap Heap Scan" && walk_stops)) {
      return "reads all of an index of " + table + ": " + line;
    }
    if (table == "events" && names_a_run && cond.find("run_id") == std::string::npos) {
      return "finds one run's events without the run: " + line;
    }
  }
  return "";
}

class QueryPlanTest : public testing::BackendTest {
 protected:
  void SetUp() override {
    ApiOptions options;
    options.store.location = Location();
    options.group_commit = GroupCommit();
    options.wrap_store = [log = log_](std::unique_ptr<Store> store) -> std::unique_ptr<Store> {
      return std::make_unique<ExplainingStore>(std::move(store), log);
    };
    Result<std::unique_ptr<Api>> api = Api::Open(options);
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = std::move(api).value();
  }

  // The plans of what "op" sent, each with its fault if it has one.
  std::vector<std::string> Faults(const std::string& op, const Json& in) {
    {
      std::lock_guard<std::mutex> lock(log_->mu);
      log_->plans.clear();
      log_->on = true;
    }
    testing::MustCall(*api_, op, in);
    std::lock_guard<std::mutex> lock(log_->mu);
    log_->on = false;
    EXPECT_FALSE(log_->plans.empty()) << op << " sent no SELECT";
    std::vector<std::string> faults;
    for (const Plan& p : log_->plans) {
      const std::string fault = Fault(p);
      if (fault.empty()) continue;
      std::string text = op + ": " + fault + "\n  in: " + p.sql + "\n  plan:";
      for (const std::string& line : p.lines) text += "\n    " + line;
      faults.push_back(text);
    }
    return faults;
  }

  std::shared_ptr<PlanLog> log_ = std::make_shared<PlanLog>();
  std::unique_ptr<Api> api_;
};

TEST_P(QueryPlanTest, ReadsOfOneObjectUseThatObjectsIndexes) {
  testing::MustCall(*api_, "agent.register", {{"id", "ann"}}, testing::Coordinator());
  const Json small = testing::MustCall(*api_, "run.create", {{"title", "small"}})["id"];
  const Json big = testing::MustCall(*api_, "run.create", {{"title", "big"}})["id"];
  for (int i = 0; i < 40; ++i) {
    testing::MustCall(*api_, "run.add_progress",
                      {{"id", i % 8 == 0 ? small : big}, {"description", "step"}});
  }
  const Json task = testing::MustCall(*api_, "task.create", {{"run", small}, {"title", "t"}})["id"];
  testing::MustCall(*api_, "task.claim", {{"task", task}}, testing::Agent("ann"));

  std::vector<std::string> faults;
  auto check = [&](const std::string& op, const Json& in) {
    for (std::string& f : Faults(op, in)) faults.push_back(std::move(f));
  };
  check("run.show", {{"id", small}});
  check("run.show", {{"id", small}, {"progress_limit", 2}});
  check("task.show", {{"id", task}});
  check("agent.show", {{"id", "ann"}});
  check("ledger.events", {{"run", small}});
  check("ledger.events", {{"run", small}, {"kind", "run.progress"}});
  check("store.status", Json::object());
  for (const std::string& f : faults) ADD_FAILURE() << f;
  // The counts it shows are kept, not counted: still right.
  const Json status = testing::MustCall(*api_, "store.status", Json::object());
  EXPECT_EQ(status["counts"]["runs"], 2);
  EXPECT_EQ(status["counts"]["tasks"], 1);
  EXPECT_EQ(status["counts"]["projects"], 0);
  EXPECT_EQ(status["counts"]["events"], status["ledger"]["head_seq"]);
  EXPECT_EQ(status["counts"]["events"],
            testing::MustCall(*api_, "ledger.verify", Json::object())["events"]);
}

// The check itself, on plans as each backend writes them: it must see a
// full read through an alias, an index that leaves the run out, and let an
// ordered walk to a LIMIT and a search through the run pass.
TEST(QueryPlanFaultTest, NamesFullReadsAndRunlessSearches) {
  auto fault = [](std::string sql, std::vector<std::string> lines) {
    return Fault(Plan{std::move(sql), std::move(lines)});
  };
  EXPECT_NE(fault("SELECT COUNT(*) FROM events e", {"SCAN e"}), "");
  EXPECT_NE(fault("SELECT m.seq FROM messages AS m WHERE m.body = ?", {"SCAN m"}), "");
  EXPECT_NE(fault("SELECT seq FROM events WHERE run_id = ? AND kind = ?",
                  {"SEARCH events USING INDEX events_kind (kind=?)"}),
            "");
  EXPECT_NE(fault("SELECT seq FROM events e WHERE e.run_id = ? AND e.kind = ?",
                  {"SEARCH e USING INDEX events_kind (kind=?)"}),
            "")
      << "an alias hides nothing";
  EXPECT_NE(fault("SELECT COUNT(*) FROM runs", {"Aggregate  (cost=1..2 rows=1 width=8)",
                                                "  ->  Seq Scan on runs  (cost=0..1 rows=1)"}),
            "");
  EXPECT_NE(fault("SELECT COUNT(*) FROM runs",
                  {"Aggregate", "  ->  Index Only Scan using runs_status on runs  (cost=0..1)"}),
            "");
  EXPECT_EQ(fault("SELECT id FROM runs ORDER BY updated_at DESC LIMIT 200",
                  {"SCAN runs USING INDEX runs_updated"}),
            "");
  EXPECT_EQ(fault("SELECT seq FROM events WHERE run_id = ? AND kind = ?",
                  {"SEARCH events USING INDEX events_run_kind (run_id=? AND kind=?)"}),
            "");
  EXPECT_EQ(fault("SELECT seq FROM events WHERE run_id = ?",
                  {"Index Scan using events_run on events  (cost=0..1)",
                   "  Index Cond: (run_id = 'r'::text)"}),
            "");
}

BATON_INSTANTIATE_BACKENDS(QueryPlanTest);

}  // namespace
}  // namespace baton
