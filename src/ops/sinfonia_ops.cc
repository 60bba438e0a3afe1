// The Sinfonia profile's operations: sinfonia.* (docs/profiles/sinfonia.md).
// Approve and reject are approval.approve / approval.reject, which call
// SinfoniaApplyApproval for sinfonia runs.

#include "engine/core/core_services.h"
#include "engine/profiles/sinfonia/sinfonia.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

Json RunId() { return s::Id("the workflow's run id"); }
Json Note() { return s::String("why, for the decision and the ledger", 10000); }
Json Reviewer() { return s::Id("who decides (default: the caller)"); }

Json Str() { return {{"type", "string"}}; }
Json Int() { return {{"type", "integer"}}; }
Json Arr() { return {{"type", "array"}}; }

Json StateOut() {
  return s::Entity({{"run_id", Str()},
                    {"workflow_id", Str()},
                    {"workflow_status", Str()},
                    {"current_step", Str()},
                    {"current_step_index", Int()},
                    {"total_steps", Int()},
                    {"session_id", Str()},
                    {"created_at", Str()},
                    {"updated_at", Str()},
                    {"goal", Str()},
                    {"steps", Arr()},
                    {"artifacts", Arr()},
                    {"decisions", Arr()},
                    {"sessions", Arr()},
                    {"context", Str()}});
}

Json MoveOut() {
  Json out = StateOut();
  out["properties"]["changed"] = {{"type", "boolean"}};
  out["required"].push_back("changed");
  return out;
}

// Operations that change the run take expect_version (compare-and-set on the
// run's version), checked before the handler does anything.
OpHandler Versioned(OpHandler handler) {
  return [handler = std::move(handler)](OpContext& ctx, const Json& in) -> Result<Json> {
    if (in.contains("expect_version")) {
      const std::string id = in.at("run").get<std::string>();
      ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, id));
      RETURN_IF_ERROR(CheckExpectedVersion(in, "run", id, run.version));
    }
    return handler(ctx, in);
  };
}

Status AddStartOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "sinfonia.start",
      .summary = "Start a Sinfonia workflow from a workflow folder (steps/step-NN-slug.md, in "
                 "numeric order) or a pipeline of workflow names; creates its first session",
      .input_schema = s::Input(
          {{"workflow_dir", s::String("a workflow folder holding steps/step-NN-slug.md and "
                                      "workflow.md",
                                      4096)},
           {"workflows",
            {{"type", "array"},
             {"description",
              "a pipeline: workflow names, one step each "
              "(\"1-create-prd\", ...)"},
             {"minItems", 1},
             {"maxItems", 100},
             {"items", s::Id("a workflow name")}}},
           {"workflows_root", s::String("the folder holding the pipeline's workflow folders "
                                        "(checked and read for descriptions when given)",
                                        4096)},
           {"goal", s::String("what the workflow is for (## Goal)", 100000)},
           {"context", s::String("background for the personas (## Context)", 100000)},
           {"title", s::String("the run's title (default: the workflow's description)", 2000)},
           {"project", s::Id("project id or name")},
           {"run", s::Id("the run id (default: generated)")}},
          {"goal"}),
      .output_schema = StateOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .positional = {"workflow_dir"},
      .handler = SinfoniaStart,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "sinfonia.session",
      .summary = "Start a new session (s-YYYYMMDD-HHMMSS, UTC, unique) for a workflow; its "
                 "active session ends",
      .input_schema = s::Input({{"run", RunId()}}, {"run"}),
      .output_schema = s::Entity({{"run_id", Str()}, {"session_id", Str()}, {"sessions", Arr()}}),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .versioned = true,
      .positional = {"run"},
      .handler = Versioned(SinfoniaStartSession),
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "sinfonia.current",
      .summary = "The current step (Sinfonia's advanceStep / resumeWorkflow: a pure read); null "
                 "when the workflow is complete",
      .input_schema = s::Input({{"run", RunId()}}, {"run"}),
      .output_schema = s::Entity({{"run_id", Str()},
                                  {"workflow_status", Str()},
                                  {"current_step_index", Int()},
                                  {"total_steps", Int()},
                                  {"step", {{"type", {"object", "null"}}}}}),
      .positional = {"run"},
      .handler = SinfoniaCurrent,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "sinfonia.state",
      .summary = "The whole workflow index as data: frontmatter, goal, steps, artifacts, "
                 "decisions, sessions, context",
      .input_schema = s::Input({{"run", RunId()}}, {"run"}),
      .output_schema = StateOut(),
      .positional = {"run"},
      .handler = SinfoniaState,
  }));
  return r.Add({
      .name = "sinfonia.handoff",
      .summary = "Record a hand-off envelope (id <session>-NNN; body at most 500 words)",
      .input_schema =
          s::Input({{"run", RunId()},
                    {"type", s::Enum("the envelope's type (revisions come from approval.reject)",
                                     {"dispatch", "return", "direct"})},
                    {"source", s::Id("the sending persona")},
                    {"target", s::Id("the receiving persona")},
                    {"body", s::String("the envelope's markdown body (at most 500 words)", 100000)},
                    {"step", s::String("the step it belongs to (default: the current step)", 200)}},
                   {"run", "type", "source", "target"}),
      .output_schema = s::Entity({{"id", Str()},
                                  {"sequence", Int()},
                                  {"session_id", s::Nullable("string")},
                                  {"type", Str()},
                                  {"status", Str()},
                                  {"word_count", Int()}}),
      .mutating = true,
      .positional = {"run"},
      .handler = SinfoniaHandoff,
  });
}

Status AddMoveOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "sinfonia.complete_step",
      .summary = "Complete the current step (idempotent: another index changes nothing); the "
                 "next step becomes current, or the workflow completes after the last",
      .input_schema = s::Input({{"run", RunId()},
                                {"index",
                                 {{"type", "integer"},
                                  {"minimum", 1},
                                  {"description", "the 1-based index of the step"}}}},
                               {"run", "index"}),
      .output_schema = MoveOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .versioned = true,
      .idempotent = true,
      .positional = {"run", "index"},
      .handler = Versioned(SinfoniaCompleteStep),
  }));
  const struct {
    const char* name;
    const char* summary;
    OpHandler handler;
  } actions[] = {
      {"sinfonia.retry",
       "Retry the current step after a failure: the workflow returns to in-progress and the "
       "step is dispatched again with the failure notes (a 'retry' decision)",
       SinfoniaRetry},
      {"sinfonia.skip",
       "Skip the current step: it is completed and the workflow advances (a 'skipped' decision)",
       SinfoniaSkip},
      {"sinfonia.abort",
       "Abort the workflow: it fails (an 'aborted' decision); a complete workflow cannot be "
       "aborted, a failed one stays as it is",
       SinfoniaAbort},
  };
  for (const auto& a : actions) {
    RETURN_IF_ERROR(r.Add({
        .name = a.name,
        .summary = a.summary,
        .input_schema =
            s::Input({{"run", RunId()}, {"note", Note()}, {"reviewer", Reviewer()}}, {"run"}),
        .output_schema = MoveOut(),
        .roles = {"human", "coordinator"},
        .mutating = true,
        .versioned = true,
        .positional = {"run"},
        .handler = Versioned(a.handler),
    }));
  }
  return Status();
}

Status AddContinuityOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "sinfonia.compact",
      .summary = "The compaction summary of a workflow (## Compaction Injection, at most 200 "
                 "words)",
      .input_schema = s::Input({{"run", RunId()}}, {"run"}),
      .output_schema = s::Entity({{"run_id", Str()}, {"summary", Str()}, {"words", Int()}}),
      .positional = {"run"},
      .handler = SinfoniaCompact,
      .render_text = [](const Json& out) { return out["summary"].get<std::string>() + "\n"; },
  }));
  return r.Add({
      .name = "sinfonia.resume",
      .summary = "Resume from a compaction summary: ok, recovered (the stored cursor lagged the "
                 "hand-offs and was advanced), missing or inconsistent",
      .input_schema = s::Input({{"summary", s::String("the ## Compaction Injection block", 20000)},
                                {"run", s::Id("the run (default: the run of the summary's "
                                              "session)")}},
                               {"summary"}),
      .output_schema = s::Entity(
          {{"status", s::Enum("the outcome", {"ok", "recovered", "missing", "inconsistent"})},
           {"inconsistencies", Arr()},
           {"message", Str()}}),
      .mutating = true,
      .handler = SinfoniaResume,
  });
}

}  // namespace

Status RegisterSinfoniaOps(Registry& r) {
  RETURN_IF_ERROR(AddStartOps(r));
  RETURN_IF_ERROR(AddMoveOps(r));
  return AddContinuityOps(r);
}

}  // namespace baton
