#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "model/project.h"
#include "store/tables/project_table.h"
#include "util/clock.h"

namespace baton {

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
  ASSIGN_OR_RETURN(std::optional<std::string> id, FindProjectId(txn, id_or_name));
  if (!id) return NotFoundError("project: no project with id or name \"" + id_or_name + "\"");
  return *id;
}

Result<Json> CreateProject(OpContext& ctx, const Json& in) {
  const std::string id = in.value("id", NewId("proj"));
  const std::string name = in.at("name").get<std::string>();
  const std::string repo = in.value("repo_path", "");
  const std::string mode = in.value("autonomy_mode", "autonomous");
  const Json meta = in.value("meta", Json::object());
  ASSIGN_OR_RETURN(std::optional<std::string> taken, FindProjectNamedOrWithId(ctx.txn, name, id));
  if (taken) {
    return AlreadyExistsError("project: a project named \"" + name + "\" (or with id " +
                              id + ") already exists: " + *taken);
  }
  RETURN_IF_ERROR(InsertProjectRow(ctx.txn, Project{.id = id,
                                                    .name = name,
                                                    .repo_path = repo.empty()
                                                                     ? std::nullopt
                                                                     : std::optional(repo),
                                                    .autonomy_mode = mode,
                                                    .meta = meta,
                                                    .created_at = ctx.now,
                                                    .updated_at = ctx.now}));
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "project.created",
                                    .summary = "project " + name + " created",
                                    .payload = {{"project_id", id},
                                                {"name", name},
                                                {"autonomy_mode", mode}}})
                      .status());
  return ShowProject(ctx, Json{{"id", id}});
}

Result<Json> ListProjects(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(std::vector<Project> projects, ListProjectRows(ctx.txn));
  Json list = Json::array();
  for (const Project& p : projects) list.push_back(ProjectToJson(p));
  return Json{{"projects", list}};
}

Result<Json> ShowProject(OpContext& ctx, const Json& in) {
  const std::string key = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(std::string id, ResolveProjectId(ctx.txn, key));
  ASSIGN_OR_RETURN(Project project, LoadProjectRow(ctx.txn, id));
  return ProjectToJson(project);
}

}  // namespace baton
