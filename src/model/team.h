// File: team.h
//
// One row of the teams table, typed (store/tables/team_table.h reads it): a
// named group of agents on one git branch in its own clone, with its
// members, leader and status under its machine (engine/coord/teams.h).
// TeamToJson gives the shape every team operation returns; JSON remains
// where the row holds JSON: "members" and "meta".

#ifndef BATON_SRC_MODEL_TEAM_H_
#define BATON_SRC_MODEL_TEAM_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct Team {
  std::string name;
  std::optional<std::string> project_id;
  std::string repo;
  std::string base_branch;
  std::string branch;
  std::string worktree_path;
  std::optional<std::string> leader;
  Json members = Json::array();  // agent ids
  std::optional<std::string> wish_run_id;
  std::string machine;
  std::string status;
  Json meta = Json::object();
  int64_t version = 0;
  std::string created_at;
  std::string updated_at;
};

// {name, project_id | null, repo, base_branch, branch, worktree_path,
// leader | null, members, wish_run_id | null, machine, status, meta,
// version, created_at, updated_at}.
Json TeamToJson(const Team& team);

}  // namespace baton

#endif  // BATON_SRC_MODEL_TEAM_H_
