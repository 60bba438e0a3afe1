#include "model/project.h"

#include "util/json_or_null.h"

namespace baton {

Json ProjectToJson(const Project& p) {
  return Json{{"id", p.id},
              {"name", p.name},
              {"repo_path", OrNull(p.repo_path)},
              {"autonomy_mode", p.autonomy_mode},
              {"meta", p.meta},
              {"version", p.version},
              {"created_at", p.created_at},
              {"updated_at", p.updated_at}};
}

}  // namespace baton
