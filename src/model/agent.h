// File: agent.h
//
// One row of the agents table, typed (store/tables/agent_table.h reads it).
// AgentToJson gives the shape every operation returns (ops/schemas.cc
// AgentOut); JSON remains where the row holds JSON: session_ids and meta.

#ifndef BATON_SRC_MODEL_AGENT_H_
#define BATON_SRC_MODEL_AGENT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct Agent {
  std::string id;
  std::string role;
  std::string kind;
  std::optional<std::string> provider;
  std::optional<std::string> model;
  std::optional<std::string> team;
  std::optional<std::string> project_id;
  std::string machine;
  std::string status;
  Json session_ids = Json::array();
  bool auto_resume = false;
  std::optional<std::string> delivery_command;
  std::optional<int64_t> last_heartbeat_ms;  // none: never
  Json meta = Json::object();
  int64_t version = 0;
  std::string created_at;
  std::string updated_at;
};

// {id, role, ..., last_heartbeat_at: RFC 3339 | null, ...}.
Json AgentToJson(const Agent& agent);
// last_heartbeat_at as AgentToJson writes it: RFC 3339, or null for never.
Json AgentLastHeartbeatJson(const Agent& agent);

}  // namespace baton

#endif  // BATON_SRC_MODEL_AGENT_H_
