// File: approval_table.h
//
// The approvals table, typed (model/decision.h): one row per decision on a
// run's work, each with its one ledger event. A new decision, and the
// decisions on a run, a kind of subject or one subject. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_APPROVAL_TABLE_H_
#define BATON_SRC_STORE_TABLES_APPROVAL_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "model/decision.h"
#include "store/store.h"

namespace baton {

// The columns DecisionFromRow reads, in its order.
extern const char kDecisionColumns[];

Decision DecisionFromRow(const Row& row);

Status InsertDecisionRow(Txn& txn, const Decision& decision);

// Which decisions: each field that is not empty must match.
struct DecisionFilter {
  std::string run_id;
  std::string subject_kind;
  std::string subject;
};

// The matching decisions, oldest first.
Result<std::vector<Decision>> ListDecisionRows(Txn& txn, const DecisionFilter& filter);

// The newest matching decision, if any.
Result<std::optional<Decision>> LatestDecisionRow(Txn& txn, const DecisionFilter& filter);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_APPROVAL_TABLE_H_
