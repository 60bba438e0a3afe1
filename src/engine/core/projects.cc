#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "util/clock.h"

namespace baton {
namespace {

constexpr char kProjectColumns[] =
    "id, name, repo_path, autonomy_mode, meta, version, created_at, updated_at";

Json ProjectRowToJson(const Row& r) {
  return Json{{"id", r.Str(0)},
              {"name", r.Str(1)},
              {"repo_path", r.IsNull(2) ? Json() : Json(r.Str(2))},
              {"autonomy_mode", r.Str(3)},
              {"meta", Json::parse(r.Str(4), nullptr, false)},
              {"version", r.Int(5)},
              {"created_at", r.Str(6)},
              {"updated_at", r.Str(7)}};
}

}  // namespace

Status CheckExpectedVersion(const Json& in, std::string_view what,
                            const std::string& id, int64_t version) {
  auto it = in.find("expect_version");
  if (it == in.end() || it->is_null()) return Status();
  const int64_t expected = it->get<int64_t>();
  if (expected == version) return Status();
  return Status(StatusCode::kAborted,
                std::string(what) + " " + id + " is at version " +
                    std::to_string(version) + ", not " + std::to_string(expected) +
                    " (expect_version): it changed since you read it; re-read and retry",
                Json{{"id", id}, {"version", version}, {"expected", expected}});
}

Result<std::string> ResolveProjectId(Txn& txn, const std::string& id_or_name) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id FROM projects WHERE id = ? OR name = ?",
                             {SqlText(id_or_name), SqlText(id_or_name)}));
  if (rows.empty()) {
    return NotFoundError("project: no project with id or name \"" + id_or_name + "\"");
  }
  return rows[0].Str(0);
}

Result<Json> CreateProject(OpContext& ctx, const Json& in) {
  const std::string id = in.value("id", NewId("proj"));
  const std::string name = in.at("name").get<std::string>();
  const std::string repo = in.value("repo_path", "");
  const std::string mode = in.value("autonomy_mode", "autonomous");
  const Json meta = in.value("meta", Json::object());
  ASSIGN_OR_RETURN(std::vector<Row> taken,
                   ctx.txn.Query("SELECT id FROM projects WHERE name = ? OR id = ?",
                                 {SqlText(name), SqlText(id)}));
  if (!taken.empty()) {
    return AlreadyExistsError("project: a project named \"" + name + "\" (or with id " +
                              id + ") already exists: " + taken[0].Str(0));
  }
  RETURN_IF_ERROR(ctx.txn
                      .Exec("INSERT INTO projects (id, name, repo_path, autonomy_mode, "
                            "meta, version, created_at, updated_at) VALUES "
                            "(?, ?, ?, ?, ?, 1, ?, ?)",
                            {SqlText(id), SqlText(name), SqlTextOrNull(repo),
                             SqlText(mode), SqlText(CanonicalJson(meta)),
                             SqlText(ctx.now), SqlText(ctx.now)})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "project.created",
                                    .summary = "project " + name + " created",
                                    .payload = {{"project_id", id},
                                                {"name", name},
                                                {"autonomy_mode", mode}}})
                      .status());
  return ShowProject(ctx, Json{{"id", id}});
}

Result<Json> ListProjects(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   ctx.txn.Query(std::string("SELECT ") + kProjectColumns +
                                     " FROM projects ORDER BY name", {}));
  Json list = Json::array();
  for (const Row& r : rows) list.push_back(ProjectRowToJson(r));
  return Json{{"projects", list}};
}

Result<Json> ShowProject(OpContext& ctx, const Json& in) {
  const std::string key = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(std::string id, ResolveProjectId(ctx.txn, key));
  ASSIGN_OR_RETURN(Row row, ctx.txn.QueryOne(std::string("SELECT ") + kProjectColumns +
                                                 " FROM projects WHERE id = ?",
                                             {SqlText(id)}, "project " + id));
  return ProjectRowToJson(row);
}

}  // namespace baton
