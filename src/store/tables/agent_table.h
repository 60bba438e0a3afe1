// File: agent_table.h
//
// The agents table, typed (model/agent.h): one agent, agent.list's filter,
// the reconciler's silent agents, the touch that work on a lease gives an
// agent's heartbeat; then, section by section, what each room of the engine
// asks of agents (registration, status, heartbeats, mail addresses, teams,
// replay). Every statement on agents is here. Portable SQL.

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

// ---- What engine/core asks for the task graph, claims, agents and tokens ----

// What agent.register writes; a field that is not set is left out, so that
// registering again keeps what was there.
struct AgentRegistration {
  std::optional<std::string> role;
  std::optional<std::string> kind;
  std::optional<std::string> provider;
  std::optional<std::string> model;
  std::optional<std::string> team;
  std::optional<std::string> delivery_command;
  std::optional<std::string> project_id;
  std::optional<bool> auto_resume;
  std::optional<Json> meta;
  int64_t last_heartbeat_ms = 0;
  Json session_ids = Json::array();  // the whole list, as it is to be stored
};

// A new agent "id" on "machine" in "status" at version 1.
Status InsertAgentRow(Txn& txn, const std::string& id, const std::string& machine,
                      const std::string& status, const AgentRegistration& registration,
                      const std::string& now);
// Agent "id" registered again: the fields set, and its version bumped.
Status UpdateAgentRegistration(Txn& txn, const std::string& id,
                               const AgentRegistration& registration, const std::string& now);

// Whether agent "id" is registered.
Result<bool> AgentExists(Txn& txn, const std::string& id);

// Agent "id" moves to "status"; its version is bumped.
Status UpdateAgentStatusRow(Txn& txn, const std::string& id, const std::string& status,
                            const std::string& now);

// agent.heartbeat: the last heartbeat is "now_ms" and the version is bumped
// (unlike TouchAgentRow).
Status RecordAgentHeartbeat(Txn& txn, const std::string& id, int64_t now_ms,
                            const std::string& now);

// ---- What engine/coord asks (mail, teams, boards) ----

// Which agents a mail address reaches (engine/coord/mail.h): the agent
// "value" itself, every agent but "value", or those whose role or team is
// "value".
enum class AgentMatch { kId, kAllBut, kRole, kTeam };
// The ids of the agents matching, by id.
Result<std::vector<std::string>> ListAgentIdsMatching(Txn& txn, AgentMatch match,
                                                      const std::string& value);

// Puts agent "id" in team "team" (empty: none), bumping its version.
Status SetAgentTeamRow(Txn& txn, const std::string& id, const std::string& team,
                       const std::string& now);
// Takes agent "id" out of team "team", if it is in it.
Status ClearAgentTeamRow(Txn& txn, const std::string& id, const std::string& team,
                         const std::string& now);
// Takes every agent out of team "team".
Status ClearTeamOfAgents(Txn& txn, const std::string& team, const std::string& now);

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

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
