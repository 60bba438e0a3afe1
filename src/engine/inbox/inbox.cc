#include "engine/inbox/inbox.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "engine/profiles/stigmergy/stigmergy.h"
#include "util/clock.h"

namespace baton {
namespace {

struct Scope {
  std::string project_id;  // "" for every project
  std::string run_id;      // "" for every run
};

// "AND <alias>.project_id = ? AND <alias>.run_id = ?" for the scope asked.
std::string ScopeSql(const Scope& scope, const std::string& alias, std::vector<SqlValue>& params) {
  std::string sql;
  if (!scope.project_id.empty()) {
    sql += " AND " + alias + ".project_id = ?";
    params.push_back(SqlText(scope.project_id));
  }
  if (!scope.run_id.empty()) {
    sql += " AND " + alias + ".id = ?";
    params.push_back(SqlText(scope.run_id));
  }
  return sql;
}

class Collector {
 public:
  Collector(OpContext& ctx, Scope scope) : ctx_(ctx), scope_(std::move(scope)) {}

  Status CollectAll() {
    RETURN_IF_ERROR(Questions());
    RETURN_IF_ERROR(SinfoniaReturns());
    RETURN_IF_ERROR(StigmergyGates());
    RETURN_IF_ERROR(BoardCards());
    RETURN_IF_ERROR(Messages());
    RETURN_IF_ERROR(LostAgents());
    return Mirrors();
  }

  Json items() && { return std::move(items_); }

 private:
  // One item; "run" is {id, title, profile} or null.
  void Add(const std::string& id, const char* kind, const Json& run, const std::string& from,
           std::string title, std::string body, const std::string& since,
           std::initializer_list<const char*> actions, Json ref) {
    const int64_t since_ms = ParseTime(since);
    Json item = {{"id", id},
                 {"kind", kind},
                 {"run_id", run.is_null() ? Json() : run["id"]},
                 {"run_title", run.is_null() ? Json() : run["title"]},
                 {"profile", run.is_null() ? Json() : run["profile"]},
                 {"from", from},
                 {"title", std::move(title)},
                 {"body", std::move(body)},
                 {"since", since},
                 {"waited_ms", since_ms < 0 ? 0 : std::max<int64_t>(0, ctx_.now_ms - since_ms)},
                 {"actions", Json::array()},
                 {"ref", std::move(ref)}};
    for (const char* a : actions) item["actions"].push_back(a);
    items_.push_back(std::move(item));
  }

  static Json RunOf(const Row& r, int at) {
    if (r.IsNull(at)) return Json();
    return {{"id", r.Str(at)}, {"title", r.Str(at + 1)}, {"profile", r.Str(at + 2)}};
  }

  Status Questions() {
    std::vector<SqlValue> params;
    const std::string scope = ScopeSql(scope_, "r", params);
    ASSIGN_OR_RETURN(
        std::vector<Row> rows,
        ctx_.txn.Query("SELECT q.seq, q.id, q.asked_by, q.message, q.questions, q.work_gate, "
                       "q.created_at, q.run_id, r.title, r.profile FROM questions q LEFT JOIN runs "
                       "r ON r.id = q.run_id WHERE q.status = 'open'" +
                           (scope.empty() ? "" : " AND q.run_id IS NOT NULL" + scope) +
                           " ORDER BY q.seq",
                       params));
    for (const Row& r : rows) {
      const Json questions = RowJsonOr(r, 4, Json::array());
      std::string first;
      if (questions.is_array() && !questions.empty() && questions[0].is_object()) {
        first = questions[0].value("question", "");
      }
      const std::string message = r.Str(3);
      const bool gate = r.Int(5) != 0;
      Json q = {{"id", r.Str(1)},         {"run_id", RowTextOrNull(r, 7)},
                {"asked_by", r.Str(2)},   {"message", message},
                {"questions", questions}, {"work_gate", gate},
                {"created_at", r.Str(6)}};
      Add("question:" + std::to_string(r.Int(0)), "question", RunOf(r, 7), r.Str(2),
          (gate ? "Work gate: " : "") + (first.empty() ? message : first),
          first.empty() || message == first ? "" : message, r.Str(6), {"answer", "dismiss"},
          {{"question", q}});
    }
    return Status();
  }

  Status SinfoniaReturns() {
    std::vector<SqlValue> params;
    const std::string scope = ScopeSql(scope_, "r", params);
    ASSIGN_OR_RETURN(
        std::vector<Row> rows,
        ctx_.txn.Query("SELECT h.id, h.source, h.target, h.body, h.created_at, h.run_id, r.title, "
                       "r.profile, COALESCE(t.key, r.cursor, '') FROM handoffs h JOIN runs r ON "
                       "r.id = h.run_id LEFT JOIN tasks t ON t.id = h.step_id WHERE h.type = "
                       "'return' AND h.status = 'pending' AND r.status IN ('created', 'in-progress')" +
                           scope + " ORDER BY h.created_at, h.id",
                       params));
    for (const Row& r : rows) {
      const std::string step = r.Str(8);
      Add("approval:handoff:" + r.Str(0), "approval", RunOf(r, 5), r.Str(1),
          "Review step " + step + ", returned by " + r.Str(1), r.Str(3), r.Str(4),
          {"approve", "reject", "dismiss"},
          {{"run", r.Str(5)}, {"subject_kind", "handoff"}, {"subject", r.Str(0)}, {"step", step}});
    }
    return Status();
  }

  Status StigmergyGates() {
    std::vector<SqlValue> params;
    const std::string scope = ScopeSql(scope_, "r", params);
    ASSIGN_OR_RETURN(std::vector<Row> runs,
                     ctx_.txn.Query("SELECT r.id, r.title, r.profile, r.updated_at, r.meta, "
                                    "r.status, r.version FROM runs r WHERE r.profile = "
                                    "'stigmergy' AND r.status = 'READY_FOR_EXECUTION'" +
                                        scope + " ORDER BY r.updated_at",
                                    params));
    for (const Row& r : runs) {
      const Json meta = RowJsonOr(r, 4, Json::object());
      if (meta.value("autonomy_mode", "supervised") != "supervised") continue;
      ASSIGN_OR_RETURN(std::string closed, StigmergyExecutionGateClosed(ctx_.txn, r.Str(0)));
      if (closed.empty()) continue;
      Add("approval:execution:" + r.Str(0) + ":" + std::to_string(r.Int(6)), "approval",
          RunOf(r, 0), "saul", "Approve execution of " + r.Str(1),
          "The project is ready for execution and supervised: " + closed, r.Str(3),
          {"approve", "reject", "dismiss"},
          {{"run", r.Str(0)}, {"subject_kind", "run"}, {"subject", "execution"}});
    }
    std::vector<SqlValue> story_params;
    const std::string story_scope = ScopeSql(scope_, "r", story_params);
    ASSIGN_OR_RETURN(
        std::vector<Row> stories,
        ctx_.txn.Query("SELECT t.key, t.title, t.updated_at, t.version, t.assignee, t.run_id, "
                       "r.title, r.profile FROM tasks t JOIN runs r ON r.id = t.run_id WHERE "
                       "r.profile = 'stigmergy' AND t.kind = 'story' AND t.status = "
                       "'AWAITING_VERIFICATION'" +
                           story_scope + " ORDER BY t.updated_at",
                       story_params));
    for (const Row& r : stories) {
      Add("approval:story:" + r.Str(5) + ":" + r.Str(0) + ":" + std::to_string(r.Int(3)),
          "approval", RunOf(r, 5), r.IsNull(4) ? "" : r.Str(4),
          "Verify story " + r.Str(0) + ": " + r.Str(1), "", r.Str(2),
          {"approve", "reject", "dismiss"},
          {{"run", r.Str(5)}, {"subject_kind", "story"}, {"subject", r.Str(0)}});
    }
    return Status();
  }

  Status BoardCards() {
    std::string where = " WHERE 1 = 1";
    std::vector<SqlValue> params;
    if (!scope_.project_id.empty()) {
      where += " AND b.project_id = ?";
      params.push_back(SqlText(scope_.project_id));
    }
    ASSIGN_OR_RETURN(std::vector<Row> boards,
                     ctx_.txn.Query("SELECT b.id, b.name, b.columns FROM boards b" + where +
                                        " ORDER BY b.created_at, b.id",
                                    params));
    for (const Row& b : boards) {
      const Json columns = RowJsonOr(b, 2, Json::array());
      for (const Json& col : columns) {
        if (!col.is_object() || col.value("gate", "") != "human") continue;
        RETURN_IF_ERROR(CardsIn(b.Str(0), b.Str(1), columns, col));
      }
    }
    return Status();
  }

  Status CardsIn(const std::string& board_id, const std::string& board_name, const Json& columns,
                 const Json& col) {
    Json next = Json::array();
    const Json transitions = col.value("transitions", Json::array());
    for (const Json& other : columns) {
      if (!other.is_object() || other["id"] == col["id"]) continue;
      const bool allowed =
          transitions.empty() ||
          std::find(transitions.begin(), transitions.end(), other["name"]) != transitions.end() ||
          std::find(transitions.begin(), transitions.end(), other["id"]) != transitions.end();
      if (allowed) next.push_back(other["name"]);
    }
    std::vector<SqlValue> params = {SqlText(board_id), SqlText(col.value("id", ""))};
    std::string sql =
        "SELECT t.id, t.title, t.updated_at, t.version, t.assignee, t.run_id, r.title, r.profile "
        "FROM tasks t LEFT JOIN runs r ON r.id = t.run_id WHERE t.board_id = ? AND "
        "t.board_column = ? AND t.status NOT IN ('done', 'cancelled')";
    if (!scope_.run_id.empty()) {
      sql += " AND t.run_id = ?";
      params.push_back(SqlText(scope_.run_id));
    }
    ASSIGN_OR_RETURN(std::vector<Row> rows, ctx_.txn.Query(sql + " ORDER BY t.updated_at", params));
    const std::string label = col.value("label", col.value("name", ""));
    for (const Row& r : rows) {
      Add("board_card:" + r.Str(0) + ":" + std::to_string(r.Int(3)), "board_card", RunOf(r, 5),
          r.IsNull(4) ? "" : r.Str(4), r.Str(1),
          "Waiting in \"" + label + "\" on board " + board_name + ": a human moves it on",
          r.Str(2), {"move", "dismiss"},
          {{"task", r.Str(0)},
           {"board", board_id},
           {"column", col.value("name", "")},
           {"next_columns", next}});
    }
    return Status();
  }

  Status Messages() {
    std::vector<SqlValue> params;
    std::string sql =
        "SELECT m.id, m.sender, m.recipient, m.body, m.delivery_status, m.delivery_attempts, "
        "m.last_error, m.created_at, m.run_id, r.title, r.profile FROM messages m LEFT JOIN runs r "
        "ON r.id = m.run_id WHERE m.delivery_status IN ('escalated', 'failed') AND m.read = 0";
    if (!scope_.project_id.empty()) {
      sql += " AND m.project_id = ?";
      params.push_back(SqlText(scope_.project_id));
    }
    if (!scope_.run_id.empty()) {
      sql += " AND m.run_id = ?";
      params.push_back(SqlText(scope_.run_id));
    }
    ASSIGN_OR_RETURN(std::vector<Row> rows, ctx_.txn.Query(sql + " ORDER BY m.seq", params));
    for (const Row& r : rows) {
      const std::string status = r.Str(4);
      Add("message:" + r.Str(0) + ":" + status + ":" + std::to_string(r.Int(5)), "message",
          RunOf(r, 8), r.Str(1),
          "Message to " + r.Str(2) + " " + (status == "escalated" ? "escalated" : "not delivered") +
              " after " + std::to_string(r.Int(5)) + " attempt(s)" +
              (r.IsNull(6) ? "" : ": " + r.Str(6)),
          r.Str(3), r.Str(7), {"dismiss"},
          {{"message",
            {{"id", r.Str(0)},
             {"from", r.Str(1)},
             {"to", r.Str(2)},
             {"delivery_status", status},
             {"delivery_attempts", r.Int(5)},
             {"last_error", RowTextOrNull(r, 6)}}}});
    }
    return Status();
  }

  // Agents marked lost, or silent past their lease, that still hold tasks:
  // the work stands still until someone frees it (agent.reconcile) or the
  // agent comes back.
  Status LostAgents() {
    std::vector<SqlValue> params = {SqlInt(ctx_.now_ms)};
    std::string sql =
        "SELECT t.lease_owner, COALESCE(a.status, ''), t.lease_expires_at, t.id, t.title, "
        "t.run_id, r.title, r.profile FROM tasks t LEFT JOIN agents a ON a.id = t.lease_owner "
        "LEFT JOIN runs r ON r.id = t.run_id WHERE t.status = 'in_progress' AND t.lease_owner IS "
        "NOT NULL AND (a.status = 'lost' OR t.lease_expires_at < ?)";
    if (!scope_.project_id.empty()) {
      sql += " AND t.project_id = ?";
      params.push_back(SqlText(scope_.project_id));
    }
    if (!scope_.run_id.empty()) {
      sql += " AND t.run_id = ?";
      params.push_back(SqlText(scope_.run_id));
    }
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     ctx_.txn.Query(sql + " ORDER BY t.lease_owner, t.lease_expires_at, t.id", params));
    for (size_t i = 0; i < rows.size();) {
      const Row& first = rows[i];
      const std::string agent = first.Str(0);
      Json tasks = Json::array();
      std::string titles;
      size_t j = i;
      for (; j < rows.size() && rows[j].Str(0) == agent; ++j) {
        tasks.push_back(rows[j].Str(3));
        titles += (titles.empty() ? "" : ", ") + rows[j].Str(4);
      }
      const bool lost = first.Str(1) == "lost";
      const int64_t expired = first.IsNull(2) ? ctx_.now_ms : first.Int(2);
      Add("lost_agent:" + agent + ":" + std::to_string(expired) + ":" + std::to_string(tasks.size()),
          "lost_agent", RunOf(first, 5), agent,
          "Agent " + agent + (lost ? " is lost" : " went silent (its lease ran out)") +
              " and still holds " + std::to_string(tasks.size()) + " task(s)",
          titles, FormatTime(expired), {"dismiss"}, {{"agent", agent}, {"tasks", tasks}});
      i = j;
    }
    return Status();
  }

  Status Mirrors() {
    std::vector<SqlValue> params;
    const std::string scope = ScopeSql(scope_, "r", params);
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     ctx_.txn.Query("SELECT m.path, m.format, m.last_error, m.failed_at, m.run_id, "
                                    "r.title, r.profile FROM mirrors m JOIN runs r ON r.id = "
                                    "m.run_id WHERE m.last_error IS NOT NULL" +
                                        scope + " ORDER BY m.failed_at",
                                    params));
    for (const Row& r : rows) {
      Add("mirror:" + r.Str(0) + ":" + r.Str(3), "mirror", RunOf(r, 4), "baton",
          "Mirror " + r.Str(0) + " (" + r.Str(1) + ") failed", r.Str(2), r.Str(3), {"dismiss"},
          {{"path", r.Str(0)}, {"format", r.Str(1)}, {"last_error", r.Str(2)}});
    }
    return Status();
  }

  OpContext& ctx_;
  Scope scope_;
  Json items_ = Json::array();
};

// Every item now, dismissed ones left out, oldest first.
Result<Json> CurrentItems(OpContext& ctx, const Scope& scope) {
  Collector c(ctx, scope);
  RETURN_IF_ERROR(c.CollectAll());
  Json all = std::move(c).items();
  ASSIGN_OR_RETURN(std::vector<Row> dismissed,
                   ctx.txn.Query("SELECT item FROM inbox_dismissals", {}));
  std::set<std::string> hidden;
  for (const Row& r : dismissed) hidden.insert(r.Str(0));
  Json items = Json::array();
  for (Json& item : all) {
    if (hidden.count(item["id"].get<std::string>()) == 0) items.push_back(std::move(item));
  }
  std::stable_sort(items.begin(), items.end(), [](const Json& a, const Json& b) {
    return a["since"].get<std::string>() < b["since"].get<std::string>();
  });
  return items;
}

}  // namespace

Result<Json> ListInbox(OpContext& ctx, const Json& in) {
  Scope scope;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(scope.project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  scope.run_id = in.value("run", "");
  ASSIGN_OR_RETURN(Json items, CurrentItems(ctx, scope));
  Json by_kind = Json::object();
  for (const Json& item : items) {
    const std::string kind = item["kind"].get<std::string>();
    by_kind[kind] = by_kind.value(kind, 0) + 1;
  }
  return Json{{"count", items.size()}, {"by_kind", by_kind}, {"items", items}};
}

Result<Json> DismissInboxItem(OpContext& ctx, const Json& in) {
  const std::string id = in.at("item").get<std::string>();
  ASSIGN_OR_RETURN(Json items, CurrentItems(ctx, Scope{}));
  const auto it = std::find_if(items.begin(), items.end(),
                               [&](const Json& item) { return item["id"] == id; });
  if (it == items.end()) {
    return NotFoundError("item: nothing needs you under id \"" + id +
                         "\" (already dealt with, dismissed, or changed since: list the inbox "
                         "again)");
  }
  const Json item = *it;
  const std::string note = in.value("note", "");
  RETURN_IF_ERROR(ctx.txn
                      .Exec("INSERT INTO inbox_dismissals (item, kind, note, dismissed_by, "
                            "dismissed_at) VALUES (?, ?, ?, ?, ?)",
                            {SqlText(id), SqlText(item["kind"].get<std::string>()), SqlText(note),
                             SqlText(ctx.actor.id), SqlText(ctx.now)})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = item["run_id"].is_string()
                                                  ? item["run_id"].get<std::string>()
                                                  : std::string(),
                                    .kind = "inbox.dismissed",
                                    .summary = "dismissed: " + item["title"].get<std::string>() +
                                               (note.empty() ? "" : " (" + note + ")"),
                                    .payload = {{"item", id},
                                                {"kind", item["kind"]},
                                                {"note", note}}})
                      .status());
  return Json{{"item", id}, {"dismissed", true}};
}

Result<Json> RecordNotification(OpContext& ctx, const Json& in) {
  const bool sent = in.at("outcome") == "sent";
  const int64_t attempts = in.at("attempts").get<int64_t>();
  const std::string title = in.value("title", "");
  ASSIGN_OR_RETURN(int64_t seq,
                   AppendEvent(ctx, {.run_id = in.value("run", ""),
                                     .kind = "inbox.notified",
                                     .summary = sent ? "notified: " + title
                                                     : "notify command failed after " +
                                                           std::to_string(attempts) +
                                                           " attempt(s): " + in.value("error", ""),
                                     .payload = {{"item", in.at("item")},
                                                 {"outcome", in.at("outcome")},
                                                 {"attempts", attempts},
                                                 {"exit_code", in.value("exit_code", -1)},
                                                 {"error", in.value("error", "")}}}));
  return Json{{"seq", seq}};
}

}  // namespace baton
