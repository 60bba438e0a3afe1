// Run images out of the store (imports.h, docs/formats.md "The run image"):
// what the seed-format writers write, and run.export.

#include <map>

#include "engine/core/core_services.h"
#include "engine/interchange/imports.h"
#include "engine/ledger/ledger.h"
#include "store/tables/approval_table.h"
#include "store/tables/handoff_table.h"
#include "store/tables/message_table.h"
#include "store/tables/question_table.h"
#include "store/tables/session_table.h"
#include "store/tables/task_dep_table.h"
#include "store/tables/usage_table.h"
#include "util/json_or_null.h"

namespace baton {
namespace {


// A task as images name it: kind:key, or its id when it has no key.
std::string TaskRef(const Task& t) { return t.key ? t.kind + ":" + *t.key : t.id; }

Result<Json> ExportTasks(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Task> rows, LoadRunTasks(txn, run_id));
  std::map<std::string, std::string> ref_of;  // task id → ref
  for (const Task& t : rows) ref_of[t.id] = TaskRef(t);
  ASSIGN_OR_RETURN(std::vector<ExportedTaskDep> deps, ExportRunTaskDepRows(txn, run_id));
  std::map<std::string, Json> depends_on;
  for (const ExportedTaskDep& d : deps) {
    auto it = ref_of.find(d.depends_on_id);
    if (it == ref_of.end() || d.dep_type != "depends_on") continue;
    depends_on[d.task_id].push_back(it->second);
  }
  Json tasks = Json::array();
  for (const Task& t : rows) {
    Json parent;
    if (t.parent_id) {
      auto it = ref_of.find(*t.parent_id);
      if (it != ref_of.end()) parent = it->second;
    }
    tasks.push_back({{"ref", ref_of[t.id]},
                     {"id", t.id},
                     {"key", OrNull(t.key)},
                     {"kind", t.kind},
                     {"parent", parent},
                     {"depends_on", depends_on.contains(t.id) ? depends_on[t.id] : Json::array()},
                     {"title", t.title},
                     {"body", t.body},
                     {"status", t.status},
                     {"priority", t.priority},
                     {"position", t.position},
                     {"assignee", OrNull(t.assignee)},
                     {"attempts", t.attempts},
                     {"board_column", OrNull(t.board_column)},
                     {"blocked_reason", OrNull(t.blocked_reason)},
                     {"lease", TaskLeaseToJson(t)},
                     {"result", t.result},
                     {"meta", t.meta},
                     {"created_at", t.created_at},
                     {"updated_at", t.updated_at}});
  }
  return tasks;
}

Result<Json> ExportMessages(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<ExportedMessage> rows, ExportRunMessageRows(txn, run_id));
  Json out = Json::array();
  for (const ExportedMessage& m : rows) {
    out.push_back({{"from", m.sender},
                   {"to", m.recipient},
                   {"body", m.body},
                   {"read", m.read},
                   {"read_at", OrNull(m.read_at)},
                   {"read_by", OrNull(m.read_by)},
                   // Empty: the imported file did not say.
                   {"created_at", m.created_at.empty() ? Json() : Json(m.created_at)},
                   {"meta", m.meta}});
  }
  return out;
}

Result<Json> ExportHistory(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(Json events, ListEvents(txn, {.run_id = run_id, .limit = int64_t{1} << 40}));
  Json out = Json::array();
  out.get_ref<Json::array_t&>().reserve(events.size());
  // Each event's parts are moved, not copied: a mirror renders the whole
  // history of its run at each rewrite.
  for (Json& e : events) {
    Json& payload = e["payload"];
    std::string agent = JsonText(payload, "agent", JsonText(payload, "agent_id"));
    if (agent.empty()) agent = JsonText(e["actor"], "id");
    std::string time = JsonText(payload, "source_time", e["time"].get<std::string>());
    out.push_back({{"seq", std::move(e["seq"])},
                   {"kind", std::move(e["kind"])},
                   {"time", std::move(time)},
                   {"agent", std::move(agent)},
                   {"actor", std::move(e["actor"])},
                   {"summary", std::move(e["summary"])},
                   {"payload", std::move(payload)},
                   {"files", std::move(e["files"])}});
  }
  return out;
}

Result<Json> ExportApprovals(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<ExportedApproval> rows, ExportRunApprovalRows(txn, run_id));
  Json out = Json::array();
  for (const ExportedApproval& a : rows) {
    out.push_back({{"subject_kind", a.subject_kind},
                   {"subject", a.subject},
                   {"decision", a.decision},
                   {"reviewer", a.reviewer},
                   {"note", a.note},
                   {"time", a.created_at},
                   {"meta", a.meta}});
  }
  return out;
}

Result<Json> ExportSessions(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<ExportedSession> rows, ExportRunSessionRows(txn, run_id));
  Json out = Json::array();
  for (const ExportedSession& s : rows) {
    out.push_back({{"id", s.id},
                   {"status", s.status},
                   {"started_at", s.started_at},
                   {"last_active_at", s.last_active_at},
                   {"meta", s.meta}});
  }
  return out;
}

Result<Json> ExportHandoffs(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<ExportedHandoff> rows, ExportRunHandoffRows(txn, run_id));
  Json out = Json::array();
  for (const ExportedHandoff& h : rows) {
    Json step;
    if (h.step_key) {
      step = h.step_kind + ":" + *h.step_key;
    } else if (h.step_id) {
      step = *h.step_id;
    }
    out.push_back({{"id", h.id},
                   {"session_id", OrNull(h.session_id)},
                   {"sequence", h.sequence},
                   {"source", h.source},
                   {"target", h.target},
                   {"type", h.type},
                   {"status", h.status},
                   {"step", step},
                   {"body", h.body},
                   {"meta", h.meta},
                   {"created_at", h.created_at},
                   {"updated_at", h.updated_at}});
  }
  return out;
}

Result<Json> ExportUsage(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<UsageRow> rows, ExportRunUsageRows(txn, run_id));
  Json out = Json::array();
  for (const UsageRow& u : rows) {
    out.push_back({{"seq", u.seq},
                   {"agent", u.agent},
                   {"model", u.model},
                   {"step_id", u.step_id},
                   {"session_id", u.session_id},
                   {"cost", u.cost},
                   {"tokens",
                    {{"input", u.input_tokens},
                     {"output", u.output_tokens},
                     {"reasoning", u.reasoning_tokens},
                     {"cacheRead", u.cache_read_tokens},
                     {"cacheWrite", u.cache_write_tokens}}},
                   {"time", u.created_at}});
  }
  return out;
}

Result<Json> ExportQuestions(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<ExportedQuestion> rows, ExportOpenQuestionRows(txn, run_id));
  Json out = Json::array();
  for (const ExportedQuestion& q : rows) {
    out.push_back({{"id", q.id},
                   {"message", q.message},
                   {"questions", q.questions},
                   {"work_gate", q.work_gate},
                   {"status", q.status},
                   {"asked_by", q.asked_by},
                   {"created_at", q.created_at}});
  }
  return out;
}

}  // namespace

Result<RunImage> ExportImage(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(Run run, LoadRun(txn, run_id));
  RunImage image = {{"image", 1}, {"run", RunToJson(run)}};
  ASSIGN_OR_RETURN(image["tasks"], ExportTasks(txn, run_id));
  ASSIGN_OR_RETURN(image["messages"], ExportMessages(txn, run_id));
  ASSIGN_OR_RETURN(image["history"], ExportHistory(txn, run_id));
  ASSIGN_OR_RETURN(image["approvals"], ExportApprovals(txn, run_id));
  ASSIGN_OR_RETURN(image["sessions"], ExportSessions(txn, run_id));
  ASSIGN_OR_RETURN(image["handoffs"], ExportHandoffs(txn, run_id));
  ASSIGN_OR_RETURN(image["usage"], ExportUsage(txn, run_id));
  ASSIGN_OR_RETURN(image["questions"], ExportQuestions(txn, run_id));
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
