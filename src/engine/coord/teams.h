// File: teams.h
//
// Teams (Genie's teams table, with its status under the machine genie.team).
// A team is a named group of agents working on one git branch in its own
// clone: the team's name is the branch. team.create validates everything
// first (name, members, leader, project, wish run, repository, base branch,
// target folder), then runs
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
// becomes the error message. Because the clone runs inside the write
// transaction it holds the write lock while git works: fine for a rare
// operation. Should the commit itself fail after the handler returned, the
// clone stays on disk and a retry is refused because the folder exists.
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

namespace baton {

// in: {name, repo, base_branch?, worktree_root?, leader?, members?, project?,
// wish_run?}. Returns the team.
Result<Json> CreateTeam(OpContext& ctx, const Json& in);
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

// The team as JSON; NotFound naming it.
Result<Json> LoadTeam(Txn& txn, const std::string& name);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_COORD_TEAMS_H_
