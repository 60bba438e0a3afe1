// SinfoniaIndexOf (formats/sinfonia_format.h) against the sinfonia.state
// operation: for a run the sinfonia operations made, the index built from
// the run's image is the operation's answer, at every stage of the run; and
// the written index reads back as the same workflow.

#include <gtest/gtest.h>

#include "engine/core/core_services.h"
#include "formats/format.h"
#include "formats/sinfonia_format.h"
#include "store/store.h"
#include "test_util.h"

namespace baton {
namespace {

using testing::Coordinator;
using testing::MustCall;

const std::string kFixture =
    BATON_SOURCE_DIR "/../shared/fixtures/seeds/sinfonia/workflows/create-prd";

// The run's image, read as engine/interchange/imports.cc ExportImage reads it (the rows
// sinfonia.state looks at).
RunImage ImageOf(const std::string& location, const std::string& run_id) {
  Result<std::unique_ptr<Store>> store =
      Store::Open({.location = testing::TestStoreLocation(location)});
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  Result<std::unique_ptr<Connection>> conn = (*store)->Connect();
  EXPECT_TRUE(conn.ok());
  Result<std::unique_ptr<Txn>> txn = (*conn)->Begin(TxnMode::kRead);
  EXPECT_TRUE(txn.ok());
  Txn& t = **txn;
  // Rows of one query (held, so a range-for does not outlive them).
  const auto rows = [&](std::string_view sql) {
    Result<std::vector<Row>> r = t.Query(sql, {SqlText(run_id)});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *std::move(r) : std::vector<Row>();
  };
  RunImage image = {{"image", 1}, {"run", RunToJson(*LoadRun(t, run_id))}};
  Json tasks = Json::array();
  for (const Row& r : rows("SELECT id FROM tasks WHERE run_id = ? ORDER BY position, "
                           "created_at, id")) {
    const Json task = TaskToJson(*LoadTask(t, r.Str(0)));
    tasks.push_back(
        {{"ref", task["kind"].get<std::string>() + ":" + task["key"].get<std::string>()},
         {"id", task["id"]},
         {"key", task["key"]},
         {"kind", task["kind"]},
         {"title", task["title"]},
         {"body", task["body"]},
         {"status", task["status"]},
         {"position", task["position"]},
         {"assignee", task["assignee"]},
         {"attempts", task["attempts"]},
         {"meta", task["meta"]},
         {"created_at", task["created_at"]},
         {"updated_at", task["updated_at"]}});
  }
  image["tasks"] = tasks;
  Json approvals = Json::array();
  for (const Row& r : rows("SELECT subject_kind, subject, decision, reviewer, note, "
                           "created_at, meta FROM approvals WHERE run_id = ? ORDER BY seq")) {
    approvals.push_back({{"subject_kind", r.Str(0)},
                         {"subject", r.Str(1)},
                         {"decision", r.Str(2)},
                         {"reviewer", r.Str(3)},
                         {"note", r.Str(4)},
                         {"time", r.Str(5)},
                         {"meta", Json::parse(r.Str(6))}});
  }
  image["approvals"] = approvals;
  Json sessions = Json::array();
  for (const Row& r : rows("SELECT id, status, started_at, last_active_at FROM sessions "
                           "WHERE run_id = ? ORDER BY started_at, id")) {
    sessions.push_back({{"id", r.Str(0)},
                        {"status", r.Str(1)},
                        {"started_at", r.Str(2)},
                        {"last_active_at", r.Str(3)},
                        {"meta", Json::object()}});
  }
  image["sessions"] = sessions;
  Json handoffs = Json::array();
  for (const Row& r : rows("SELECT id, session_id, sequence, source, target, type, status, "
                           "body, meta, created_at, updated_at FROM handoffs WHERE run_id = ? "
                           "ORDER BY sequence")) {
    handoffs.push_back({{"id", r.Str(0)},
                        {"session_id", r.Str(1)},
                        {"sequence", r.Int(2)},
                        {"source", r.Str(3)},
                        {"target", r.Str(4)},
                        {"type", r.Str(5)},
                        {"status", r.Str(6)},
                        {"body", r.Str(7)},
                        {"meta", Json::parse(r.Str(8))},
                        {"created_at", r.Str(9)},
                        {"updated_at", r.Str(10)}});
  }
  image["handoffs"] = handoffs;
  return image;
}

class SinfoniaIndexStateTest : public ::testing::Test {
 protected:
  void SetUp() override { api_ = testing::OpenApi(db_); }

  // The index of the run's image is sinfonia.state's answer, and its
  // workflow.md reads back as the same workflow.
  void ExpectSameAsState(const std::string& run, const std::string& when) {
    const Json state = MustCall(*api_, "sinfonia.state", {{"run", run}});
    const RunImage image = ImageOf(db_, run);
    Result<Json> index = SinfoniaIndexOf(image);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ(*index, state) << when << "\nindex: " << index->dump(1)
                             << "\nstate: " << state.dump(1);
    Result<FormatOutput> out = WriteSinfoniaIndex(image);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    Result<RunImage> read = ReadSinfoniaIndex(out->text, "workflow.md");
    ASSERT_TRUE(read.ok()) << read.status().ToString() << "\n" << out->text;
    EXPECT_EQ((*read)["run"]["status"], state["workflow_status"]) << when;
    EXPECT_EQ((*read)["run"]["cursor"], state["current_step"]) << when;
    EXPECT_EQ((*read)["run"]["cursor_index"], state["current_step_index"]) << when;
    ASSERT_EQ((*read)["tasks"].size(), state["steps"].size()) << when;
    for (size_t i = 0; i < state["steps"].size(); ++i) {
      EXPECT_EQ((*read)["tasks"][i]["key"], state["steps"][i]["step"]) << when;
      EXPECT_EQ((*read)["tasks"][i]["status"], state["steps"][i]["status"]) << when;
      EXPECT_EQ((*read)["tasks"][i]["meta"]["notes"], state["steps"][i]["notes"]) << when;
    }
    EXPECT_EQ((*read)["approvals"].size(), state["decisions"].size()) << when;
    EXPECT_EQ((*read)["handoffs"].size(), state["artifacts"].size()) << when;
    EXPECT_EQ((*read)["sessions"].size(), state["sessions"].size()) << when;
    EXPECT_EQ(WriteSinfoniaIndex(*read)->text, out->text) << when;
  }

  testing::TempDir dir_;
  std::string db_ = dir_.File("baton.db");
  std::unique_ptr<Api> api_;
};

TEST_F(SinfoniaIndexStateTest, IndexOfTheImageIsSinfoniaState) {
  // The fixture lies outside the test store's project folder: the caller
  // needs the grant "paths", as the terminal user holds it.
  Actor coordinator = Coordinator();
  coordinator.grants = {std::string(kGrantPaths)};
  const Json started = MustCall(
      *api_, "sinfonia.start",
      {{"workflow_dir", kFixture}, {"goal", "PRD | exports"}, {"run", "prd-1"}}, coordinator);
  ASSERT_EQ(started["run_id"], "prd-1");
  ExpectSameAsState("prd-1", "started");

  MustCall(*api_, "sinfonia.complete_step", {{"run", "prd-1"}, {"index", 1}}, Coordinator());
  const Json ret = MustCall(*api_, "sinfonia.handoff",
                            {{"run", "prd-1"},
                             {"type", "return"},
                             {"source", "libretto"},
                             {"target", "maestro"},
                             {"body", "Draft ready"}},
                            Coordinator());
  MustCall(*api_, "approval.reject",
           {{"run", "prd-1"},
            {"subject_kind", "handoff"},
            {"subject", ret["id"]},
            {"note", "Add non-goals | and risks"}});
  ExpectSameAsState("prd-1", "rejected");

  MustCall(*api_, "sinfonia.retry", {{"run", "prd-1"}, {"note", "timed out"}}, Coordinator());
  MustCall(*api_, "sinfonia.session", {{"run", "prd-1"}}, Coordinator());
  MustCall(*api_, "approval.approve",
           {{"run", "prd-1"}, {"subject_kind", "step"}, {"subject", "02-draft-prd"}});
  MustCall(*api_, "sinfonia.skip", {{"run", "prd-1"}, {"note", "not needed"}}, Coordinator());
  ExpectSameAsState("prd-1", "approved and skipped");

  MustCall(*api_, "sinfonia.abort", {{"run", "prd-1"}, {"note", "stop"}}, Coordinator());
  ExpectSameAsState("prd-1", "aborted");
}

}  // namespace
}  // namespace baton
