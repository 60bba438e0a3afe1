#include "model/question.h"

#include "util/json_or_null.h"
namespace baton {

Json QuestionToJson(const Question& q) {
  return Json{{"seq", q.seq},
              {"id", q.id},
              {"run_id", OrNull(q.run_id)},
              {"project_id", OrNull(q.project_id)},
              {"asked_by", q.asked_by},
              {"asked_by_role", q.asked_by_role},
              {"message", q.message},
              {"questions", q.questions},
              {"work_gate", q.work_gate},
              {"blocks", q.blocks},
              {"status", q.status},
              {"status_before", OrNull(q.status_before)},
              {"answer", q.answer},
              {"answered_by", OrNull(q.answered_by)},
              {"answered_at", OrNull(q.answered_at)},
              {"delivered_at", OrNull(q.delivered_at)},
              {"created_at", q.created_at},
              {"updated_at", q.updated_at}};
}

}  // namespace baton
