// Operations of the mailbox (send, inbox, outbox, a long-polling wait, push
// delivery into idle agents) and the team chat. See engine/coord/mail.h.

#include <set>

#include "engine/coord/mail.h"
#include "ops/api.h"
#include "ops/schemas.h"
#include "util/clock.h"

namespace baton {
namespace {

namespace s = schema;

constexpr int64_t kDefaultWaitMillis = 30000;
constexpr int64_t kDefaultCommandTimeoutMillis = 10000;
// How long a claimed delivery is left alone beyond its command's timeout.
constexpr int64_t kClaimMarginMillis = 5000;

using s::Type;

Json Limit() { return s::Integer("at most this many messages (default 100)", 1, 1000); }

Json Since() {
  return s::Integer("only messages after this seq (page forward from the last seq you saw)", 0,
               int64_t{1} << 53);
}

Json Body() {
  Json body = s::String("the text", 100000);
  body["minLength"] = 1;
  return body;
}

Json MessageOut() {
  return s::Entity(
      {{"id", Type("string")},
       {"seq", Type("integer")},
       {"from", Type("string")},
       {"to", Type("string")},
       {"addressed_to", Type("string")},
       {"body", Type("string")},
       {"source", Type("string")},
       {"meta", Type("object")},
       {"run_id", s::Nullable("string")},
       {"project_id", s::Nullable("string")},
       {"read", Type("boolean")},
       {"read_at", s::Nullable("string")},
       {"read_by", s::Nullable("string")},
       {"delivery_status", {{"enum", {"pending", "delivered", "failed", "escalated"}}}},
       {"delivery_attempts", Type("integer")},
       {"delivered_at", s::Nullable("string")},
       {"last_error", s::Nullable("string")},
       {"next_attempt_at", s::Nullable("string")},
       {"created_at", Type("string")}});
}

Json ChatOut() {
  return s::Entity({{"id", Type("string")},
                    {"seq", Type("integer")},
                    {"channel", Type("string")},
                    {"from", Type("string")},
                    {"body", Type("string")},
                    {"project_id", s::Nullable("string")},
                    {"meta", Type("object")},
                    {"created_at", Type("string")}});
}

Json InboxIn() {
  return s::Input({{"agent", s::Id("whose inbox (default: the caller's)")},
                   {"unread_only",
                    s::Boolean("only unread messages, oldest first")},
                   {"limit", Limit()},
                   {"since", Since()}});
}

// mail.wait: a long poll over mail.peek, which never marks anything read: a
// poll that wrote would wake every other waiter and itself, for ever.
Result<Json> WaitForMail(OpRunner& runner, const Json& in) {
  const int64_t deadline = NowMillis() + in.value("timeout_ms", kDefaultWaitMillis);
  Json query = {{"unread_only", true}};
  for (const char* key : {"agent", "since"}) {
    if (in.contains(key)) query[key] = in[key];
  }
  for (bool waiting = true;; waiting = runner.WaitForChange(deadline)) {
    ASSIGN_OR_RETURN(Json got, runner.Call("mail.peek", query));
    if (!got["messages"].empty()) return Json{{"messages", got["messages"]}, {"timed_out", false}};
    if (!waiting) return Json{{"messages", Json::array()}, {"timed_out", true}};
  }
}

Json Skipped(const std::string& id, const std::string& agent, std::string reason) {
  return {{"id", id}, {"agent", agent}, {"reason", std::move(reason)}};
}

std::string NotIdle(const std::string& agent, const std::string& status) {
  return "agent " + agent + " is " + status + ", not idle";
}

// One attempt at message "id" to agent "to": claim it, run the command outside
// any transaction, record the outcome. Files it under one of out's lists.
Status DeliverOne(OpRunner& runner, const Json& in, const std::string& id, const std::string& to,
                  Json& out) {
  const int64_t timeout = in.value("timeout_ms", kDefaultCommandTimeoutMillis);
  ASSIGN_OR_RETURN(Json claim,
                   runner.CallAsSystem("mail.claim_delivery",
                                       {{"id", id}, {"lease_ms", timeout + kClaimMarginMillis}}));
  if (!claim["claimed"].get<bool>()) {
    out["skipped"].push_back(Skipped(id, to, claim["reason"].get<std::string>()));
    return Status();
  }
  DeliveryResult r =
      RunDeliveryCommand(claim["command"].get<std::string>(), claim["message"], timeout);
  Json record = {{"id", id},
                 {"ok", r.ok},
                 {"max_attempts", in.value("max_attempts", 3)},
                 {"retry_after_ms", in.value("retry_after_ms", 1000)}};
  if (!r.ok) record["error"] = r.error;
  ASSIGN_OR_RETURN(Json after, runner.CallAsSystem("mail.record_delivery", record));
  const std::string status = after["delivery_status"].get<std::string>();
  if (status == "delivered") {
    out["delivered"].push_back(id);
  } else {
    out[status].push_back(
        {{"id", id}, {"agent", to}, {"attempts", after["delivery_attempts"]}, {"error", r.error}});
  }
  return Status();
}

// mail.deliver: one pass over the due messages. At most one message per agent
// per pass: once one has been pushed, the agent is busy with it although its
// status says idle until it reports again.
Result<Json> DeliverMail(OpRunner& runner, const Json& in) {
  // Delivery commands are shell commands run as baton's user.
  if (!runner.actor().Has(kGrantCommands)) {
    return PermissionDeniedError("mail.deliver runs the agents' delivery commands; it needs the "
                                 "grant \"commands\"");
  }
  Json query = {{"limit", in.value("limit", 100)}};
  if (in.contains("agent")) query["agent"] = in["agent"];
  ASSIGN_OR_RETURN(Json pending, runner.CallAsSystem("mail.pending_deliveries", query));
  Json out = {{"delivered", Json::array()},
              {"failed", Json::array()},
              {"escalated", Json::array()},
              {"skipped", Json::array()}};
  std::set<std::string> tried;
  for (const Json& m : pending["deliveries"]) {
    const std::string id = m["id"].get<std::string>();
    const std::string to = m["to"].get<std::string>();
    const std::string status = m["agent_status"].get<std::string>();
    if (tried.contains(to)) {
      out["skipped"].push_back(Skipped(id, to, "agent " + to + " had a message this pass"));
    } else if (status != "idle") {
      out["skipped"].push_back(Skipped(id, to, NotIdle(to, status)));
    } else {
      tried.insert(to);
      RETURN_IF_ERROR(DeliverOne(runner, in, id, to, out));
    }
  }
  return out;
}

Status AddMailOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "mail.send",
      .summary =
          "Send a message to an agent, a role, a team or everyone; stored before it is pushed",
      .input_schema = s::Input(
          {{"to",
            {{"type", "string"},
             {"pattern", "^(\\*|[A-Za-z0-9][A-Za-z0-9._:-]{0,127})$"},
             {"description",
              "an agent id, role:<role>, team:<team>, or * for every agent "
              "but the sender"}}},
           {"body", Body()},
           {"from", s::Id("sender (default: the caller; agents may send only as themselves)")},
           {"run", s::Id("the run the message is about")},
           {"project", s::Id("project id or name")},
           {"source", s::Id("where it came from: agent (default), human, system, whatsapp, ...")},
           {"meta", s::Object("free-form metadata")}},
          {"to", "body"}),
      .output_schema = s::ListOf("messages", MessageOut()),
      .mutating = true,
      .positional = {"to", "body"},
      .handler = SendMail,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mail.inbox",
      .summary = "Read an agent's messages (default: the caller's) and mark the unread ones read",
      .input_schema =
          [] {
            Json in = InboxIn();
            in["properties"]["mark_read"] = {
                {"type", "boolean"},
                {"description", "mark the returned unread messages read (default true)"}};
            return in;
          }(),
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"messages", {{"type", "array"}, {"items", MessageOut()}}},
                          {"marked_read", {{"type", "array"}}}}},
                        {"required", {"messages", "marked_read"}}},
      .mutating = true,
      .positional = {"agent"},
      .handler = [](OpContext& ctx,
                    const Json& in) { return ReadInbox(ctx, in, in.value("mark_read", true)); },
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mail.peek",
      .summary = "List an agent's messages without marking them read",
      .input_schema = InboxIn(),
      .output_schema = s::ListOf("messages", MessageOut()),
      .positional = {"agent"},
      .handler = [](OpContext& ctx, const Json& in) { return ReadInbox(ctx, in, false); },
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mail.read",
      .summary = "Mark one message read",
      .input_schema = s::Input({{"id", s::Id("message id")}}, {"id"}),
      .output_schema = MessageOut(),
      .mutating = true,
      .idempotent = true,
      .positional = {"id"},
      .handler = MarkMessageRead,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mail.outbox",
      .summary = "Messages an agent sent (default: the caller) with their delivery status",
      .input_schema =
          s::Input({{"agent", s::Id("sender (default: the caller)")},
                    {"status", s::Enum("only this delivery status",
                                       {"pending", "delivered", "failed", "escalated"})},
                    {"limit", Limit()},
                    {"since", Since()}}),
      .output_schema = s::ListOf("messages", MessageOut()),
      .positional = {"agent"},
      .handler = ListOutbox,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mail.list",
      .summary = "Messages between agents as the human reads them: by run, agent (sent or "
                 "received), delivery status; does not mark them read",
      .input_schema =
          s::Input({{"run", s::Id("only this run's")},
                    {"agent", s::Id("only those this agent sent or received")},
                    {"status", s::Enum("only this delivery status",
                                       {"pending", "delivered", "failed", "escalated"})},
                    {"unread_only", s::Boolean("only unread ones")},
                    {"limit", Limit()},
                    {"since", Since()}}),
      .output_schema = s::ListOf("messages", MessageOut()),
      .roles = {"human", "coordinator"},
      .handler = ListMail,
  }));
  return r.Add({
      .name = "mail.wait",
      .summary = "Wait until an agent has unread mail (or the timeout); does not mark it read",
      .input_schema =
          s::Input({{"agent", s::Id("whose inbox (default: the caller's)")},
                    {"timeout_ms", s::Integer("how long to wait (default 30000)", 0, 600000)},
                    {"since", Since()}}),
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"messages", {{"type", "array"}, {"items", MessageOut()}}},
                          {"timed_out", Type("boolean")}}},
                        {"required", {"messages", "timed_out"}}},
      .positional = {"agent"},
      .procedure = WaitForMail,
  });
}

Status AddDeliveryOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "mail.pending_deliveries",
      .summary = "Unread messages due for push delivery, with their recipient's status and command",
      .input_schema = s::Input({{"agent", s::Id("only this recipient")}, {"limit", Limit()}}),
      .output_schema = s::ListOf("deliveries", MessageOut()),
      .roles = {"admin"},
      .handler = PendingDeliveries,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mail.claim_delivery",
      .summary = "Take a due message for one delivery attempt if its recipient is idle",
      .input_schema =
          s::Input({{"id", s::Id("message id")},
                    {"lease_ms", s::Integer("how long other passes leave it alone", 1, 3600000)}},
                   {"id", "lease_ms"}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"claimed", Type("boolean")}}},
                        {"required", {"claimed"}}},
      .roles = {"admin"},
      .mutating = true,
      .handler = ClaimDelivery,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mail.record_delivery",
      .summary = "Record the outcome of one delivery attempt: delivered, failed (retried later) or "
                 "escalated",
      .input_schema = s::Input(
          {{"id", s::Id("message id")},
           {"ok", s::Boolean("whether the delivery command succeeded")},
           {"error", s::String("why it failed", 2000)},
           {"max_attempts", s::Integer("attempts before escalation (default 3)", 1, 100)},
           {"retry_after_ms",
            s::Integer("first retry delay, doubled each attempt (default 1000)", 0, 3600000)}},
          {"id", "ok"}),
      .output_schema = MessageOut(),
      .roles = {"admin"},
      .mutating = true,
      .handler = RecordDelivery,
  }));
  return r.Add({
      .name = "mail.deliver",
      .summary =
          "Push due messages into idle agents with their delivery commands; retry, then escalate",
      .input_schema =
          s::Input({{"agent", s::Id("only this recipient")},
                    {"max_attempts", s::Integer("attempts before escalation (default 3)", 1, 100)},
                    {"retry_after_ms",
                     s::Integer("first retry delay, doubled each attempt (default 1000)", 0, 3600000)},
                    {"timeout_ms",
                     s::Integer("how long one delivery command may run (default 10000)", 1, 600000)},
                    {"limit", Limit()}}),
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"delivered", Type("array")},
                          {"failed", Type("array")},
                          {"escalated", Type("array")},
                          {"skipped", Type("array")}}},
                        {"required", {"delivered", "failed", "escalated", "skipped"}}},
      .roles = {"coordinator", "human"},
      // Its changes are the operations it calls, each one transaction.
      .mutating = true,
      .procedure = DeliverMail,
  });
}

Status AddChatOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "chat.post",
      .summary = "Post to a chat channel (team:<name> or any id)",
      .input_schema =
          s::Input({{"channel", s::Id("channel, e.g. team:alpha")},
                    {"body", Body()},
                    {"from", s::Id("poster (default: the caller; agents post only as themselves)")},
                    {"project", s::Id("project id or name")},
                    {"meta", s::Object("free-form metadata")}},
                   {"channel", "body"}),
      .output_schema = ChatOut(),
      .mutating = true,
      .positional = {"channel", "body"},
      .handler = PostChat,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "chat.history",
      .summary = "A channel's messages, oldest first (the newest ones, or those after since)",
      .input_schema = s::Input(
          {{"channel", s::Id("channel")}, {"limit", Limit()}, {"since", Since()}}, {"channel"}),
      .output_schema = s::ListOf("messages", ChatOut()),
      .positional = {"channel"},
      .handler = ChatHistory,
  }));
  return r.Add({
      .name = "chat.channels",
      .summary = "Chat channels with their message count and last post",
      .input_schema = s::Input({{"project", s::Id("only posts of this project (id or name)")}}),
      .output_schema = s::ListOf("channels", s::Entity({{"channel", Type("string")},
                                                        {"messages", Type("integer")},
                                                        {"last_seq", Type("integer")},
                                                        {"last_at", Type("string")}})),
      .handler = ListChatChannels,
  });
}

}  // namespace

Status RegisterMailOps(Registry& registry) {
  RETURN_IF_ERROR(AddMailOps(registry));
  RETURN_IF_ERROR(AddDeliveryOps(registry));
  return AddChatOps(registry);
}

}  // namespace baton
