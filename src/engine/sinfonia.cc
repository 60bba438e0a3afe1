// Placeholder until the Sinfonia profile lands: a plain decision.
#include "engine/approvals.h"

namespace baton {

Result<Json> SinfoniaApplyApproval(OpContext& ctx, const Json& run, const DecisionInput& in) {
  (void)run;
  return RecordDecision(ctx, in);
}

}  // namespace baton
