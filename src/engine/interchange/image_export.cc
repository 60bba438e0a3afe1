// Run images out of the store (imports.h, docs/formats.md "The run image"):
// what the seed-format writers write, and run.export.

#include <map>

#include "engine/core/core_services.h"
#include "engine/interchange/imports.h"
#include "engine/ledger/ledger.h"

namespace baton {
namespace {

std::string Str(const Json& j, const char* key, std::string fallback = "") {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

Result<Json> ExportTasks(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Json> rows, LoadRunTasks(txn, run_id));
  std::map<std::string, std::string> ref_of;  // task id → ref
  for (const Json& t : rows) {
    ref_of[t["id"].get<std::string>()] =
        t["key"].is_string() ? t["kind"].get<std::string>() + ":" + t["key"].get<std::string>()
                             : t["id"].get<std::string>();
  }
  ASSIGN_OR_RETURN(std::vector<Row> deps,
                   txn.Query("SELECT d.task_id, d.depends_on_id, d.dep_type FROM task_deps d "
                             "JOIN tasks t ON t.id = d.task_id WHERE t.run_id = ? "
                             "ORDER BY d.task_id, d.depends_on_id",
                             {SqlText(run_id)}));
  std::map<std::string, Json> depends_on;
  for (const Row& r : deps) {
    auto it = ref_of.find(r.Str(1));
    if (it == ref_of.end() || r.Str(2) != "depends_on") continue;
    depends_on[r.Str(0)].push_back(it->second);
  }
  Json tasks = Json::array();
  for (const Json& t : rows) {
    const std::string id = t["id"].get<std::string>();
    Json parent;
    if (t["parent_id"].is_string()) {
      auto it = ref_of.find(t["parent_id"].get<std::string>());
      if (it != ref_of.end()) parent = it->second;
    }
    tasks.push_back({{"ref", ref_of[id]},
                     {"id", id},
                     {"key", t["key"]},
                     {"kind", t["kind"]},
                     {"parent", parent},
                     {"depends_on", depends_on.contains(id) ? depends_on[id] : Json::array()},
                     {"title", t["title"]},
                     {"body", t["body"]},
                     {"status", t["status"]},
                     {"priority", t["priority"]},
                     {"position", t["position"]},
                     {"assignee", t["assignee"]},
                     {"attempts", t["attempts"]},
                     {"board_column", t["board_column"]},
                     {"blocked_reason", t["blocked_reason"]},
                     {"lease", t["lease"]},
                     {"result", t["result"]},
                     {"meta", t["meta"]},
                     {"created_at", t["created_at"]},
                     {"updated_at", t["updated_at"]}});
  }
  return tasks;
}

Result<Json> ExportMessages(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT sender, recipient, body, read, read_at, read_by, created_at, "
                             "meta FROM messages WHERE run_id = ? ORDER BY seq",
                             {SqlText(run_id)}));
  Json out = Json::array();
  for (const Row& r : rows) {
    out.push_back({{"from", r.Str(0)},
                   {"to", r.Str(1)},
                   {"body", r.Str(2)},
                   {"read", r.Int(3) != 0},
                   {"read_at", RowTextOrNull(r, 4)},
                   {"read_by", RowTextOrNull(r, 5)},
                   // Empty: the imported file did not say.
                   {"created_at", r.Str(6).empty() ? Json() : Json(r.Str(6))},
                   {"meta", RowJsonOr(r, 7, Json::object())}});
  }
  return out;
}

Result<Json> ExportHistory(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(Json events, ListEvents(txn, {.run_id = run_id, .limit = int64_t{1} << 40}));
  Json out = Json::array();
  for (const Json& e : events) {
    const Json& payload = e["payload"];
    std::string agent = Str(payload, "agent", Str(payload, "agent_id"));
    if (agent.empty()) agent = Str(e["actor"], "id");
    out.push_back({{"seq", e["seq"]},
                   {"kind", e["kind"]},
                   {"time", Str(payload, "source_time", e["time"].get<std::string>())},
                   {"agent", agent},
                   {"actor", e["actor"]},
                   {"summary", e["summary"]},
                   {"payload", payload},
                   {"files", e["files"]}});
  }
  return out;
}

Result<Json> ExportRows(Txn& txn, const std::string& run_id, std::string_view what) {
  Json out = Json::array();
  if (what == "approvals") {
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     txn.Query("SELECT subject_kind, subject, decision, reviewer, note, created_at, "
                               "meta FROM approvals WHERE run_id = ? ORDER BY seq",
                               {SqlText(run_id)}));
    for (const Row& r : rows) {
      out.push_back({{"subject_kind", r.Str(0)}, {"subject", r.Str(1)}, {"decision", r.Str(2)},
                     {"reviewer", r.Str(3)},     {"note", r.Str(4)},    {"time", r.Str(5)},
                     {"meta", RowJsonOr(r, 6, Json::object())}});
    }
  } else if (what == "sessions") {
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     txn.Query("SELECT id, status, started_at, last_active_at, meta FROM sessions "
                               "WHERE run_id = ? ORDER BY started_at, id",
                               {SqlText(run_id)}));
    for (const Row& r : rows) {
      out.push_back({{"id", r.Str(0)},
                     {"status", r.Str(1)},
                     {"started_at", r.Str(2)},
                     {"last_active_at", r.Str(3)},
                     {"meta", RowJsonOr(r, 4, Json::object())}});
    }
  } else if (what == "handoffs") {
    ASSIGN_OR_RETURN(
        std::vector<Row> rows,
        txn.Query("SELECT h.id, h.session_id, h.sequence, h.source, h.target, h.type, h.status, "
                  "t.kind, t.key, h.step_id, h.body, h.meta, h.created_at, h.updated_at "
                  "FROM handoffs h LEFT JOIN tasks t ON t.id = h.step_id "
                  "WHERE h.run_id = ? ORDER BY h.sequence",
                  {SqlText(run_id)}));
    for (const Row& r : rows) {
      Json step;
      if (!r.IsNull(8)) {
        step = r.Str(7) + ":" + r.Str(8);
      } else if (!r.IsNull(9)) {
        step = r.Str(9);
      }
      out.push_back({{"id", r.Str(0)},       {"session_id", RowTextOrNull(r, 1)},
                     {"sequence", r.Int(2)}, {"source", r.Str(3)},
                     {"target", r.Str(4)},   {"type", r.Str(5)},
                     {"status", r.Str(6)},   {"step", step},
                     {"body", r.Str(10)},    {"meta", RowJsonOr(r, 11, Json::object())},
                     {"created_at", r.Str(12)}, {"updated_at", r.Str(13)}});
    }
  } else if (what == "usage") {
    ASSIGN_OR_RETURN(
        std::vector<Row> rows,
        txn.Query("SELECT seq, agent, model, step_id, session_id, cost, input_tokens, "
                  "output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, "
                  "created_at FROM usage WHERE run_id = ? ORDER BY seq",
                  {SqlText(run_id)}));
    for (const Row& r : rows) {
      out.push_back({{"seq", r.Int(0)},
                     {"agent", r.Str(1)},
                     {"model", r.Str(2)},
                     {"step_id", r.Str(3)},
                     {"session_id", r.Str(4)},
                     {"cost", r.Real(5)},
                     {"tokens",
                      {{"input", r.Int(6)},
                       {"output", r.Int(7)},
                       {"reasoning", r.Int(8)},
                       {"cacheRead", r.Int(9)},
                       {"cacheWrite", r.Int(10)}}},
                     {"time", r.Str(11)}});
    }
  } else if (what == "questions") {
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     txn.Query("SELECT id, message, questions, work_gate, status, asked_by, "
                               "created_at FROM questions WHERE run_id = ? AND status = 'open' "
                               "ORDER BY seq",
                               {SqlText(run_id)}));
    for (const Row& r : rows) {
      out.push_back({{"id", r.Str(0)},
                     {"message", r.Str(1)},
                     {"questions", RowJsonOr(r, 2, Json::array())},
                     {"work_gate", r.Int(3) != 0},
                     {"status", r.Str(4)},
                     {"asked_by", r.Str(5)},
                     {"created_at", r.Str(6)}});
    }
  }
  return out;
}

}  // namespace

Result<RunImage> ExportImage(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(Json run, LoadRun(txn, run_id));
  RunImage image = {{"image", 1}, {"run", run}};
  ASSIGN_OR_RETURN(image["tasks"], ExportTasks(txn, run_id));
  ASSIGN_OR_RETURN(image["messages"], ExportMessages(txn, run_id));
  ASSIGN_OR_RETURN(image["history"], ExportHistory(txn, run_id));
  for (const char* what : {"approvals", "sessions", "handoffs", "usage", "questions"}) {
    ASSIGN_OR_RETURN(image[what], ExportRows(txn, run_id, what));
  }
  return image;
}

Result<FormatOutput> RenderRun(Txn& txn, const std::string& run_id, const std::string& format) {
  ASSIGN_OR_RETURN(const Format* f, FindFormat(format));
  ASSIGN_OR_RETURN(RunImage image, ExportImage(txn, run_id));
  return f->write(image);
}

Result<Json> ExportRunOp(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  ASSIGN_OR_RETURN(FormatOutput out, RenderRun(ctx.txn, run_id, in.at("format").get<std::string>()));
  return Json{{"run_id", run_id},
              {"format", in["format"]},
              {"content", out.text},
              {"notes", out.notes}};
}

}  // namespace baton
