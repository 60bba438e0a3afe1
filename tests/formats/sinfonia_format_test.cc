// The Sinfonia workflow index format (formats/sinfonia_format.h): the real
// fixture, Sinfonia's canonical index byte for byte, escaped cells, free-form
// indexes, runs of other profiles, and refusals.

#include "formats/sinfonia_internal.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "formats/format.h"
#include "formats/sinfonia_envelope.h"

namespace baton {
namespace {

const std::string kFixtures = BATON_SOURCE_DIR "/../shared/fixtures/seeds/sinfonia";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunImage MustRead(const std::string& text, const std::string& source = "workflow.md") {
  Result<RunImage> image = ReadSinfoniaIndex(text, source);
  EXPECT_TRUE(image.ok()) << image.status().message() << "\n" << text;
  return image.ok() ? *image : RunImage();
}

FormatOutput MustWrite(const RunImage& image) {
  Result<FormatOutput> out = WriteSinfoniaIndex(image);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : FormatOutput();
}

// The message of a refusal, which must be InvalidArgument naming the source.
std::string Refusal(const std::string& text) {
  Result<RunImage> image = ReadSinfoniaIndex(text, "wf.md");
  EXPECT_FALSE(image.ok()) << text;
  if (image.ok()) return "";
  EXPECT_EQ(image.status().code(), StatusCode::kInvalidArgument) << image.status().message();
  EXPECT_NE(image.status().message().find("wf.md"), std::string::npos) << image.status().message();
  return image.status().message();
}

// The front matter's "key: value" lines.
std::map<std::string, std::string> FrontMatter(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "---");
  while (std::getline(in, line) && line != "---") {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    out[line.substr(0, colon)] = line.substr(colon + 1 == line.size() ? colon + 1 : colon + 2);
  }
  return out;
}

// What a workflow index says, independent of how it is laid out.
struct Structure {
  std::string status, cursor;
  int64_t cursor_index = 0;
  std::vector<std::string> steps;      // key|persona|status|notes
  std::vector<std::string> decisions;  // time|subject|decision|reviewer|note
  std::vector<std::string> sessions;
  std::vector<std::string> artifacts;
  bool operator==(const Structure&) const = default;
};

std::string Join(const Json& item, std::initializer_list<const char*> keys) {
  std::string out;
  for (const char* k : keys) {
    out += (out.empty() ? "" : "|");
    const Json& v = item.contains(k) ? item[k] : Json();
    out += v.is_string() ? v.get<std::string>() : v.dump();
  }
  return out;
}

Structure StructureOf(const RunImage& image) {
  Structure s;
  s.status = image["run"]["status"];
  s.cursor = image["run"]["cursor"].is_string() ? image["run"]["cursor"].get<std::string>() : "";
  s.cursor_index = image["run"]["cursor_index"];
  for (const Json& t : image["tasks"]) {
    s.steps.push_back(Join(t, {"key", "assignee", "status"}) + "|" +
                      t["meta"]["notes"].get<std::string>());
  }
  for (const Json& a : image["approvals"]) {
    s.decisions.push_back(Join(a, {"time", "subject", "decision", "reviewer", "note"}));
  }
  for (const Json& x : image["sessions"]) {
    s.sessions.push_back(Join(x, {"id", "status", "started_at", "last_active_at"}));
  }
  for (const Json& h : image["handoffs"]) {
    s.artifacts.push_back(Join(h, {"id", "type", "status", "source", "target", "updated_at"}));
  }
  return s;
}

// Sinfonia's own rendering (index-manager.ts renderBody) of a workflow two
// steps in, with an envelope, a decision and two sessions.
const char kCanonical[] =
    "---\n"
    "workflow_id: pipeline-create-prd-create-spec\n"
    "workflow_status: in-progress\n"
    "current_step: 2-create-spec\n"
    "current_step_index: 2\n"
    "total_steps: 2\n"
    "session_id: s-20260223-231531\n"
    "created_at: 2026-02-23T23:15:31.000Z\n"
    "updated_at: 2026-02-23T23:20:02.000Z\n"
    "---\n"
    "## Goal\n"
    "Create PRD and spec for X\n"
    "\n"
    "## Steps\n"
    "| Step | Persona | Status | Started At | Completed At | Notes |\n"
    "| --- | --- | --- | --- | --- | --- |\n"
    "| 1-create-prd | libretto | completed | 2026-02-23T23:15:31.000Z | "
    "2026-02-23T23:20:02.000Z | approved |\n"
    "| 2-create-spec | amadeus | in-progress | 2026-02-23T23:20:02.000Z |  |  |\n"
    "\n"
    "## Artifacts\n"
    "| Name | Type | Status | Updated At | Notes |\n"
    "| --- | --- | --- | --- | --- |\n"
    "| s-20260223-231531-001 | dispatch | completed | 2026-02-23T23:16:00.000Z | "
    "maestro → libretto |\n"
    "| s-20260223-231531-002 | return | pending | 2026-02-23T23:19:00.000Z | "
    "libretto → maestro |\n"
    "\n"
    "## Decisions\n"
    "| Timestamp | Handoff ID | Decision | Reviewer | Note |\n"
    "| --- | --- | --- | --- | --- |\n"
    "| 2026-02-23T23:20:02.000Z | s-20260223-231531-002 | approve | alice | looks right |\n"
    "\n"
    "## Sessions\n"
    "| Session ID | Started At | Last Active At | Status |\n"
    "| --- | --- | --- | --- |\n"
    "| s-20260223-231000 | 2026-02-23T23:10:00.000Z | 2026-02-23T23:15:00.000Z | ended |\n"
    "| s-20260223-231531 | 2026-02-23T23:15:31.000Z | 2026-02-23T23:20:02.000Z | active |\n"
    "\n"
    "## Context\n"
    "Exports are CSV only.\n";

TEST(SinfoniaFormatTest, ReadsTheRealHandWrittenIndex) {
  const RunImage image =
      MustRead(Slurp(kFixtures + "/handoffs/s-20260305-003/workflow.md"), "s-003/workflow.md");
  const Json& run = image["run"];
  EXPECT_EQ(run["profile"], "sinfonia");
  EXPECT_EQ(run["machine"], "sinfonia.workflow");
  // The front matter wins over the stale "- Overall Status: in-progress".
  EXPECT_EQ(run["status"], "complete");
  EXPECT_EQ(run["cursor_index"], 4);
  EXPECT_EQ(run["cursor"], "4-final-validation");
  EXPECT_EQ(run["title"], "Pi-Native Orchestration Refactor");
  EXPECT_EQ(run["created_at"], "2026-03-05T00:00:00Z");
  EXPECT_EQ(run["meta"]["workflow_id"], "pi-native-orchestration-refactor");

  ASSERT_EQ(image["tasks"].size(), 4u);
  const std::vector<std::string> keys = {"1-architect-review", "2-implementation", "3-code-review",
                                         "4-final-validation"};
  const std::vector<Json> personas = {"amadeus", "coda", "rondo", nullptr};
  for (size_t i = 0; i < 4; ++i) {
    const Json& t = image["tasks"][i];
    EXPECT_EQ(t["key"], keys[i]);
    EXPECT_EQ(t["kind"], "step");
    EXPECT_EQ(t["ref"], "step:" + keys[i]);
    EXPECT_EQ(t["position"], static_cast<int64_t>(i + 1));
    EXPECT_EQ(t["assignee"], personas[i]) << keys[i];
    // "approved" (a Pi terminal token) and "complete" are completed steps.
    EXPECT_EQ(t["status"], "completed") << keys[i];
  }
  EXPECT_EQ(image["tasks"][0]["title"], "Architect Review");
  EXPECT_EQ(image["tasks"][0]["meta"]["notes"],
            "Goal: Validate refactor plan against actual Pi extension API, identify gaps and "
            "corrections\nOutcome: 9 API mismatches identified, corrected spec produced, new "
            "WS-API foundation phase added");

  ASSERT_EQ(image["approvals"].size(), 5u);
  for (const Json& a : image["approvals"]) {
    EXPECT_EQ(a["time"], "2026-03-05");
    EXPECT_EQ(a["decision"], "note");
    EXPECT_EQ(a["subject_kind"], "run");
  }
  EXPECT_EQ(image["approvals"][0]["note"],
            "Session created. Pi extension API documentation fetched and summarized.");
  EXPECT_EQ(image["approvals"][4]["note"],
            "Code review APPROVED by Rondo. 0 blocking, 7 advisory findings. All 6 acceptance "
            "criteria met. Session complete.");

  // The session the index belongs to (s-YYYYMMDD-NNN, as the repo's own).
  ASSERT_EQ(image["sessions"].size(), 1u);
  EXPECT_EQ(image["sessions"][0]["id"], "s-20260305-003");
  EXPECT_EQ(image["sessions"][0]["status"], "active");

  const Json& kept = run["meta"]["kept"]["sinfonia"];
  EXPECT_EQ(kept["preamble"].get<std::string>().rfind("# Pi-Native Orchestration Refactor\n", 0),
            0u);
}

TEST(SinfoniaFormatTest, WritingTheRealIndexBackKeepsItsStructure) {
  const RunImage first = MustRead(Slurp(kFixtures + "/handoffs/s-20260305-003/workflow.md"));
  const FormatOutput written = MustWrite(first);
  const std::map<std::string, std::string> fm = FrontMatter(written.text);
  EXPECT_EQ(fm.at("workflow_id"), "pi-native-orchestration-refactor");
  EXPECT_EQ(fm.at("workflow_status"), "complete");
  EXPECT_EQ(fm.at("current_step"), "4-final-validation");
  EXPECT_EQ(fm.at("current_step_index"), "4");
  EXPECT_EQ(fm.at("total_steps"), "4");
  EXPECT_EQ(fm.at("session_id"), "s-20260305-003");
  EXPECT_EQ(fm.at("created_at"), "2026-03-05T00:00:00Z");
  EXPECT_EQ(fm.size(), 8u);

  const RunImage second = MustRead(written.text);
  EXPECT_EQ(StructureOf(first), StructureOf(second)) << written.text;
  EXPECT_EQ(second["run"]["meta"]["workflow_id"], "pi-native-orchestration-refactor");
  EXPECT_EQ(second["run"]["title"], "Pi-Native Orchestration Refactor");

  // The title and the bullet lines stay, saying what the run says now.
  EXPECT_NE(written.text.find("---\n# Pi-Native Orchestration Refactor\n\n- Workflow: "
                              "pi-native-orchestration-refactor\n- Source Plan: "
                              "`pi_integration_plan.md`\n- Overall Status: complete\n"
                              "- Current Stage: Phase 4 — 4-final-validation\n\n## Goal\n"),
            std::string::npos)
      << written.text;
  EXPECT_NE(written.text.find("| 1-architect-review | amadeus | completed |  |  | Goal: Validate "
                              "refactor plan"),
            std::string::npos)
      << written.text;
  EXPECT_NE(written.text.find("| 2026-03-05 |  | note |  | Session created. "), std::string::npos);
  // Canonical: the same image, the same bytes.
  EXPECT_EQ(MustWrite(second).text, written.text);
}

TEST(SinfoniaFormatTest, CanonicalIndexRoundTripsByteForByte) {
  const RunImage image = MustRead(kCanonical);
  EXPECT_EQ(MustWrite(image).text, kCanonical);

  const Json& run = image["run"];
  EXPECT_EQ(run["status"], "in-progress");
  EXPECT_EQ(run["cursor"], "2-create-spec");
  EXPECT_EQ(run["cursor_index"], 2);
  EXPECT_EQ(run["title"], "pipeline-create-prd-create-spec");
  EXPECT_EQ(run["meta"]["goal"], "Create PRD and spec for X");
  EXPECT_EQ(run["meta"]["context"], "Exports are CSV only.");
  EXPECT_FALSE(run["meta"].contains("kept"));
  const Json& step = image["tasks"][0];
  EXPECT_EQ(step["key"], "1-create-prd");
  EXPECT_EQ(step["assignee"], "libretto");
  EXPECT_EQ(step["status"], "completed");
  EXPECT_EQ(step["meta"]["completed_at"], "2026-02-23T23:20:02.000Z");
  EXPECT_EQ(step["meta"]["notes"], "approved");
  EXPECT_EQ(image["tasks"][1]["meta"]["notes"], "");
  const Json& h = image["handoffs"][1];
  EXPECT_EQ(h["id"], "s-20260223-231531-002");
  EXPECT_EQ(h["session_id"], "s-20260223-231531");
  EXPECT_EQ(h["sequence"], 2);
  EXPECT_EQ(h["source"], "libretto");
  EXPECT_EQ(h["target"], "maestro");
  EXPECT_EQ(h["type"], "return");
  const Json& d = image["approvals"][0];
  EXPECT_EQ(d["subject_kind"], "handoff");
  EXPECT_EQ(d["subject"], "s-20260223-231531-002");
  EXPECT_EQ(d["decision"], "approve");
  EXPECT_EQ(d["reviewer"], "alice");
  EXPECT_EQ(d["time"], "2026-02-23T23:20:02.000Z");
  ASSERT_EQ(image["sessions"].size(), 2u);
  EXPECT_EQ(image["sessions"][0]["status"], "ended");
}

TEST(SinfoniaFormatTest, CreatedIndexAsSinfoniaWritesItRoundTrips) {
  // createWorkflowIndex: every step pending, empty cells, no artifacts.
  const std::string text =
      "---\nworkflow_id: create-prd\nworkflow_status: created\ncurrent_step: 01-gather-context\n"
      "current_step_index: 1\ntotal_steps: 2\nsession_id: s-20260223-231531\n"
      "created_at: 2026-02-23T23:15:31.000Z\nupdated_at: 2026-02-23T23:15:31.000Z\n---\n"
      "## Goal\nPRD\n\n## Steps\n| Step | Persona | Status | Started At | Completed At | Notes |\n"
      "| --- | --- | --- | --- | --- | --- |\n| 01-gather-context | libretto | pending |  |  |  |\n"
      "| 02-draft-prd | libretto | pending |  |  |  |\n\n## Artifacts\n"
      "| Name | Type | Status | Updated At | Notes |\n| --- | --- | --- | --- | --- |\n\n"
      "## Decisions\n| Timestamp | Handoff ID | Decision | Reviewer | Note |\n"
      "| --- | --- | --- | --- | --- |\n\n## Sessions\n"
      "| Session ID | Started At | Last Active At | Status |\n| --- | --- | --- | --- |\n"
      "| s-20260223-231531 | 2026-02-23T23:15:31.000Z | 2026-02-23T23:15:31.000Z | active |\n\n"
      "## Context\n\n";
  EXPECT_EQ(MustWrite(MustRead(text)).text, text);
}

TEST(SinfoniaFormatTest, PipeInANoteSurvivesARoundTrip) {
  RunImage image = MustRead(kCanonical);
  const std::string note = "a | b\nsecond line \\ with <br> and \\|";
  image["tasks"][0]["meta"]["notes"] = note;
  image["approvals"][0]["note"] = "x|y";
  image["handoffs"][0]["meta"]["notes"] = "kept | as is";
  const std::string text = MustWrite(image).text;
  EXPECT_NE(text.find("| a \\| b<br>second line \\\\ with \\<br> and \\\\\\| |"), std::string::npos)
      << text;
  const RunImage again = MustRead(text);
  EXPECT_EQ(again["tasks"][0]["meta"]["notes"], note);
  EXPECT_EQ(again["approvals"][0]["note"], "x|y");
  EXPECT_EQ(again["handoffs"][0]["meta"]["notes"], "kept | as is");
  EXPECT_EQ(MustWrite(again).text, text);
}

TEST(SinfoniaFormatTest, CellEscapingIsReversible) {
  using sinfonia_format_internal::EscapeCell;
  using sinfonia_format_internal::UnescapeCell;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plain", "plain"}, {"a|b", "a\\|b"},
      {"a\\b", "a\\\\b"}, {"line\nbreak", "line<br>break"},
      {"<br>", "\\<br>"}, {"<BR/>", "\\<BR/>"},
      {"<b>", "<b>"},     {"\\|", "\\\\\\|"},
      {"→", "→"},         {"\\<br>", "\\\\\\<br>"},
      {"<\n", "<<br>"},   {"", ""}};
  for (const auto& [value, cell] : cases) {
    EXPECT_EQ(EscapeCell(value), cell) << value;
    EXPECT_EQ(UnescapeCell(cell), value) << cell;
  }
  // Hand-written variants of a line break read as one.
  EXPECT_EQ(UnescapeCell("a<br/>b<br />c"), "a\nb\nc");
}

TEST(SinfoniaFormatTest, GoalLinesThatLookLikeSectionsAreEscaped) {
  RunImage image = MustRead(kCanonical);
  image["run"]["meta"]["goal"] = "First\n## Steps\n\\## not a heading\n### fine";
  const std::string text = MustWrite(image).text;
  EXPECT_NE(text.find("## Goal\nFirst\n\\## Steps\n\\\\## not a heading\n### fine\n\n## Steps\n"),
            std::string::npos)
      << text;
  const RunImage again = MustRead(text);
  EXPECT_EQ(again["run"]["meta"]["goal"], image["run"]["meta"]["goal"]);
  EXPECT_EQ(again["tasks"].size(), 2u);
}

TEST(SinfoniaFormatTest, ReadsFreeFormIndexWithoutFrontMatter) {
  // The shape of the repo's LLM-written indexes (s-20260302-004/005).
  const std::string text =
      "# Workflow State - s-20260302-004\n\n"
      "- Workflow: `create-prd -> create-spec`\n"
      "- Overall Status: done\n"
      "- Current Stage: Phase 2 — Spec\n\n"
      "## Request\n\nRetroactively create the PRD.\n\n"
      "## Stages\n\n"
      "Planned with the developer.\n\n"
      "1. PRD (Libretto)\n   - Status: APPROVED\n   - Outcome: PRD final\n"
      "2. Spec (Amadeus)\n   - Status: queued for review\n"
      "3. Build\n   - Status: weird token\n"
      "4. Review\n"
      "## Decisions\n\n"
      "1. `2026-03-02`: Routed `create-prd` to libretto.\n"
      "2. `2026-03-02T10:00:00Z`: Developer approved PRD stage.\n   Continued here.\n"
      "3. No date on this one\n\n"
      "## Artifacts\n\n- `docs/prd.md` — the PRD\n\n"
      "## Evidence Log\n\n- Dispatch envelope prepared: `dispatch-01-libretto.md`\n";
  const RunImage image = MustRead(text);
  const Json& run = image["run"];
  EXPECT_EQ(run["status"], "complete");  // "done"
  EXPECT_EQ(run["title"], "Workflow State - s-20260302-004");
  ASSERT_EQ(image["tasks"].size(), 4u);
  EXPECT_EQ(image["tasks"][0]["status"], "completed");
  EXPECT_EQ(image["tasks"][0]["assignee"], "libretto");
  EXPECT_EQ(image["tasks"][0]["meta"]["notes"], "Outcome: PRD final");
  EXPECT_EQ(image["tasks"][1]["status"], "pending");      // queued
  EXPECT_EQ(image["tasks"][2]["status"], "in-progress");  // unknown: active, as Pi reads it
  EXPECT_EQ(image["tasks"][3]["status"], "pending");      // no Status line
  // Pi's choice: the first stage that is active or not terminal ("weird").
  EXPECT_EQ(run["cursor_index"], 3);
  EXPECT_EQ(run["cursor"], "3-build");
  ASSERT_EQ(image["approvals"].size(), 3u);
  EXPECT_EQ(image["approvals"][0]["time"], "2026-03-02");
  EXPECT_EQ(image["approvals"][0]["note"], "Routed `create-prd` to libretto.");
  EXPECT_EQ(image["approvals"][1]["time"], "2026-03-02T10:00:00Z");
  EXPECT_EQ(image["approvals"][1]["note"], "Developer approved PRD stage.\nContinued here.");
  EXPECT_EQ(image["approvals"][2]["time"], "");
  const Json& kept = run["meta"]["kept"]["sinfonia"];
  EXPECT_EQ(kept["sections"].size(), 2u);
  EXPECT_EQ(kept["sections"][0]["heading"], "## Request");
  EXPECT_EQ(kept["text"]["artifacts"], "- `docs/prd.md` — the PRD");
  EXPECT_EQ(kept["text"]["steps"], "Planned with the developer.");

  const std::string written = MustWrite(image).text;
  EXPECT_NE(written.find("- Overall Status: complete\n- Current Stage: Phase 3 — 3-build\n"),
            std::string::npos)
      << written;
  EXPECT_NE(written.find("| --- | --- | --- | --- | --- |\n\n- `docs/prd.md` — the PRD\n\n"
                         "## Decisions"),
            std::string::npos)
      << written;
  EXPECT_NE(written.find("## Context\n\n\n## Request\nRetroactively create the PRD.\n\n"
                         "## Evidence Log\n- Dispatch envelope prepared"),
            std::string::npos)
      << written;
  const RunImage again = MustRead(written);
  EXPECT_EQ(StructureOf(again), StructureOf(image));
  EXPECT_EQ(MustWrite(again).text, written);
}

TEST(SinfoniaFormatTest, CurrentStageLineChoosesTheStepWhenEveryStageIsTerminal) {
  const std::string text =
      "## Stages\n1. One\n - Status: done\n2. Two\n - Status: approved\n3. Three\n"
      " - Status: skipped\n\n- Current Stage: Phase 1, then Phase 2\n";
  const RunImage image = MustRead(text);
  EXPECT_EQ(image["run"]["cursor_index"], 2);     // the last "Phase N"
  EXPECT_EQ(image["run"]["status"], "complete");  // every step completed
}

TEST(SinfoniaFormatTest, PartialFrontMatterWithoutCurrentStep) {
  const std::string text =
      "---\nworkflow_id: wf\nsession_id: s-20260305-004\nworkflow_status: in-progress\n"
      "current_step_index: 2\ntotal_steps: 3\npersona: coda\n---\n\n"
      "## Stages\n\n1. Triage\n   - Status: completed\n2. Implementation\n   - Status: "
      "in-progress\n3. Validation\n   - Status: pending\n";
  const RunImage image = MustRead(text);
  EXPECT_EQ(image["run"]["cursor"], "2-implementation");
  EXPECT_EQ(image["run"]["cursor_index"], 2);
  EXPECT_EQ(image["run"]["created_at"], "");
  const std::string written = MustWrite(image).text;
  // The front matter line baton does not own comes back (the Pi surface
  // reads "persona").
  EXPECT_NE(written.find("updated_at: \npersona: coda\n---\n"), std::string::npos) << written;
  EXPECT_EQ(FrontMatter(written).at("current_step"), "2-implementation");
}

TEST(SinfoniaFormatTest, BothSessionIdShapesAreRead) {
  for (const std::string id : {"s-20260305-003", "s-20260223-231531"}) {
    const std::string text = "---\nworkflow_id: w\nworkflow_status: created\nsession_id: " + id +
                             "\n---\n## Artifacts\n| Name | Type | Status | Updated At | Notes |\n"
                             "| --- | --- | --- | --- | --- |\n| " +
                             id + "-001 | dispatch | pending | t | a → b |\n";
    const RunImage image = MustRead(text);
    EXPECT_EQ(image["sessions"][0]["id"], id);
    EXPECT_EQ(image["handoffs"][0]["session_id"], id) << id;
    EXPECT_EQ(FrontMatter(MustWrite(image).text).at("session_id"), id);
  }
}

TEST(SinfoniaFormatTest, FrontMatterThatDisagreesWithItsTablesIsKept) {
  std::string text = kCanonical;
  text.replace(text.find("total_steps: 2"), 14, "total_steps: 5");
  text.replace(text.find("session_id: s-20260223-231531\n"), 30, "session_id: s-20260223-231000\n");
  const RunImage image = MustRead(text);
  EXPECT_EQ(image["run"]["meta"]["kept"]["sinfonia"]["total_steps"], 5);
  EXPECT_EQ(image["run"]["meta"]["kept"]["sinfonia"]["session_id"], "s-20260223-231000");
  EXPECT_EQ(MustWrite(image).text, text);
}

TEST(SinfoniaFormatTest, UnknownTokensInFreeFormMapAsThePiParserDoes) {
  const std::string text =
      "---\nworkflow_status: Waiting on legal\n---\n## Stages\n1. A\n- Status: Approved ✅\n"
      "2. B\n- Status: in progress (70%)\n3. C\n- Status: FAILED twice\n";
  const RunImage image = MustRead(text);
  EXPECT_EQ(image["run"]["status"], "in-progress");
  EXPECT_EQ(image["tasks"][0]["status"], "completed");
  EXPECT_EQ(image["tasks"][1]["status"], "in-progress");
  EXPECT_EQ(image["tasks"][2]["status"], "failed");
}

RunImage StigmergyImage() {
  return Json::parse(R"({
    "image": 1,
    "run": {"profile": "stigmergy", "machine": "stigmergy.project",
            "status": "EXECUTION_IN_PROGRESS", "title": "Shop", "cursor": null,
            "cursor_index": null, "context": {"brief": "x"}, "meta": {},
            "id": "run-1", "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-02T00:00:00Z"},
    "tasks": [
      {"ref": "epic:1", "key": "1", "kind": "epic", "title": "Checkout", "status": "IN_PROGRESS",
       "assignee": null, "meta": {}},
      {"ref": "story:1.1", "key": "1.1", "kind": "story", "parent": "epic:1", "title": "Cart",
       "status": "COMPLETE", "assignee": "dev", "body": "As a buyer", "meta": {}},
      {"ref": "story:1.2", "key": "1.2", "kind": "story", "parent": "epic:1", "title": "Pay | card",
       "status": "AWAITING_VERIFICATION", "depends_on": ["story:1.1"], "meta": {}},
      {"ref": "issue:1", "key": "1", "kind": "issue", "title": "Bug", "status": "OPEN",
       "meta": {}}],
    "messages": [{"from": "a", "to": "b", "body": "hi"}],
    "history": [{"kind": "stigmergy.signal", "summary": "s"}, {"kind": "task.status"}]
  })");
}

TEST(SinfoniaFormatTest, RunOfAnotherProfileIsWrittenWithNotes) {
  const FormatOutput out = MustWrite(StigmergyImage());
  const RunImage image = MustRead(out.text);
  EXPECT_EQ(image["run"]["status"], "in-progress");
  EXPECT_EQ(image["run"]["meta"]["workflow_id"], "run-1");
  EXPECT_EQ(image["run"]["meta"]["goal"], "Shop");
  const std::vector<std::string> want = {"1|null|in-progress|Checkout", "1.1|dev|completed|Cart",
                                         "1.2|null|in-progress|Pay | card",
                                         "issue:1|null|pending|Bug"};
  EXPECT_EQ(StructureOf(image).steps, want) << out.text;
  // The first step not completed is current.
  EXPECT_EQ(image["run"]["cursor"], "1");
  EXPECT_EQ(MustWrite(image).text, MustWrite(MustRead(MustWrite(image).text)).text);

  std::string notes;
  for (const std::string& n : out.notes) notes += n + "\n";
  for (const char* part :
       {"stigmergy.project status \"EXECUTION_IN_PROGRESS\"", "4 tasks written as steps",
        "2 parent links and 1 dependency", "1 description", "1 step", "messages: 1",
        "history: 1 event", "context:"}) {
    EXPECT_NE(notes.find(part), std::string::npos) << part << "\n" << notes;
  }
}

TEST(SinfoniaFormatTest, IndexDataHasTheShapeOfSinfoniaState) {
  // A run as the sinfonia operations lay it out (engine/profiles/sinfonia/sinfonia.cc).
  const RunImage image = Json::parse(R"({
    "image": 1,
    "run": {"id": "prd-1", "profile": "sinfonia", "machine": "sinfonia.workflow",
            "status": "blocked", "title": "Guide Libretto", "cursor": "02-draft-prd",
            "cursor_index": 2, "context": {}, "version": 7,
            "meta": {"workflow_id": "create-prd", "goal": "PRD", "context": "",
                     "description": "Guide Libretto", "workflow_dir": "/w/create-prd"},
            "created_at": "t0", "updated_at": "t5"},
    "tasks": [
      {"id": "task-1", "ref": "step:01-gather-context", "key": "01-gather-context",
       "kind": "step", "title": "Gather", "status": "completed", "position": 1,
       "assignee": "libretto", "attempts": 0,
       "meta": {"file": "/w/s1.md", "number": 1, "started_at": "t1", "completed_at": "t2",
                "notes": ""}},
      {"id": "task-2", "ref": "step:02-draft-prd", "key": "02-draft-prd", "kind": "step",
       "title": "Draft", "status": "blocked", "position": 2, "assignee": "libretto",
       "attempts": 1, "meta": {"file": "/w/s2.md", "number": 2, "started_at": "t2",
                               "completed_at": "", "notes": "rejected: non-goals"}}],
    "approvals": [{"subject_kind": "handoff", "subject": "s-20261122-081259-001",
                   "decision": "reject", "reviewer": "alice", "note": "non-goals", "time": "t4",
                   "meta": {"step": "02-draft-prd", "outcome": "revision-sent"}}],
    "sessions": [{"id": "s-20261122-081259", "status": "active", "started_at": "t0",
                  "last_active_at": "t5", "meta": {}}],
    "handoffs": [{"id": "s-20261122-081259-001", "session_id": "s-20261122-081259",
                  "sequence": 1, "source": "libretto", "target": "maestro", "type": "return",
                  "status": "blocked", "step": "step:02-draft-prd", "body": "Draft ready",
                  "meta": {"word_count": 2}, "created_at": "t3", "updated_at": "t4"}]
  })");
  Result<Json> index = SinfoniaIndexOf(image);
  ASSERT_TRUE(index.ok()) << index.status().message();
  const Json want = Json::parse(R"({
    "run_id": "prd-1", "workflow_id": "create-prd", "workflow_status": "blocked",
    "current_step": "02-draft-prd", "current_step_index": 2, "total_steps": 2,
    "session_id": "s-20261122-081259", "created_at": "t0", "updated_at": "t5", "version": 7,
    "title": "Guide Libretto", "description": "Guide Libretto", "goal": "PRD", "context": "",
    "steps": [
      {"step": "01-gather-context", "index": 1, "title": "Gather", "persona": "libretto",
       "status": "completed", "started_at": "t1", "completed_at": "t2", "notes": "",
       "attempts": 0, "file": "/w/s1.md", "task_id": "task-1"},
      {"step": "02-draft-prd", "index": 2, "title": "Draft", "persona": "libretto",
       "status": "blocked", "started_at": "t2", "completed_at": "", "notes":
       "rejected: non-goals", "attempts": 1, "file": "/w/s2.md", "task_id": "task-2"}],
    "artifacts": [{"name": "s-20261122-081259-001", "type": "return", "status": "blocked",
                   "updated_at": "t4", "notes": "libretto → maestro"}],
    "decisions": [{"timestamp": "t4", "handoff_id": "s-20261122-081259-001",
                   "subject_kind": "handoff", "decision": "reject", "reviewer": "alice",
                   "note": "non-goals"}],
    "sessions": [{"session_id": "s-20261122-081259", "started_at": "t0",
                  "last_active_at": "t5", "status": "active"}]
  })");
  EXPECT_EQ(*index, want) << index->dump(1);

  const FormatOutput out = MustWrite(image);
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_NE(out.notes[0].find("1 envelope body"), std::string::npos) << out.notes[0];
  const RunImage read = MustRead(out.text);
  EXPECT_EQ(read["run"]["status"], "blocked");
  EXPECT_EQ(read["approvals"][0]["subject_kind"], "handoff");
  EXPECT_EQ(read["tasks"][1]["meta"]["notes"], "rejected: non-goals");
  EXPECT_EQ(MustWrite(read).text, out.text);
}

TEST(SinfoniaFormatTest, WriterRefusesAnImageWithoutARun) {
  Result<FormatOutput> out = WriteSinfoniaIndex(Json{{"image", 1}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition);
}

TEST(SinfoniaFormatTest, Refusals) {
  const auto expect = [](const std::string& text, std::initializer_list<const char*> parts) {
    const std::string message = Refusal(text);
    for (const char* part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
    }
  };
  expect("---\nworkflow_id: x\n## Goal\nnever closed\n", {"line 1:", "never closed"});
  expect("---\nworkflow_id: x\n---\n## Goal\nbad \xC3\x28 byte\n",
         {"line 5, column 5", "not valid UTF-8"});
  expect("", {"empty"});
  expect(" \n\n", {"empty"});
  expect("---\nworkflow_status: running\n---\n",
         {"line 2:", "workflow_status \"running\"",
          "allowed: created, in-progress, complete, blocked, failed"});
  expect("---\ncurrent_step_index: two\n---\n", {"line 2:", "current_step_index", "\"two\""});
  std::string bad_cells = kCanonical;
  bad_cells.replace(bad_cells.find("| looks right |"), 15, "| looks | right |");
  expect(bad_cells, {"line 29:", "6 cells", "5 columns", "\\|"});
  std::string bad_status = kCanonical;
  bad_status.replace(bad_status.find("| in-progress | 2026"), 13, "| approved ");
  expect(bad_status, {"line 18:", "step \"2-create-spec\"", "status \"approved\"",
                      "allowed: pending, in-progress, completed, blocked, failed"});
  std::string duplicate = kCanonical;
  duplicate.replace(duplicate.find("| 2-create-spec |"), 17, "| 1-create-prd |");
  expect(duplicate, {"line 18:", "\"1-create-prd\" is already on line 17"});
  std::string open_row = kCanonical;
  open_row.replace(open_row.find("| ended |"), 9, "| ended");
  expect(open_row, {"line 34:", "must end with \"|\""});
  expect(
      "## Sessions\n| Session ID | Started At | Last Active At | Status |\n"
      "|  | a | b | c |\n",
      {"line 3:", "needs an id"});
}

TEST(SinfoniaFormatTest, FormatIsRegistered) {
  Result<const Format*> f = FindFormat("sinfonia");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->read, &ReadSinfoniaIndex);
  EXPECT_EQ((*f)->write, &WriteSinfoniaIndex);
}

// Issue 18: a session folder as Sinfonia's personas leave it — envelopes
// with and without front matter, numbered by sequence, by file name or by
// dispatch_id, an older envelope, an artefact and an unnumbered file, and a
// Decisions table with its own columns. Every envelope Sinfonia's recovery
// would use is read; the two it would skip are skipped and named; the table
// is kept as written; writing, reading and writing again gives the same bytes.
TEST(SinfoniaFormatTest, AMixedSessionFolderReadsEveryEnvelopeShapeAndRoundTrips) {
  const std::string dir = BATON_SOURCE_DIR "/tests/data/sinfonia/mixed-session/";
  const std::string index = Slurp(dir + "workflow.md");
  ASSERT_FALSE(index.empty());
  RunImage image = MustRead(index, dir + "workflow.md");
  Json envelopes = Json::array();
  for (const char* name : {"dispatch-01-libretto.md", "dispatch-02-rondo.md", "dispatch-to-coda.md",
                           "notes-without-number.md", "prd-final.md", "return-01-libretto.md",
                           "return-02-rondo.md"}) {
    envelopes.push_back({{"name", dir + name}, {"content", Slurp(dir + name)}});
  }
  const std::vector<std::string> skipped = AddSinfoniaEnvelopes(image, envelopes);
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_NE(skipped[0].find("notes-without-number.md: line 5: front matter: no sequence"),
            std::string::npos) << skipped[0];
  EXPECT_NE(skipped[1].find("prd-final.md: line 1: not a hand-off envelope"), std::string::npos)
      << skipped[1];

  std::map<std::string, Json> by_file;
  for (const Json& h : image["handoffs"]) by_file[h["meta"].value("file", "")] = h;
  ASSERT_EQ(by_file.size(), 5u);
  // Front-matter sequences first (1, 2); file-numbered ones after, by number.
  EXPECT_EQ(by_file["dispatch-to-coda.md"]["sequence"], 1);
  EXPECT_EQ(by_file["dispatch-to-coda.md"]["status"], "ready");
  EXPECT_EQ(by_file["dispatch-to-coda.md"]["created_at"], "2026-11-26");
  EXPECT_EQ(by_file["return-01-libretto.md"]["sequence"], 2);
  const Json& bullets = by_file["dispatch-01-libretto.md"];
  EXPECT_EQ(bullets["sequence"], 3);
  EXPECT_EQ(bullets["session_id"], "s-20261126-001");
  EXPECT_EQ(bullets["target"], "libretto");
  EXPECT_EQ(bullets["type"], "dispatch");
  EXPECT_EQ(bullets["created_at"], "2026-11-26");
  EXPECT_EQ(bullets["meta"]["file_number"], 1);
  EXPECT_EQ(bullets["meta"]["stage"], "01-prd-authoring");
  EXPECT_EQ(bullets["id"], "s-20261126-001-003");
  EXPECT_EQ(by_file["dispatch-02-rondo.md"]["sequence"], 4);
  EXPECT_EQ(by_file["dispatch-02-rondo.md"]["id"], "dispatch-02-rondo");
  EXPECT_EQ(by_file["dispatch-02-rondo.md"]["target"], "rondo");
  EXPECT_EQ(by_file["return-02-rondo.md"]["sequence"], 5);
  EXPECT_EQ(by_file["return-02-rondo.md"]["type"], "return");
  EXPECT_EQ(by_file["return-02-rondo.md"]["source"], "rondo");

  // Two envelopes of one id: the second is skipped and named, never merged
  // into the first; envelopes with no id and no session keep their own.
  RunImage twice_image = MustRead(index, dir + "workflow.md");
  const std::string dup = "---\nhandoff_id: h-1\nsequence: 1\n---\none\n";
  const std::string bare = "---\nsequence: 2\n---\nbare\n";
  const std::vector<std::string> dup_notes = AddSinfoniaEnvelopes(
      twice_image, Json::array({{{"name", "s/a.md"}, {"content", dup}},
                                {{"name", "s/b.md"}, {"content", dup}},
                                {{"name", "s/c.md"}, {"content", bare}},
                                {{"name", "s/d.md"}, {"content", bare}}}));
  ASSERT_EQ(dup_notes.size(), 1u);
  EXPECT_EQ(dup_notes[0], "envelope skipped: b.md: its id h-1 is already a.md's");
  std::vector<std::string> ids;
  for (const Json& h : twice_image["handoffs"]) ids.push_back(h.value("id", ""));
  EXPECT_EQ(ids, (std::vector<std::string>{"h-1", "c", "d"}));

  // A front matter may carry a key baton computes (file_number, file); what
  // the envelope says is kept in meta only where baton computed nothing, so a
  // "file_number: abc" cannot turn the number the order is sorted by into text.
  RunImage own_keys = MustRead(index, dir + "workflow.md");
  const std::string says_number =
      "---\ndispatch_id: dispatch-02-coda\nfile_number: abc\nfile: other.md\n---\ntwo\n";
  const std::string says_nothing = "---\ndispatch_id: dispatch-01-coda\n---\none\n";
  const std::vector<std::string> own_notes = AddSinfoniaEnvelopes(
      own_keys, Json::array({{{"name", "s/x.md"}, {"content", says_number}},
                             {{"name", "s/y.md"}, {"content", says_nothing}}}));
  EXPECT_TRUE(own_notes.empty()) << own_notes[0];
  std::map<std::string, Json> own_by_id;
  for (const Json& h : own_keys["handoffs"]) own_by_id[h.value("id", "")] = h;
  ASSERT_EQ(own_by_id.count("dispatch-02-coda"), 1u);
  EXPECT_EQ(own_by_id["dispatch-02-coda"]["meta"]["file_number"], 2);
  EXPECT_EQ(own_by_id["dispatch-02-coda"]["meta"]["file"], "x.md");
  EXPECT_LT(own_by_id["dispatch-01-coda"]["sequence"], own_by_id["dispatch-02-coda"]["sequence"]);

  const std::string once = MustWrite(image).text;
  EXPECT_NE(once.find("## Decisions\n| Time (UTC) | Decision | Rationale |\n|---|---|---|\n"
                      "| 2026-11-26 09:05 | Route to Libretto | A PRD is needed before any spec |"),
            std::string::npos)
      << once;
  EXPECT_EQ(once.find("| Timestamp | Handoff ID |"), std::string::npos) << "no empty second table";
  const std::string twice = MustWrite(MustRead(once)).text;
  EXPECT_EQ(twice, once);
}

}  // namespace
}  // namespace baton
