#include "model/run.h"

#include "util/json_or_null.h"

namespace baton {

Json RunToJson(const Run& r) {
  return Json{{"id", r.id},
              {"project_id", OrNull(r.project_id)},
              {"profile", r.profile},
              {"machine", r.machine},
              {"status", r.status},
              {"title", r.title},
              {"cursor", OrNull(r.cursor)},
              {"cursor_index", OrNull(r.cursor_index)},
              {"context", r.context},
              {"meta", r.meta},
              {"version", r.version},
              {"created_at", r.created_at},
              {"updated_at", r.updated_at}};
}

Run RunFromJson(const Json& answer) {
  return Run{.id = JsonText(answer, "id"),
             .project_id = JsonTextOrNone(answer, "project_id"),
             .profile = JsonText(answer, "profile"),
             .machine = JsonText(answer, "machine"),
             .status = JsonText(answer, "status"),
             .title = JsonText(answer, "title"),
             .cursor = JsonTextOrNone(answer, "cursor"),
             .cursor_index = JsonIntOrNone(answer, "cursor_index"),
             .context = answer.value("context", Json::object()),
             .meta = answer.value("meta", Json::object()),
             .version = JsonIntOrNone(answer, "version").value_or(0),
             .created_at = JsonText(answer, "created_at"),
             .updated_at = JsonText(answer, "updated_at")};
}

}  // namespace baton
