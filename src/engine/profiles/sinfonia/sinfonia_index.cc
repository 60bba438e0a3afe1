// The Sinfonia profile's continuity: the compaction block (compaction.ts)
// and resuming from it (resume.ts), over the stored workflow.

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <regex>
#include <sstream>

#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "engine/profiles/sinfonia/sinfonia.h"
#include "store/tables/handoff_table.h"
#include "store/tables/session_table.h"

namespace baton {
namespace {

using namespace sinfonia_internal;

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::string JoinWords(const std::vector<std::string>& words, size_t n) {
  std::string out;
  for (size_t i = 0; i < n && i < words.size(); ++i) {
    if (i > 0) out += ' ';
    out += words[i];
  }
  return out;
}

// compaction.ts truncateWords: the first "max" words and " ..." when cut.
std::string TruncateWords(std::string_view text, size_t max) {
  const std::vector<std::string> words = Words(text);
  if (words.size() <= max) return JoinWords(words, words.size());
  return JoinWords(words, max) + " ...";
}

// The text up to its "max"-th word, its line breaks kept, and " ..." when
// cut. compaction.ts joined the cut block's words with single spaces, which
// turned the lines into one and left resume nothing to parse.
std::string CutKeepingLines(const std::string& text, int max) {
  int words = 0;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool space = std::isspace(static_cast<unsigned char>(text[i])) != 0;
    if (!space && !in_word && ++words > max) {
      std::string out = text.substr(0, i);
      while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
      return out + " ...";
    }
    in_word = !space;
  }
  return text;
}

std::string ListOrNone(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? "; " : "") + items[i];
  return out;
}

std::string Template(const std::string& goal, const Json& state,
                     const std::vector<std::string>& decisions,
                     const std::vector<std::string>& artifacts) {
  return "## Compaction Injection\n- Session: " + state["session_id"].get<std::string>() +
         "\n- Workflow: " + state["workflow_id"].get<std::string>() + "\n- Goal: " + goal +
         "\n- Current Step: " + state["current_step"].get<std::string>() +
         "\n- Status: " + state["workflow_status"].get<std::string>() +
         "\n- Key Decisions: " + ListOrNone(decisions) +
         "\n- Recent Artifacts: " + ListOrNone(artifacts);
}

std::vector<std::string> LastThree(const Json& list,
                                   const std::function<std::string(const Json&)>& f) {
  std::vector<std::string> out;
  const size_t n = list.size();
  for (size_t i = n > 3 ? n - 3 : 0; i < n; ++i) out.push_back(f(list[i]));
  return out;
}

std::vector<std::string> FirstTwo(std::vector<std::string> v) {
  if (v.size() > 2) v.resize(2);
  return v;
}

// resume.ts parseInjection: "- Key: value" lines, keys lower-cased.
std::map<std::string, std::string> ParseSummary(const std::string& summary) {
  static const std::regex kLine(R"(^-\s+([^:]+):\s*(.*)$)");
  std::map<std::string, std::string> fields;
  std::istringstream in(summary);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    if (!std::regex_match(line, m, kLine)) continue;
    std::string key = m[1].str();
    while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = m[2].str();
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
      value.pop_back();
    fields[key] = value;
  }
  return fields;
}

Json Report(const std::string& status, const std::string& run_id, const Json& state,
            const std::vector<std::string>& inconsistencies, const std::string& message) {
  Json report = {{"status", status},
                 {"run_id", run_id.empty() ? Json() : Json(run_id)},
                 {"inconsistencies", inconsistencies},
                 {"message", message}};
  for (const char* key : {"workflow_id", "session_id", "current_step", "current_step_index",
                          "workflow_status", "total_steps"}) {
    report[key] = state.is_object() && state.contains(key) ? state[key] : Json();
  }
  return report;
}

// recoverFromCrash, as far as it applies to a transactional store: the cursor
// and the envelopes are written together, so a crash never leaves one behind
// the other. What remains is an envelope recorded for a later step than the
// cursor (a dispatch made without completing the step before): the cursor is
// advanced to that step, the steps passed are completed with a note, and the
// workflow is in-progress. Only for created / in-progress workflows: a
// blocked one is held by a human.
//
// Moving the cursor past steps nobody approved is a human's or the
// coordinator's call: for any other caller ("apply" false) the lag is only
// described, and the resume reports it as an inconsistency.
Result<std::string> RecoverLag(OpContext& ctx, const std::string& run_id, bool apply) {
  ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, run_id));
  if (run.status != "created" && run.status != "in-progress") return std::string();
  ASSIGN_OR_RETURN(std::optional<SinfoniaStepHandoff> furthest,
                   FurthestSinfoniaStepHandoff(ctx.txn, run_id));
  const int64_t index = run.cursor_index.value_or(0);
  if (!furthest || furthest->step_position <= index) return std::string();
  const std::string handoff = furthest->id;
  const int64_t target = furthest->step_position;
  if (!apply) {
    return "hand-off " + handoff + " is for step index " + std::to_string(target) +
           " but the cursor is at " + std::to_string(index) +
           "; only a human or the coordinator may advance it (sinfonia resume)";
  }
  ASSIGN_OR_RETURN(std::vector<Task> steps, LoadSteps(ctx, run_id));
  if (run.status == "created") {
    RETURN_IF_ERROR(MoveWorkflow(ctx, run_id, "in-progress", "recovered from " + handoff));
  }
  const std::string note = "recovered: passed by hand-off " + handoff;
  for (int64_t i = std::max<int64_t>(index, 1); i < target; ++i) {
    Task step = steps.at(i - 1);
    if (step.status == "completed") continue;
    if (step.status != "in-progress") {
      ASSIGN_OR_RETURN(step, MoveStep(ctx, step, "in-progress", note));
    }
    RETURN_IF_ERROR(MoveStep(ctx, step, "completed", note, note).status());
  }
  const Task& next = steps.at(target - 1);
  if (next.status != "in-progress") {
    RETURN_IF_ERROR(MoveStep(ctx, next, "in-progress", note).status());
  }
  RETURN_IF_ERROR(SetCursor(ctx, run, next.key.value_or(""), target));
  RETURN_IF_ERROR(
      AppendEvent(
          ctx, {.run_id = run_id,
                .kind = "sinfonia.recovered",
                .summary = "cursor advanced from " + std::to_string(index) + " to " +
                           std::to_string(target) + " after hand-off " + handoff,
                .payload = {{"from_index", index}, {"to_index", target}, {"handoff_id", handoff}}})
          .status());
  return "stored cursor (index " + std::to_string(index) + ") lagged hand-off " + handoff +
         "; advanced to " + next.key.value_or("") + " (index " + std::to_string(target) + ")";
}

}  // namespace

Result<Json> SinfoniaCompact(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Json state, SinfoniaState(ctx, in));
  const auto decision = [](const Json& d) {
    return d["decision"].get<std::string>() + " by " + d["reviewer"].get<std::string>();
  };
  const auto artifact = [](const Json& a) {
    return a["name"].get<std::string>() + "(" + a["status"].get<std::string>() + ")";
  };
  const std::vector<std::string> decisions = LastThree(state["decisions"], decision);
  const std::vector<std::string> artifacts = LastThree(state["artifacts"], artifact);
  const std::string goal = state["goal"].get<std::string>();
  std::string text = Template(TruncateWords(goal, 35), state, decisions, artifacts);
  bool compacted = false;
  if (SinfoniaCountWords(text) > kSinfoniaMaxCompactionWords) {
    // Over budget: the goal to 20 words and two of the three entries (the
    // first two, as compaction.ts slices them), then a hard cut.
    compacted = true;
    text = Template(TruncateWords(goal, 20), state, FirstTwo(decisions), FirstTwo(artifacts));
    if (SinfoniaCountWords(text) > kSinfoniaMaxCompactionWords) {
      // compaction.ts cut at 200 words and then appended "...", a 201st;
      // baton cuts at 199 so the marker stays within the budget.
      text = CutKeepingLines(text, kSinfoniaMaxCompactionWords - 1);
    }
  }
  return Json{{"run_id", state["run_id"]},         {"summary", text},
              {"words", SinfoniaCountWords(text)}, {"compacted", compacted},
              {"session_id", state["session_id"]}, {"workflow_id", state["workflow_id"]}};
}

Result<Json> SinfoniaResume(OpContext& ctx, const Json& in) {
  const std::map<std::string, std::string> f = ParseSummary(in.at("summary").get<std::string>());
  const auto get = [&f](const char* key) {
    auto it = f.find(key);
    return it == f.end() ? std::string() : it->second;
  };
  const std::string session = get("session");
  const std::string workflow = get("workflow");
  const std::string step = get("current step");
  if (session.empty() || workflow.empty() || step.empty()) {
    return Report("missing", in.value("run", ""), Json(),
                  {"summary is missing required continuity fields (Session, Workflow, "
                   "Current Step)"},
                  "cannot resume from an incomplete compaction summary");
  }
  std::string run_id = in.value("run", "");
  if (run_id.empty()) {
    ASSIGN_OR_RETURN(std::optional<std::string> session_run, FindSessionRunId(ctx.txn, session));
    if (session_run) run_id = *session_run;
  }
  Result<Run> run =
      run_id.empty() ? Result<Run>(NotFoundError("no run")) : LoadWorkflow(ctx.txn, run_id);
  if (!run.ok()) {
    if (run.status().code() != StatusCode::kNotFound) return run.status();
    return Report(
        "missing", run_id, Json(),
        {run_id.empty() ? "no workflow has session " + session : "no workflow run " + run_id},
        "compaction resume failed: workflow missing");
  }
  const bool may_recover = ctx.actor.role == "human" || ctx.actor.role == "coordinator" ||
                           ctx.actor.role == "admin";
  ASSIGN_OR_RETURN(std::string lag, RecoverLag(ctx, run_id, may_recover));
  const std::string recovered = may_recover ? lag : "";
  ASSIGN_OR_RETURN(Json state, SinfoniaState(ctx, {{"run", run_id}}));
  std::vector<std::string> inconsistencies;
  if (!lag.empty()) inconsistencies.push_back(lag);
  if (state["workflow_id"] != workflow) {
    inconsistencies.push_back("workflow: the summary says " + workflow + ", the run is " +
                              state["workflow_id"].get<std::string>());
  }
  if (state["current_step"] != step) {
    inconsistencies.push_back("current step: the summary says " + step + ", the run is at " +
                              state["current_step"].get<std::string>() + " (index " +
                              state["current_step_index"].dump() + ")");
  }
  if (!recovered.empty()) {
    RETURN_IF_ERROR(TouchSession(ctx, run_id));
    return Report("recovered", run_id, state, inconsistencies,
                  "resumed after advancing the stored cursor to the hand-offs");
  }
  if (!inconsistencies.empty()) {
    return Report("inconsistent", run_id, state, inconsistencies,
                  "the summary and the stored workflow differ; the stored workflow is right");
  }
  return Report("ok", run_id, state, {}, "compaction resume validated");
}

}  // namespace baton
