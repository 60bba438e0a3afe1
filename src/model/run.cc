#include "model/run.h"

namespace baton {

Json RunToJson(const Run& r) {
  return Json{{"id", r.id},
              {"project_id", r.project_id ? Json(*r.project_id) : Json()},
              {"profile", r.profile},
              {"machine", r.machine},
              {"status", r.status},
              {"title", r.title},
              {"cursor", r.cursor ? Json(*r.cursor) : Json()},
              {"cursor_index", r.cursor_index ? Json(*r.cursor_index) : Json()},
              {"context", r.context},
              {"meta", r.meta},
              {"version", r.version},
              {"created_at", r.created_at},
              {"updated_at", r.updated_at}};
}

}  // namespace baton
