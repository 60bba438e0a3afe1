#include "engine/coord/mail.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "engine/core/agent_rows.h"
#include "engine/core/agents.h"
#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "model/agent.h"
#include "model/message.h"
#include "model/run.h"
#include "store/tables/agent_table.h"
#include "store/tables/chat_message_table.h"
#include "store/tables/message_table.h"
#include "util/clock.h"
#include "util/optional_text.h"
#include "util/subprocess.h"

extern char** environ;

namespace baton {
namespace {

constexpr int64_t kDefaultLimit = 100;
constexpr size_t kPreviewBytes = 80;
constexpr size_t kMaxErrorBytes = 500;

// in[key] when given.
std::optional<std::string> OptionalText(const Json& in, const char* key) {
  if (!in.contains(key)) return std::nullopt;
  return in[key].get<std::string>();
}

Json MessagesToJson(const std::vector<Message>& messages) {
  Json list = Json::array();
  for (const Message& m : messages) list.push_back(MessageToJson(m));
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

// The paging rule of mail.h: forward from "since", else the newest "limit".
SeqPage PageOf(const Json& in, bool forward) {
  return SeqPage{.since = in.value("since", int64_t{0}),
                 .limit = in.value("limit", kDefaultLimit),
                 .forward = forward || in.contains("since")};
}

Result<Message> LoadMessage(Txn& txn, const std::string& id) { return LoadMessageRow(txn, id); }

// The stored message as the mail operations answer it, for an operation's result.
Result<Json> AnswerMessage(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(Message message, LoadMessage(txn, id));
  return MessageToJson(message);
}

// Agents act only for themselves; the other roles may act for anyone.
Status CheckSelf(const OpContext& ctx, const std::string& id, const char* field, const char* rule) {
  if (ctx.actor.role != "agent" || id == ctx.actor.id) return Status();
  return PermissionDeniedError(std::string(field) + ": an agent may " + rule + " (caller \"" +
                               ctx.actor.id + "\", asked for \"" + id + "\")");
}

constexpr char kHowAgentsRegister[] =
    " (an agent is registered by its first call; the agent_list tool shows those that are)";

Status RequireAgent(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(bool known, AgentExists(txn, id));
  if (known) return Status();
  return NotFoundError("agent: no agent \"" + id + "\" is registered" + kHowAgentsRegister);
}

// The agents an address reaches, by id; NotFound naming it when none.
Result<std::vector<std::string>> Recipients(Txn& txn, const std::string& to,
                                            const std::string& sender) {
  AgentMatch match = AgentMatch::kId;
  std::string arg = to;
  std::string nobody = "no agent \"" + to + "\" is registered" + kHowAgentsRegister;
  if (to == "*") {
    match = AgentMatch::kAllBut;
    arg = sender;
    nobody = "no agent other than the sender \"" + sender + "\" is registered";
  } else if (to.starts_with("role:") || to.starts_with("team:")) {
    const std::string kind = to.substr(0, 4);
    arg = to.substr(5);
    if (arg.empty()) return InvalidArgumentError("to: \"" + to + "\" needs a " + kind + " name");
    match = kind == "role" ? AgentMatch::kRole : AgentMatch::kTeam;
    nobody = "no registered agent has " + kind + " \"" + arg + "\"";
  }
  ASSIGN_OR_RETURN(std::vector<std::string> ids, ListAgentIdsMatching(txn, match, arg));
  if (ids.empty()) return Status(StatusCode::kNotFound, "to: " + nobody, Json{{"to", to}});
  return ids;
}

// The run and project a message or chat post belongs to, from "run" and "project".
Status ResolveScope(OpContext& ctx, const Json& in, std::string* run_id, std::string* project_id) {
  if (in.contains("run")) {
    *run_id = in["run"].get<std::string>();
    ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, *run_id));
    if (run.project_id) *project_id = *run.project_id;
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

// Inserts "m" under a new id, created now; the message as stored.
Result<Message> InsertMessage(OpContext& ctx, Message m) {
  const std::string id = NewId("msg");
  m.id = id;
  m.created_at = ctx.now;
  RETURN_IF_ERROR(InsertMessageRow(ctx.txn, m));
  const std::string via = m.addressed_to == m.recipient ? "" : " (as " + m.addressed_to + ")";
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = m.run_id.value_or(""),
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
  ASSIGN_OR_RETURN(std::optional<std::string> run_id,
                   MarkMessageRowRead(ctx.txn, id, ctx.now, ctx.actor.id));
  // The read event is the inbox's, not a run's; a run whose message this is
  // has still changed (its seed-file mirror shows read flags).
  if (run_id) {
    ctx.touched_runs.insert(*run_id);
    ctx.touched_runs_without_event.insert(*run_id);
  }
  return Status();
}

}  // namespace

Result<Json> SendMail(OpContext& ctx, const Json& in) {
  Message m{.sender = in.value("from", ctx.actor.id),
            .addressed_to = in.at("to").get<std::string>(),
            .body = in.at("body").get<std::string>(),
            .source = in.value("source", "agent"),
            .meta = in.value("meta", Json::object())};
  RETURN_IF_ERROR(CheckSelf(ctx, m.sender, "from", "send only under its own id"));
  std::string run_id;
  std::string project_id;
  RETURN_IF_ERROR(ResolveScope(ctx, in, &run_id, &project_id));
  m.run_id = NoneIfEmpty(run_id);
  m.project_id = NoneIfEmpty(project_id);
  ASSIGN_OR_RETURN(std::vector<std::string> recipients,
                   Recipients(ctx.txn, m.addressed_to, m.sender));
  Json sent = Json::array();
  for (const std::string& recipient : recipients) {
    m.recipient = recipient;
    ASSIGN_OR_RETURN(Message message, InsertMessage(ctx, m));
    sent.push_back(MessageToJson(message));
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
  ASSIGN_OR_RETURN(std::vector<Message> rows,
                   ListInboxRows(ctx.txn, agent, unread_only, PageOf(in, /*forward=*/unread_only)));
  Json marked = Json::array();
  for (Message& m : rows) {
    if (!mark_read || m.read) continue;
    RETURN_IF_ERROR(MarkRead(ctx, m.id));
    m.read = true;
    m.read_at = ctx.now;
    m.read_by = ctx.actor.id;
    marked.push_back(m.id);
  }
  if (!marked.empty()) RETURN_IF_ERROR(AppendReadEvent(ctx, agent, marked));
  return Json{{"messages", MessagesToJson(rows)}, {"marked_read", marked}};
}

Result<Json> MarkMessageRead(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Message m, LoadMessage(ctx.txn, id));
  const std::string agent = m.recipient;
  RETURN_IF_ERROR(CheckSelf(ctx, agent, "id", "read only its own mail"));
  if (m.read) return MessageToJson(m);
  RETURN_IF_ERROR(MarkRead(ctx, id));
  RETURN_IF_ERROR(AppendReadEvent(ctx, agent, Json::array({id})));
  return AnswerMessage(ctx.txn, id);
}

Result<Json> ListOutbox(OpContext& ctx, const Json& in) {
  const std::string agent = in.value("agent", ctx.actor.id);
  RETURN_IF_ERROR(CheckSelf(ctx, agent, "agent", "read only its own outbox"));
  ASSIGN_OR_RETURN(std::vector<Message> rows,
                   ListOutboxRows(ctx.txn, agent, OptionalText(in, "status"),
                                  PageOf(in, /*forward=*/false)));
  return Json{{"messages", MessagesToJson(rows)}};
}

Result<Json> ListMail(OpContext& ctx, const Json& in) {
  const MessageFilter filter{.run_id = OptionalText(in, "run"),
                             .agent = OptionalText(in, "agent"),
                             .delivery_status = OptionalText(in, "status"),
                             .unread_only = in.value("unread_only", false)};
  ASSIGN_OR_RETURN(std::vector<Message> rows,
                   ListMessageRows(ctx.txn, filter, PageOf(in, /*forward=*/false)));
  return Json{{"messages", MessagesToJson(rows)}};
}

Result<Json> PendingDeliveries(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(std::vector<PendingDelivery> rows,
                   ListPendingDeliveries(ctx.txn, ctx.now_ms, OptionalText(in, "agent"),
                                         PageOf(in, /*forward=*/true)));
  Json deliveries = Json::array();
  for (const PendingDelivery& d : rows) {
    Json m = MessageToJson(d.message);
    m["agent_status"] = d.agent_status;
    m["delivery_command"] = d.delivery_command;
    deliveries.push_back(std::move(m));
  }
  return Json{{"deliveries", deliveries}};
}

Result<Json> ClaimDelivery(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Message m, LoadMessage(ctx.txn, id));
  const std::string to = m.recipient;
  ASSIGN_OR_RETURN(Agent agent, LoadAgent(ctx.txn, to));
  auto refuse = [](std::string reason) { return Json{{"claimed", false}, {"reason", reason}}; };
  if (agent.delivery_command.value_or("").empty()) {
    return refuse("agent " + to + " has no delivery command; it reads its inbox");
  }
  if (agent.status != "idle") {
    return refuse("agent " + to + " is " + agent.status + ", not idle");
  }
  ASSIGN_OR_RETURN(bool taken,
                   LeaseMessageDelivery(ctx.txn, id, ctx.now_ms + in.at("lease_ms").get<int64_t>(),
                                        ctx.now_ms));
  if (!taken) {
    return refuse("message " + id + " is not due: it is " + m.delivery_status +
                  (m.read ? " and read" : ", being delivered or waiting to retry"));
  }
  const int64_t attempt = m.delivery_attempts + 1;
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = m.run_id.value_or(""),
                                    .kind = "message.delivering",
                                    .summary = "delivering message " + id + " to " + to +
                                               " (attempt " + std::to_string(attempt) + ")",
                                    .payload = {{"message", id}, {"to", to}, {"attempt", attempt}}})
                      .status());
  return Json{
      {"claimed", true}, {"message", MessageToJson(m)}, {"command", *agent.delivery_command}};
}

namespace {

// One attempt's outcome, as RecordDelivery applies it.
struct Attempt {
  std::string id, from, to, run_id, what;
  int64_t number = 0;
  Json payload;
};

Status RecordSuccess(OpContext& ctx, const Attempt& a) {
  RETURN_IF_ERROR(MarkMessageDelivered(ctx.txn, a.id, a.number, ctx.now));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = a.run_id,
                                    .kind = "message.delivered",
                                    .summary = a.what + " delivered (attempt " +
                                               std::to_string(a.number) + ")",
                                    .payload = a.payload})
                      .status());
  // The agent now has input to work on: it is no longer idle, so the next
  // pass does not type another message into its pane until it says so.
  ASSIGN_OR_RETURN(Agent agent, LoadAgent(ctx.txn, a.to));
  if (agent.status != "idle") return Status();
  return SetAgentStatus(ctx, {{"id", a.to}, {"status", "working"},
                              {"reason", "mail " + a.id + " was pushed into it"}})
      .status();
}

// Tells the sender of "m" in its inbox that it was escalated.
Status NotifySender(OpContext& ctx, const Attempt& a, const Message& m, const std::string& error) {
  return InsertMessage(
             ctx, {.sender = "baton",
                   .recipient = a.from,
                   .addressed_to = a.from,
                   .body = "Your message " + a.id + " to " + a.to + " was not delivered after " +
                           std::to_string(a.number) + " attempts (last error: " + error +
                           "). It stays in " + a.to + "'s inbox.",
                   .source = "system",
                   .meta = {{"escalated", a.id}},
                   .run_id = NoneIfEmpty(a.run_id),
                   .project_id = m.project_id})
      .status();
}

Status RecordFailure(OpContext& ctx, Attempt& a, const Message& m, const Json& in) {
  const std::string error =
      Preview(in.value("error", "the delivery command failed"), kMaxErrorBytes);
  const int64_t max_attempts = in.value("max_attempts", int64_t{3});
  const bool escalate = a.number >= max_attempts;
  const int64_t backoff = in.value("retry_after_ms", int64_t{1000}) *
                          (int64_t{1} << std::min<int64_t>(a.number - 1, 20));
  const int64_t retry_at = escalate ? 0 : ctx.now_ms + backoff;
  RETURN_IF_ERROR(MarkMessageDeliveryFailed(ctx.txn, a.id, escalate ? "escalated" : "failed",
                                            a.number, error, retry_at));
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
  ASSIGN_OR_RETURN(bool sender_is_agent, AgentExists(ctx.txn, a.from));
  const bool notify = sender_is_agent && m.source != "system";
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
  ASSIGN_OR_RETURN(Message m, LoadMessage(ctx.txn, id));
  const std::string status = m.delivery_status;
  if (status == "delivered" || status == "escalated") {
    return FailedPreconditionError("id: message " + id + " is already " + status +
                                   "; there is no attempt to record");
  }
  Attempt a{.id = id,
            .from = m.sender,
            .to = m.recipient,
            .run_id = m.run_id.value_or(""),
            .number = m.delivery_attempts + 1};
  a.what = "message " + id + " from " + a.from + " to " + a.to;
  a.payload = {{"message", id}, {"from", a.from}, {"to", a.to}, {"attempts", a.number}};
  RETURN_IF_ERROR(in.at("ok").get<bool>() ? RecordSuccess(ctx, a) : RecordFailure(ctx, a, m, in));
  return AnswerMessage(ctx.txn, id);
}

Result<Json> PostChat(OpContext& ctx, const Json& in) {
  const std::string sender = in.value("from", ctx.actor.id);
  RETURN_IF_ERROR(CheckSelf(ctx, sender, "from", "post only under its own id"));
  std::string run_id, project_id;
  RETURN_IF_ERROR(ResolveScope(ctx, in, &run_id, &project_id));
  const std::string id = NewId("chat");
  const std::string channel = in.at("channel").get<std::string>();
  const std::string body = in.at("body").get<std::string>();
  RETURN_IF_ERROR(InsertChatMessageRow(
      ctx.txn, {.id = id,
                .channel = channel,
                .sender = sender,
                .body = body,
                .project_id = project_id.empty() ? std::nullopt : std::optional(project_id),
                .meta = in.value("meta", Json::object()),
                .created_at = ctx.now}));
  RETURN_IF_ERROR(
      AppendEvent(ctx, {.kind = "chat.posted",
                        .summary = sender + " in " + channel + ": " + Preview(body),
                        .payload = {{"message", id}, {"channel", channel}, {"from", sender}}})
          .status());
  ASSIGN_OR_RETURN(ChatMessage posted, LoadChatMessageRow(ctx.txn, id));
  return ChatMessageToJson(posted);
}

Result<Json> ChatHistory(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(std::vector<ChatMessage> rows,
                   ListChannelRows(ctx.txn, in.at("channel").get<std::string>(),
                                   PageOf(in, /*forward=*/false)));
  Json messages = Json::array();
  for (const ChatMessage& m : rows) messages.push_back(ChatMessageToJson(m));
  return Json{{"messages", messages}};
}

Result<Json> ListChatChannels(OpContext& ctx, const Json& in) {
  std::optional<std::string> project_id;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  ASSIGN_OR_RETURN(std::vector<ChatChannel> rows, ListChatChannelRows(ctx.txn, project_id));
  Json channels = Json::array();
  for (const ChatChannel& c : rows) {
    channels.push_back({{"channel", c.channel},
                        {"messages", c.messages},
                        {"last_seq", c.last_seq},
                        {"last_at", c.last_at}});
  }
  return Json{{"channels", channels}};
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
