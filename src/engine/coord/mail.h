// File: mail.h
//
// The mailbox and team chat (Genie's mailbox / team_chat, without its lost
// messages). A message is persisted before anyone is told it was sent: one
// row per recipient (an address such as "role:reviewer" fans out at send
// time), each with its own read and delivery state, and one "message.sent"
// ledger event per row, all in the sender's transaction. Agents read their
// inbox; agents with a delivery command also get messages pushed (see
// RunDeliveryCommand), but only while idle, with retries and then escalation.
//
// Listings take "since" (a message's seq) and "limit": with "since" they page
// forward from it; without it they show the newest "limit" messages. Either
// way they are returned oldest first. An unread-only inbox is a queue: the
// oldest unread first, so none is ever skipped.
//
// Agents (actor role "agent") may read and mark only their own mail and send
// only under their own name; the other roles may act for anyone.

#ifndef BATON_SRC_ENGINE_COORD_MAIL_H_
#define BATON_SRC_ENGINE_COORD_MAIL_H_

#ifndef BATON_ENGINE_ROOM_COORD
#error "engine/coord/ is above this target: link baton_engine_coord (src/engine/README.md)"
#endif

#include <cstdint>
#include <string>

#include "engine/ledger/op_context.h"

namespace baton {

// mail.send: "to" is an agent id, "role:<role>", "team:<team>" or "*" (every
// agent but the sender). NotFound naming the address when it reaches nobody;
// then nothing is written. Returns {messages: [...]}, one per recipient.
Result<Json> SendMail(OpContext& ctx, const Json& in);
// mail.inbox / mail.peek: the agent's messages (default the caller, who must
// be registered). With "mark_read" the unread ones returned are marked read by
// the caller, with one "message.read" event; requires a write transaction.
// Returns {messages, marked_read: [ids]}.
Result<Json> ReadInbox(OpContext& ctx, const Json& in, bool mark_read);
// mail.read: marks one message read (no change and no event if it was).
Result<Json> MarkMessageRead(OpContext& ctx, const Json& in);
// mail.outbox: messages the agent (default the caller) sent, with their
// delivery state.
Result<Json> ListOutbox(OpContext& ctx, const Json& in);
// mail.list: every agent's messages as the human reads them — by run, by
// agent (sent or received), by delivery status, unread only — the newest
// "limit" (after "since", the oldest), oldest first.
Result<Json> ListMail(OpContext& ctx, const Json& in);

// Push delivery, in three steps around a command run outside any transaction.
// mail.pending_deliveries: unread messages that are due (pending or failed,
// next attempt reached) to agents with a delivery command, oldest first, each
// with "agent_status" and "delivery_command".
Result<Json> PendingDeliveries(OpContext& ctx, const Json& in);
// mail.claim_delivery: takes message "id" for "lease_ms" (its next attempt is
// pushed back, so a concurrent pass leaves it alone) if it is still due and
// its recipient is idle with a delivery command. Returns {claimed, reason?,
// message?, command?}; an event "message.delivering" when claimed.
Result<Json> ClaimDelivery(OpContext& ctx, const Json& in);
// mail.record_delivery: the outcome of one attempt. ok: delivered. Failure:
// failed, retried after retry_after_ms * 2^(attempts-1); at "max_attempts"
// escalated, with a "message.escalated" event and a notice to the sender's
// inbox when the sender is a registered agent. Returns the message.
Result<Json> RecordDelivery(OpContext& ctx, const Json& in);

struct DeliveryResult {
  bool ok = false;
  std::string error;  // why not (at most 500 characters); empty when ok
};

// Runs `/bin/sh -c "command"` in its own process group with the message in
// BATON_MESSAGE_ID, BATON_MESSAGE_FROM, BATON_MESSAGE_TO, BATON_MESSAGE_BODY
// and on stdin; stdout is discarded, stderr captured. ok when it exits 0
// within "timeout_ms"; otherwise the process group is killed and the error
// says why (exit status or signal, then the start of stderr). "message" is a
// message as the listings return it. Blocks; call it outside transactions.
DeliveryResult RunDeliveryCommand(const std::string& command, const Json& message,
                                  int64_t timeout_ms);

// Chat: channels are free-form ids ("team:alpha"); messages are never
// delivered, only read. chat.post appends one with a "chat.posted" event.
Result<Json> PostChat(OpContext& ctx, const Json& in);
// chat.history: {messages}, oldest first (paging as above).
Result<Json> ChatHistory(OpContext& ctx, const Json& in);
// chat.channels: {channels: [{channel, messages, last_seq, last_at}]}.
Result<Json> ListChatChannels(OpContext& ctx, const Json& in);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_COORD_MAIL_H_
