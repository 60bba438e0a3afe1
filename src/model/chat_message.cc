#include "model/chat_message.h"

#include "util/json_or_null.h"

namespace baton {

Json ChatMessageToJson(const ChatMessage& m) {
  return Json{{"id", m.id},           {"seq", m.seq},
              {"channel", m.channel}, {"from", m.sender},
              {"body", m.body},       {"project_id", OrNull(m.project_id)},
              {"meta", m.meta},       {"created_at", m.created_at}};
}

}  // namespace baton
