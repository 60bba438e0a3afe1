#include "engine/core/approvals.h"

#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "model/decision.h"
#include "store/tables/approval_table.h"
#include "util/clock.h"

namespace baton {
namespace {

Json DecisionsToJson(const std::vector<Decision>& decisions) {
  Json list = Json::array();
  for (const Decision& d : decisions) list.push_back(DecisionToJson(d));
  return list;
}

}  // namespace

Result<Json> RecordDecision(OpContext& ctx, const DecisionInput& in) {
  const std::string reviewer = in.reviewer.empty() ? ctx.actor.id : in.reviewer;
  const std::string id = NewId("dec");
  std::string summary = in.decision + " " + in.subject_kind + " " + in.subject + " by " + reviewer;
  if (!in.note.empty()) summary += ": " + in.note;
  ASSIGN_OR_RETURN(int64_t seq,
                   AppendEvent(ctx, {.run_id = in.run_id,
                                     .kind = "decision",
                                     .summary = summary,
                                     .payload = {{"decision_id", id},
                                                 {"subject_kind", in.subject_kind},
                                                 {"subject", in.subject},
                                                 {"decision", in.decision},
                                                 {"reviewer", reviewer},
                                                 {"note", in.note},
                                                 {"meta", in.meta}}}));
  const Decision decision{.id = id,
                          .run_id = in.run_id.empty() ? std::nullopt : std::optional(in.run_id),
                          .subject_kind = in.subject_kind,
                          .subject = in.subject,
                          .decision = in.decision,
                          .reviewer = reviewer,
                          .note = in.note,
                          .event_seq = seq,
                          .meta = in.meta,
                          .created_at = ctx.now};
  RETURN_IF_ERROR(InsertDecisionRow(ctx.txn, decision));
  return DecisionToJson(decision);
}

Result<Json> ListDecisions(Txn& txn, const std::string& run_id,
                           const std::string& subject_kind,
                           const std::string& subject) {
  ASSIGN_OR_RETURN(std::vector<Decision> decisions,
                   ListDecisionRows(txn, {.run_id = run_id,
                                          .subject_kind = subject_kind,
                                          .subject = subject}));
  return DecisionsToJson(decisions);
}

}  // namespace baton
