#include "engine/coord/teams.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>

#include "engine/core/agent_rows.h"
#include "engine/core/core_services.h"
#include "engine/core/task_graph.h"
#include "engine/ledger/ledger.h"
#include "model/agent.h"
#include "model/team.h"
#include "store/tables/agent_table.h"
#include "store/tables/task_table.h"
#include "store/tables/team_reservation_table.h"
#include "store/tables/team_table.h"
#include "util/clock.h"
#include "util/json_or_null.h"
#include "util/subprocess.h"

extern char** environ;

namespace baton {
namespace {

namespace fs = std::filesystem;

constexpr char kTeamMachine[] = "genie.team";
constexpr char kArchived[] = "archived";
constexpr char kInProgress[] = "in_progress";
constexpr int kGitQueryMillis = 30000;
constexpr int kGitCloneMillis = 600000;  // checking out a large repository is slow
// How long a reserved name stays taken: every git step's timeout, and a minute.
constexpr int64_t kReservationMillis = kGitCloneMillis + 4 * kGitQueryMillis + 60000;


std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

std::string Join(const Json& list) {
  std::string out;
  for (const Json& v : list) out += (out.empty() ? "" : ", ") + v.get<std::string>();
  return out.empty() ? "none" : out;
}

// ---- git as a child process ----

// The environment without the variables that would point git at another
// repository than the one named on its command line (set when baton runs
// from a git hook), and with prompts off: nobody is there to answer.
std::vector<std::string> GitEnvironment() {
  static const std::set<std::string> kRedirects = {
      "GIT_DIR",        "GIT_WORK_TREE",        "GIT_INDEX_FILE",
      "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
      "GIT_NAMESPACE",  "GIT_PREFIX",           "GIT_TERMINAL_PROMPT",
      "LC_ALL"};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var(*e);
    if (kRedirects.count(var.substr(0, var.find('='))) == 0) env.push_back(var);
  }
  env.push_back("GIT_TERMINAL_PROMPT=0");
  env.push_back("LC_ALL=C");  // messages we quote in errors, in one language
  return env;
}

// Runs `git args...` without a shell. Unavailable on timeout (the child is
// killed), FailedPrecondition when git cannot be started.
Result<SubprocessResult> RunGit(const std::vector<std::string>& args, int timeout_ms) {
  SubprocessOptions options{.env = GitEnvironment(), .timeout_ms = timeout_ms};
  options.argv.reserve(args.size() + 1);
  options.argv.push_back("git");
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  Result<SubprocessResult> run = RunSubprocess(options);
  if (run.status().code() == StatusCode::kFailedPrecondition) {
    return FailedPreconditionError("git: " + run.status().message() + "; teams need git on PATH");
  }
  if (run.status().code() == StatusCode::kDeadlineExceeded) {
    return UnavailableError("git " + args.front() + ": no answer within " +
                            std::to_string(timeout_ms / 1000) + " s; it was stopped");
  }
  return run;
}

// Runs git; a non-zero exit becomes "code" with "what" and git's own words.
Result<std::string> Git(const std::vector<std::string>& args, StatusCode code,
                        const std::string& what, int timeout_ms = kGitQueryMillis) {
  ASSIGN_OR_RETURN(SubprocessResult run, RunGit(args, timeout_ms));
  if (run.exit_code != 0) {
    return Status(code, what + " (git: " + Trim(run.err.substr(0, 2000)) + ")");
  }
  return Trim(run.out);
}

Status CheckBranchName(const std::string& field, const std::string& name) {
  // From "/" so that a repository around the server cannot expand "@{-1}".
  ASSIGN_OR_RETURN(SubprocessResult run,
                   RunGit({"-C", "/", "check-ref-format", "--branch", name}, kGitQueryMillis));
  if (run.exit_code == 0 && Trim(run.out) == name) return Status();
  return InvalidArgumentError(field + ": \"" + name +
                              "\" is not a valid git branch name (git check-ref-format "
                              "--branch refuses it: no spaces, \"..\", \"~^:?*[\\\", "
                              "leading \"-\" or \".\", trailing \"/\" or \".lock\")");
}

// The repository's top folder, absolute and without symlinks.
Result<std::string> ResolveRepo(const std::string& given) {
  std::error_code ec;
  const fs::path path = fs::absolute(given, ec);
  if (ec || !fs::exists(path, ec)) return NotFoundError("repo: no folder \"" + given + "\"");
  if (!fs::is_directory(path, ec)) {
    return InvalidArgumentError("repo: \"" + given + "\" is a file, not a git repository");
  }
  const std::string top = fs::canonical(path, ec).string();
  ASSIGN_OR_RETURN(std::string prefix,
                   Git({"-C", top, "rev-parse", "--show-prefix"}, StatusCode::kInvalidArgument,
                       "repo: \"" + top + "\" is not a git repository"));
  if (!prefix.empty()) {
    return InvalidArgumentError("repo: \"" + top + "\" is the subfolder " + prefix +
                                " of a git repository; give the repository's top folder");
  }
  return top;
}

// base_branch, or the repository's current branch; it must exist.
Result<std::string> ResolveBaseBranch(const std::string& repo, const Json& in) {
  std::string base;
  if (in.contains("base_branch")) {
    base = in["base_branch"].get<std::string>();
    RETURN_IF_ERROR(CheckBranchName("base_branch", base));
  } else {
    ASSIGN_OR_RETURN(base, Git({"-C", repo, "symbolic-ref", "--short", "-q", "HEAD"},
                               StatusCode::kFailedPrecondition,
                               "base_branch: " + repo +
                                   " has no current branch (detached "
                                   "HEAD); give base_branch"));
  }
  ASSIGN_OR_RETURN(SubprocessResult found, RunGit({"-C", repo, "rev-parse", "--verify", "--quiet",
                                                   "refs/heads/" + base + "^{commit}"},
                                                  kGitQueryMillis));
  if (found.exit_code == 0) return base;
  ASSIGN_OR_RETURN(
      std::string listed,
      Git({"-C", repo, "for-each-ref", "--count=10", "--format=%(refname:short)", "refs/heads/"},
          StatusCode::kFailedPrecondition, "repo: cannot list branches"));
  Json branches = Json::array();
  for (size_t at = 0; at < listed.size();) {
    const size_t end = std::min(listed.find('\n', at), listed.size());
    branches.push_back(listed.substr(at, end - at));
    at = end + 1;
  }
  return Status(
      StatusCode::kNotFound,
      "base_branch: no branch \"" + base + "\" in " + repo + " (branches: " + Join(branches) + ")",
      Json{{"base_branch", base}, {"branches", branches}});
}

Result<fs::path> WorktreeRoot(const OpContext& ctx, const Json& in) {
  std::error_code ec;
  if (in.contains("worktree_root")) {
    // Under the roots (or anywhere with the grant "paths"), never the store's.
    ASSIGN_OR_RETURN(std::string root,
                     ctx.ScopedPath("worktree_root", in["worktree_root"].get<std::string>()));
    return fs::path(root);
  }
  const fs::path store = ctx.store != nullptr ? ctx.store->location : "";
  if (store.is_absolute()) return store.parent_path() / "teams";
  return InvalidArgumentError("worktree_root: required, because the store (" + store.string() +
                              ") has no folder to keep clones beside");
}

// Refuses a target folder that exists, or that would sit inside another clone
// ("a/b" inside team "a"'s clone).
Status CheckTarget(const fs::path& root, const fs::path& path) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec))) {
    return AlreadyExistsError("worktree_root: " + path.string() +
                              " already exists; remove it or choose another worktree_root");
  }
  for (fs::path at = path.parent_path(); at != root && at.has_relative_path();
       at = at.parent_path()) {
    if (fs::exists(at / ".git", ec)) {
      return FailedPreconditionError("name: the clone would be inside the git clone " +
                                     at.string() + "; choose another name");
    }
  }
  return Status();
}

// A folder a create made: the clone (removed whole) or a parent folder it
// needed (removed only while empty: concurrent creates may share it).
struct Made {
  fs::path path;
  bool whole = false;
};

void RemoveMade(const std::vector<Made>& made) {
  std::error_code ec;  // best effort, newest first
  for (auto it = made.rbegin(); it != made.rend(); ++it) {
    if (it->whole) {
      fs::remove_all(it->path, ec);
    } else {
      fs::remove(it->path, ec);
    }
  }
}

// Removes the folders a refused create made, unless dismissed.
class DiskUndo {
 public:
  DiskUndo() = default;
  DiskUndo(const DiskUndo&) = delete;
  DiskUndo& operator=(const DiskUndo&) = delete;
  ~DiskUndo() { RemoveMade(made_); }
  void Add(Made made) { made_.push_back(std::move(made)); }
  void Dismiss() { made_.clear(); }

 private:
  std::vector<Made> made_;
};

// Clones into "tmp", a sibling of "path", and renames it into place once git
// has succeeded. Everything made is registered with "undo" and returned,
// oldest first.
Result<std::vector<Made>> CloneTeam(const std::string& repo, const std::string& base,
                                    const std::string& name, const fs::path& path,
                                    const fs::path& tmp, DiskUndo& undo) {
  std::error_code ec;
  std::vector<Made> made;
  for (fs::path at = path.parent_path(); !fs::exists(at, ec) && at.has_relative_path();
       at = at.parent_path()) {
    made.insert(made.begin(), Made{at, false});
  }
  fs::create_directories(path.parent_path(), ec);
  for (const Made& m : made) undo.Add(m);
  if (ec) {
    return FailedPreconditionError("worktree_root: cannot create " + path.parent_path().string() +
                                   ": " + ec.message());
  }
  undo.Add({tmp, true});
  RETURN_IF_ERROR(Git({"clone", "--quiet", "--shared", "--branch", base, "--", repo, tmp},
                      StatusCode::kFailedPrecondition,
                      "repo: git clone --shared of " + repo + " failed", kGitCloneMillis)
                      .status());
  RETURN_IF_ERROR(Git({"-C", tmp, "checkout", "--quiet", "-b", name},
                      StatusCode::kFailedPrecondition,
                      "name: git checkout -b " + name + " failed in the clone")
                      .status());
  // Refused when "path" appeared meanwhile (rename would replace an empty folder).
  if (fs::exists(fs::symlink_status(path, ec))) {
    return AlreadyExistsError("worktree_root: " + path.string() +
                              " appeared while git cloned; remove it or choose another "
                              "worktree_root");
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    return FailedPreconditionError("worktree_root: cannot move the clone to " + path.string() +
                                   ": " + ec.message());
  }
  undo.Add({path, true});
  made.push_back({path, true});
  return made;
}

// ---- the teams table ----

Status AppendTeamEvent(OpContext& ctx, const Team& team, std::string kind, std::string summary,
                       Json payload) {
  payload["team"] = team.name;
  return AppendEvent(ctx, {.run_id = team.wish_run_id.value_or(""),
                           .kind = std::move(kind),
                           .summary = "team " + team.name + ": " + summary,
                           .payload = std::move(payload)})
      .status();
}

// The stored team as the operations answer it, for an operation's result.
Result<Json> AnswerTeam(Txn& txn, const std::string& name) {
  ASSIGN_OR_RETURN(Team team, LoadTeam(txn, name));
  return TeamToJson(team);
}

// The team named in "in", checked against expect_version.
Result<Team> LoadForUpdate(OpContext& ctx, const Json& in) {
  const std::string name = in.at("name").get<std::string>();
  ASSIGN_OR_RETURN(Team team, LoadTeam(ctx.txn, name));
  RETURN_IF_ERROR(CheckExpectedVersion(in, "team", name, team.version));
  return team;
}

// Agents act on a team only as its leader; coordinators and humans always.
Status CheckActsForTeam(const OpContext& ctx, const Team& team) {
  if (ctx.actor.role != "agent" || team.leader == ctx.actor.id) return Status();
  return PermissionDeniedError("name: only the leader of team " + team.name +
                               " or a coordinator may change it (caller: " + ctx.actor.id + ")");
}

Status CheckNotArchived(const Team& team) {
  if (team.status != kArchived) return Status();
  return FailedPreconditionError("name: team " + team.name +
                                 " is archived; bring it back with team.set_status in_progress");
}

// The agent, registered and not a member of another team that is not archived.
Result<Agent> LoadRecruit(Txn& txn, const std::string& agent_id, const std::string& team,
                          const std::string& field) {
  Result<Agent> agent = LoadAgent(txn, agent_id);
  if (!agent.ok()) return agent.status().WithPrefix(field);
  const std::string other = agent->team.value_or("");
  if (other.empty() || other == team) return agent;
  ASSIGN_OR_RETURN(std::optional<std::string> status, FindTeamStatus(txn, other));
  if (!status || *status == kArchived) return agent;
  return FailedPreconditionError(field + ": agent " + agent_id + " is a member of team " + other +
                                 "; fire it there first (`baton team fire " + other + " " +
                                 agent_id + "`)");
}

Status SetAgentTeam(OpContext& ctx, const std::string& agent, const std::string& team) {
  return SetAgentTeamRow(ctx.txn, agent, team, ctx.now);
}

Status StoreTeam(OpContext& ctx, const Team& team) {
  return UpdateTeamRow(ctx.txn, team.name, team.members, team.leader.value_or(""), team.status,
                       ctx.now);
}

bool IsMember(const Team& team, const std::string& agent) {
  const Json& m = team.members;
  return std::find(m.begin(), m.end(), agent) != m.end();
}

// Adds "agent" to the members (and agents.team) of "team", updating it.
Status Hire(OpContext& ctx, Team& team, const std::string& agent, const std::string& field) {
  RETURN_IF_ERROR(LoadRecruit(ctx.txn, agent, team.name, field).status());
  if (IsMember(team, agent)) return Status();
  team.members.push_back(agent);
  RETURN_IF_ERROR(StoreTeam(ctx, team));
  RETURN_IF_ERROR(SetAgentTeam(ctx, agent, team.name));
  return AppendTeamEvent(ctx, team, "team.hired", "hired " + agent,
                         {{"agent", agent}, {"members", team.members}});
}

// Members named by "in" (leader included), validated before anything is made.
Result<Json> CreateMembers(OpContext& ctx, const std::string& team, const Json& in) {
  std::vector<std::pair<std::string, const char*>> named;
  for (const Json& m : in.value("members", Json::array())) {
    named.emplace_back(m.get<std::string>(), "members");
  }
  if (in.contains("leader")) named.emplace_back(in["leader"].get<std::string>(), "leader");
  Json members = Json::array();
  for (const auto& [agent, field] : named) {
    RETURN_IF_ERROR(LoadRecruit(ctx.txn, agent, team, field).status());
    if (std::find(members.begin(), members.end(), agent) == members.end()) {
      members.push_back(agent);
    }
  }
  return members;
}

}  // namespace

Result<Team> LoadTeam(Txn& txn, const std::string& name) {
  ASSIGN_OR_RETURN(std::optional<Team> team, FindTeamRow(txn, name));
  if (!team) {
    return Status(StatusCode::kNotFound,
                  "name: no team \"" + name + "\"; `baton team list` shows the teams",
                  Json{{"team", name}});
  }
  return *std::move(team);
}

Result<Json> ReserveTeam(OpContext& ctx, const Json& in) {
  const std::string name = in.at("name").get<std::string>();
  // Checked here too: the name becomes a folder under worktree_root.
  RETURN_IF_ERROR(CheckBranchName("name", name));
  Result<Team> existing = LoadTeam(ctx.txn, name);
  if (existing.ok()) {
    return AlreadyExistsError("name: a team \"" + name + "\" already exists (" + existing->status +
                              "); choose another name");
  }
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  ASSIGN_OR_RETURN(std::optional<TeamReservation> held, FindTeamReservationHold(ctx.txn, name));
  if (held && held->expires_ms > ctx.now_ms) {
    return AlreadyExistsError("name: team \"" + name + "\" is being created by " + held->actor +
                              " (since " + held->created_at + ", until " +
                              FormatTime(held->expires_ms) +
                              " at the latest); choose another name");
  }
  // A create that never finished (its process died during the clone) frees
  // the name; the caller removes its half-made clone ("abandoned").
  const std::string abandoned = held ? held->tmp : "";
  if (held) RETURN_IF_ERROR(DeleteTeamReservation(ctx.txn, name));
  RETURN_IF_ERROR(CreateMembers(ctx, name, in).status());
  if (in.contains("project")) {
    RETURN_IF_ERROR(ResolveProjectId(ctx.txn, in["project"].get<std::string>()).status());
  }
  if (in.contains("wish_run")) {
    RETURN_IF_ERROR(
        LoadRun(ctx.txn, in["wish_run"].get<std::string>()).status().WithPrefix("wish_run"));
  }
  // Both folders are scoped before git looks at either. git's queries are
  // quick and stay here; only the clone runs outside the transaction.
  ASSIGN_OR_RETURN(std::string repo_path, ctx.ScopedPath("repo", in.at("repo").get<std::string>()));
  ASSIGN_OR_RETURN(fs::path root, WorktreeRoot(ctx, in));
  ASSIGN_OR_RETURN(std::string repo, ResolveRepo(repo_path));
  ASSIGN_OR_RETURN(std::string base, ResolveBaseBranch(repo, in));
  const fs::path path = root / name;
  RETURN_IF_ERROR(CheckTarget(root, path));
  const std::string token = in.contains("token") ? in["token"].get<std::string>() : NewId("tres");
  const std::string tmp = path.string() + "." + NewId("tmp");
  RETURN_IF_ERROR(InsertTeamReservation(ctx.txn, {.name = name,
                                                  .token = token,
                                                  .actor = ctx.actor.id,
                                                  .repo = repo,
                                                  .base_branch = base,
                                                  .path = path.string(),
                                                  .tmp = tmp,
                                                  .expires_ms = ctx.now_ms + kReservationMillis,
                                                  .created_at = ctx.now}));
  return Json{{"name", name},       {"token", token}, {"repo", repo},
              {"base_branch", base}, {"path", path.string()},
              {"tmp", tmp},         {"expires_ms", ctx.now_ms + kReservationMillis},
              {"abandoned", abandoned}};
}

Result<Json> CloneReservedTeam(const Json& reservation) {
  DiskUndo undo;
  ASSIGN_OR_RETURN(std::vector<Made> made,
                   CloneTeam(JsonText(reservation, "repo"), JsonText(reservation, "base_branch"),
                             JsonText(reservation, "name"), JsonText(reservation, "path"),
                             JsonText(reservation, "tmp"), undo));
  undo.Dismiss();
  Json listed = Json::array();
  for (const Made& m : made) listed.push_back({{"path", m.path.string()}, {"whole", m.whole}});
  return Json{{"made", listed}};
}

void RemoveAbandonedClone(const Json& reservation) {
  // Only what ReserveTeam names: "<path>.tmp-…" beside the new reservation's path.
  const std::string tmp = JsonText(reservation, "abandoned");
  const std::string path = JsonText(reservation, "path");
  if (tmp.empty() || tmp.find('\0') != std::string::npos || !tmp.starts_with(path + ".tmp-") ||
      tmp.find('/', path.size()) != std::string::npos) {
    return;
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
}

void RemoveTeamClone(const Json& clone) {
  std::vector<Made> made;
  for (const Json& m : clone["made"]) {
    made.push_back({m["path"].get<std::string>(), m["whole"].get<bool>()});
  }
  RemoveMade(made);
}

namespace {

// The caller's own reservation of in.name, by in.token: its actor, repo,
// base_branch and path.
Result<TeamReservation> LoadReservation(OpContext& ctx, const Json& in) {
  const std::string name = in.at("name").get<std::string>();
  ASSIGN_OR_RETURN(std::optional<TeamReservation> reserved,
                   FindTeamReservation(ctx.txn, name, in.at("token").get<std::string>()));
  if (!reserved) {
    return NotFoundError("token: no reservation of team \"" + name +
                         "\" with this token; it was released, or it expired and another "
                         "create took the name");
  }
  if (reserved->actor != ctx.actor.id) {
    return PermissionDeniedError("token: the reservation of team \"" + name + "\" is " +
                                 reserved->actor + "'s (caller: " + ctx.actor.id + ")");
  }
  return *std::move(reserved);
}

}  // namespace

Result<Json> FinishTeamCreate(OpContext& ctx, const Json& in) {
  const std::string name = in.at("name").get<std::string>();
  ASSIGN_OR_RETURN(const TeamReservation reserved, LoadReservation(ctx, in));
  // What the reservation resolved and cloned, never what the caller says.
  const std::string& path = reserved.path;
  const std::string& repo = reserved.repo;
  const std::string& base = reserved.base_branch;
  std::error_code ec;
  if (!fs::exists(fs::path(path) / ".git", ec)) {
    return FailedPreconditionError("token: the reserved clone " + path +
                                   " is not there; team.create makes it");
  }
  // What may have changed while git worked is checked again.
  ASSIGN_OR_RETURN(Json members, CreateMembers(ctx, name, in));
  std::string project_id, wish_run_id;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  if (in.contains("wish_run")) {
    wish_run_id = in["wish_run"].get<std::string>();
    RETURN_IF_ERROR(LoadRun(ctx.txn, wish_run_id).status().WithPrefix("wish_run"));
  }
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(kTeamMachine));
  RETURN_IF_ERROR(DeleteTeamReservation(ctx.txn, name));
  RETURN_IF_ERROR(InsertTeamRow(ctx.txn, {.name = name,
                                          .project_id = project_id,
                                          .repo = repo,
                                          .base_branch = base,
                                          .branch = name,
                                          .worktree_path = path,
                                          .leader = in.value("leader", ""),
                                          .members = members,
                                          .wish_run_id = wish_run_id,
                                          .machine = kTeamMachine,
                                          .status = machine->initial(),
                                          .now = ctx.now}));
  for (const Json& m : members) RETURN_IF_ERROR(SetAgentTeam(ctx, m.get<std::string>(), name));
  ASSIGN_OR_RETURN(Team team, LoadTeam(ctx.txn, name));
  RETURN_IF_ERROR(
      AppendTeamEvent(ctx, team, "team.created",
                      "created on branch " + name + " from " + repo + " " + base + " at " + path,
                      {{"repo", repo},
                       {"base_branch", base},
                       {"branch", name},
                       {"path", path},
                       {"members", members},
                       {"leader", OrNull(team.leader)}}));
  return TeamToJson(team);
}

Result<Json> ReleaseTeamReservation(OpContext& ctx, const Json& in) {
  RETURN_IF_ERROR(LoadReservation(ctx, in).status());
  RETURN_IF_ERROR(DeleteTeamReservation(ctx.txn, in.at("name").get<std::string>()));
  return Json{{"released", true}};
}

Result<Json> ShowTeam(OpContext& ctx, const Json& in) {
  return AnswerTeam(ctx.txn, in.at("name").get<std::string>());
}

Result<Json> ListTeams(OpContext& ctx, const Json& in) {
  TeamFilter filter;
  if (in.contains("status")) filter.status = in["status"].get<std::string>();
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(filter.project_id,
                     ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  ASSIGN_OR_RETURN(std::vector<Team> rows, ListTeamRows(ctx.txn, filter));
  Json teams = Json::array();
  for (const Team& t : rows) teams.push_back(TeamToJson(t));
  return Json{{"teams", teams}};
}

Result<Json> HireTeamMember(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Team team, LoadForUpdate(ctx, in));
  RETURN_IF_ERROR(CheckActsForTeam(ctx, team));
  RETURN_IF_ERROR(CheckNotArchived(team));
  RETURN_IF_ERROR(Hire(ctx, team, in.at("agent").get<std::string>(), "agent"));
  return AnswerTeam(ctx.txn, team.name);
}

Result<Json> FireTeamMember(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Team team, LoadForUpdate(ctx, in));
  RETURN_IF_ERROR(CheckActsForTeam(ctx, team));
  const std::string name = team.name;
  const std::string agent = in.at("agent").get<std::string>();
  if (!IsMember(team, agent)) {
    return NotFoundError("agent: " + agent + " is not a member of team " + name +
                         " (members: " + Join(team.members) + ")");
  }
  Json& members = team.members;
  members.erase(std::find(members.begin(), members.end(), agent));
  const bool was_leader = team.leader == agent;
  if (was_leader) team.leader.reset();
  RETURN_IF_ERROR(StoreTeam(ctx, team));
  RETURN_IF_ERROR(ClearAgentTeamRow(ctx.txn, agent, name, ctx.now));
  RETURN_IF_ERROR(AppendTeamEvent(
      ctx, team, "team.fired", "fired " + agent + (was_leader ? " (was its leader)" : ""),
      {{"agent", agent}, {"was_leader", was_leader}, {"members", members}}));
  return AnswerTeam(ctx.txn, name);
}

Result<Json> SetTeamLeader(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Team team, LoadForUpdate(ctx, in));
  RETURN_IF_ERROR(CheckNotArchived(team));
  const std::string agent = in.at("agent").get<std::string>();
  RETURN_IF_ERROR(Hire(ctx, team, agent, "agent"));
  if (team.leader == agent) return AnswerTeam(ctx.txn, team.name);
  const Json from = OrNull(team.leader);
  team.leader = agent;
  RETURN_IF_ERROR(StoreTeam(ctx, team));
  RETURN_IF_ERROR(AppendTeamEvent(ctx, team, "team.leader", "led by " + agent,
                                  {{"from", from}, {"to", agent}}));
  return AnswerTeam(ctx.txn, team.name);
}

Result<Json> SetTeamStatus(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Team team, LoadForUpdate(ctx, in));
  RETURN_IF_ERROR(CheckActsForTeam(ctx, team));
  const std::string from = team.status;
  const std::string to = in.at("status").get<std::string>();
  if (to == "archived") {
    // Archiving must return the team's work and free its members.
    return FailedPreconditionError("status: archive a team with `baton team disband " + team.name +
                                   "`, which returns its in-progress "
                                   "tasks and frees its members");
  }
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(team.machine));
  RETURN_IF_ERROR(machine->Check(from, to, ctx.transition()).WithPrefix("status"));
  team.status = to;
  RETURN_IF_ERROR(StoreTeam(ctx, team));
  const std::string reason = in.value("reason", "");
  RETURN_IF_ERROR(AppendTeamEvent(ctx, team, "team.status",
                                  from + " -> " + to + (reason.empty() ? "" : ": " + reason),
                                  {{"from", from}, {"to", to}, {"reason", reason}}));
  return AnswerTeam(ctx.txn, team.name);
}

Result<Json> DisbandTeam(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Team team, LoadForUpdate(ctx, in));
  const std::string name = team.name;
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(team.machine));
  RETURN_IF_ERROR(
      machine->Check(team.status, kArchived, ctx.transition()).WithPrefix("team " + name));
  const std::string given = in.value("reason", "");
  const std::string reason = "team " + name + " disbanded" + (given.empty() ? "" : ": " + given);

  std::vector<std::string> returned;
  for (const Json& m : team.members) {
    ASSIGN_OR_RETURN(std::vector<std::string> ids,
                     ReleaseLeasesOf(ctx, m.get<std::string>(), reason));
    returned.insert(returned.end(), ids.begin(), ids.end());
  }
  if (team.wish_run_id) {
    ASSIGN_OR_RETURN(std::vector<std::string> ids,
                     ListRunTaskIdsInStatus(ctx.txn, *team.wish_run_id, kInProgress));
    for (const std::string& id : ids) {
      RETURN_IF_ERROR(ReturnTaskToReady(ctx, id, reason));
      returned.push_back(id);
    }
  }
  RETURN_IF_ERROR(ClearTeamOfAgents(ctx.txn, name, ctx.now));
  const Json members = team.members;
  const Json leader = OrNull(team.leader);
  team.members = Json::array();
  team.leader.reset();
  team.status = kArchived;
  RETURN_IF_ERROR(StoreTeam(ctx, team));
  const std::string path = team.worktree_path;
  RETURN_IF_ERROR(AppendTeamEvent(ctx, team, "team.disbanded",
                                  "disbanded" + (given.empty() ? "" : ": " + given) + "; " +
                                      std::to_string(returned.size()) +
                                      " task(s) back to ready; clone kept at " + path,
                                  {{"members", members},
                                   {"leader", leader},
                                   {"returned_tasks", returned},
                                   {"worktree_kept", path},
                                   {"reason", given}}));
  ASSIGN_OR_RETURN(Json archived, AnswerTeam(ctx.txn, name));
  return Json{{"team", archived},
              {"returned_tasks", returned},
              {"worktree_kept", path},
              {"note", "the clone at " + path +
                           " was kept: it may hold unpushed work; remove it when done"}};
}

}  // namespace baton
