// File: team_table.h
//
// The teams table (engine/coord/teams.h): a named group of agents on one
// git branch in its own clone, with its members, leader and status under
// its machine. Read as a Team (model/team.h); JSON remains where the row
// holds JSON: "members" and "meta". Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_TEAM_TABLE_H_
#define BATON_SRC_STORE_TABLES_TEAM_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/team.h"
#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// Team "name", if there is one.
Result<std::optional<Team>> FindTeamRow(Txn& txn, const std::string& name);

// team.list: the teams matching every filter that is set, by name.
struct TeamFilter {
  std::optional<std::string> status;
  std::optional<std::string> project_id;
};
Result<std::vector<Team>> ListTeamRows(Txn& txn, const TeamFilter& filter);

// The status of team "name", if there is one.
Result<std::optional<std::string>> FindTeamStatus(Txn& txn, const std::string& name);

// A new team at version 1; empty "project_id", "leader" and "wish_run_id"
// are stored as NULL. AlreadyExists when the name is taken.
struct NewTeamRow {
  std::string name, project_id, repo, base_branch, branch, worktree_path, leader;
  Json members = Json::array();
  std::string wish_run_id, machine, status, now;
};
Status InsertTeamRow(Txn& txn, const NewTeamRow& team);

// Sets team "name"'s members, leader (empty: none) and status, bumping its
// version.
Status UpdateTeamRow(Txn& txn, const std::string& name, const Json& members,
                     const std::string& leader, const std::string& status, const std::string& now);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_TEAM_TABLE_H_
