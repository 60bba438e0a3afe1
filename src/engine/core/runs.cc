#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "model/profile.h"
#include "store/tables/event_table.h"
#include "store/tables/run_table.h"
#include "store/tables/task_table.h"
#include "store/tables/usage_table.h"
#include "util/clock.h"

namespace baton {
namespace {

// Loads the run named by in["id"] and checks expect_version.
Result<Run> LoadForUpdate(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, id));
  RETURN_IF_ERROR(CheckExpectedVersion(in, "run", id, run.version));
  return run;
}

}  // namespace

Result<Json> AnswerRun(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(Run run, LoadRun(txn, id));
  return RunToJson(run);
}

Result<Run> LoadRun(Txn& txn, const std::string& id) { return LoadRunRow(txn, id); }

Status StoreRun(OpContext& ctx, const Run& run) {
  return StoreRunRow(ctx.txn, run, ctx.now);
}

Result<Json> CreateRun(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, MakeRun(ctx, in));
  return RunToJson(run);
}

Result<Run> MakeRun(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(const Profile* profile, FindProfile(in.value("profile", "baton")));
  const std::string machine_name = in.value("machine", profile->run_machine);
  Result<const Machine*> machine = ctx.machines.Get(machine_name);
  if (!machine.ok()) return InvalidArgumentError("machine: " + machine.status().message());
  std::string project_id;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  const std::string id = in.value("id", NewId("run"));
  const std::string title = in.value("title", "");
  const Json context = in.value("context", Json::object());
  const Json meta = in.value("meta", Json::object());
  const std::string status = (*machine)->initial();
  Status inserted = InsertRunRow(ctx.txn, Run{.id = id,
                                                .project_id = project_id.empty()
                                                                  ? std::nullopt
                                                                  : std::optional(project_id),
                                                .profile = profile->name,
                                                .machine = machine_name,
                                                .status = status,
                                                .title = title,
                                                .context = context,
                                                .meta = meta,
                                                .created_at = ctx.now,
                                                .updated_at = ctx.now});
  if (inserted.code() == StatusCode::kAlreadyExists) {
    return AlreadyExistsError("run: a run with id \"" + id + "\" already exists");
  }
  RETURN_IF_ERROR(inserted);
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = id,
                                    .kind = "run.created",
                                    .summary = "run created with profile " +
                                               std::string(profile->name) + " in " + status,
                                    .payload = {{"profile", profile->name},
                                                {"machine", machine_name},
                                                {"status", status},
                                                {"title", title},
                                                {"project_id", project_id}}})
                      .status());
  return LoadRun(ctx.txn, id);
}

Result<Json> ShowRun(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Json run, AnswerRun(ctx.txn, id));
  ASSIGN_OR_RETURN(std::vector<TaskStatusCount> counts, CountRunTasksByStatus(ctx.txn, id));
  Json tasks = Json::object();
  for (const TaskStatusCount& c : counts) tasks[c.status] = c.count;
  run["task_counts"] = tasks;
  // Every note, or the newest "progress_limit": the dashboard's run page
  // re-reads this after every change, and a long run has thousands
  // (ledger.events pages back through them).
  ASSIGN_OR_RETURN(run["progress_count"], CountRunProgressEvents(ctx.txn, id));
  ASSIGN_OR_RETURN(Json events,
                   ListEvents(ctx.txn, {.run_id = id,
                                        .kind = "run.progress",
                                        .limit = in.value("progress_limit", int64_t{1} << 40),
                                        .before_seq = int64_t{1} << 62}));
  Json progress = Json::array();
  for (const Json& e : events) {
    progress.push_back({{"timestamp", e["time"]},
                        {"agent", e["payload"].value("agent", e["actor"]["id"].get<std::string>())},
                        {"description", e["payload"].value("description", "")}});
  }
  run["progress"] = progress;
  return run;
}

Result<Json> ListRuns(OpContext& ctx, const Json& in) {
  RunFilter filter;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(filter.project_id,
                     ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  if (in.contains("profile")) filter.profile = in["profile"].get<std::string>();
  if (in.contains("text")) filter.text = in["text"].get<std::string>();
  Json out = Json::object();
  if (in.value("counts", false)) {
    // By status over the other filters, so each status's share shows.
    ASSIGN_OR_RETURN(auto counted, CountRunsByStatus(ctx.txn, filter));
    out["counts"] = Json::object();
    for (const auto& [status, count] : counted) out["counts"][status] = count;
  }
  if (in.contains("status")) filter.status = in["status"].get<std::string>();
  filter.by_activity = in.value("order", "created") == "activity";
  filter.limit = in.value("limit", 1000);
  ASSIGN_OR_RETURN(std::vector<Run> runs, ListRunRows(ctx.txn, filter));
  Json list = Json::array();
  for (const Run& r : runs) list.push_back(RunToJson(r));
  out["runs"] = list;
  return out;
}

Result<Json> RunUsage(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  RETURN_IF_ERROR(LoadRun(ctx.txn, run_id).status());
  ASSIGN_OR_RETURN(std::vector<UsageSum> sums, SumRunUsage(ctx.txn, run_id));
  constexpr const char* kSums[] = {"input_tokens", "output_tokens", "reasoning_tokens",
                                   "cache_read_tokens", "cache_write_tokens"};
  Json total = {{"steps", 0}, {"cost", 0.0}};
  for (const char* k : kSums) total[k] = 0;
  Json list = Json::array();
  for (const UsageSum& u : sums) {
    Json row = {{"agent", u.agent},
                {"model", u.model},
                {"steps", u.steps},
                {"cost", u.cost},
                {"input_tokens", u.input_tokens},
                {"output_tokens", u.output_tokens},
                {"reasoning_tokens", u.reasoning_tokens},
                {"cache_read_tokens", u.cache_read_tokens},
                {"cache_write_tokens", u.cache_write_tokens}};
    total["steps"] = total["steps"].get<int64_t>() + row["steps"].get<int64_t>();
    total["cost"] = total["cost"].get<double>() + row["cost"].get<double>();
    for (const char* k : kSums) total[k] = total[k].get<int64_t>() + row[k].get<int64_t>();
    list.push_back(std::move(row));
  }
  return Json{{"rows", list}, {"total", total}};
}

Status MoveRunStatus(OpContext& ctx, Run& run, const std::string& to, const std::string& reason) {
  const std::string from = run.status;
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(run.machine));
  RETURN_IF_ERROR(machine->Check(from, to, ctx.transition()));
  run.status = to;
  return AppendEvent(ctx, {.run_id = run.id,
                           .kind = "run.status",
                           .summary = from + " -> " + to + (reason.empty() ? "" : ": " + reason),
                           .payload = {{"from", from}, {"to", to}, {"reason", reason}}})
      .status();
}

Result<Json> SetRunStatus(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadForUpdate(ctx, in));
  RETURN_IF_ERROR(MoveRunStatus(ctx, run, in.at("status").get<std::string>(), in.value("reason", "")));
  RETURN_IF_ERROR(StoreRun(ctx, run));
  return AnswerRun(ctx.txn, run.id);
}

Result<Json> PatchRunContext(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Run run, LoadForUpdate(ctx, in));
  const Json& patch = in.at("patch");
  Json keys = Json::array();
  // Shallow merge, as the graph engine merges a node's partial state: each
  // top-level key replaces the old value whole (null included).
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    run.context[it.key()] = it.value();
    keys.push_back(it.key());
  }
  RETURN_IF_ERROR(StoreRun(ctx, run));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run.id,
                                    .kind = "run.context",
                                    .summary = "context keys set: " + keys.dump(),
                                    .payload = {{"patch", patch}}})
                      .status());
  return AnswerRun(ctx.txn, run.id);
}

Result<Json> AddRunProgress(OpContext& ctx, const Json& in) {
  // Progress is the hottest write agents make: bump the version in place
  // instead of loading and rewriting the whole run.
  const std::string id = in.at("id").get<std::string>();
  std::optional<int64_t> expect_version;
  if (in.contains("expect_version")) expect_version = in["expect_version"].get<int64_t>();
  ASSIGN_OR_RETURN(std::optional<int64_t> bumped,
                   BumpRunVersion(ctx.txn, id, ctx.now, expect_version));
  if (!bumped) {
    // Either no such run (NotFound) or it moved (Aborted): say which.
    ASSIGN_OR_RETURN(Run run, LoadRun(ctx.txn, id));
    RETURN_IF_ERROR(CheckExpectedVersion(in, "run", id, run.version));
    return InternalError("run " + id + ": version update matched no row");
  }
  const int64_t version = *bumped;
  const std::string description = in.at("description").get<std::string>();
  // Progress is the caller's, as in sgai: an agent writes its own entries.
  const std::string& agent = ctx.actor.id;
  ASSIGN_OR_RETURN(int64_t seq,
                   AppendEvent(ctx, {.run_id = id,
                                     .kind = "run.progress",
                                     .summary = description,
                                     .payload = {{"agent", agent},
                                                 {"description", description}}}));
  return Json{{"run_id", id},
              {"seq", seq},
              {"version", version},
              {"progress", {{"timestamp", ctx.now}, {"agent", agent}, {"description", description}}}};
}

}  // namespace baton
