// File: team_reservation_table.h
//
// The team_reservations table: a team name held while team.create clones
// its repository outside any transaction (engine/coord/teams.h), with the
// repository, base branch and folders the create resolved, the actor and
// token that may finish it, and when the hold expires. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_TEAM_RESERVATION_TABLE_H_
#define BATON_SRC_STORE_TABLES_TEAM_RESERVATION_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "store/store.h"

namespace baton {

struct TeamReservation {
  std::string name;
  std::string token;
  std::string actor;
  std::string repo;
  std::string base_branch;
  std::string path;  // where the clone goes
  std::string tmp;   // where it is made first
  int64_t expires_ms = 0;
  std::string created_at;
};

// Who holds name "name" and until when: the reservation's actor, tmp,
// expires_ms and created_at (its other fields are left empty); none when
// the name is not held.
Result<std::optional<TeamReservation>> FindTeamReservationHold(Txn& txn, const std::string& name);
// The reservation of "name" under "token": its actor, repo, base_branch
// and path (its other fields are left empty); none when there is none.
Result<std::optional<TeamReservation>> FindTeamReservation(Txn& txn, const std::string& name,
                                                           const std::string& token);

Status InsertTeamReservation(Txn& txn, const TeamReservation& reservation);
Status DeleteTeamReservation(Txn& txn, const std::string& name);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_TEAM_RESERVATION_TABLE_H_
