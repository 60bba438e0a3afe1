// File: teams.h
//
// Teams (Genie's teams table, with its status under the machine genie.team).
// A team is a named group of agents working on one git branch in its own
// clone: the team's name is the branch. team.create validates everything
// first (name, members, leader, project, wish run, repository, base branch,
// target folder) and reserves the name, then runs
//
//   git clone --shared --branch <base_branch> -- <repo> <path>.tmp-<hex>
//   git -C <path>.tmp-<hex> checkout -b <name>
//
// and renames the result to <worktree_root>/<name> only when git succeeded.
// A shared clone borrows the repository's objects through
// .git/objects/info/alternates and writes nothing into the repository, which
// is why Genie uses it instead of `git worktree` (agents in a worktree flipped
// core.bare on the parent). If anything fails afterwards the folders this
// call made are removed, so a refused create leaves nothing on disk. The
// default worktree_root is the folder "teams" beside the store file; a store
// without a folder (in memory) needs worktree_root.
//
// git runs as a child process (no shell; stdin /dev/null; variables such as
// GIT_DIR that would redirect it are removed) with a timeout; its stderr
// becomes the error message. git runs between two write transactions (the
// steps below), so other writers never wait for it. Should the second
// commit fail, the clone stays on disk and a retry is refused because the
// folder exists.
//
// Membership. Members are registered agents; each is in at most one team that
// is not archived, recorded in agents.team too. The leader is always a
// member. An agent (role "agent") may hire, fire and set the status only as
// its team's leader. Firing leaves the agent's tasks alone.
//
// Disband, in the caller's one transaction: every in-progress task leased by
// a member, and every in-progress task of the team's wish run, returns to
// ready (ReturnTaskToReady: lease cleared, epoch kept, so the old holder's
// late complete is refused with Aborted); members leave (agents.team
// cleared, members and leader emptied); the team becomes archived through
// its machine; one "team.disbanded" event lists the returned tasks. The clone
// is kept: it may hold unpushed work.
//
// Errors name the field and the reason: InvalidArgument for a bad branch name
// or a folder that is not a repository, NotFound for an unknown team, agent,
// project, run, repository folder or base branch (listing some branches),
// AlreadyExists for a taken name or target folder, FailedPrecondition for
// a refused transition (naming the allowed next states), a failing git
// command or an agent busy in another team, Aborted for a stale
// expect_version.

#ifndef BATON_SRC_ENGINE_COORD_TEAMS_H_
#define BATON_SRC_ENGINE_COORD_TEAMS_H_

#ifndef BATON_ENGINE_ROOM_COORD
#error "engine/coord/ is above this target: link baton_engine_coord (src/engine/README.md)"
#endif

#include <string>

#include "engine/ledger/op_context.h"
#include "model/team.h"

namespace baton {

// team.create, in steps, so that git's clone never runs inside a write
// transaction (every other writer would wait for it). ops/team_ops.cc
// composes them:
//
//   ReserveTeam(ctx, in)             transaction 1: the name (a valid branch
//                                    name), members, project, wish run,
//                                    folders, and git's quick queries: the
//                                    repository's top folder and the base
//                                    branch; the name is reserved
//   CloneReservedTeam(reservation)   git clone and checkout -b, no store
//   FinishTeamCreate(ctx, in)        transaction 2: checked again, the team
//                                    row from the reservation, team.created
//   ReleaseTeamReservation(ctx, in)  instead, when a step failed
//
// in (ReserveTeam): {name, repo, base_branch?, worktree_root?, leader?,
// members?, project?, wish_run?, token?}. A reservation lives in the table
// team_reservations: {name, token, actor, repo, base_branch, path, tmp,
// expires_ms}; finishing takes repo, base branch and folder from it, never
// from its caller. While it holds, another create of the name is refused
// (AlreadyExists, naming who creates it and until when); once it expires
// (every git timeout and a minute after it was made: its process died) the
// next reservation takes the name over and names the half-made clone in
// "abandoned", which RemoveAbandonedClone removes after that commit. A clone
// already renamed to "path" is left alone: that create is refused because
// the folder exists.
// Returns {name, token, repo, base_branch, path, tmp, expires_ms, abandoned}.
Result<Json> ReserveTeam(OpContext& ctx, const Json& in);
// Removes reservation.abandoned — only a "<path>.tmp-…" sibling of the
// reserved path.
void RemoveAbandonedClone(const Json& reservation);
// Returns {made: [{path, whole}, oldest first]}: the clone (whole) and the
// parent folders made for it. On failure everything it made is gone again —
// parent folders only while empty, since concurrent creates may share them.
Result<Json> CloneReservedTeam(const Json& reservation);
// Removes what CloneReservedTeam made (when FinishTeamCreate was refused).
void RemoveTeamClone(const Json& clone);
// in: {name, token, leader?, members?, project?, wish_run?}. Only the actor
// who reserved may finish or release (PermissionDenied); NotFound once the
// reservation is gone; FailedPrecondition when the reserved folder holds no
// clone. Returns the team.
Result<Json> FinishTeamCreate(OpContext& ctx, const Json& in);
// in: {name, token}. Returns {released: true}.
Result<Json> ReleaseTeamReservation(OpContext& ctx, const Json& in);
Result<Json> ShowTeam(OpContext& ctx, const Json& in);
// in: {status?, project?}. Returns {teams: [...]} by name.
Result<Json> ListTeams(OpContext& ctx, const Json& in);
// in: {name, agent}. Hiring a member again changes nothing.
Result<Json> HireTeamMember(OpContext& ctx, const Json& in);
// in: {name, agent}. NotFound when the agent is not a member; firing the
// leader leaves the team without one.
Result<Json> FireTeamMember(OpContext& ctx, const Json& in);
// in: {name, agent}. Hires the agent first if it is not a member.
Result<Json> SetTeamLeader(OpContext& ctx, const Json& in);
// in: {name, status, reason?}, through the team's machine.
Result<Json> SetTeamStatus(OpContext& ctx, const Json& in);
// in: {name, reason?}. Returns {team, returned_tasks, worktree_kept, note}.
Result<Json> DisbandTeam(OpContext& ctx, const Json& in);

// The team; NotFound naming it.
Result<Team> LoadTeam(Txn& txn, const std::string& name);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_COORD_TEAMS_H_
