// File: chat_message_table.h
//
// The chat_messages table: team chat posts by channel (engine/coord/mail.h),
// read as model/chat_message.h's ChatMessage; listings page by seq like the
// mailbox's (message_table.h SeqPage). Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_CHAT_MESSAGE_TABLE_H_
#define BATON_SRC_STORE_TABLES_CHAT_MESSAGE_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/chat_message.h"
#include "store/store.h"
#include "store/tables/message_table.h"

namespace baton {

// Appends "message" (its seq is the store's to give).
Status InsertChatMessageRow(Txn& txn, const ChatMessage& message);

// NotFound "id: no chat message with id ..." when there is none.
Result<ChatMessage> LoadChatMessageRow(Txn& txn, const std::string& id);

// chat.history: the posts to "channel".
Result<std::vector<ChatMessage>> ListChannelRows(Txn& txn, const std::string& channel,
                                                 const SeqPage& page);

// chat.channels: per channel, how many posts, the last seq and time.
struct ChatChannel {
  std::string channel;
  int64_t messages = 0;
  int64_t last_seq = 0;
  std::string last_at;
};
// Every channel (only project "project_id"'s when given), by name.
Result<std::vector<ChatChannel>> ListChatChannelRows(Txn& txn,
                                                     const std::optional<std::string>& project_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_CHAT_MESSAGE_TABLE_H_
