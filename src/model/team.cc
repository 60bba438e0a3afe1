#include "model/team.h"

#include "util/json_or_null.h"

namespace baton {

Json TeamToJson(const Team& t) {
  return Json{{"name", t.name},
              {"project_id", OrNull(t.project_id)},
              {"repo", t.repo},
              {"base_branch", t.base_branch},
              {"branch", t.branch},
              {"worktree_path", t.worktree_path},
              {"leader", OrNull(t.leader)},
              {"members", t.members},
              {"wish_run_id", OrNull(t.wish_run_id)},
              {"machine", t.machine},
              {"status", t.status},
              {"meta", t.meta},
              {"version", t.version},
              {"created_at", t.created_at},
              {"updated_at", t.updated_at}};
}

}  // namespace baton
