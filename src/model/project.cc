#include "model/project.h"

namespace baton {

Json ProjectToJson(const Project& p) {
  return Json{{"id", p.id},
              {"name", p.name},
              {"repo_path", p.repo_path ? Json(*p.repo_path) : Json()},
              {"autonomy_mode", p.autonomy_mode},
              {"meta", p.meta},
              {"version", p.version},
              {"created_at", p.created_at},
              {"updated_at", p.updated_at}};
}

}  // namespace baton
