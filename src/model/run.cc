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

}  // namespace baton
