// graph_runs.h, the history half: checkpoints listed and shown, forks,
// compaction and the definition a run uses. The run's live half (start,
// commit, take over, pause, cancel, reset) is in graph_runs.cc.

#include <algorithm>
#include <set>

#include "engine/core/core_services.h"
#include "engine/graph/graph_runs.h"
#include "engine/graph/graph_runs_internal.h"
#include "engine/ledger/ledger.h"
#include "model/graph_def.h"
#include "model/graph_delta.h"
#include "store/tables/graph_checkpoint_table.h"
#include "store/tables/graph_definition_table.h"
#include "store/tables/question_table.h"
#include "store/tables/run_table.h"
#include "util/clock.h"
#include "util/json_or_null.h"

namespace baton {
namespace graph_internal {

// The state after each of "cps" (replayed from the first, which is a base)
// for which "want" is true (all when "want" is empty); null for the others,
// so that memory holds only the states asked for.
Result<std::vector<Json>> Replay(const std::string& run_id, const std::vector<Checkpoint>& cps,
                                 const std::vector<bool>& want) {
  std::vector<Json> states;
  states.reserve(cps.size());
  Json state;
  for (size_t i = 0; i < cps.size(); ++i) {
    const Checkpoint& c = cps[i];
    if (!c.base.is_null()) {
      state = c.base;
    } else if (state.is_null()) {
      return DataLossError("graph checkpoint " + run_id + "#" + std::to_string(c.seq) +
                           ": the first stored checkpoint holds no whole state");
    } else {
      RETURN_IF_ERROR(ApplyGraphStateDelta(state, c.delta.is_null() ? Json::object() : c.delta));
    }
    states.push_back(want.empty() || want[i] ? state : Json());
  }
  return states;
}

Result<Json> Compact(OpContext& ctx, const std::string& run_id, int64_t keep_last,
                     int64_t older_than_ms) {
  ASSIGN_OR_RETURN(std::vector<Checkpoint> cps, LoadGraphCheckpoints(ctx.txn, run_id));
  Json report = {{"run", run_id}, {"removed", 0}, {"kept", cps.size()}, {"bytes_before", 0},
                 {"bytes_after", 0}};
  if (cps.empty()) return report;
  size_t bytes_before = 0;
  for (const Checkpoint& c : cps) bytes_before += c.bytes;
  report["bytes_before"] = bytes_before;
  report["bytes_after"] = bytes_before;

  // What must stay: the latest; the one each open question was asked at;
  // each one a fork was made from.
  std::set<int64_t> pinned = {cps.back().seq};
  ASSIGN_OR_RETURN(std::vector<Question> open, OpenQuestionRows(ctx.txn, run_id));
  for (const Question& q : open) {
    int64_t at = cps.front().seq;
    for (const Checkpoint& c : cps) {
      if (c.created_at <= q.created_at) at = c.seq;
    }
    pinned.insert(at);
  }
  ASSIGN_OR_RETURN(std::vector<std::string> forks, ListGraphForkMetaTexts(ctx.txn, run_id));
  for (const std::string& f : forks) {
    Result<Json> meta = ParseJson(f, "run meta");
    if (!meta.ok()) continue;
    const Json from = meta->value("graph", Json::object()).value("forked_from", Json::object());
    if (JsonText(from, "run") == run_id) pinned.insert(from.value("seq", int64_t{-1}));
  }
  const std::string cutoff = older_than_ms > 0 ? FormatTime(ctx.now_ms - older_than_ms) : "";
  std::vector<bool> keep(cps.size(), false);
  for (size_t i = 0; i < cps.size(); ++i) {
    const bool recent = keep_last > 0 && i + static_cast<size_t>(keep_last) >= cps.size();
    // Stored times share one fixed-width UTC format, so they compare as text.
    const bool young = older_than_ms > 0 && cps[i].created_at >= cutoff;
    const bool policy_keeps = (keep_last > 0 && recent) || (older_than_ms > 0 && young) ||
                              (keep_last <= 0 && older_than_ms <= 0);
    keep[i] = policy_keeps || pinned.count(cps[i].seq) > 0;
  }
  if (std::all_of(keep.begin(), keep.end(), [](bool k) { return k; })) return report;

  ASSIGN_OR_RETURN(std::vector<Json> states, Replay(run_id, cps, keep));
  int64_t removed = 0;
  int64_t folded = 0;
  const Json* previous = nullptr;  // the state of the last kept checkpoint
  size_t bytes_after = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    const Checkpoint& c = cps[i];
    if (!keep[i]) {
      RETURN_IF_ERROR(DeleteGraphCheckpoint(ctx.txn, run_id, c.seq));
      ++removed;
      folded += 1 + c.folded;
      continue;
    }
    if (folded > 0 || (previous == nullptr && c.base.is_null())) {
      // The first kept one holds the whole state; a later one, what changed
      // since the kept one before it.
      Json base = previous == nullptr ? states[i] : Json();
      Json delta = previous == nullptr ? Json() : GraphStateDelta(*previous, states[i]);
      ASSIGN_OR_RETURN(const size_t bytes, RewriteGraphCheckpointState(ctx.txn, run_id, c.seq, base,
                                                                       delta, c.folded + folded));
      bytes_after += bytes;
    } else {
      bytes_after += c.bytes;
    }
    folded = 0;
    previous = &states[i];
  }
  report["removed"] = removed;
  report["kept"] = static_cast<int64_t>(cps.size()) - removed;
  report["bytes_after"] = bytes_after;
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "graph.compacted",
                                    .summary = "removed " + std::to_string(removed) +
                                               " checkpoint(s), kept " +
                                               report["kept"].dump(),
                                    .payload = report})
                      .status());
  return report;
}

}  // namespace graph_internal

namespace {

using graph_internal::BindStateMirror;
using graph_internal::Checkpoint;
using graph_internal::CheckUserKeys;
using graph_internal::Compact;
using graph_internal::GraphMeta;
using graph_internal::InsertWholeCheckpoint;
using graph_internal::LoadGraphRun;
using graph_internal::Replay;
using graph_internal::StoreGraphRun;

Json CheckpointJson(const Checkpoint& c) {
  return {{"seq", c.seq},           {"node", c.node},
          {"outcome", c.outcome},   {"attempt", c.attempt},
          {"next", c.next},         {"whole", !c.base.is_null()},
          {"folded", c.folded},     {"duration_ms", c.duration_ms},
          {"event_seq", OrNull(c.event_seq)}, {"bytes", c.bytes},
          {"created_at", c.created_at}};
}

Json StateJson(const Json& state) {
  Json context = state;
  Json history = Json::array();
  if (auto h = context.find(kGraphHistoryKey); h != context.end()) {
    history = *h;
    context.erase(h);
  }
  return {{"context", context}, {"conversationHistory", history}};
}

}  // namespace

Result<Json> ListGraphCheckpoints(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  RETURN_IF_ERROR(LoadGraphRun(ctx.txn, id, RunConversation::kWithout).status());
  ASSIGN_OR_RETURN(std::vector<Checkpoint> cps, LoadGraphCheckpoints(ctx.txn, id));
  std::vector<Json> states;
  const bool with_state = in.value("with_state", false);
  if (with_state) {
    ASSIGN_OR_RETURN(states, Replay(id, cps));
  }
  Json out = Json::array();
  int64_t bytes = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    Json c = CheckpointJson(cps[i]);
    bytes += static_cast<int64_t>(cps[i].bytes);
    if (with_state) c["state"] = StateJson(states[i]);
    out.push_back(std::move(c));
  }
  return Json{{"run", id}, {"checkpoints", out}, {"bytes", bytes}};
}

Result<Json> ShowGraphCheckpoint(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  const int64_t seq = in.at("seq").get<int64_t>();
  RETURN_IF_ERROR(LoadGraphRun(ctx.txn, id, RunConversation::kWithout).status());
  ASSIGN_OR_RETURN(std::vector<Checkpoint> cps, LoadGraphCheckpoints(ctx.txn, id));
  auto it = std::find_if(cps.begin(), cps.end(), [&](const Checkpoint& c) { return c.seq >= seq; });
  if (it == cps.end() || it->seq != seq) {
    std::string have;
    for (const Checkpoint& c : cps) have += (have.empty() ? "" : ", ") + std::to_string(c.seq);
    return NotFoundError("seq: run " + id + " has no checkpoint " + std::to_string(seq) +
                         " (it has " + have + "; compacted ones are gone)");
  }
  cps.erase(it + 1, cps.end());
  std::vector<bool> want(cps.size(), false);
  want.back() = true;
  ASSIGN_OR_RETURN(std::vector<Json> states, Replay(id, cps, want));
  Json c = CheckpointJson(cps.back());
  c["run"] = id;
  c["state"] = StateJson(states.back());
  return c;
}

Result<Json> ForkGraphRun(OpContext& ctx, const Json& in) {
  const std::string parent_id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Run parent, LoadGraphRun(ctx.txn, parent_id, RunConversation::kWithout));
  ASSIGN_OR_RETURN(Json at, ShowGraphCheckpoint(ctx, {{"id", parent_id}, {"seq", in.at("seq")}}));
  const int64_t seq = at["seq"].get<int64_t>();
  const std::string next = at["next"].get<std::string>();
  if (next == kGraphEnd || next == kGraphError) {
    return FailedPreconditionError("seq: checkpoint " + std::to_string(seq) + " of run " + parent_id +
                                   " ends the run (next: " + next + "); fork from an earlier one");
  }
  Json context = at["state"]["context"];
  const Json patch = in.value("context", Json::object());
  RETURN_IF_ERROR(CheckUserKeys(patch, "context"));
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it.value().is_null()) {
      context.erase(it.key());
    } else {
      context[it.key()] = it.value();
    }
  }
  const Json& pg = GraphMeta(parent);
  Json g = Json::object();
  for (const char* key : {"definition", "workdir", "entry", "initial", "keep_last", "state_dir"}) {
    if (pg.contains(key)) g[key] = pg[key];
  }
  g["attempt"] = 0;
  g["forked_from"] = {{"run", parent_id}, {"seq", seq}};
  Json create = {{"profile", "graph"},
                 {"context", context},
                 {"meta", {{"graph", g}, {"conversationHistory", at["state"]["conversationHistory"]}}},
                 {"title", in.value("title", parent.title)}};
  if (in.contains("new_id")) create["id"] = in["new_id"];
  if (parent.project_id) create["project"] = *parent.project_id;
  ASSIGN_OR_RETURN(Run run, MakeRun(ctx, create));
  const std::string id = run.id;
  run.cursor = next;
  run.cursor_index = seq + 1;
  ASSIGN_OR_RETURN(int64_t event,
                   AppendEvent(ctx, {.run_id = id,
                                     .kind = "graph.forked",
                                     .summary = "forked from run " + parent_id + " at checkpoint " +
                                                std::to_string(seq) + "; next " + next,
                                     .payload = {{"from", parent_id},
                                                 {"seq", seq},
                                                 {"next", next},
                                                 {"patched", patch}},
                                     .refs = Json::array({parent_id})}));
  RETURN_IF_ERROR(StoreGraphRun(ctx, run));
  RETURN_IF_ERROR(InsertWholeCheckpoint(ctx, run, seq, "forked", next, event));
  RETURN_IF_ERROR(BindStateMirror(ctx, id, JsonText(g, "state_dir")));
  return AnswerRun(ctx.txn, id);
}

Result<Json> CompactGraphCheckpoints(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  const int64_t keep_last = in.value("keep_last", int64_t{0});
  const int64_t older_than = in.value("older_than_ms", int64_t{0});
  if (keep_last <= 0 && older_than <= 0) {
    return InvalidArgumentError("keep_last: give keep_last, older_than_ms or both");
  }
  RETURN_IF_ERROR(LoadGraphRun(ctx.txn, id, RunConversation::kWithout).status());
  return Compact(ctx, id, keep_last, older_than);
}

Result<Json> ShowGraphDefinition(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Run run, LoadGraphRun(ctx.txn, id, RunConversation::kWithout));
  Json definition = GraphMeta(run).value("definition", Json::object());
  ASSIGN_OR_RETURN(std::optional<std::string> text,
                   LoadGraphDefinitionText(ctx.txn, JsonText(definition, "hash")));
  if (!text) return DataLossError("run " + id + ": its definition's text is not in the store");
  definition["run"] = id;
  definition["text"] = std::move(*text);
  return definition;
}

}  // namespace baton
