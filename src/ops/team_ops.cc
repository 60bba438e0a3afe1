// Operations on teams: agents sharing one git branch in a shared clone
// (engine/coord/teams.h).

#include "engine/coord/teams.h"
#include "ops/api.h"
#include "ops/schemas.h"
#include "util/clock.h"

namespace baton {
namespace {

namespace s = schema;

Json TeamName() {
  return s::String("the team's name, which is also its git branch (git check-ref-format --branch)",
                   200);
}

Json TeamOut() {
  return s::Entity({{"name", {{"type", "string"}}},
                    {"project_id", s::Nullable("string")},
                    {"repo", {{"type", "string"}}},
                    {"base_branch", {{"type", "string"}}},
                    {"branch", {{"type", "string"}}},
                    {"worktree_path", {{"type", "string"}}},
                    {"leader", s::Nullable("string")},
                    {"members", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                    {"wish_run_id", s::Nullable("string")},
                    {"machine", {{"type", "string"}}},
                    {"status", {{"type", "string"}}},
                    {"version", {{"type", "integer"}}},
                    {"created_at", {{"type", "string"}}},
                    {"updated_at", {{"type", "string"}}}});
}

Json Path(std::string description) {
  Json path = s::String(std::move(description), 4096);
  path["minLength"] = 1;
  return path;
}

Json CreateIn() {
  return s::Input(
      {{"name", TeamName()},
       {"repo", Path("the git repository to clone (its top folder), under the server's roots")},
       {"base_branch", s::String("branch to start from (default: the repo's current branch)", 200)},
       {"worktree_root",
        Path("folder that receives the clone <worktree_root>/<name> (default: \"teams\" "
             "beside the store file); under the server's roots")},
       {"leader", s::Id("the agent leading the team (becomes a member)")},
       {"members", {{"type", "array"}, {"items", s::Id("agent id")}, {"maxItems", 100}}},
       {"project", s::Id("project id or name")},
       {"wish_run", s::Id("the run of the wish the team works on; disband returns its "
                          "in-progress tasks to ready")}},
      {"name", "repo"});
}

Json NameAndAgent(const char* agent_description) {
  return s::Input({{"name", TeamName()}, {"agent", s::Id(agent_description)}}, {"name", "agent"});
}

// team.create: reserve the name, clone with no transaction open, then record
// the team — or release the name and remove what was made. The token is
// chosen here, so that a reservation whose commit is in doubt can still be
// released.
Result<Json> CreateTeamInSteps(OpRunner& runner, const Json& in) {
  const std::string name = in.at("name").get<std::string>();
  Json reserve = in;
  reserve["token"] = NewId("tres");
  const Json release = {{"name", name}, {"token", reserve["token"]}};
  Result<Json> reservation = runner.Call("team.create_reserve", reserve);
  if (!reservation.ok()) {
    if (reservation.status().code() == StatusCode::kUnknown) {
      (void)runner.Call("team.create_release", release);
    }
    return reservation.status();
  }
  RemoveAbandonedClone(*reservation);
  Result<Json> clone = CloneReservedTeam(*reservation);
  if (!clone.ok()) {
    (void)runner.Call("team.create_release", release);
    return clone.status();
  }
  Json finish = in;
  finish["token"] = reserve["token"];
  for (const char* key : {"repo", "base_branch", "worktree_root"}) finish.erase(key);
  Result<Json> team = runner.Call("team.create_finish", finish);
  // An in-doubt commit may have recorded the team: its clone stays.
  if (!team.ok() && team.status().code() != StatusCode::kUnknown) {
    RemoveTeamClone(*clone);
    (void)runner.Call("team.create_release", release);
  }
  return team;
}

Json Token() {
  return s::String("the reservation's token (team.create_reserve makes one when none is given)",
                   200);
}

Status AddCreateStepOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "team.create_reserve",
      .summary = "Step 1 of team.create: check everything the store knows and reserve the name",
      .input_schema =
          [] {
            Json in = CreateIn();
            in["properties"]["token"] = Token();
            return in;
          }(),
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"name", s::Type("string")},
                          {"token", s::Type("string")},
                          {"repo", s::Type("string")},
                          {"base_branch", s::Type("string")},
                          {"path", s::Type("string")},
                          {"tmp", s::Type("string")},
                          {"expires_ms", s::Type("integer")},
                          {"abandoned", s::Type("string")}}},
                        {"required", {"name", "token", "repo", "base_branch", "path", "tmp",
                                      "expires_ms", "abandoned"}}},
      .roles = {"coordinator", "human"},
      .mutating = true,
      .handler = ReserveTeam,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "team.create_finish",
      .summary = "Step 3 of team.create: record the team whose clone the reservation made",
      .input_schema =
          [] {
            Json in = CreateIn();
            for (const char* key : {"repo", "base_branch", "worktree_root"}) {
              in["properties"].erase(key);
            }
            in["properties"]["token"] = Token();
            in["required"] = {"name", "token"};
            return in;
          }(),
      .output_schema = TeamOut(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .handler = FinishTeamCreate,
  }));
  return r.Add({
      .name = "team.create_release",
      .summary = "Drop a reservation team.create made when a step after it failed",
      .input_schema = s::Input({{"name", TeamName()}, {"token", Token()}}, {"name", "token"}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"released", s::Type("boolean")}}},
                        {"required", {"released"}}},
      .roles = {"coordinator", "human"},
      .mutating = true,
      .handler = ReleaseTeamReservation,
  });
}

Status AddCreateOps(Registry& r) {
  RETURN_IF_ERROR(AddCreateStepOps(r));
  RETURN_IF_ERROR(r.Add({
      .name = "team.create",
      .summary = "Create a team: a shared git clone of repo on a new branch named after the team",
      .input_schema = CreateIn(),
      .output_schema = TeamOut(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .positional = {"name"},
      .procedure = CreateTeamInSteps,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "team.show",
      .summary = "Show one team",
      .input_schema = s::Input({{"name", TeamName()}}, {"name"}),
      .output_schema = TeamOut(),
      .positional = {"name"},
      .handler = ShowTeam,
  }));
  return r.Add({
      .name = "team.list",
      .summary = "List teams, by status or project",
      .input_schema = s::Input({{"status", s::String("status (machine genie.team)", 200)},
                                {"project", s::Id("project id or name")}}),
      .output_schema = s::ListOf("teams", TeamOut()),
      .handler = ListTeams,
  });
}

Status AddMembershipOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "team.hire",
      .summary = "Add a registered agent to a team (it may be in one live team at a time)",
      .input_schema = NameAndAgent("the agent to hire"),
      .output_schema = TeamOut(),
      .mutating = true,
      .versioned = true,
      .idempotent = true,
      .positional = {"name", "agent"},
      .handler = HireTeamMember,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "team.fire",
      .summary = "Remove an agent from a team; its tasks are left alone",
      .input_schema = NameAndAgent("the member to fire"),
      .output_schema = TeamOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"name", "agent"},
      .handler = FireTeamMember,
  }));
  return r.Add({
      .name = "team.set_leader",
      .summary = "Make an agent the team's leader (hiring it if needed)",
      .input_schema = NameAndAgent("the new leader"),
      .output_schema = TeamOut(),
      .roles = {"coordinator", "human"},
      .mutating = true,
      .versioned = true,
      .idempotent = true,
      .positional = {"name", "agent"},
      .handler = SetTeamLeader,
  });
}

Status AddLifecycleOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "team.set_status",
      .summary =
          "Move a team through its machine (genie.team): in_progress, blocked, done, archived",
      .input_schema = s::Input({{"name", TeamName()},
                                {"status", s::String("the new status", 200)},
                                {"reason", s::String("why, for the ledger", 2000)}},
                               {"name", "status"}),
      .output_schema = TeamOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"name", "status"},
      .handler = SetTeamStatus,
  }));
  return r.Add({
      .name = "team.disband",
      .summary = "Archive a team in one transaction: its members' in-progress tasks (and its wish "
                 "run's) return to ready and the members leave; the clone is kept on disk",
      .input_schema = s::Input(
          {{"name", TeamName()}, {"reason", s::String("why, for the ledger", 2000)}}, {"name"}),
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"team", TeamOut()},
                          {"returned_tasks", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                          {"worktree_kept", {{"type", "string"}}},
                          {"note", {{"type", "string"}}}}},
                        {"required", {"team", "returned_tasks", "worktree_kept"}}},
      .roles = {"coordinator", "human"},
      .mutating = true,
      .versioned = true,
      .positional = {"name"},
      .handler = DisbandTeam,
  });
}

}  // namespace

Status RegisterTeamOps(Registry& registry) {
  RETURN_IF_ERROR(AddCreateOps(registry));
  RETURN_IF_ERROR(AddMembershipOps(registry));
  return AddLifecycleOps(registry);
}

}  // namespace baton
