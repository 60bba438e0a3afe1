#include "store/tables/team_table.h"

#include <utility>

#include "store/tables/row_values.h"

namespace baton {
namespace {

constexpr char kTeamColumns[] =
    "name, project_id, repo, base_branch, branch, worktree_path, leader, members, "
    "wish_run_id, machine, status, meta, version, created_at, updated_at";

Team TeamFromRow(const Row& r) {
  return Team{.name = r.Str(0),
              .project_id = TextOrNone(r, 1),
              .repo = r.Str(2),
              .base_branch = r.Str(3),
              .branch = r.Str(4),
              .worktree_path = r.Str(5),
              .leader = TextOrNone(r, 6),
              .members = JsonOr(r, 7, Json::array()),
              .wish_run_id = TextOrNone(r, 8),
              .machine = r.Str(9),
              .status = r.Str(10),
              .meta = JsonOr(r, 11, Json::object()),
              .version = r.Int(12),
              .created_at = r.Str(13),
              .updated_at = r.Str(14)};
}

}  // namespace

Result<std::optional<Team>> FindTeamRow(Txn& txn, const std::string& name) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT ") + kTeamColumns + " FROM teams WHERE name = ?",
                             {SqlText(name)}));
  if (rows.empty()) return std::optional<Team>();
  return std::optional<Team>(TeamFromRow(rows[0]));
}

Result<std::vector<Team>> ListTeamRows(Txn& txn, const TeamFilter& filter) {
  std::string sql = std::string("SELECT ") + kTeamColumns + " FROM teams WHERE 1 = 1";
  std::vector<SqlValue> params;
  if (filter.status) {
    sql += " AND status = ?";
    params.push_back(SqlText(*filter.status));
  }
  if (filter.project_id) {
    sql += " AND project_id = ?";
    params.push_back(SqlText(*filter.project_id));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql + " ORDER BY name", params));
  std::vector<Team> teams;
  teams.reserve(rows.size());
  for (const Row& r : rows) teams.push_back(TeamFromRow(r));
  return teams;
}

Result<std::optional<std::string>> FindTeamStatus(Txn& txn, const std::string& name) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT status FROM teams WHERE name = ?", {SqlText(name)}));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].Str(0));
}

Status InsertTeamRow(Txn& txn, const NewTeamRow& t) {
  return txn
      .Exec(
          "INSERT INTO teams (name, project_id, repo, base_branch, branch, worktree_path, "
          "leader, members, wish_run_id, machine, status, version, created_at, "
          "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
          {SqlText(t.name), SqlTextOrNull(t.project_id), SqlText(t.repo), SqlText(t.base_branch),
           SqlText(t.branch), SqlText(t.worktree_path), SqlTextOrNull(t.leader),
           SqlText(CanonicalJson(t.members)), SqlTextOrNull(t.wish_run_id), SqlText(t.machine),
           SqlText(t.status), SqlText(t.now), SqlText(t.now)})
      .status();
}

Status UpdateTeamRow(Txn& txn, const std::string& name, const Json& members,
                     const std::string& leader, const std::string& status, const std::string& now) {
  return txn
      .Exec(
          "UPDATE teams SET members = ?, leader = ?, status = ?, version = version + 1, "
          "updated_at = ? WHERE name = ?",
          {SqlText(CanonicalJson(members)), SqlTextOrNull(leader), SqlText(status), SqlText(now),
           SqlText(name)})
      .status();
}

}  // namespace baton
