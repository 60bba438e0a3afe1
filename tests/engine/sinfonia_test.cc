// The Sinfonia profile (docs/profiles/sinfonia.md) through Api::Call: the
// workflow machine, step discovery, completeStep, the approval gate, the
// failure actions, sessions, compaction and resume.

#include "engine/profiles/sinfonia/sinfonia.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "test_util.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::LedgerLength;

// This suite's callers hold every grant: its repositories, clones and
// workflow folders live in temporary folders of their own, outside the
// store's project folder ("paths"; docs/security-paths.md).
using testing::Granted;
Actor Human() { return Granted(testing::Human()); }
Actor Coordinator() { return Granted(testing::Coordinator()); }

Json MustCall(Api& api, const std::string& op, const Json& input, const Actor& actor = Human()) {
  return testing::MustCall(api, op, input, actor);
}

const std::string kFixture =
    BATON_SOURCE_DIR "/../shared/fixtures/seeds/sinfonia/workflows/create-prd";

class SinfoniaProfile : public ::testing::Test {
 protected:
  void SetUp() override { api_ = testing::OpenApi(dir_.File("baton.db")); }

  Json Start(const std::string& goal = "Write the PRD for exports") {
    return MustCall(*api_, "sinfonia.start", {{"workflow_dir", kFixture}, {"goal", goal}},
                    Coordinator());
  }
  Json State(const std::string& run) { return MustCall(*api_, "sinfonia.state", {{"run", run}}); }
  // Calls "op" expecting "code" and an unchanged ledger.
  Status Refused(const std::string& op, const Json& in, StatusCode code,
                 const Actor& actor = Human()) {
    return testing::Refused(*api_, op, in, code, actor);
  }
  void ExpectRefused(const std::string& op, const Json& in, StatusCode code,
                     const Actor& actor = Human()) {
    (void)Refused(op, in, code, actor);
  }
  // A workflow folder with the given step file names (and a workflow.md).
  std::string Folder(const std::string& name, const std::vector<std::string>& files) {
    const fs::path dir = fs::path(dir_.path()) / name;
    fs::create_directories(dir / "steps");
    std::ofstream(dir / "workflow.md") << "# Workflow: " << name << "\n\nDoes " << name << ".\n";
    for (const std::string& f : files) std::ofstream(dir / "steps" / f) << "# " << f << "\n";
    return dir.string();
  }
  Json Handoff(const std::string& run, const std::string& type, const std::string& source,
               const std::string& target, const std::string& body = "done") {
    return MustCall(
        *api_, "sinfonia.handoff",
        {{"run", run}, {"type", type}, {"source", source}, {"target", target}, {"body", body}},
        Coordinator());
  }
  int64_t Decisions(const std::string& run) {
    return static_cast<int64_t>(
        MustCall(*api_, "approval.list", {{"run", run}})["decisions"].size());
  }
  int64_t DecisionEvents(const std::string& run) {
    Json events = MustCall(*api_, "ledger.events", {{"run", run}, {"kind", "decision"}});
    return static_cast<int64_t>(events["events"].size());
  }

  testing::TempDir dir_;
  std::unique_ptr<Api> api_;
};

std::vector<std::string> Keys(const Json& state) {
  std::vector<std::string> keys;
  for (const Json& s : state["steps"]) keys.push_back(s["step"].get<std::string>());
  return keys;
}

std::vector<std::string> Statuses(const Json& state) {
  std::vector<std::string> out;
  for (const Json& s : state["steps"]) out.push_back(s["status"].get<std::string>());
  return out;
}

TEST_F(SinfoniaProfile, TransitionTableIsSinfoniasTransitionMap) {
  // index-manager.ts transitionMap, cell by cell.
  const std::vector<std::string> states = {"created", "in-progress", "complete", "blocked",
                                           "failed"};
  const std::map<std::string, std::set<std::string>> allowed = {
      {"created", {"created", "in-progress", "blocked", "failed"}},
      {"in-progress", {"in-progress", "complete", "blocked", "failed"}},
      {"complete", {"complete"}},
      {"blocked", {"blocked", "in-progress", "failed"}},
      {"failed", {"failed", "in-progress"}}};
  const std::map<std::string, std::vector<std::string>> path = {
      {"created", {}},
      {"in-progress", {"in-progress"}},
      {"complete", {"in-progress", "complete"}},
      {"blocked", {"blocked"}},
      {"failed", {"failed"}}};
  for (const std::string& from : states) {
    for (const std::string& to : states) {
      const std::string cell = from + " -> " + to;
      Json run = MustCall(*api_, "run.create", {{"profile", "sinfonia"}});
      const std::string id = run["id"];
      for (const std::string& step : path.at(from)) {
        MustCall(*api_, "run.set_status", {{"id", id}, {"status", step}});
      }
      if (allowed.at(from).count(to) > 0) {
        Json moved = MustCall(*api_, "run.set_status", {{"id", id}, {"status", to}});
        EXPECT_EQ(moved["status"], to) << cell;
        continue;
      }
      Status s =
          Refused("run.set_status", {{"id", id}, {"status", to}}, StatusCode::kFailedPrecondition);
      std::set<std::string> named;
      for (const Json& a : s.details()["allowed"]) named.insert(a.get<std::string>());
      EXPECT_EQ(named, allowed.at(from)) << cell;
      for (const std::string& a : allowed.at(from)) {
        EXPECT_NE(s.message().find(a), std::string::npos) << cell << ": " << s.message();
      }
      EXPECT_EQ(MustCall(*api_, "run.show", {{"id", id}})["status"], from) << cell;
    }
  }
}

TEST_F(SinfoniaProfile, StepsDiscoveredInNumericOrder) {
  Json state = Start();
  EXPECT_EQ(Keys(state), (std::vector<std::string>{"01-gather-context", "02-draft-prd",
                                                   "03-validate-prd", "04-approval"}));
  EXPECT_EQ(state["workflow_id"], "create-prd");
  EXPECT_EQ(state["workflow_status"], "created");
  EXPECT_EQ(state["current_step"], "01-gather-context");
  EXPECT_EQ(state["current_step_index"], 1);
  EXPECT_EQ(state["total_steps"], 4);
  EXPECT_EQ(state["description"],
            "Guide Libretto through structured PRD creation from raw feature intent to approved "
            "product requirements document.");
  EXPECT_EQ(state["steps"][0]["persona"], "libretto");
  EXPECT_EQ(state["steps"][0]["title"], "Step 01 — Gather Context");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(state["steps"][i]["index"], i + 1);

  // step-10 after step-9 (a string sort would put it after step-1); other
  // files are not steps.
  const std::string dir =
      Folder("numeric", {"step-10-ten.md", "step-2-two.md", "step-1-one.md", "step-9-nine.md",
                         "notes.md", "step-x-bad.md", "step-3-three.txt"});
  Json numeric = MustCall(*api_, "sinfonia.start", {{"workflow_dir", dir}, {"goal", "g"}});
  EXPECT_EQ(Keys(numeric), (std::vector<std::string>{"1-one", "2-two", "9-nine", "10-ten"}));
  EXPECT_EQ(numeric["description"], "Does numeric.");
  EXPECT_EQ(numeric["steps"][0]["persona"], "maestro");

  // A missing or empty steps folder is refused, naming the path.
  const std::string missing = dir_.File("nowhere");
  Status s = Refused("sinfonia.start", {{"workflow_dir", missing}, {"goal", "g"}},
                     StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(missing + "/steps"), std::string::npos) << s.message();
  const std::string empty = Folder("empty", {"readme.md"});
  s = Refused("sinfonia.start", {{"workflow_dir", empty}, {"goal", "g"}},
              StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(empty + "/steps"), std::string::npos) << s.message();
  ExpectRefused("sinfonia.start", {{"goal", "g"}}, StatusCode::kInvalidArgument);
  EXPECT_EQ(MustCall(*api_, "run.list", {{"profile", "sinfonia"}})["runs"].size(), 2u);

  // initPipeline: one step "{i}-{workflow}" per workflow, persona by route.
  Json pipeline = MustCall(*api_, "sinfonia.start",
                           {{"workflows", {"create-prd", "dev-story", "other"}}, {"goal", "g"}});
  EXPECT_EQ(pipeline["workflow_id"], "pipeline-create-prd-dev-story-other");
  EXPECT_EQ(Keys(pipeline), (std::vector<std::string>{"1-create-prd", "2-dev-story", "3-other"}));
  EXPECT_EQ(pipeline["steps"][1]["persona"], "coda");
  EXPECT_EQ(pipeline["steps"][2]["persona"], "maestro");

  // With the workflows' folders, each stage lists the steps inside its own
  // folder (issue 18); a folder without steps lists none.
  const std::string root = Folder("pipeline-root", {});
  std::filesystem::create_directories(root + "/create-prd/steps");
  std::filesystem::create_directories(root + "/dev-story");
  for (const char* step : {"step-01-gather-context.md", "step-02-draft-prd.md"}) {
    std::ofstream(root + "/create-prd/steps/" + step) << "# " << step << "\n";
  }
  Json rooted = MustCall(*api_, "sinfonia.start",
                         {{"workflows", {"create-prd", "dev-story"}},
                          {"workflows_root", root},
                          {"goal", "g"}});
  const Json tasks = MustCall(*api_, "task.list", {{"run", rooted["run_id"]}})["tasks"];
  ASSERT_EQ(tasks.size(), 2u);
  const Json& inner = tasks[0]["meta"]["steps"];
  ASSERT_EQ(inner.size(), 2u) << tasks[0].dump();
  EXPECT_EQ(inner[0]["key"], "01-gather-context");
  EXPECT_EQ(inner[1]["key"], "02-draft-prd");
  EXPECT_TRUE(tasks[1]["meta"]["steps"].empty());
}

TEST_F(SinfoniaProfile, DiscoveryOrdersByNumberNotByName) {
  const std::string dir = Folder("direct", {"step-10-a.md", "step-9-b.md", "step-100-c.md"});
  Result<std::vector<SinfoniaStepFile>> files = DiscoverSinfoniaSteps(dir);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].number, 9);
  EXPECT_EQ((*files)[1].number, 10);
  EXPECT_EQ((*files)[2].number, 100);
  EXPECT_EQ((*files)[2].key, "100-c");
}

TEST_F(SinfoniaProfile, CompleteStepIsIdempotent) {
  const std::string run = Start()["run_id"];
  // Another index than the current one changes nothing and writes nothing.
  int64_t before = LedgerLength(*api_);
  Json same =
      MustCall(*api_, "sinfonia.complete_step", {{"run", run}, {"index", 2}}, Coordinator());
  EXPECT_EQ(same["changed"], false);
  EXPECT_EQ(same["workflow_status"], "created");
  EXPECT_EQ(LedgerLength(*api_), before);

  Json moved =
      MustCall(*api_, "sinfonia.complete_step", {{"run", run}, {"index", 1}}, Coordinator());
  EXPECT_EQ(moved["changed"], true);
  EXPECT_EQ(moved["workflow_status"], "in-progress");  // created moved first
  EXPECT_EQ(moved["current_step_index"], 2);
  EXPECT_EQ(moved["current_step"], "02-draft-prd");
  before = LedgerLength(*api_);
  Json again =
      MustCall(*api_, "sinfonia.complete_step", {{"run", run}, {"index", 1}}, Coordinator());
  EXPECT_EQ(again["changed"], false);
  EXPECT_EQ(again["current_step_index"], 2);
  EXPECT_EQ(LedgerLength(*api_), before);

  for (int i = 2; i <= 4; ++i) {
    MustCall(*api_, "sinfonia.complete_step", {{"run", run}, {"index", i}}, Coordinator());
  }
  Json done = State(run);
  EXPECT_EQ(done["workflow_status"], "complete");
  EXPECT_EQ(done["current_step_index"], 4);  // stays at the last step
  EXPECT_EQ(done["current_step"], "04-approval");
  before = LedgerLength(*api_);
  EXPECT_EQ(MustCall(*api_, "sinfonia.complete_step", {{"run", run}, {"index", 4}},
                     Coordinator())["changed"],
            false);
  EXPECT_EQ(LedgerLength(*api_), before);
  // advanceStep on a complete workflow: null.
  EXPECT_TRUE(MustCall(*api_, "sinfonia.current", {{"run", run}})["step"].is_null());
  ExpectRefused("run.set_status", {{"id", run}, {"status", "in-progress"}},
                StatusCode::kFailedPrecondition);
}

TEST_F(SinfoniaProfile, CompleteStepUpdatesStepStatuses) {
  const std::string run = Start()["run_id"];
  EXPECT_EQ(Statuses(State(run)),
            (std::vector<std::string>{"pending", "pending", "pending", "pending"}));
  Json current = MustCall(*api_, "sinfonia.current", {{"run", run}});
  EXPECT_EQ(current["step"]["step"], "01-gather-context");
  MustCall(*api_, "sinfonia.complete_step", {{"run", run}, {"index", 1}}, Coordinator());
  Json state = State(run);
  EXPECT_EQ(Statuses(state),
            (std::vector<std::string>{"completed", "in-progress", "pending", "pending"}));
  EXPECT_FALSE(state["steps"][0]["started_at"].get<std::string>().empty());
  EXPECT_FALSE(state["steps"][0]["completed_at"].get<std::string>().empty());
  EXPECT_FALSE(state["steps"][1]["started_at"].get<std::string>().empty());
  EXPECT_TRUE(state["steps"][1]["completed_at"].get<std::string>().empty());
  // The rows are tasks with the step machine.
  Json tasks = MustCall(*api_, "task.list", {{"run", run}, {"kind", "step"}});
  ASSERT_EQ(tasks["tasks"].size(), 4u);
  for (const Json& t : tasks["tasks"]) EXPECT_EQ(t["machine"], "sinfonia.step");
  for (int i = 2; i <= 4; ++i) {
    MustCall(*api_, "sinfonia.complete_step", {{"run", run}, {"index", i}}, Coordinator());
  }
  EXPECT_EQ(Statuses(State(run)),
            (std::vector<std::string>{"completed", "completed", "completed", "completed"}));
}

TEST_F(SinfoniaProfile, ApproveAdvances) {
  const std::string run = Start()["run_id"];
  Json d = MustCall(*api_, "approval.approve",
                    {{"run", run},
                     {"subject_kind", "step"},
                     {"subject", "01-gather-context"},
                     {"note", "good context"}});
  EXPECT_EQ(d["decision"], "approve");
  EXPECT_EQ(d["reviewer"], "alice");
  EXPECT_EQ(d["workflow_status"], "in-progress");
  EXPECT_EQ(d["current_step_index"], 2);
  // A hand-off is approved for its step; its envelope is stamped.
  const std::string ret = Handoff(run, "return", "libretto", "maestro")["id"];
  MustCall(*api_, "approval.approve",
           {{"run", run}, {"subject_kind", "handoff"}, {"subject", ret}});
  Json state = State(run);
  EXPECT_EQ(state["current_step"], "03-validate-prd");
  EXPECT_EQ(state["artifacts"][0]["status"], "completed");
  EXPECT_EQ(Statuses(state),
            (std::vector<std::string>{"completed", "completed", "in-progress", "pending"}));

  // Only the current step; unknown subjects are not found. Nothing changes.
  ExpectRefused("approval.approve",
                {{"run", run}, {"subject_kind", "step"}, {"subject", "04-approval"}},
                StatusCode::kFailedPrecondition);
  ExpectRefused("approval.approve",
                {{"run", run}, {"subject_kind", "step"}, {"subject", "99-nope"}},
                StatusCode::kNotFound);
  ExpectRefused("approval.reject",
                {{"run", run}, {"subject_kind", "handoff"}, {"subject", "s-1-001"}},
                StatusCode::kNotFound);
  ExpectRefused("approval.approve", {{"run", run}}, StatusCode::kInvalidArgument);

  MustCall(*api_, "approval.approve",
           {{"run", run}, {"subject_kind", "step"}, {"subject", "03-validate-prd"}});
  Json last = MustCall(*api_, "approval.approve",
                       {{"run", run}, {"subject_kind", "step"}, {"subject", "04-approval"}});
  // After the last step: complete, and the index stays at the last step
  // (Sinfonia's approve wrote total+1 = 5).
  EXPECT_EQ(last["workflow_status"], "complete");
  EXPECT_EQ(last["current_step_index"], 4);
  ExpectRefused("approval.approve",
                {{"run", run}, {"subject_kind", "step"}, {"subject", "04-approval"}},
                StatusCode::kFailedPrecondition);
}

TEST_F(SinfoniaProfile, RejectBlocksAndSendsRevisionToProducer) {
  const std::string run = Start()["run_id"];
  Handoff(run, "dispatch", "maestro", "libretto");
  const std::string ret = Handoff(run, "return", "libretto", "maestro")["id"];
  Json d = MustCall(
      *api_, "approval.reject",
      {{"run", run}, {"subject_kind", "handoff"}, {"subject", ret}, {"note", "fix the scope"}});
  EXPECT_EQ(d["decision"], "reject");
  EXPECT_EQ(d["outcome"], "revision-sent");
  EXPECT_EQ(d["workflow_status"], "blocked");
  const Json& rev = d["revision_handoff"];
  EXPECT_EQ(rev["type"], "revision");
  EXPECT_EQ(rev["source"], "maestro");
  EXPECT_EQ(rev["target"], "libretto");  // back to the producer
  EXPECT_EQ(rev["sequence"], 3);
  EXPECT_NE(rev["body"].get<std::string>().find("## Feedback\nfix the scope"), std::string::npos);
  Json state = State(run);
  EXPECT_EQ(state["workflow_status"], "blocked");
  EXPECT_EQ(state["steps"][0]["status"], "blocked");
  EXPECT_EQ(state["artifacts"][1]["status"], "blocked");  // the rejected envelope

  // The revised work comes back and is approved: the workflow goes on.
  const std::string again = Handoff(run, "return", "libretto", "maestro")["id"];
  Json ok = MustCall(*api_, "approval.approve",
                     {{"run", run}, {"subject_kind", "handoff"}, {"subject", again}});
  EXPECT_EQ(ok["workflow_status"], "in-progress");
  EXPECT_EQ(ok["current_step_index"], 2);

  // Rejecting a step (no envelope) sends the revision to the step's persona.
  Json d2 = MustCall(*api_, "approval.reject",
                     {{"run", run}, {"subject_kind", "step"}, {"subject", "02-draft-prd"}});
  EXPECT_EQ(d2["revision_handoff"]["target"], "libretto");
  EXPECT_EQ(State(run)["steps"][1]["status"], "blocked");
  // A revision body over 500 words is refused with the count; nothing changes.
  std::string long_note;
  for (int i = 0; i < 600; ++i) long_note += "word ";
  Status s = Refused(
      "approval.reject",
      {{"run", run}, {"subject_kind", "step"}, {"subject", "02-draft-prd"}, {"note", long_note}},
      StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("500 words"), std::string::npos) << s.message();
}

TEST_F(SinfoniaProfile, OneDecisionIsOneLedgerRow) {
  const std::string run = Start()["run_id"];
  const std::string ret = Handoff(run, "return", "libretto", "maestro")["id"];
  for (const char* op : {"approval.reject", "approval.approve"}) {
    const int64_t rows = Decisions(run);
    const int64_t events = DecisionEvents(run);
    MustCall(*api_, op, {{"run", run}, {"subject_kind", "handoff"}, {"subject", ret}});
    EXPECT_EQ(Decisions(run), rows + 1) << op;  // Sinfonia wrote two for a reject
    EXPECT_EQ(DecisionEvents(run), events + 1) << op;
  }
  Json decisions = State(run)["decisions"];
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0]["decision"], "reject");
  EXPECT_EQ(decisions[0]["handoff_id"], ret);
  EXPECT_EQ(decisions[1]["decision"], "approve");
}

TEST_F(SinfoniaProfile, RetrySkipAbortAreDecisions) {
  const std::string run = Start()["run_id"];
  MustCall(*api_, "approval.reject",
           {{"run", run}, {"subject_kind", "step"}, {"subject", "01-gather-context"}});
  int64_t decisions = Decisions(run);
  Json retried = MustCall(*api_, "sinfonia.retry", {{"run", run}, {"note", "timed out"}});
  EXPECT_EQ(retried["workflow_status"], "in-progress");
  EXPECT_EQ(retried["decision"]["decision"], "retry");
  EXPECT_EQ(retried["steps"][0]["status"], "in-progress");
  EXPECT_EQ(retried["steps"][0]["attempts"], 1);
  EXPECT_EQ(retried["handoff"]["type"], "dispatch");
  EXPECT_EQ(retried["handoff"]["target"], "libretto");
  EXPECT_NE(retried["handoff"]["body"].get<std::string>().find(
                "## Previous Attempt Failure Notes\ntimed out"),
            std::string::npos);
  EXPECT_EQ(Decisions(run), ++decisions);

  Json skipped = MustCall(*api_, "sinfonia.skip", {{"run", run}, {"note", "not needed"}});
  EXPECT_EQ(skipped["decision"]["decision"], "skipped");
  EXPECT_EQ(skipped["steps"][0]["status"], "completed");
  EXPECT_EQ(skipped["steps"][0]["notes"], "skipped: not needed");
  EXPECT_EQ(skipped["current_step_index"], 2);
  EXPECT_EQ(Decisions(run), ++decisions);

  Json aborted = MustCall(*api_, "sinfonia.abort", {{"run", run}, {"note", "stop"}});
  EXPECT_EQ(aborted["workflow_status"], "failed");
  EXPECT_EQ(aborted["decision"]["decision"], "aborted");
  EXPECT_EQ(aborted["steps"][1]["status"], "failed");
  EXPECT_EQ(Decisions(run), ++decisions);
  // Aborting a failed workflow leaves it as it is.
  const int64_t before = LedgerLength(*api_);
  EXPECT_EQ(MustCall(*api_, "sinfonia.abort", {{"run", run}})["changed"], false);
  EXPECT_EQ(LedgerLength(*api_), before);
  // A failed workflow is not advanced until retried.
  ExpectRefused("sinfonia.skip", {{"run", run}}, StatusCode::kFailedPrecondition);
  MustCall(*api_, "sinfonia.retry", {{"run", run}});
  EXPECT_EQ(State(run)["steps"][1]["status"], "in-progress");
  for (int i = 2; i <= 4; ++i) MustCall(*api_, "sinfonia.skip", {{"run", run}});
  EXPECT_EQ(State(run)["workflow_status"], "complete");
  EXPECT_EQ(Decisions(run), decisions + 4);
  // A complete workflow cannot be aborted, retried or skipped.
  ExpectRefused("sinfonia.abort", {{"run", run}}, StatusCode::kFailedPrecondition);
  ExpectRefused("sinfonia.retry", {{"run", run}}, StatusCode::kFailedPrecondition);
  ExpectRefused("sinfonia.skip", {{"run", run}}, StatusCode::kFailedPrecondition);
  ExpectRefused("sinfonia.retry", {{"run", run}}, StatusCode::kPermissionDenied, testing::Agent());
}

TEST_F(SinfoniaProfile, SessionIdsAreUtcAndUnique) {
  EXPECT_EQ(SinfoniaSessionId(0), "s-19700101-000000");
  setenv("TZ", "America/New_York", 1);
  tzset();
  EXPECT_EQ(SinfoniaSessionId(1772668531000), "s-20260304-235531");  // UTC, not local
  unsetenv("TZ");
  tzset();

  const std::string run = Start()["run_id"];
  const std::regex shape(R"(^s-\d{8}-\d{6}$)");
  Json first = State(run)["sessions"][0];
  const std::string started = first["started_at"];  // 2026-11-22T08:06:01.123Z
  const std::string expected = "s-" + started.substr(0, 4) + started.substr(5, 2) +
                               started.substr(8, 2) + "-" + started.substr(11, 2) +
                               started.substr(14, 2) + started.substr(17, 2);
  EXPECT_EQ(first["session_id"], expected);
  std::set<std::string> ids = {expected};
  std::string last;
  for (int i = 0; i < 5; ++i) {  // faster than a second apart: still unique
    last = MustCall(*api_, "sinfonia.session", {{"run", run}}, Coordinator())["session_id"];
    EXPECT_TRUE(std::regex_match(last, shape)) << last;
    EXPECT_TRUE(ids.insert(last).second) << "duplicate " << last;
  }
  Json state = State(run);
  EXPECT_EQ(state["session_id"], last);
  ASSERT_EQ(state["sessions"].size(), 6u);
  for (const Json& s : state["sessions"]) {
    EXPECT_EQ(s["status"], s["session_id"] == last ? "active" : "ended") << s.dump();
  }
  // Envelopes are numbered in the active session.
  EXPECT_EQ(Handoff(run, "dispatch", "maestro", "libretto")["id"], last + "-001");
  // Another workflow's sessions never take a used id either.
  const std::string other = Start()["run_id"];
  EXPECT_EQ(ids.count(State(other)["session_id"].get<std::string>()), 0u);
}

TEST_F(SinfoniaProfile, HandoffBodyIsAtMost500Words) {
  const std::string run = Start()["run_id"];
  std::string body;
  for (int i = 0; i < 500; ++i) body += "w ";
  EXPECT_EQ(Handoff(run, "dispatch", "maestro", "libretto", body)["word_count"], 500);
  Status s = Refused("sinfonia.handoff",
                     {{"run", run},
                      {"type", "return"},
                      {"source", "libretto"},
                      {"target", "maestro"},
                      {"body", body + "one"}},
                     StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("501"), std::string::npos) << s.message();
  EXPECT_EQ(Handoff(run, "return", "libretto", "maestro")["sequence"], 2);
}

TEST_F(SinfoniaProfile, CompactionAtMost200Words) {
  std::string huge;
  for (int i = 0; i < 5000; ++i) huge += "goal" + std::to_string(i) + (i % 7 ? " " : "\n");
  std::string thirty_six;
  for (int i = 1; i <= 36; ++i) thirty_six += "g" + std::to_string(i) + " ";
  // Names with spaces make the other lines long enough to pass the budget.
  std::string spaced;
  for (int i = 0; i < 110; ++i) spaced += (i ? " w" : "w");
  const std::string wide = Folder(spaced, {"step-01-" + spaced + ".md"});
  const struct {
    std::string dir;
    std::string goal;
  } cases[] = {{kFixture, "short goal"},
               {kFixture, thirty_six},
               {kFixture, huge},
               {wide, "short goal"},
               {wide, huge}};
  for (const auto& c : cases) {
    const std::string run =
        MustCall(*api_, "sinfonia.start", {{"workflow_dir", c.dir}, {"goal", c.goal}})["run_id"];
    for (int i = 0; i < 5; ++i) Handoff(run, "dispatch", "maestro", "libretto");
    MustCall(*api_, "approval.reject",
             {{"run", run},
              {"subject_kind", "handoff"},
              {"subject", State(run)["artifacts"][4]["name"]}});
    MustCall(*api_, "sinfonia.retry", {{"run", run}});
    Json out = MustCall(*api_, "sinfonia.compact", {{"run", run}});
    const std::string text = out["summary"];
    const std::string label = c.dir.substr(c.dir.size() - 10) + " / " + c.goal.substr(0, 20);
    EXPECT_LE(SinfoniaCountWords(text), 200) << label << "\n" << text;
    EXPECT_EQ(out["words"], SinfoniaCountWords(text)) << label;
    EXPECT_EQ(text.rfind("## Compaction Injection\n- Session: s-", 0), 0u) << label;
    if (c.dir != kFixture) {
      // Over budget: the goal is cut to 20 words, then the block at 199 + "...".
      EXPECT_EQ(out["compacted"], true) << label;
      EXPECT_EQ(SinfoniaCountWords(text), 200) << label;
      EXPECT_NE(text.find("\n- Workflow: w w "), std::string::npos) << text;
      continue;
    }
    EXPECT_EQ(out["compacted"], false) << label;
    Json state = State(run);
    const std::string session = state["session_id"];
    EXPECT_NE(text.find("\n- Workflow: create-prd\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\n- Current Step: 01-gather-context\n- Status: in-progress\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("\n- Key Decisions: reject by alice; retry by alice\n"), std::string::npos)
        << text;
    // The last three envelopes: the fourth and fifth dispatch were rejected
    // and retried (revision 006, dispatch 007).
    EXPECT_NE(text.find("- Recent Artifacts: " + session + "-005(blocked); " + session +
                        "-006(pending); " + session + "-007(pending)"),
              std::string::npos)
        << text;
    if (c.goal == thirty_six) {
      EXPECT_NE(text.find("- Goal: g1 "), std::string::npos) << text;
      EXPECT_NE(text.find(" g35 ...\n"), std::string::npos) << text;
      EXPECT_EQ(text.find("g36"), std::string::npos) << text;
    }
  }
}

TEST_F(SinfoniaProfile, ResumeReportsOkInconsistentMissing) {
  const std::string run = Start()["run_id"];
  const std::string summary = MustCall(*api_, "sinfonia.compact", {{"run", run}})["summary"];
  MustCall(*api_, "agent.register", Json::object(), testing::Agent());  // else its first call registers it
  int64_t before = LedgerLength(*api_);
  Json ok = MustCall(*api_, "sinfonia.resume", {{"summary", summary}}, testing::Agent());
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_EQ(ok["run_id"], run);
  EXPECT_EQ(LedgerLength(*api_), before);  // checking changes nothing

  // The workflow moved on after the summary was made.
  MustCall(*api_, "sinfonia.complete_step", {{"run", run}, {"index", 1}}, Coordinator());
  Json stale = MustCall(*api_, "sinfonia.resume", {{"summary", summary}});
  EXPECT_EQ(stale["status"], "inconsistent");
  ASSERT_EQ(stale["inconsistencies"].size(), 1u);
  EXPECT_NE(stale["inconsistencies"][0].get<std::string>().find("02-draft-prd"), std::string::npos)
      << stale.dump();
  std::string other =
      std::regex_replace(summary, std::regex("- Workflow: create-prd"), "- Workflow: create-spec");
  Json wrong = MustCall(*api_, "sinfonia.resume", {{"summary", other}, {"run", run}});
  EXPECT_EQ(wrong["status"], "inconsistent");
  EXPECT_EQ(wrong["inconsistencies"].size(), 2u) << wrong.dump();

  // No such session, no such run, or a summary without its fields: missing.
  std::string unknown =
      std::regex_replace(summary, std::regex("- Session: \\S+"), "- Session: s-19990101-000000");
  EXPECT_EQ(MustCall(*api_, "sinfonia.resume", {{"summary", unknown}})["status"], "missing");
  EXPECT_EQ(
      MustCall(*api_, "sinfonia.resume", {{"summary", summary}, {"run", "run-none"}})["status"],
      "missing");
  EXPECT_EQ(
      MustCall(*api_, "sinfonia.resume", {{"summary", "## Compaction Injection\n"}})["status"],
      "missing");

  // recovered: an envelope for a later step than the stored cursor (the
  // dispatch of step 3 was recorded, steps 2 was never completed).
  MustCall(*api_, "sinfonia.handoff",
           {{"run", run},
            {"type", "dispatch"},
            {"source", "maestro"},
            {"target", "libretto"},
            {"step", "03-validate-prd"}});
  std::string ahead = std::regex_replace(summary, std::regex("- Current Step: \\S+"),
                                         "- Current Step: 03-validate-prd");
  // An agent may not move the cursor past steps nobody approved: it is told.
  const int64_t before_agent = LedgerLength(*api_);
  Json told = MustCall(*api_, "sinfonia.resume", {{"summary", ahead}}, testing::Agent());
  EXPECT_EQ(told["status"], "inconsistent") << told.dump();
  EXPECT_EQ(LedgerLength(*api_), before_agent);
  EXPECT_EQ(State(run)["current_step_index"], 2);
  Json recovered = MustCall(*api_, "sinfonia.resume", {{"summary", ahead}});
  EXPECT_EQ(recovered["status"], "recovered") << recovered.dump();
  EXPECT_EQ(recovered["current_step_index"], 3);
  Json state = State(run);
  EXPECT_EQ(state["current_step"], "03-validate-prd");
  EXPECT_EQ(Statuses(state),
            (std::vector<std::string>{"completed", "completed", "in-progress", "pending"}));
  EXPECT_EQ(MustCall(*api_, "sinfonia.resume", {{"summary", ahead}})["status"], "ok");
}

TEST_F(SinfoniaProfile, OpenQuestionHoldsDecisionsAndMoves) {
  const std::string run = Start()["run_id"];
  MustCall(*api_, "sinfonia.complete_step", {{"run", run}, {"index", 1}}, Coordinator());
  Json q = MustCall(
      *api_, "question.ask",
      {{"run", run}, {"questions", {{{"question", "CSV or JSON?"}, {"choices", {"CSV", "JSON"}}}}}},
      testing::Agent("libretto"));
  EXPECT_EQ(State(run)["workflow_status"], "blocked");  // the profile's waiting status
  ExpectRefused("approval.approve",
                {{"run", run}, {"subject_kind", "step"}, {"subject", "02-draft-prd"}},
                StatusCode::kFailedPrecondition);
  ExpectRefused("sinfonia.complete_step", {{"run", run}, {"index", 2}},
                StatusCode::kFailedPrecondition);
  ExpectRefused("sinfonia.retry", {{"run", run}}, StatusCode::kFailedPrecondition);
  ExpectRefused("sinfonia.abort", {{"run", run}}, StatusCode::kFailedPrecondition);
  MustCall(*api_, "question.answer", {{"id", q["id"]}, {"choices", {"CSV"}}});
  EXPECT_EQ(State(run)["workflow_status"], "in-progress");
  Json d = MustCall(*api_, "approval.approve",
                    {{"run", run}, {"subject_kind", "step"}, {"subject", "02-draft-prd"}});
  EXPECT_EQ(d["current_step_index"], 3);
}

TEST_F(SinfoniaProfile, StaleExpectVersionChangesNothing) {
  const std::string run = Start()["run_id"];
  const int64_t version = MustCall(*api_, "run.show", {{"id", run}})["version"];
  MustCall(*api_, "sinfonia.complete_step",
           {{"run", run}, {"index", 1}, {"expect_version", version}}, Coordinator());
  ExpectRefused("sinfonia.complete_step", {{"run", run}, {"index", 2}, {"expect_version", version}},
                StatusCode::kAborted, Coordinator());
  EXPECT_EQ(State(run)["current_step_index"], 2);
}

TEST_F(SinfoniaProfile, OperationsRefuseOtherProfiles) {
  Json run = MustCall(*api_, "run.create", {{"profile", "sgai"}});
  Status s = Refused("sinfonia.state", {{"run", run["id"]}}, StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("sgai"), std::string::npos);
  ExpectRefused("sinfonia.complete_step", {{"run", "run-none"}, {"index", 1}},
                StatusCode::kNotFound);
}

}  // namespace
}  // namespace baton
