#include "engine/core/agent_rows.h"

#include "engine/core/core_services.h"
#include "store/tables/agent_table.h"

namespace baton {

// A lost agent's tasks went back to ready when it was marked lost: until it
// registers again, whatever it believes it holds is stale, so its claims and
// heartbeats are refused (its completions are fenced by the lease epoch).
Status CheckNotLostAgent(const Agent& agent, const std::string& doing) {
  if (agent.status != kLost) return Status();
  const std::string& id = agent.id;
  return Status(StatusCode::kFailedPrecondition,
                "agent " + id + " is lost (the reconciler found no heartbeat and returned its "
                "tasks to ready), so it may not " + doing + "; register it again (the agent_register "
                "tool, or baton agent register " + id + "), then claim work anew",
                Json{{"agent", id}, {"status", kLost}});
}

Result<Agent> LoadAgent(Txn& txn, const std::string& id) { return LoadAgentRow(txn, id); }

Status CheckAgentNotLost(Txn& txn, const std::string& id, const std::string& doing) {
  ASSIGN_OR_RETURN(Agent agent, LoadAgent(txn, id));
  return CheckNotLostAgent(agent, doing);
}

Status TouchAgent(OpContext& ctx, const std::string& agent) {
  return TouchAgentRow(ctx.txn, agent, ctx.now_ms);
}

}  // namespace baton
