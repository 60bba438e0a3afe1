// File: agents.h
//
// The agent registry (Genie's agents table done with a real machine). An agent
// is an identity: id, role, kind (permanent or task), provider, model, team,
// session ids, lifecycle status (machine genie.agent), last heartbeat, and an
// optional delivery command for pushed mail. The reconciler marks an agent
// `lost` when its heartbeat is older than a threshold and returns its leased
// tasks to ready, saying why in the ledger, in the same transaction. A lost
// agent's claims, heartbeats (task and agent) and own status changes are
// refused until it registers again (agent.register moves it to working, or
// the status it gives). The resume decision is Genie's
// shouldResume: one function, one of the reason codes ok, unknown_agent,
// auto_resume_disabled, assignment_closed, no_session_id.

#ifndef BATON_SRC_ENGINE_CORE_AGENTS_H_
#define BATON_SRC_ENGINE_CORE_AGENTS_H_

#ifndef BATON_ENGINE_ROOM_CORE
#error "engine/core/ is above this target: link baton_engine_core (src/engine/README.md)"
#endif

#include <string>

#include "engine/ledger/op_context.h"

namespace baton {

Result<Json> RegisterAgent(OpContext& ctx, const Json& in);
Result<Json> AgentHeartbeat(OpContext& ctx, const Json& in);
Result<Json> SetAgentStatus(OpContext& ctx, const Json& in);
Result<Json> ShowAgent(OpContext& ctx, const Json& in);
Result<Json> ListAgents(OpContext& ctx, const Json& in);
Result<Json> ReconcileAgents(OpContext& ctx, const Json& in);
Result<Json> ResumeDecision(OpContext& ctx, const Json& in);

// Registers the caller, with the id and role it called with, unless it is
// registered already. Api calls it on an agent's or coordinator's first
// write (Api::MayRegisterOnFirstCall decides who; humans are not agents).
Status RegisterOnFirstCall(OpContext& ctx);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_CORE_AGENTS_H_
