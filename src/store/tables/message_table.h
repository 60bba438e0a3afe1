// File: message_table.h
//
// The messages table: the mailbox, one row per recipient of a message, with
// its read and push-delivery state (engine/coord/mail.h), read as
// model/message.h's Message. Listings page by seq (SeqPage). Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_MESSAGE_TABLE_H_
#define BATON_SRC_STORE_TABLES_MESSAGE_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/message.h"
#include "store/store.h"
#include "store/tables/run_table.h"
#include "util/json_util.h"

namespace baton {

// A page of a listing by seq: "forward" pages on from "since" (oldest
// first); otherwise it is the newest "limit" after "since". Either way the
// rows come back oldest first. chat_message_table.h pages the same way.
struct SeqPage {
  int64_t since = 0;
  int64_t limit = 100;
  bool forward = false;
};

// The columns MessageFromRow reads, in its order, over alias "m":
// "SELECT <columns> FROM messages m".
extern const char kMessageColumns[];

Message MessageFromRow(const Row& row);

// NotFound "id: no message with id ..." when there is none.
Result<Message> LoadMessageRow(Txn& txn, const std::string& id);

// Inserts "message" under the next seq: its id, project, run, sender,
// recipient, address, body, source, meta, read state (read, read_at,
// read_by), delivery_status and created_at; its delivery attempts, time,
// error and next attempt take their defaults (none yet). A message sent
// now, and run.import's message read from a file.
Status InsertMessageRow(Txn& txn, const Message& message);

// Marks message "id" read at "now" by "by" if it was unread. Returns the
// run of the message when this call marked it and it belongs to a run.
Result<std::optional<std::string>> MarkMessageRowRead(Txn& txn, const std::string& id,
                                                      const std::string& now,
                                                      const std::string& by);

// mail.inbox: the messages to "recipient" (only the unread when "unread_only").
Result<std::vector<Message>> ListInboxRows(Txn& txn, const std::string& recipient, bool unread_only,
                                           const SeqPage& page);
// mail.outbox: the messages "sender" sent, in "delivery_status" when given.
Result<std::vector<Message>> ListOutboxRows(Txn& txn, const std::string& sender,
                                            const std::optional<std::string>& delivery_status,
                                            const SeqPage& page);

// mail.list: the messages matching every filter that is set; "agent"
// matches the sender or the recipient.
struct MessageFilter {
  std::optional<std::string> run_id;
  std::optional<std::string> agent;
  std::optional<std::string> delivery_status;
  bool unread_only = false;
};
Result<std::vector<Message>> ListMessageRows(Txn& txn, const MessageFilter& filter,
                                             const SeqPage& page);

// A message due for push delivery, with its recipient's status and command.
struct PendingDelivery {
  Message message;
  std::string agent_status;
  std::string delivery_command;
};
// Unread messages, pending or failed, whose next attempt is at or before
// "now_ms", to agents with a delivery command (only "recipient" when given).
Result<std::vector<PendingDelivery>> ListPendingDeliveries(
    Txn& txn, int64_t now_ms, const std::optional<std::string>& recipient, const SeqPage& page);

// Takes message "id" for delivery by pushing its next attempt to
// "until_ms", if it is still due at "now_ms" (unread, pending or failed,
// next attempt reached). false when it was not.
Result<bool> LeaseMessageDelivery(Txn& txn, const std::string& id, int64_t until_ms,
                                  int64_t now_ms);
// Delivered at "now" after "attempts" attempts; no further attempt.
Status MarkMessageDelivered(Txn& txn, const std::string& id, int64_t attempts,
                            const std::string& now);
// A failed attempt: "delivery_status" (failed or escalated), "attempts",
// "error", and the next attempt at "next_attempt_ms" (0: none).
Status MarkMessageDeliveryFailed(Txn& txn, const std::string& id,
                                 const std::string& delivery_status, int64_t attempts,
                                 const std::string& error, int64_t next_attempt_ms);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

// run.export: run "run_id"'s messages, in the order sent.
struct ExportedMessage {
  std::string sender;
  std::string recipient;
  std::string body;
  bool read = false;
  std::optional<std::string> read_at;
  std::optional<std::string> read_by;
  std::string created_at;  // "" when the imported file did not say
  Json meta;               // {} when unset
};
Result<std::vector<ExportedMessage>> ExportRunMessageRows(Txn& txn, const std::string& run_id);

// inbox.list: unread messages whose push delivery failed or escalated,
// in the order sent, with their run when they have one; only project
// "project_id" and run "run_id" when those are not "".
struct UndeliveredMessage {
  std::string id;
  std::string sender;
  std::string recipient;
  std::string body;
  std::string delivery_status;
  int64_t delivery_attempts = 0;
  std::optional<std::string> last_error;
  std::string created_at;
  std::optional<RunLabel> run;
};
Result<std::vector<UndeliveredMessage>> ListUndeliveredMessagesForInbox(
    Txn& txn, const std::string& project_id, const std::string& run_id);

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

// The recipient of run "run_id"'s oldest unread message, if any (sgai's
// check that no agent has mail waiting).
Result<std::optional<std::string>> FirstUnreadSgaiRecipient(Txn& txn, const std::string& run_id);

// The recipients of every unread message of run "run_id".
Result<std::vector<std::string>> ListUnreadSgaiRecipients(Txn& txn, const std::string& run_id);

// A message sgai sends on its run's behalf (source "system", meta {}),
// unread and pending delivery (stored by InsertMessageRow).
struct SgaiSystemMessage {
  std::string id;
  std::string project_id;  // "" for none (NULL)
  std::string run_id;
  std::string sender;
  std::string recipient;  // also the address it was sent to
  std::string body;
  std::string created_at;
};
Status InsertSgaiSystemMessage(Txn& txn, const SgaiSystemMessage& message);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_MESSAGE_TABLE_H_
