#include "model/board.h"

#include "util/json_or_null.h"

namespace baton {

Json BoardToJson(const Board& b) {
  return Json{{"id", b.id},
              {"name", b.name},
              {"project_id", OrNull(b.project_id)},
              {"description", b.description},
              {"template", OrNull(b.template_name)},
              {"columns", b.columns},
              {"config", b.config},
              {"version", b.version},
              {"created_at", b.created_at},
              {"updated_at", b.updated_at}};
}

}  // namespace baton
