// File: agent_rows.h
//
// An agent's row as the rest of the core reads it: loading it (the SQL is
// store/tables/agent_table.h's), whether a lost agent may act, and the
// touch that work on a lease gives its heartbeat. Split from agents.cc so that the task graph (claims,
// heartbeats, completions) and the agent registry (the reconciler releases
// a lost agent's leases) depend on it and not on each other.

#ifndef BATON_SRC_ENGINE_CORE_AGENT_ROWS_H_
#define BATON_SRC_ENGINE_CORE_AGENT_ROWS_H_

#ifndef BATON_ENGINE_ROOM_CORE
#error "engine/core/ is above this target: link baton_engine_core (src/engine/README.md)"
#endif

#include <string>

#include "engine/ledger/op_context.h"
#include "model/agent.h"
#include "store/store.h"

namespace baton {

inline constexpr char kLost[] = "lost";

// The agent; NotFound naming the id and how to register it.
Result<Agent> LoadAgent(Txn& txn, const std::string& id);

// FailedPrecondition when "agent" is lost: it may not "doing" until it
// registers again.
Status CheckNotLostAgent(const Agent& agent, const std::string& doing);


// FailedPrecondition when agent "id" is lost (it may not "doing" until it
// registers again); NotFound when there is no such agent.
Status CheckAgentNotLost(Txn& txn, const std::string& id, const std::string& doing);

// Work on a lease is a sign of life: the reconciler must not call an agent
// lost while it claims, renews and completes (it may never send
// agent.heartbeat itself).
Status TouchAgent(OpContext& ctx, const std::string& agent);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_CORE_AGENT_ROWS_H_
