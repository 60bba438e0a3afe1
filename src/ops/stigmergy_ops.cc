// The Stigmergy profile (issue #4 item 4): the v2.0 project ledger as a run.
// Rules and their sources: docs/profiles/stigmergy.md.

#include "engine/profiles/stigmergy/stigmergy.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

Json Run() { return s::Id("the Stigmergy project's run id"); }
Json Summary() { return s::String("a human-readable summary for the history", 2000); }
Json Files() {
  return {{"type", "array"},
          {"maxItems", 1000},
          {"items", s::String("a path created or changed", 4096)},
          {"description", "files created or changed (history files_modified)"}};
}
Json StoryId() {
  return {{"type", "string"},
          {"pattern", "^[0-9]{1,9}\\.[0-9]{1,9}$"},
          {"description", "story id \"<epic_id>.<n>\", e.g. \"1.1\""}};
}
Json Mode() {
  return s::Enum("supervised: a human approves execution", {"supervised", "autonomous"});
}

// Mutations answer with the project's compact form.
Json CompactOut() {
  return s::Entity({{"run_id", {{"type", "string"}}},
                    {"project_status", {{"type", "string"}}},
                    {"system_signal", {{"type", "string"}}},
                    {"autonomy_mode", {{"type", "string"}}},
                    {"history_seq", {{"type", "integer"}}}});
}

Json ManifestEpics() {
  Json story = {
      {"type", "object"},
      {"properties", {{"story_id", StoryId()}, {"title", s::String("story title", 2000)}}},
      {"required", {"story_id", "title"}},
      {"additionalProperties", false}};
  Json epic = {{"type", "object"},
               {"properties",
                {{"epic_id",
                  {{"type", "integer"},
                   {"minimum", 1},
                   {"maximum", 999999999},
                   {"description", "epic number, e.g. 1"}}},
                 {"title", s::String("epic title", 2000)},
                 {"stories", {{"type", "array"}, {"maxItems", 1000}, {"items", story}}}}},
               {"required", {"epic_id", "title"}},
               {"additionalProperties", false}};
  return {{"type", "array"},
          {"maxItems", 1000},
          {"items", epic},
          {"description", "epics with their stories; existing ids are updated, new ones added"}};
}

std::string RenderNext(const Json& out) {
  const std::string who = out["agent"].is_null() ? "nobody" : out["agent"].get<std::string>();
  return who + " — rule " + std::to_string(out["rule"].get<int>()) + " (" +
         out["rule_name"].get<std::string>() + "): " + out["action"].get<std::string>() +
         "\n  because " + out["reason"].get<std::string>() + "\n";
}

Status AddProjectOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "stigmergy.init",
      .summary = "Start a Stigmergy project (NEEDS_BRIEFING, signal INIT, supervised by default)",
      .input_schema = s::Input({{"project_name", s::String("project name", 2000)},
                                {"autonomy_mode", Mode()},
                                {"run", s::Id("run id (default: generated)")},
                                {"project", s::Id("baton project id or name")}}),
      .output_schema = CompactOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .handler = StigmergyInit,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "stigmergy.set_autonomy",
      .summary =
          "*set_autonomy: supervised or autonomous (only a human makes a project autonomous)",
      .input_schema = s::Input({{"run", Run()}, {"mode", Mode()}}, {"run", "mode"}),
      .output_schema = CompactOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .positional = {"mode"},
      .handler = StigmergySetAutonomy,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "stigmergy.manifest",
      .summary =
          "Create or update the project manifest's epics and stories (by id; nothing removed)",
      .input_schema = s::Input({{"run", Run()}, {"epics", ManifestEpics()}}, {"run", "epics"}),
      .output_schema = CompactOut(),
      .mutating = true,
      .handler = StigmergyManifest,
  }));
  return r.Add({
      .name = "stigmergy.status",
      .summary =
          "Set project_status (supervised execution needs a human approval of \"execution\")",
      .input_schema =
          s::Input({{"run", Run()},
                    {"status", s::Enum("new project_status",
                                       {"NEEDS_BRIEFING", "NEEDS_PLANNING", "READY_FOR_EXECUTION",
                                        "EXECUTION_IN_PROGRESS", "EXECUTION_HALTED",
                                        "PROJECT_COMPLETE", "HUMAN_INPUT_REQUIRED"})},
                    {"summary", Summary()}},
                   {"run", "status"}),
      .output_schema = CompactOut(),
      .mutating = true,
      .positional = {"status"},
      .handler = StigmergySetStatus,
  });
}

Status AddStoryOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "stigmergy.story",
      .summary =
          "Move a story (STORY_CREATED on start, STORY_COMPLETE; the epic follows its stories)",
      .input_schema = s::Input(
          {{"run", Run()},
           {"story_id", StoryId()},
           {"status",
            s::Enum("new story status (failures: stigmergy story-failed)",
                    {"PENDING", "IN_PROGRESS", "AWAITING_VERIFICATION", "COMPLETE", "FAILED"})},
           {"summary", Summary()},
           {"files_modified", Files()}},
          {"run", "story_id", "status"}),
      .output_schema = CompactOut(),
      .mutating = true,
      .positional = {"story_id", "status"},
      .handler = StigmergyStory,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "stigmergy.story_failed",
      .summary =
          "Record a story failure; LAW V: the second one escalates, opens an issue and halts",
      .input_schema = s::Input(
          {{"run", Run()}, {"story_id", StoryId()}, {"reason", s::String("what failed", 4000)}},
          {"run", "story_id", "reason"}),
      .output_schema = CompactOut(),
      .mutating = true,
      .positional = {"story_id"},
      .handler = StigmergyStoryFailed,
  }));
  return r.Add({
      .name = "stigmergy.signal",
      .summary = "Leave a system_signal (INIT, STORY_CREATED, STORY_COMPLETE, EPIC_COMPLETE, "
                 "ESCALATION_REQUIRED, MILESTONE_APPROVED) with a history entry",
      .input_schema = s::Input({{"run", Run()},
                                {"signal", s::String("the signal", 200)},
                                {"summary", Summary()},
                                {"files_modified", Files()}},
                               {"run", "signal"}),
      .output_schema = CompactOut(),
      .mutating = true,
      .positional = {"signal"},
      .handler = StigmergySignal,
  });
}

Status AddIssueAndReadOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "stigmergy.issue",
      .summary = "Log an issue (OPEN) with the history events it refers to",
      .input_schema = s::Input({{"run", Run()},
                                {"summary", s::String("what keeps failing", 4000)},
                                {"history_ref",
                                 {{"type", "array"},
                                  {"maxItems", 1000},
                                  {"items", {{"type", "integer"}, {"minimum", 1}}},
                                  {"description", "ledger seqs of the related history events"}}}},
                               {"run", "summary"}),
      .output_schema = CompactOut(),
      .mutating = true,
      .handler = StigmergyOpenIssue,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "stigmergy.resolve_issue",
      .summary = "*resolve_issue: the issue becomes RESOLVED",
      .input_schema = s::Input({{"run", Run()},
                                {"issue_id", s::Id("issue id, e.g. ISS-1")},
                                {"resolution", s::String("how it was resolved", 4000)}},
                               {"run", "issue_id"}),
      .output_schema = CompactOut(),
      .mutating = true,
      .positional = {"issue_id"},
      .handler = StigmergyResolveIssue,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "stigmergy.next",
      .summary = "Which agent acts next and why: saul's ordered dispatch rules, first match wins",
      .input_schema = s::Input({{"run", Run()}}, {"run"}),
      .output_schema = s::Entity({{"agent", s::Nullable("string")},
                                  {"rule", {{"type", "integer"}}},
                                  {"rule_name", {{"type", "string"}}},
                                  {"action", {{"type", "string"}}},
                                  {"reason", {{"type", "string"}}}}),
      .handler = StigmergyNext,
      .render_text = RenderNext,
  }));
  return r.Add({
      .name = "stigmergy.state",
      .summary = "The project as a Stigmergy v2.0 state document (history from the ledger)",
      .input_schema = s::Input({{"run", Run()}}, {"run"}),
      .output_schema = s::Entity({{"schema_version", {{"type", "string"}}},
                                  {"project_status", {{"type", "string"}}},
                                  {"project_manifest", {{"type", "object"}}},
                                  {"history", {{"type", "array"}}},
                                  {"issue_log", {{"type", "array"}}}}),
      .handler = StigmergyState,
  });
}

}  // namespace

Status RegisterStigmergyOps(Registry& r) {
  RETURN_IF_ERROR(AddProjectOps(r));
  RETURN_IF_ERROR(AddStoryOps(r));
  return AddIssueAndReadOps(r);
}

}  // namespace baton
