#include "model/decision.h"

#include "util/json_or_null.h"

namespace baton {

Json DecisionToJson(const Decision& d) {
  return Json{{"id", d.id},
              {"run_id", OrNull(d.run_id)},
              {"subject_kind", d.subject_kind},
              {"subject", d.subject},
              {"decision", d.decision},
              {"reviewer", d.reviewer},
              {"note", d.note},
              {"event_seq", d.event_seq},
              {"meta", d.meta},
              {"created_at", d.created_at}};
}

}  // namespace baton
