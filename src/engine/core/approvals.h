// File: approvals.h
//
// Decisions on a run's work: approve or reject a step, a hand-off or the run
// itself, and Sinfonia's retry / skip / abort. A decision is one row in
// "approvals" and exactly one ledger event (kind "decision") — Sinfonia wrote
// two rows for one rejection; baton writes one.
//
// approval.approve / approval.reject record a plain decision for most
// profiles. Profiles whose decisions move the workflow (Sinfonia: approve
// advances, reject blocks and sends a revision hand-off back to the producer;
// Stigmergy: approving "execution" opens the supervised gate) get the call
// through their ApplyApproval hook, which validates, records the decision
// with RecordDecision and makes its changes in the same transaction.

#ifndef BATON_SRC_ENGINE_CORE_APPROVALS_H_
#define BATON_SRC_ENGINE_CORE_APPROVALS_H_

#ifndef BATON_ENGINE_ROOM_CORE
#error "engine/core/ is above this target: link baton_engine_core (src/engine/README.md)"
#endif

#include <string>

#include "engine/ledger/op_context.h"
#include "model/run.h"

namespace baton {

struct DecisionInput {
  std::string run_id;        // empty for a decision outside any run
  std::string subject_kind;  // "run", "step", "handoff", "task", "story", ...
  std::string subject;       // "execution", a step key, a hand-off id, a task id
  std::string decision;      // approve | reject | retry | skip | abort
  std::string reviewer;      // empty: the caller
  std::string note;
  Json meta = Json::object();
};

// Inserts the decision and appends its one ledger event. Returns it as
// {id, run_id, subject_kind, subject, decision, reviewer, note, event_seq,
// meta, created_at}.
Result<Json> RecordDecision(OpContext& ctx, const DecisionInput& in);

// Decisions oldest first; empty strings match anything.
Result<Json> ListDecisions(Txn& txn, const std::string& run_id,
                           const std::string& subject_kind,
                           const std::string& subject);

// Profile hooks for approval.approve / approval.reject on a run of that
// profile (the run as LoadRun returns it). Each records the decision
// itself. Defined with the profile (sinfonia_flow.cc, stigmergy.cc).
Result<Json> SinfoniaApplyApproval(OpContext& ctx, const Run& run,
                                   const DecisionInput& in);
Result<Json> StigmergyApplyApproval(OpContext& ctx, const Run& run,
                                    const DecisionInput& in);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_CORE_APPROVALS_H_
