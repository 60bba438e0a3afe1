// Placeholder until the Stigmergy profile lands: a plain decision.
#include "engine/approvals.h"

namespace baton {

Result<Json> StigmergyApplyApproval(OpContext& ctx, const Json& run, const DecisionInput& in) {
  (void)run;
  return RecordDecision(ctx, in);
}

}  // namespace baton
