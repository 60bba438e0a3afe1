#include "engine/coord/mail.h"

#include <algorithm>
#include <cctype>

#include "engine/core/agent_rows.h"
#include "engine/core/agents.h"
#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "util/clock.h"
#include "util/subprocess.h"

extern char** environ;

namespace baton {
namespace {

constexpr int64_t kDefaultLimit = 100;
constexpr size_t kPreviewBytes = 80;
constexpr size_t kMaxErrorBytes = 500;

constexpr char kMessageColumns[] =
    "m.id, m.seq, m.sender, m.recipient, m.addressed_to, m.body, m.source, m.meta, "
    "m.run_id, m.project_id, m.read, m.read_at, m.read_by, m.delivery_status, "
    "m.delivery_attempts, m.delivered_at, m.last_error, m.next_attempt_ms, m.created_at";
constexpr size_t kMessageColumnCount = 19;

constexpr char kChatColumns[] =
    "m.id, m.seq, m.channel, m.sender, m.body, m.project_id, m.meta, m.created_at";

Json MessageRowToJson(const Row& r) {
  return Json{{"id", r.Str(0)},
              {"seq", r.Int(1)},
              {"from", r.Str(2)},
              {"to", r.Str(3)},
              {"addressed_to", r.Str(4)},
              {"body", r.Str(5)},
              {"source", r.Str(6)},
              {"meta", RowJsonOr(r, 7, Json::object())},
              {"run_id", RowTextOrNull(r, 8)},
              {"project_id", RowTextOrNull(r, 9)},
              {"read", r.Int(10) != 0},
              {"read_at", RowTextOrNull(r, 11)},
              {"read_by", RowTextOrNull(r, 12)},
              {"delivery_status", r.Str(13)},
              {"delivery_attempts", r.Int(14)},
              {"delivered_at", RowTextOrNull(r, 15)},
              {"last_error", RowTextOrNull(r, 16)},
              {"next_attempt_at", r.Int(17) == 0 ? Json() : Json(FormatTime(r.Int(17)))},
              {"created_at", r.Str(18)}};
}

Json ChatRowToJson(const Row& r) {
  return Json{{"id", r.Str(0)},
              {"seq", r.Int(1)},
              {"channel", r.Str(2)},
              {"from", r.Str(3)},
              {"body", r.Str(4)},
              {"project_id", RowTextOrNull(r, 5)},
              {"meta", RowJsonOr(r, 6, Json::object())},
              {"created_at", r.Str(7)}};
}

std::string TextOrEmpty(const Json& v) { return v.is_string() ? v.get<std::string>() : ""; }

template <typename ToJson>
Json RowsToJson(const std::vector<Row>& rows, ToJson to_json) {
  Json list = Json::array();
  for (const Row& r : rows) list.push_back(to_json(r));
  return list;
}

// At most "max" bytes of "text" on one line, cut on a UTF-8 boundary.
std::string Preview(std::string text, size_t max = kPreviewBytes) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() <= max) return text;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// Completes "sql" (a SELECT over alias m ending in its WHERE clause) with the
// paging rule of mail.h: forward from "since", else the newest "limit".
Result<std::vector<Row>> Page(Txn& txn, std::string sql, std::vector<SqlValue> params,
                              const Json& in, bool forward) {
  forward = forward || in.contains("since");
  sql += std::string(" AND m.seq > ? ORDER BY m.seq ") + (forward ? "ASC" : "DESC") + " LIMIT ?";
  params.push_back(SqlInt(in.value("since", int64_t{0})));
  params.push_back(SqlInt(in.value("limit", kDefaultLimit)));
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  if (!forward) std::reverse(rows.begin(), rows.end());
  return rows;
}

Result<Json> LoadMessage(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(std::string("SELECT ") + kMessageColumns +
                                                        " FROM messages m WHERE m.id = ?",
                                                    {SqlText(id)}));
  if (rows.empty()) return NotFoundError("id: no message with id \"" + id + "\"");
  return MessageRowToJson(rows[0]);
}

// Agents act only for themselves; the other roles may act for anyone.
Status CheckSelf(const OpContext& ctx, const std::string& id, const char* field, const char* rule) {
  if (ctx.actor.role != "agent" || id == ctx.actor.id) return Status();
  return PermissionDeniedError(std::string(field) + ": an agent may " + rule + " (caller \"" +
                               ctx.actor.id + "\", asked for \"" + id + "\")");
}

constexpr char kHowAgentsRegister[] =
    " (an agent is registered by its first call; the agent_list tool shows those that are)";

Result<bool> IsAgent(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT 1 FROM agents WHERE id = ?", {SqlText(id)}));
  return !rows.empty();
}

Status RequireAgent(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(bool known, IsAgent(txn, id));
  if (known) return Status();
  return NotFoundError("agent: no agent \"" + id + "\" is registered" + kHowAgentsRegister);
}

// The agents an address reaches, by id; NotFound naming it when none.
Result<std::vector<std::string>> Recipients(Txn& txn, const std::string& to,
                                            const std::string& sender) {
  std::string where = "id = ?";
  std::string arg = to;
  std::string nobody = "no agent \"" + to + "\" is registered" + kHowAgentsRegister;
  if (to == "*") {
    where = "id <> ?";
    arg = sender;
    nobody = "no agent other than the sender \"" + sender + "\" is registered";
  } else if (to.starts_with("role:") || to.starts_with("team:")) {
    const std::string kind = to.substr(0, 4);
    arg = to.substr(5);
    if (arg.empty()) return InvalidArgumentError("to: \"" + to + "\" needs a " + kind + " name");
    where = kind + " = ?";
    nobody = "no registered agent has " + kind + " \"" + arg + "\"";
  }
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT id FROM agents WHERE " + where + " ORDER BY id", {SqlText(arg)}));
  if (rows.empty()) return Status(StatusCode::kNotFound, "to: " + nobody, Json{{"to", to}});
  std::vector<std::string> ids;
  ids.reserve(rows.size());
  for (const Row& r : rows) ids.push_back(r.Str(0));
  return ids;
}

// The run and project a message or chat post belongs to, from "run" and "project".
Status ResolveScope(OpContext& ctx, const Json& in, std::string* run_id, std::string* project_id) {
  if (in.contains("run")) {
    *run_id = in["run"].get<std::string>();
    ASSIGN_OR_RETURN(Json run, LoadRun(ctx.txn, *run_id));
    if (!run["project_id"].is_null()) *project_id = run["project_id"].get<std::string>();
  }
  if (!in.contains("project")) return Status();
  ASSIGN_OR_RETURN(std::string pid, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  if (!project_id->empty() && pid != *project_id) {
    return InvalidArgumentError("project: run " + *run_id + " belongs to project " + *project_id +
                                ", not " + pid);
  }
  *project_id = pid;
  return Status();
}

struct NewMessage {
  std::string sender, recipient, addressed_to, body, source, run_id, project_id;
  Json meta = Json::object();
};

Result<Json> InsertMessage(OpContext& ctx, const NewMessage& m) {
  const std::string id = NewId("msg");
  RETURN_IF_ERROR(
      ctx.txn
          .Exec("INSERT INTO messages (id, project_id, run_id, sender, recipient, addressed_to, "
                "body, source, meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                {SqlText(id), SqlTextOrNull(m.project_id), SqlTextOrNull(m.run_id),
                 SqlText(m.sender), SqlText(m.recipient), SqlText(m.addressed_to), SqlText(m.body),
                 SqlText(m.source), SqlText(CanonicalJson(m.meta)), SqlText(ctx.now)})
          .status());
  const std::string via = m.addressed_to == m.recipient ? "" : " (as " + m.addressed_to + ")";
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = m.run_id,
                                    .kind = "message.sent",
                                    .summary = "message " + id + " from " + m.sender + " to " +
                                               m.recipient + via + ": " + Preview(m.body),
                                    .payload = {{"message", id},
                                                {"from", m.sender},
                                                {"to", m.recipient},
                                                {"addressed_to", m.addressed_to},
                                                {"source", m.source}}})
                      .status());
  return LoadMessage(ctx.txn, id);
}

Status AppendReadEvent(OpContext& ctx, const std::string& agent, const Json& ids) {
  return AppendEvent(ctx, {.kind = "message.read",
                           .summary = ctx.actor.id + " read " + std::to_string(ids.size()) +
                                      " message(s) of " + agent + "'s inbox",
                           .payload = {{"agent", agent}, {"messages", ids}, {"by", ctx.actor.id}}})
      .status();
}

Status MarkRead(OpContext& ctx, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   ctx.txn.Query("UPDATE messages SET read = 1, read_at = ?, read_by = ? "
                                 "WHERE id = ? AND read = 0 RETURNING run_id",
                                 {SqlText(ctx.now), SqlText(ctx.actor.id), SqlText(id)}));
  // The read event is the inbox's, not a run's; a run whose message this is
  // has still changed (its seed-file mirror shows read flags).
  for (const Row& r : rows) {
    if (!r.IsNull(0)) ctx.touched_runs.insert(r.Str(0));
  }
  return Status();
}

}  // namespace

Result<Json> SendMail(OpContext& ctx, const Json& in) {
  NewMessage m{.sender = in.value("from", ctx.actor.id),
               .addressed_to = in.at("to").get<std::string>(),
               .body = in.at("body").get<std::string>(),
               .source = in.value("source", "agent"),
               .meta = in.value("meta", Json::object())};
  RETURN_IF_ERROR(CheckSelf(ctx, m.sender, "from", "send only under its own id"));
  RETURN_IF_ERROR(ResolveScope(ctx, in, &m.run_id, &m.project_id));
  ASSIGN_OR_RETURN(std::vector<std::string> recipients,
                   Recipients(ctx.txn, m.addressed_to, m.sender));
  Json sent = Json::array();
  for (const std::string& recipient : recipients) {
    m.recipient = recipient;
    ASSIGN_OR_RETURN(Json message, InsertMessage(ctx, m));
    sent.push_back(std::move(message));
  }
  return Json{{"messages", sent}};
}

Result<Json> ReadInbox(OpContext& ctx, const Json& in, bool mark_read) {
  const std::string agent = in.value("agent", ctx.actor.id);
  RETURN_IF_ERROR(CheckSelf(ctx, agent, "agent", "read only its own mail"));
  // A caller not registered yet has no mail (nothing can be sent to it),
  // so its first call may be a read or a wait; another's inbox must exist.
  if (agent != ctx.actor.id) RETURN_IF_ERROR(RequireAgent(ctx.txn, agent));
  const bool unread_only = in.value("unread_only", false);
  std::string sql =
      std::string("SELECT ") + kMessageColumns + " FROM messages m WHERE m.recipient = ?";
  if (unread_only) sql += " AND m.read = 0";
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   Page(ctx.txn, sql, {SqlText(agent)}, in, /*forward=*/unread_only));
  Json messages = RowsToJson(rows, MessageRowToJson);
  Json marked = Json::array();
  for (Json& m : messages) {
    if (!mark_read || m["read"].get<bool>()) continue;
    RETURN_IF_ERROR(MarkRead(ctx, m["id"].get<std::string>()));
    m["read"] = true;
    m["read_at"] = ctx.now;
    m["read_by"] = ctx.actor.id;
    marked.push_back(m["id"]);
  }
  if (!marked.empty()) RETURN_IF_ERROR(AppendReadEvent(ctx, agent, marked));
  return Json{{"messages", messages}, {"marked_read", marked}};
}

Result<Json> MarkMessageRead(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Json m, LoadMessage(ctx.txn, id));
  const std::string agent = m["to"].get<std::string>();
  RETURN_IF_ERROR(CheckSelf(ctx, agent, "id", "read only its own mail"));
  if (m["read"].get<bool>()) return m;
  RETURN_IF_ERROR(MarkRead(ctx, id));
  RETURN_IF_ERROR(AppendReadEvent(ctx, agent, Json::array({id})));
  return LoadMessage(ctx.txn, id);
}

Result<Json> ListOutbox(OpContext& ctx, const Json& in) {
  const std::string agent = in.value("agent", ctx.actor.id);
  RETURN_IF_ERROR(CheckSelf(ctx, agent, "agent", "read only its own outbox"));
  std::string sql =
      std::string("SELECT ") + kMessageColumns + " FROM messages m WHERE m.sender = ?";
  std::vector<SqlValue> params = {SqlText(agent)};
  if (in.contains("status")) {
    sql += " AND m.delivery_status = ?";
    params.push_back(SqlText(in["status"].get<std::string>()));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, Page(ctx.txn, sql, params, in, /*forward=*/false));
  return Json{{"messages", RowsToJson(rows, MessageRowToJson)}};
}

Result<Json> ListMail(OpContext& ctx, const Json& in) {
  std::string sql = std::string("SELECT ") + kMessageColumns + " FROM messages m WHERE 1 = 1";
  std::vector<SqlValue> params;
  if (in.contains("run")) {
    sql += " AND m.run_id = ?";
    params.push_back(SqlText(in["run"].get<std::string>()));
  }
  if (in.contains("agent")) {
    sql += " AND (m.sender = ? OR m.recipient = ?)";
    params.push_back(SqlText(in["agent"].get<std::string>()));
    params.push_back(SqlText(in["agent"].get<std::string>()));
  }
  if (in.contains("status")) {
    sql += " AND m.delivery_status = ?";
    params.push_back(SqlText(in["status"].get<std::string>()));
  }
  if (in.value("unread_only", false)) sql += " AND m.read = 0";
  ASSIGN_OR_RETURN(std::vector<Row> rows, Page(ctx.txn, sql, params, in, /*forward=*/false));
  return Json{{"messages", RowsToJson(rows, MessageRowToJson)}};
}

Result<Json> PendingDeliveries(OpContext& ctx, const Json& in) {
  std::string sql = std::string("SELECT ") + kMessageColumns +
                    ", a.status, a.delivery_command FROM messages m JOIN agents a ON "
                    "a.id = m.recipient WHERE m.delivery_status IN ('pending', 'failed') AND "
                    "m.read = 0 AND m.next_attempt_ms <= ? AND a.delivery_command IS NOT NULL "
                    "AND a.delivery_command <> ''";
  std::vector<SqlValue> params = {SqlInt(ctx.now_ms)};
  if (in.contains("agent")) {
    sql += " AND m.recipient = ?";
    params.push_back(SqlText(in["agent"].get<std::string>()));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, Page(ctx.txn, sql, params, in, /*forward=*/true));
  return Json{{"deliveries", RowsToJson(rows, [](const Row& r) {
                 Json m = MessageRowToJson(r);
                 m["agent_status"] = r.Str(kMessageColumnCount);
                 m["delivery_command"] = r.Str(kMessageColumnCount + 1);
                 return m;
               })}};
}

Result<Json> ClaimDelivery(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Json m, LoadMessage(ctx.txn, id));
  const std::string to = m["to"].get<std::string>();
  ASSIGN_OR_RETURN(Json agent, LoadAgent(ctx.txn, to));
  auto refuse = [](std::string reason) { return Json{{"claimed", false}, {"reason", reason}}; };
  if (agent["delivery_command"].is_null() || agent["delivery_command"] == "") {
    return refuse("agent " + to + " has no delivery command; it reads its inbox");
  }
  if (agent["status"] != "idle") {
    return refuse("agent " + to + " is " + agent["status"].get<std::string>() + ", not idle");
  }
  ASSIGN_OR_RETURN(int64_t taken,
                   ctx.txn.Exec("UPDATE messages SET next_attempt_ms = ? WHERE id = ? AND "
                                "delivery_status IN ('pending', 'failed') AND read = 0 AND "
                                "next_attempt_ms <= ?",
                                {SqlInt(ctx.now_ms + in.at("lease_ms").get<int64_t>()), SqlText(id),
                                 SqlInt(ctx.now_ms)}));
  if (taken == 0) {
    return refuse("message " + id + " is not due: it is " +
                  m["delivery_status"].get<std::string>() +
                  (m["read"].get<bool>() ? " and read" : ", being delivered or waiting to retry"));
  }
  const int64_t attempt = m["delivery_attempts"].get<int64_t>() + 1;
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = TextOrEmpty(m["run_id"]),
                                    .kind = "message.delivering",
                                    .summary = "delivering message " + id + " to " + to +
                                               " (attempt " + std::to_string(attempt) + ")",
                                    .payload = {{"message", id}, {"to", to}, {"attempt", attempt}}})
                      .status());
  return Json{{"claimed", true}, {"message", m}, {"command", agent["delivery_command"]}};
}

namespace {

// One attempt's outcome, as RecordDelivery applies it.
struct Attempt {
  std::string id, from, to, run_id, what;
  int64_t number = 0;
  Json payload;
};

Status RecordSuccess(OpContext& ctx, const Attempt& a) {
  RETURN_IF_ERROR(ctx.txn
                      .Exec("UPDATE messages SET delivery_status = 'delivered', "
                            "delivery_attempts = ?, delivered_at = ?, next_attempt_ms = 0 "
                            "WHERE id = ?",
                            {SqlInt(a.number), SqlText(ctx.now), SqlText(a.id)})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = a.run_id,
                                    .kind = "message.delivered",
                                    .summary = a.what + " delivered (attempt " +
                                               std::to_string(a.number) + ")",
                                    .payload = a.payload})
                      .status());
  // The agent now has input to work on: it is no longer idle, so the next
  // pass does not type another message into its pane until it says so.
  ASSIGN_OR_RETURN(Json agent, LoadAgent(ctx.txn, a.to));
  if (agent["status"] != "idle") return Status();
  return SetAgentStatus(ctx, {{"id", a.to}, {"status", "working"},
                              {"reason", "mail " + a.id + " was pushed into it"}})
      .status();
}

// Tells the sender of "m" in its inbox that it was escalated.
Status NotifySender(OpContext& ctx, const Attempt& a, const Json& m, const std::string& error) {
  return InsertMessage(
             ctx, {.sender = "baton",
                   .recipient = a.from,
                   .addressed_to = a.from,
                   .body = "Your message " + a.id + " to " + a.to + " was not delivered after " +
                           std::to_string(a.number) + " attempts (last error: " + error +
                           "). It stays in " + a.to + "'s inbox.",
                   .source = "system",
                   .run_id = a.run_id,
                   .project_id = TextOrEmpty(m["project_id"]),
                   .meta = {{"escalated", a.id}}})
      .status();
}

Status RecordFailure(OpContext& ctx, Attempt& a, const Json& m, const Json& in) {
  const std::string error =
      Preview(in.value("error", "the delivery command failed"), kMaxErrorBytes);
  const int64_t max_attempts = in.value("max_attempts", int64_t{3});
  const bool escalate = a.number >= max_attempts;
  const int64_t backoff = in.value("retry_after_ms", int64_t{1000}) *
                          (int64_t{1} << std::min<int64_t>(a.number - 1, 20));
  const int64_t retry_at = escalate ? 0 : ctx.now_ms + backoff;
  RETURN_IF_ERROR(ctx.txn
                      .Exec("UPDATE messages SET delivery_status = ?, delivery_attempts = ?, "
                            "last_error = ?, next_attempt_ms = ? WHERE id = ?",
                            {SqlText(escalate ? "escalated" : "failed"), SqlInt(a.number),
                             SqlText(error), SqlInt(retry_at), SqlText(a.id)})
                      .status());
  a.payload["error"] = error;
  const std::string n = std::to_string(a.number);
  if (!escalate) {
    return AppendEvent(ctx, {.run_id = a.run_id,
                             .kind = "message.delivery_failed",
                             .summary = a.what + " not delivered (attempt " + n + " of " +
                                        std::to_string(max_attempts) + "): " + error +
                                        "; retry at " + FormatTime(retry_at),
                             .payload = a.payload})
        .status();
  }
  // The sender hears of it if it has an inbox; never of a notice, so two
  // unreachable agents cannot bounce notices for ever.
  ASSIGN_OR_RETURN(bool sender_is_agent, IsAgent(ctx.txn, a.from));
  const bool notify = sender_is_agent && m["source"] != "system";
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = a.run_id,
                                    .kind = "message.escalated",
                                    .summary = a.what + " was not delivered after " + n +
                                               " attempts (last error: " + error + "); escalated" +
                                               (notify ? ", sender notified in its inbox" : "") +
                                               "; it stays in " + a.to + "'s inbox",
                                    .payload = a.payload})
                      .status());
  return notify ? NotifySender(ctx, a, m, error) : Status();
}

}  // namespace

Result<Json> RecordDelivery(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Json m, LoadMessage(ctx.txn, id));
  const std::string status = m["delivery_status"].get<std::string>();
  if (status == "delivered" || status == "escalated") {
    return FailedPreconditionError("id: message " + id + " is already " + status +
                                   "; there is no attempt to record");
  }
  Attempt a{.id = id,
            .from = m["from"].get<std::string>(),
            .to = m["to"].get<std::string>(),
            .run_id = TextOrEmpty(m["run_id"]),
            .number = m["delivery_attempts"].get<int64_t>() + 1};
  a.what = "message " + id + " from " + a.from + " to " + a.to;
  a.payload = {{"message", id}, {"from", a.from}, {"to", a.to}, {"attempts", a.number}};
  RETURN_IF_ERROR(in.at("ok").get<bool>() ? RecordSuccess(ctx, a) : RecordFailure(ctx, a, m, in));
  return LoadMessage(ctx.txn, id);
}

Result<Json> PostChat(OpContext& ctx, const Json& in) {
  const std::string sender = in.value("from", ctx.actor.id);
  RETURN_IF_ERROR(CheckSelf(ctx, sender, "from", "post only under its own id"));
  std::string run_id, project_id;
  RETURN_IF_ERROR(ResolveScope(ctx, in, &run_id, &project_id));
  const std::string id = NewId("chat");
  const std::string channel = in.at("channel").get<std::string>();
  const std::string body = in.at("body").get<std::string>();
  RETURN_IF_ERROR(
      ctx.txn
          .Exec("INSERT INTO chat_messages (id, channel, project_id, sender, body, "
                "meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                {SqlText(id), SqlText(channel), SqlTextOrNull(project_id), SqlText(sender),
                 SqlText(body), SqlText(CanonicalJson(in.value("meta", Json::object()))),
                 SqlText(ctx.now)})
          .status());
  RETURN_IF_ERROR(
      AppendEvent(ctx, {.kind = "chat.posted",
                        .summary = sender + " in " + channel + ": " + Preview(body),
                        .payload = {{"message", id}, {"channel", channel}, {"from", sender}}})
          .status());
  ASSIGN_OR_RETURN(std::vector<Row> rows, ctx.txn.Query(std::string("SELECT ") + kChatColumns +
                                                            " FROM chat_messages m WHERE m.id = ?",
                                                        {SqlText(id)}));
  return ChatRowToJson(rows.at(0));
}

Result<Json> ChatHistory(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      Page(ctx.txn,
           std::string("SELECT ") + kChatColumns + " FROM chat_messages m WHERE m.channel = ?",
           {SqlText(in.at("channel").get<std::string>())}, in, /*forward=*/false));
  return Json{{"messages", RowsToJson(rows, ChatRowToJson)}};
}

Result<Json> ListChatChannels(OpContext& ctx, const Json& in) {
  std::string sql = "SELECT channel, COUNT(*), MAX(seq), MAX(created_at) FROM chat_messages";
  std::vector<SqlValue> params;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(std::string pid, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
    sql += " WHERE project_id = ?";
    params.push_back(SqlText(pid));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   ctx.txn.Query(sql + " GROUP BY channel ORDER BY channel", params));
  return Json{{"channels", RowsToJson(rows, [](const Row& r) {
                 return Json{{"channel", r.Str(0)},
                             {"messages", r.Int(1)},
                             {"last_seq", r.Int(2)},
                             {"last_at", r.Str(3)}};
               })}};
}

// Running a delivery command.
namespace {

// This process's environment with the message's variables set.
std::vector<std::string> DeliveryEnv(const Json& m) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("BATON_MESSAGE_")) env.emplace_back(*e);
  }
  env.push_back("BATON_MESSAGE_ID=" + m.value("id", ""));
  env.push_back("BATON_MESSAGE_FROM=" + m.value("from", ""));
  env.push_back("BATON_MESSAGE_TO=" + m.value("to", ""));
  env.push_back("BATON_MESSAGE_BODY=" + m.value("body", ""));
  return env;
}

// "text" as printable ASCII (other bytes become '?'), trailing space trimmed.
std::string Printable(std::string text) {
  for (char& c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x7f || (u < 0x20 && c != '\n' && c != '\t')) c = '?';
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

DeliveryResult Failed(std::string why) {
  why = Printable(std::move(why));
  if (why.size() > kMaxErrorBytes) why.resize(kMaxErrorBytes);
  return DeliveryResult{.ok = false, .error = why};
}

}  // namespace

DeliveryResult RunDeliveryCommand(const std::string& command, const Json& message,
                                  int64_t timeout_ms) {
  // The body also goes to stdin, so an empty body still gives an empty stdin.
  Result<SubprocessResult> run = RunSubprocess({.argv = {"/bin/sh", "-c", command},
                                                .env = DeliveryEnv(message),
                                                .stdin_text = message.value("body", ""),
                                                .timeout_ms = timeout_ms});
  if (run.status().code() == StatusCode::kDeadlineExceeded) {
    return Failed("timed out after " + std::to_string(timeout_ms) +
                  " ms; its process group was killed");
  }
  if (!run.ok()) return Failed(run.status().message());
  if (run->exit_code == 0) return DeliveryResult{.ok = true};
  const std::string why = run->signal != 0 ? "killed by signal " + std::to_string(run->signal)
                                           : "exit status " + std::to_string(run->exit_code);
  // Only the start of stderr can fit in the error.
  const std::string err = Printable(run->err.substr(0, 2 * kMaxErrorBytes));
  return Failed(err.empty() ? why : why + ": " + err);
}

}  // namespace baton
