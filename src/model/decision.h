// File: decision.h
//
// One row of the approvals table: a decision on a run's work (approve,
// reject, retry, skip, abort; engine/core/approvals.h), typed.
// store/tables/approval_table.h reads and writes it; DecisionToJson gives
// the shape RecordDecision and ListDecisions return.

#ifndef BATON_SRC_MODEL_DECISION_H_
#define BATON_SRC_MODEL_DECISION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct Decision {
  std::string id;
  std::optional<std::string> run_id;  // none: a decision outside any run
  std::string subject_kind;
  std::string subject;
  std::string decision;
  std::string reviewer;
  std::string note;
  int64_t event_seq = 0;  // its one ledger event
  Json meta = Json::object();
  std::string created_at;
};

// {id, run_id | null, subject_kind, subject, decision, reviewer, note,
// event_seq, meta, created_at}.
Json DecisionToJson(const Decision& decision);

}  // namespace baton

#endif  // BATON_SRC_MODEL_DECISION_H_
