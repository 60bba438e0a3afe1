// File: message_table.h
//
// The messages table: the mailbox, one row per message from a sender to a
// recipient (an agent, a role or a team), with its read and delivery state.
// Portable SQL (? placeholders), so a second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_MESSAGE_TABLE_H_
#define BATON_SRC_STORE_TABLES_MESSAGE_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

// h19-ledger-profiles:

// The recipient of run "run_id"'s oldest unread message, if any (sgai's
// check that no agent has mail waiting).
Result<std::optional<std::string>> FirstUnreadSgaiRecipient(Txn& txn, const std::string& run_id);

// The recipients of every unread message of run "run_id".
Result<std::vector<std::string>> ListUnreadSgaiRecipients(Txn& txn, const std::string& run_id);

// A message sgai sends on its run's behalf (source "system", meta {}).
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
