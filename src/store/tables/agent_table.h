// File: agent_table.h
//
// The agents table's reads, typed (model/agent.h), and the touch that work
// on a lease gives an agent's heartbeat. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_AGENT_TABLE_H_
#define BATON_SRC_STORE_TABLES_AGENT_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "model/agent.h"
#include "store/store.h"

namespace baton {

// The columns AgentFromRow reads, in its order.
extern const char kAgentColumns[];

Agent AgentFromRow(const Row& row);

// NotFound naming the id and how an agent gets registered.
Result<Agent> LoadAgentRow(Txn& txn, const std::string& id);

// agent.list: the agents matching every filter that is set, by id.
struct AgentFilter {
  std::optional<std::string> role;
  std::optional<std::string> team;
  std::optional<std::string> status;
  std::optional<std::string> project_id;
};
Result<std::vector<Agent>> ListAgentRows(Txn& txn, const AgentFilter& filter);

// The agents not in status "lost_status" whose last heartbeat (never: 0) is
// before "cutoff_ms", by id: the reconciler's candidates.
Result<std::vector<Agent>> SilentAgentRows(Txn& txn, const std::string& lost_status,
                                           int64_t cutoff_ms);

// Sets agent "id"'s last heartbeat to "now_ms" (no version bump: a touch is
// not a change of the row's content).
Status TouchAgentRow(Txn& txn, const std::string& id, int64_t now_ms);

// h19-ledger-profiles:

// What `baton verify --deep` compares of an agent with its events
// (engine/ledger/ledger_replay.h).
struct AgentRoleForReplay {
  std::string id;
  std::string status;
  std::string role;
};
// Every agent, by id.
Result<std::vector<AgentRoleForReplay>> ListAgentRolesForReplay(Txn& txn);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_AGENT_TABLE_H_
