#include "engine/core/agent_rows.h"

#include "engine/core/core_services.h"
#include "util/clock.h"

namespace baton {

const char kAgentColumns[] =
    "id, role, kind, provider, model, team, project_id, machine, status, session_ids, "
    "auto_resume, delivery_command, last_heartbeat_ms, meta, version, created_at, updated_at";

Json AgentRowToJson(const Row& r) {
  return Json{{"id", r.Str(0)},
              {"role", r.Str(1)},
              {"kind", r.Str(2)},
              {"provider", RowTextOrNull(r, 3)},
              {"model", RowTextOrNull(r, 4)},
              {"team", RowTextOrNull(r, 5)},
              {"project_id", RowTextOrNull(r, 6)},
              {"machine", r.Str(7)},
              {"status", r.Str(8)},
              {"session_ids", RowJsonOr(r, 9, Json::array())},
              {"auto_resume", r.Int(10) != 0},
              {"delivery_command", RowTextOrNull(r, 11)},
              {"last_heartbeat_at", r.IsNull(12) ? Json() : Json(FormatTime(r.Int(12)))},
              {"meta", RowJsonOr(r, 13, Json::object())},
              {"version", r.Int(14)},
              {"created_at", r.Str(15)},
              {"updated_at", r.Str(16)}};
}

// A lost agent's tasks went back to ready when it was marked lost: until it
// registers again, whatever it believes it holds is stale, so its claims and
// heartbeats are refused (its completions are fenced by the lease epoch).
Status CheckNotLostAgent(const Json& agent, const std::string& doing) {
  if (agent["status"] != kLost) return Status();
  const std::string id = agent["id"].get<std::string>();
  return Status(StatusCode::kFailedPrecondition,
                "agent " + id + " is lost (the reconciler found no heartbeat and returned its "
                "tasks to ready), so it may not " + doing + "; register it again (the agent_register "
                "tool, or baton agent register " + id + "), then claim work anew",
                Json{{"agent", id}, {"status", kLost}});
}

Result<Json> LoadAgent(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT ") + kAgentColumns + " FROM agents WHERE id = ?",
                             {SqlText(id)}));
  if (rows.empty()) {
    return Status(StatusCode::kNotFound,
                  "agent: no agent \"" + id + "\" is registered (an agent is registered by "
                  "its first call; the agent_list tool shows those that are)",
                  Json{{"agent", id}});
  }
  return AgentRowToJson(rows[0]);
}

Status CheckAgentNotLost(Txn& txn, const std::string& id, const std::string& doing) {
  ASSIGN_OR_RETURN(Json agent, LoadAgent(txn, id));
  return CheckNotLostAgent(agent, doing);
}

Status TouchAgent(OpContext& ctx, const std::string& agent) {
  return ctx.txn
      .Exec("UPDATE agents SET last_heartbeat_ms = ? WHERE id = ?",
            {SqlInt(ctx.now_ms), SqlText(agent)})
      .status();
}

}  // namespace baton
