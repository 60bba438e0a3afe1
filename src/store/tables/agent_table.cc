#include "store/tables/agent_table.h"

#include <utility>

#include "store/tables/row_values.h"

namespace baton {
namespace {

Result<std::vector<Agent>> QueryAgents(Txn& txn, const std::string& where, SqlParams params) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT ") + kAgentColumns + " FROM agents " + where,
                             params));
  std::vector<Agent> agents;
  agents.reserve(rows.size());
  for (const Row& r : rows) agents.push_back(AgentFromRow(r));
  return agents;
}

}  // namespace

const char kAgentColumns[] =
    "id, role, kind, provider, model, team, project_id, machine, status, session_ids, "
    "auto_resume, delivery_command, last_heartbeat_ms, meta, version, created_at, updated_at";

Agent AgentFromRow(const Row& r) {
  Agent a;
  a.id = r.Str(0);
  a.role = r.Str(1);
  a.kind = r.Str(2);
  a.provider = TextOrNone(r, 3);
  a.model = TextOrNone(r, 4);
  a.team = TextOrNone(r, 5);
  a.project_id = TextOrNone(r, 6);
  a.machine = r.Str(7);
  a.status = r.Str(8);
  a.session_ids = JsonOr(r, 9, Json::array());
  a.auto_resume = r.Int(10) != 0;
  a.delivery_command = TextOrNone(r, 11);
  if (!r.IsNull(12)) a.last_heartbeat_ms = r.Int(12);
  a.meta = JsonOr(r, 13, Json::object());
  a.version = r.Int(14);
  a.created_at = r.Str(15);
  a.updated_at = r.Str(16);
  return a;
}

Result<Agent> LoadAgentRow(Txn& txn, const std::string& id) {
  const SqlValue params[] = {SqlText(id)};
  ASSIGN_OR_RETURN(std::vector<Agent> agents, QueryAgents(txn, "WHERE id = ?", params));
  if (agents.empty()) {
    return Status(StatusCode::kNotFound,
                  "agent: no agent \"" + id + "\" is registered (an agent is registered by "
                  "its first call; the agent_list tool shows those that are)",
                  Json{{"agent", id}});
  }
  return std::move(agents[0]);
}

Result<std::vector<Agent>> ListAgentRows(Txn& txn, const AgentFilter& filter) {
  std::string where = "WHERE 1 = 1";
  std::vector<SqlValue> params;
  for (const auto& [value, column] :
       {std::pair{&filter.role, "role"}, {&filter.team, "team"}, {&filter.status, "status"},
        {&filter.project_id, "project_id"}}) {
    if (!value->has_value()) continue;
    where += std::string(" AND ") + column + " = ?";
    params.push_back(SqlText(**value));
  }
  return QueryAgents(txn, where + " ORDER BY id", params);
}

Result<std::vector<Agent>> SilentAgentRows(Txn& txn, const std::string& lost_status,
                                           int64_t cutoff_ms) {
  const SqlValue params[] = {SqlText(lost_status), SqlInt(cutoff_ms)};
  return QueryAgents(txn, "WHERE status <> ? AND COALESCE(last_heartbeat_ms, 0) < ? ORDER BY id",
                     params);
}

Status TouchAgentRow(Txn& txn, const std::string& id, int64_t now_ms) {
  // Nothing waits for its answer: sent with the next statement on PostgreSQL.
  return txn.ExecLater("UPDATE agents SET last_heartbeat_ms = ? WHERE id = ?",
                       {SqlInt(now_ms), SqlText(id)});
}

// ---- What engine/core asks for the task graph, claims, agents and tokens ----

namespace {

// The columns of "r" that are set, in agent.register's order, each with its value.
std::vector<std::pair<std::string, SqlValue>> RegistrationColumns(const AgentRegistration& r) {
  std::vector<std::pair<std::string, SqlValue>> fields;
  for (const auto& [column, value] :
       {std::pair{"role", &r.role}, {"kind", &r.kind}, {"provider", &r.provider},
        {"model", &r.model}, {"team", &r.team}, {"delivery_command", &r.delivery_command},
        {"project_id", &r.project_id}}) {
    if (value->has_value()) fields.emplace_back(column, SqlText(**value));
  }
  if (r.auto_resume) fields.emplace_back("auto_resume", SqlInt(*r.auto_resume ? 1 : 0));
  if (r.meta) fields.emplace_back("meta", SqlText(CanonicalJson(*r.meta)));
  fields.emplace_back("last_heartbeat_ms", SqlInt(r.last_heartbeat_ms));
  fields.emplace_back("session_ids", SqlText(CanonicalJson(r.session_ids)));
  return fields;
}

}  // namespace

Status InsertAgentRow(Txn& txn, const std::string& id, const std::string& machine,
                      const std::string& status, const AgentRegistration& registration,
                      const std::string& now) {
  std::string columns = "id, machine, status, version, created_at, updated_at";
  std::string marks = "?, ?, ?, 1, ?, ?";
  std::vector<SqlValue> params = {SqlText(id), SqlText(machine), SqlText(status), SqlText(now),
                                  SqlText(now)};
  for (auto& [column, value] : RegistrationColumns(registration)) {
    columns += ", " + column;
    marks += ", ?";
    params.push_back(std::move(value));
  }
  return txn.Exec("INSERT INTO agents (" + columns + ") VALUES (" + marks + ")", params)
      .status();
}

Status UpdateAgentRegistration(Txn& txn, const std::string& id,
                               const AgentRegistration& registration, const std::string& now) {
  std::string sql = "UPDATE agents SET version = version + 1, updated_at = ?";
  std::vector<SqlValue> params = {SqlText(now)};
  for (auto& [column, value] : RegistrationColumns(registration)) {
    sql += ", " + column + " = ?";
    params.push_back(std::move(value));
  }
  sql += " WHERE id = ?";
  params.push_back(SqlText(id));
  return txn.Exec(sql, params).status();
}

Result<bool> AgentExists(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT 1 FROM agents WHERE id = ?", {SqlText(id)}));
  return !rows.empty();
}

Status UpdateAgentStatusRow(Txn& txn, const std::string& id, const std::string& status,
                            const std::string& now) {
  return txn
      .Exec("UPDATE agents SET status = ?, version = version + 1, "
            "updated_at = ? WHERE id = ?",
            {SqlText(status), SqlText(now), SqlText(id)})
      .status();
}

Status RecordAgentHeartbeat(Txn& txn, const std::string& id, int64_t now_ms,
                            const std::string& now) {
  return txn
      .Exec("UPDATE agents SET last_heartbeat_ms = ?, version = version + 1, "
            "updated_at = ? WHERE id = ?",
            {SqlInt(now_ms), SqlText(now), SqlText(id)})
      .status();
}

// ---- What engine/coord asks (mail, teams, boards) ----

Result<std::vector<std::string>> ListAgentIdsMatching(Txn& txn, AgentMatch match,
                                                      const std::string& value) {
  const char* where = "id = ?";
  switch (match) {
    case AgentMatch::kId:
      break;
    case AgentMatch::kAllBut:
      where = "id <> ?";
      break;
    case AgentMatch::kRole:
      where = "role = ?";
      break;
    case AgentMatch::kTeam:
      where = "team = ?";
      break;
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT id FROM agents WHERE ") + where + " ORDER BY id",
                             {SqlText(value)}));
  return FirstColumn(rows);
}

Status SetAgentTeamRow(Txn& txn, const std::string& id, const std::string& team,
                       const std::string& now) {
  return txn
      .Exec("UPDATE agents SET team = ?, version = version + 1, updated_at = ? WHERE id = ?",
            {SqlTextOrNull(team), SqlText(now), SqlText(id)})
      .status();
}

Status ClearAgentTeamRow(Txn& txn, const std::string& id, const std::string& team,
                         const std::string& now) {
  return txn
      .Exec("UPDATE agents SET team = NULL, version = version + 1, "
            "updated_at = ? WHERE id = ? AND team = ?",
            {SqlText(now), SqlText(id), SqlText(team)})
      .status();
}

Status ClearTeamOfAgents(Txn& txn, const std::string& team, const std::string& now) {
  return txn
      .Exec("UPDATE agents SET team = NULL, version = version + 1, "
            "updated_at = ? WHERE team = ?",
            {SqlText(now), SqlText(team)})
      .status();
}

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

Result<std::vector<AgentRoleForReplay>> ListAgentRolesForReplay(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, status, role FROM agents ORDER BY id", {}));
  std::vector<AgentRoleForReplay> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Str(0), r.Str(1), r.Str(2)});
  return out;
}

}  // namespace baton
