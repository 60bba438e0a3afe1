#include "model/task.h"

#include "util/clock.h"
#include "util/json_or_null.h"

namespace baton {

Json TaskLeaseToJson(const Task& task) {
  if (!task.lease) return Json();
  return {{"owner", task.lease->owner},
          {"epoch", task.lease_epoch},
          {"expires_at",
           task.lease->expires_at_ms ? Json(FormatTime(*task.lease->expires_at_ms)) : Json()}};
}

Json TaskToJson(const Task& t) {
  return Json{{"id", t.id},
              {"run_id", OrNull(t.run_id)},
              {"project_id", OrNull(t.project_id)},
              {"parent_id", OrNull(t.parent_id)},
              {"kind", t.kind},
              {"key", OrNull(t.key)},
              {"title", t.title},
              {"body", t.body},
              {"machine", t.machine},
              {"status", t.status},
              {"priority", t.priority},
              {"position", t.position},
              {"assignee", OrNull(t.assignee)},
              {"lease", TaskLeaseToJson(t)},
              {"attempts", t.attempts},
              {"board_column", OrNull(t.board_column)},
              {"result", t.result},
              {"meta", t.meta},
              {"version", t.version},
              {"created_at", t.created_at},
              {"updated_at", t.updated_at},
              {"trigger_rule", t.trigger_rule},
              {"blocked_reason", OrNull(t.blocked_reason)},
              {"board_id", OrNull(t.board_id)}};
}

}  // namespace baton
