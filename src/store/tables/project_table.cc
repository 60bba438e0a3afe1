#include "store/tables/project_table.h"

#include "store/tables/row_values.h"

namespace baton {
namespace {

Result<std::optional<std::string>> FirstId(Result<std::vector<Row>> rows) {
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<std::string>();
  return std::optional<std::string>((*rows)[0].Str(0));
}

}  // namespace

const char kProjectColumns[] =
    "id, name, repo_path, autonomy_mode, meta, version, created_at, updated_at";

Project ProjectFromRow(const Row& r) {
  return Project{.id = r.Str(0),
                 .name = r.Str(1),
                 .repo_path = TextOrNone(r, 2),
                 .autonomy_mode = r.Str(3),
                 .meta = Json::parse(r.Str(4), nullptr, false),
                 .version = r.Int(5),
                 .created_at = r.Str(6),
                 .updated_at = r.Str(7)};
}

Result<Project> LoadProjectRow(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(Row row, txn.QueryOne(std::string("SELECT ") + kProjectColumns +
                                             " FROM projects WHERE id = ?",
                                         {SqlText(id)}, "project " + id));
  return ProjectFromRow(row);
}

Result<std::vector<Project>> ListProjectRows(Txn& txn) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query(std::string("SELECT ") + kProjectColumns + " FROM projects ORDER BY name", {}));
  std::vector<Project> projects;
  projects.reserve(rows.size());
  for (const Row& r : rows) projects.push_back(ProjectFromRow(r));
  return projects;
}

Result<std::optional<std::string>> FindProjectId(Txn& txn, const std::string& id_or_name) {
  return FirstId(txn.Query("SELECT id FROM projects WHERE id = ? OR name = ?",
                           {SqlText(id_or_name), SqlText(id_or_name)}));
}

Result<std::optional<std::string>> FindProjectNamedOrWithId(Txn& txn, const std::string& name,
                                                            const std::string& id) {
  return FirstId(
      txn.Query("SELECT id FROM projects WHERE name = ? OR id = ?", {SqlText(name), SqlText(id)}));
}

Status InsertProjectRow(Txn& txn, const Project& p) {
  return txn
      .Exec(
          "INSERT INTO projects (id, name, repo_path, autonomy_mode, "
          "meta, version, created_at, updated_at) VALUES "
          "(?, ?, ?, ?, ?, 1, ?, ?)",
          {SqlText(p.id), SqlText(p.name), SqlNullable(p.repo_path),
           SqlText(p.autonomy_mode), SqlText(CanonicalJson(p.meta)), SqlText(p.created_at),
           SqlText(p.updated_at)})
      .status();
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

Result<int64_t> CountAllProjectRows(Txn& txn) {
  // Kept by triggers (migration 12), not counted.
  ASSIGN_OR_RETURN(Row r, txn.QueryOne("SELECT n FROM row_counts WHERE name = 'projects'", {},
                                       "row count of projects"));
  return r.Int(0);
}

}  // namespace baton
