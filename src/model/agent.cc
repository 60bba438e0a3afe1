#include "model/agent.h"

#include "util/clock.h"
#include "util/json_or_null.h"

namespace baton {

Json AgentToJson(const Agent& a) {
  return Json{{"id", a.id},
              {"role", a.role},
              {"kind", a.kind},
              {"provider", OrNull(a.provider)},
              {"model", OrNull(a.model)},
              {"team", OrNull(a.team)},
              {"project_id", OrNull(a.project_id)},
              {"machine", a.machine},
              {"status", a.status},
              {"session_ids", a.session_ids},
              {"auto_resume", a.auto_resume},
              {"delivery_command", OrNull(a.delivery_command)},
              {"last_heartbeat_at", AgentLastHeartbeatJson(a)},
              {"meta", a.meta},
              {"version", a.version},
              {"created_at", a.created_at},
              {"updated_at", a.updated_at}};
}

Json AgentLastHeartbeatJson(const Agent& agent) {
  return agent.last_heartbeat_ms ? Json(FormatTime(*agent.last_heartbeat_ms)) : Json();
}

}  // namespace baton
