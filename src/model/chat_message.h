// File: chat_message.h
//
// One row of the chat_messages table, typed: a post to a team chat channel
// (engine/coord/mail.h; never delivered, only read).
// store/tables/chat_message_table.h reads it; ChatMessageToJson gives the
// shape chat.post and chat.history return. JSON remains only in "meta".

#ifndef BATON_SRC_MODEL_CHAT_MESSAGE_H_
#define BATON_SRC_MODEL_CHAT_MESSAGE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct ChatMessage {
  std::string id;
  int64_t seq = 0;
  std::string channel;
  std::string sender;
  std::string body;
  std::optional<std::string> project_id;
  Json meta = Json::object();
  std::string created_at;
};

// {id, seq, channel, from, body, project_id, meta, created_at}.
Json ChatMessageToJson(const ChatMessage& message);

}  // namespace baton

#endif  // BATON_SRC_MODEL_CHAT_MESSAGE_H_
