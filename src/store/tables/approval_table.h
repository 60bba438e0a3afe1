// File: approval_table.h
//
// The approvals table, typed (model/decision.h): one row per decision on a
// run's work, each with its one ledger event. A new decision, and the
// decisions on a run, a kind of subject or one subject; a run image's
// export and import of them. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_APPROVAL_TABLE_H_
#define BATON_SRC_STORE_TABLES_APPROVAL_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "model/decision.h"
#include "store/store.h"
#include "util/json_util.h"

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

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

// One decision as a run image carries it (run.export reads it, run.import
// writes it).
struct ExportedApproval {
  std::string subject_kind;
  std::string subject;
  std::string decision;
  std::string reviewer;
  std::string note;
  std::string created_at;
  Json meta;  // {} when unset
};

// run.export: run "run_id"'s decisions, in the order made.
Result<std::vector<ExportedApproval>> ExportRunApprovalRows(Txn& txn, const std::string& run_id);

// run.import: decision "approval" of run "run_id" under id "id", made by
// ledger event "event_seq".
Status InsertImportedApproval(Txn& txn, const std::string& id, const std::string& run_id,
                              int64_t event_seq, const ExportedApproval& approval);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_APPROVAL_TABLE_H_
