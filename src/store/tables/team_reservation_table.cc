#include "store/tables/team_reservation_table.h"

#include <vector>

namespace baton {

Result<std::optional<TeamReservation>> FindTeamReservationHold(Txn& txn, const std::string& name) {
  ASSIGN_OR_RETURN(std::vector<Row> held,
                   txn.Query("SELECT actor, tmp, expires_ms, created_at FROM "
                             "team_reservations WHERE name = ?",
                             {SqlText(name)}));
  if (held.empty()) return std::optional<TeamReservation>();
  return std::optional<TeamReservation>(TeamReservation{.name = name,
                                                        .actor = held[0].Str(0),
                                                        .tmp = held[0].Str(1),
                                                        .expires_ms = held[0].Int(2),
                                                        .created_at = held[0].Str(3)});
}

Result<std::optional<TeamReservation>> FindTeamReservation(Txn& txn, const std::string& name,
                                                           const std::string& token) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT actor, repo, base_branch, path FROM team_reservations "
                             "WHERE name = ? AND token = ?",
                             {SqlText(name), SqlText(token)}));
  if (rows.empty()) return std::optional<TeamReservation>();
  return std::optional<TeamReservation>(TeamReservation{.name = name,
                                                        .token = token,
                                                        .actor = rows[0].Str(0),
                                                        .repo = rows[0].Str(1),
                                                        .base_branch = rows[0].Str(2),
                                                        .path = rows[0].Str(3)});
}

Status InsertTeamReservation(Txn& txn, const TeamReservation& r) {
  return txn
      .Exec(
          "INSERT INTO team_reservations (name, token, actor, repo, base_branch, path, tmp, "
          "expires_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {SqlText(r.name), SqlText(r.token), SqlText(r.actor), SqlText(r.repo),
           SqlText(r.base_branch), SqlText(r.path), SqlText(r.tmp), SqlInt(r.expires_ms),
           SqlText(r.created_at)})
      .status();
}

Status DeleteTeamReservation(Txn& txn, const std::string& name) {
  return txn.Exec("DELETE FROM team_reservations WHERE name = ?", {SqlText(name)}).status();
}

}  // namespace baton
