#include "model/chat_message.h"

namespace baton {

Json ChatMessageToJson(const ChatMessage& m) {
  return Json{{"id", m.id},           {"seq", m.seq},
              {"channel", m.channel}, {"from", m.sender},
              {"body", m.body},       {"project_id", m.project_id ? Json(*m.project_id) : Json()},
              {"meta", m.meta},       {"created_at", m.created_at}};
}

}  // namespace baton
