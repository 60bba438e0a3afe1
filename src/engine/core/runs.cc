#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "model/profile.h"
#include "util/clock.h"

namespace baton {
namespace {

constexpr char kRunColumns[] =
    "id, project_id, profile, machine, status, title, cursor, cursor_index, "
    "context, meta, version, created_at, updated_at";

Json ParseStored(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? Json::object() : j;
}

Json RunRowToJson(const Row& r) {
  return Json{{"id", r.Str(0)},
              {"project_id", r.IsNull(1) ? Json() : Json(r.Str(1))},
              {"profile", r.Str(2)},
              {"machine", r.Str(3)},
              {"status", r.Str(4)},
              {"title", r.Str(5)},
              {"cursor", r.IsNull(6) ? Json() : Json(r.Str(6))},
              {"cursor_index", r.IsNull(7) ? Json() : Json(r.Int(7))},
              {"context", ParseStored(r.Str(8))},
              {"meta", ParseStored(r.Str(9))},
              {"version", r.Int(10)},
              {"created_at", r.Str(11)},
              {"updated_at", r.Str(12)}};
}


// Loads the run named by in["id"] and checks expect_version.
Result<Json> LoadForUpdate(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(Json run, LoadRun(ctx.txn, id));
  RETURN_IF_ERROR(CheckExpectedVersion(in, "run", id, run["version"].get<int64_t>()));
  return run;
}

}  // namespace

Status StoreRun(OpContext& ctx, const Json& run) {
  return ctx.txn
      .Exec("UPDATE runs SET status = ?, context = ?, meta = ?, "
            "version = version + 1, updated_at = ? WHERE id = ?",
            {SqlText(run["status"].get<std::string>()),
             SqlText(CanonicalJson(run["context"])),
             SqlText(CanonicalJson(run["meta"])), SqlText(ctx.now),
             SqlText(run["id"].get<std::string>())})
      .status();
}

Result<Json> LoadRun(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?",
                             {SqlText(id)}));
  if (rows.empty()) return NotFoundError("run: no run with id \"" + id + "\"");
  return RunRowToJson(rows[0]);
}

Result<Json> CreateRun(OpContext& ctx, const Json& in) {
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
  Status inserted =
      ctx.txn
          .Exec("INSERT INTO runs (id, project_id, profile, machine, status, title, "
                "context, meta, version, created_at, updated_at) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
                {SqlText(id), SqlTextOrNull(project_id), SqlText(profile->name),
                 SqlText(machine_name), SqlText(status), SqlText(title),
                 SqlText(CanonicalJson(context)), SqlText(CanonicalJson(meta)),
                 SqlText(ctx.now), SqlText(ctx.now)})
          .status();
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
  ASSIGN_OR_RETURN(Json run, LoadRun(ctx.txn, id));
  ASSIGN_OR_RETURN(std::vector<Row> counts,
                   ctx.txn.Query("SELECT status, COUNT(*) FROM tasks WHERE run_id = ? "
                                 "GROUP BY status ORDER BY status",
                                 {SqlText(id)}));
  Json tasks = Json::object();
  for (const Row& r : counts) tasks[r.Str(0)] = r.Int(1);
  run["task_counts"] = tasks;
  // Every note, or the newest "progress_limit": the dashboard's run page
  // re-reads this after every change, and a long run has thousands
  // (ledger.events pages back through them).
  ASSIGN_OR_RETURN(Row count, ctx.txn.QueryOne("SELECT COUNT(*) FROM events WHERE run_id = ? AND "
                                               "kind = 'run.progress'",
                                               {SqlText(id)}, "progress count"));
  run["progress_count"] = count.Int(0);
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
  std::string sql = std::string("SELECT ") + kRunColumns + " FROM runs WHERE 1 = 1";
  std::vector<SqlValue> params;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(std::string project_id,
                     ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
    sql += " AND project_id = ?";
    params.push_back(SqlText(project_id));
  }
  if (in.contains("profile")) {
    sql += " AND profile = ?";
    params.push_back(SqlText(in["profile"].get<std::string>()));
  }
  if (in.contains("text")) {
    // Words in the id or the title, case aside (LIKE's wildcards escaped).
    std::string pattern;
    for (char c : in["text"].get<std::string>()) {
      if (c == '%' || c == '_' || c == '\\') pattern += '\\';
      pattern += c;
    }
    sql += " AND (id LIKE ? ESCAPE '\\' OR title LIKE ? ESCAPE '\\')";
    params.push_back(SqlText("%" + pattern + "%"));
    params.push_back(SqlText("%" + pattern + "%"));
  }
  Json out = Json::object();
  if (in.value("counts", false)) {
    // By status over the other filters, so each status's share shows.
    ASSIGN_OR_RETURN(std::vector<Row> counted,
                     ctx.txn.Query("SELECT status, COUNT(*) FROM (" + sql + ") GROUP BY status",
                                   params));
    out["counts"] = Json::object();
    for (const Row& r : counted) out["counts"][r.Str(0)] = r.Int(1);
  }
  if (in.contains("status")) {
    sql += " AND status = ?";
    params.push_back(SqlText(in["status"].get<std::string>()));
  }
  // Times are milliseconds: changes within one are told apart by version.
  sql += in.value("order", "created") == "activity"
             ? " ORDER BY updated_at DESC, version DESC, created_at DESC, id LIMIT ?"
             : " ORDER BY created_at, id LIMIT ?";
  params.push_back(SqlInt(in.value("limit", 1000)));
  ASSIGN_OR_RETURN(std::vector<Row> rows, ctx.txn.Query(sql, params));
  Json list = Json::array();
  for (const Row& r : rows) list.push_back(RunRowToJson(r));
  out["runs"] = list;
  return out;
}

Result<Json> RunUsage(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  RETURN_IF_ERROR(LoadRun(ctx.txn, run_id).status());
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      ctx.txn.Query("SELECT agent, model, COUNT(*), SUM(cost), SUM(input_tokens), "
                    "SUM(output_tokens), SUM(reasoning_tokens), SUM(cache_read_tokens), "
                    "SUM(cache_write_tokens) FROM usage WHERE run_id = ? GROUP BY agent, model "
                    "ORDER BY agent, model",
                    {SqlText(run_id)}));
  constexpr const char* kSums[] = {"input_tokens", "output_tokens", "reasoning_tokens",
                                   "cache_read_tokens", "cache_write_tokens"};
  Json total = {{"steps", 0}, {"cost", 0.0}};
  for (const char* k : kSums) total[k] = 0;
  Json list = Json::array();
  for (const Row& r : rows) {
    Json row = {{"agent", r.Str(0)}, {"model", r.Str(1)}, {"steps", r.Int(2)}, {"cost", r.Real(3)}};
    for (size_t i = 0; i < std::size(kSums); ++i) row[kSums[i]] = r.Int(4 + i);
    total["steps"] = total["steps"].get<int64_t>() + row["steps"].get<int64_t>();
    total["cost"] = total["cost"].get<double>() + row["cost"].get<double>();
    for (const char* k : kSums) total[k] = total[k].get<int64_t>() + row[k].get<int64_t>();
    list.push_back(std::move(row));
  }
  return Json{{"rows", list}, {"total", total}};
}

Status MoveRunStatus(OpContext& ctx, Json& run, const std::string& to, const std::string& reason) {
  const std::string from = run["status"].get<std::string>();
  ASSIGN_OR_RETURN(const Machine* machine, ctx.machines.Get(run["machine"].get<std::string>()));
  RETURN_IF_ERROR(machine->Check(from, to, ctx.transition()));
  run["status"] = to;
  return AppendEvent(ctx, {.run_id = run["id"].get<std::string>(),
                           .kind = "run.status",
                           .summary = from + " -> " + to + (reason.empty() ? "" : ": " + reason),
                           .payload = {{"from", from}, {"to", to}, {"reason", reason}}})
      .status();
}

Result<Json> SetRunStatus(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Json run, LoadForUpdate(ctx, in));
  RETURN_IF_ERROR(MoveRunStatus(ctx, run, in.at("status").get<std::string>(), in.value("reason", "")));
  RETURN_IF_ERROR(StoreRun(ctx, run));
  return LoadRun(ctx.txn, run["id"].get<std::string>());
}

Result<Json> PatchRunContext(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Json run, LoadForUpdate(ctx, in));
  const Json& patch = in.at("patch");
  Json keys = Json::array();
  // Shallow merge, as the graph engine merges a node's partial state: each
  // top-level key replaces the old value whole (null included).
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    run["context"][it.key()] = it.value();
    keys.push_back(it.key());
  }
  RETURN_IF_ERROR(StoreRun(ctx, run));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run["id"].get<std::string>(),
                                    .kind = "run.context",
                                    .summary = "context keys set: " + keys.dump(),
                                    .payload = {{"patch", patch}}})
                      .status());
  return LoadRun(ctx.txn, run["id"].get<std::string>());
}

Result<Json> AddRunProgress(OpContext& ctx, const Json& in) {
  // Progress is the hottest write agents make: bump the version in place
  // instead of loading and rewriting the whole run.
  const std::string id = in.at("id").get<std::string>();
  std::string sql = "UPDATE runs SET version = version + 1, updated_at = ? WHERE id = ?";
  std::vector<SqlValue> params = {SqlText(ctx.now), SqlText(id)};
  if (in.contains("expect_version")) {
    sql += " AND version = ?";
    params.push_back(SqlInt(in["expect_version"].get<int64_t>()));
  }
  sql += " RETURNING version";
  ASSIGN_OR_RETURN(std::vector<Row> rows, ctx.txn.Query(sql, params));
  if (rows.empty()) {
    // Either no such run (NotFound) or it moved (Aborted): say which.
    ASSIGN_OR_RETURN(Json run, LoadRun(ctx.txn, id));
    RETURN_IF_ERROR(CheckExpectedVersion(in, "run", id, run["version"].get<int64_t>()));
    return InternalError("run " + id + ": version update matched no row");
  }
  const int64_t version = rows[0].Int(0);
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
