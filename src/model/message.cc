#include "model/message.h"

#include "util/clock.h"
#include "util/json_or_null.h"

namespace baton {

Json MessageToJson(const Message& m) {
  return Json{
      {"id", m.id},
      {"seq", m.seq},
      {"from", m.sender},
      {"to", m.recipient},
      {"addressed_to", m.addressed_to},
      {"body", m.body},
      {"source", m.source},
      {"meta", m.meta},
      {"run_id", OrNull(m.run_id)},
      {"project_id", OrNull(m.project_id)},
      {"read", m.read},
      {"read_at", OrNull(m.read_at)},
      {"read_by", OrNull(m.read_by)},
      {"delivery_status", m.delivery_status},
      {"delivery_attempts", m.delivery_attempts},
      {"delivered_at", OrNull(m.delivered_at)},
      {"last_error", OrNull(m.last_error)},
      {"next_attempt_at", m.next_attempt_ms == 0 ? Json() : Json(FormatTime(m.next_attempt_ms))},
      {"created_at", m.created_at}};
}

}  // namespace baton
