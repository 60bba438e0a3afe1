// Seed-file mirrors (imports.h, docs/formats.md "Mirrors"): binding a file
// to a run, and recording how its writes went. Api::RunWrite writes them.

#include <filesystem>

#include "engine/core/core_services.h"
#include "engine/interchange/imports.h"
#include "engine/ledger/ledger.h"
#include "engine/ledger/witness.h"

namespace baton {
namespace {

Json MirrorRowToJson(const Row& r) {
  return Json{{"path", r.Str(0)},
              {"run_id", r.Str(1)},
              {"format", r.Str(2)},
              {"ok", r.IsNull(3)},
              {"last_error", RowTextOrNull(r, 3)},
              {"failed_at", RowTextOrNull(r, 4)},
              {"created_at", r.Str(5)}};
}

// One spelling per file: "/a/./b/../c.json" and "/a/c.json" are one mirror.
std::string NormalPath(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

constexpr char kMirrorColumns[] = "path, run_id, format, last_error, failed_at, created_at";

Result<std::vector<Row>> MirrorRow(Txn& txn, const std::string& path) {
  return txn.Query(std::string("SELECT ") + kMirrorColumns + " FROM mirrors WHERE path = ?",
                   {SqlText(path)});
}

}  // namespace

Result<Json> BindMirror(OpContext& ctx, const Json& in) {
  namespace fs = std::filesystem;
  const std::string run_id = in.at("run").get<std::string>();
  const std::string format = in.at("format").get<std::string>();
  // One spelling per file, with no symlink in it: what is bound is what the
  // writer opens again, component by component, at each write.
  ASSIGN_OR_RETURN(const std::string path, ctx.ScopedPath("path", in.at("path").get<std::string>()));
  const fs::path p(path);
  std::error_code ec;
  if (!fs::is_directory(p.parent_path(), ec)) {
    return InvalidArgumentError("path: the folder " + p.parent_path().string() +
                                " does not exist");
  }
  if (fs::is_directory(p, ec)) return InvalidArgumentError("path: " + path + " is a folder");
  ASSIGN_OR_RETURN(std::vector<Row> bound, MirrorRow(ctx.txn, path));
  // A mirror replaces its file at every commit with text the run controls:
  // a file baton did not write (a script, a source file, .git/config) is
  // replaced only for a caller who may name any path. A new file, or one a
  // mirror wrote (it carries the ledger head), is baton's to write.
  if (bound.empty() && fs::exists(fs::symlink_status(p, ec)) && !ReadMirrorHead(path) &&
      !ctx.actor.Has(kGrantPaths)) {
    return PermissionDeniedError("path: " + path +
                                 " exists and was not written by baton; a mirror would replace it "
                                 "at every commit, which needs the grant \"paths\" (bind a new "
                                 "file, or ask the human)");
  }
  ASSIGN_OR_RETURN(Json run, LoadRun(ctx.txn, run_id));
  // A format that cannot write this run is refused now, not at every commit.
  ASSIGN_OR_RETURN(FormatOutput out, RenderRun(ctx.txn, run_id, format));
  ASSIGN_OR_RETURN(std::vector<Row> held, MirrorRow(ctx.txn, path));
  if (!held.empty() && held[0].Str(1) != run_id) {
    return AlreadyExistsError("path: " + path + " already mirrors run " + held[0].Str(1) +
                              "; unbind it first");
  }
  RETURN_IF_ERROR(ctx.txn
                      .Exec("INSERT INTO mirrors (path, run_id, format, created_at) "
                            "VALUES (?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET format = "
                            "excluded.format, last_error = NULL, failed_at = NULL",
                            {SqlText(path), SqlText(run_id), SqlText(format), SqlText(ctx.now)})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "mirror.bound",
                                    .summary = "mirrored as " + format + " to " + path,
                                    .payload = {{"path", path},
                                                {"format", format},
                                                {"notes", out.notes}},
                                    .files = Json::array({path})})
                      .status());
  ASSIGN_OR_RETURN(std::vector<Row> row, MirrorRow(ctx.txn, path));
  Json result = MirrorRowToJson(row.at(0));
  result["notes"] = out.notes;
  return result;
}

Result<Json> UnbindMirror(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  RETURN_IF_ERROR(LoadRun(ctx.txn, run_id).status());
  std::string sql = std::string("SELECT ") + kMirrorColumns + " FROM mirrors WHERE run_id = ?";
  std::vector<SqlValue> params = {SqlText(run_id)};
  std::string path;
  if (in.contains("path")) {
    // Resolved as bind resolved it, so any spelling of a bound file finds
    // it; the scope is checked as for bind (no path outside it is bound).
    ASSIGN_OR_RETURN(path, ctx.ScopedPath("path", in["path"].get<std::string>()));
  }
  if (!path.empty()) {
    sql += " AND path = ?";
    params.push_back(SqlText(path));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, ctx.txn.Query(sql, params));
  if (rows.empty()) {
    return NotFoundError("run " + run_id + " has no mirror" +
                         (path.empty() ? "" : " at " + path));
  }
  Json removed = Json::array();
  for (const Row& r : rows) {
    RETURN_IF_ERROR(
        ctx.txn.Exec("DELETE FROM mirrors WHERE path = ?", {SqlText(r.Str(0))}).status());
    removed.push_back(MirrorRowToJson(r));
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                      .kind = "mirror.unbound",
                                      .summary = "no longer mirrored to " + r.Str(0),
                                      .payload = {{"path", r.Str(0)}, {"format", r.Str(2)}}})
                        .status());
  }
  return Json{{"run_id", run_id}, {"removed", removed}};
}

Result<Json> ListMirrors(OpContext& ctx, const Json& in) {
  std::string sql = std::string("SELECT ") + kMirrorColumns + " FROM mirrors";
  std::vector<SqlValue> params;
  if (in.contains("run")) {
    sql += " WHERE run_id = ?";
    params.push_back(SqlText(in["run"].get<std::string>()));
  }
  sql += " ORDER BY created_at, path";
  ASSIGN_OR_RETURN(std::vector<Row> rows, ctx.txn.Query(sql, params));
  Json mirrors = Json::array();
  for (const Row& r : rows) mirrors.push_back(MirrorRowToJson(r));
  return Json{{"mirrors", mirrors}};
}

Result<Json> ReportMirror(OpContext& ctx, const Json& in) {
  const std::string path = NormalPath(in.at("path").get<std::string>());
  const std::string error = in.value("error", "");
  ASSIGN_OR_RETURN(std::vector<Row> rows, MirrorRow(ctx.txn, path));
  if (rows.empty()) return Json{{"path", path}, {"changed", false}};  // unbound meanwhile
  const Row& r = rows[0];
  const std::string run_id = r.Str(1);
  // A report about a binding that has changed since (another run or
  // format at the same path) is not this binding's.
  if ((in.contains("run") && in["run"] != run_id) ||
      (in.contains("format") && in["format"] != r.Str(2))) {
    return Json{{"path", path}, {"changed", false}};
  }
  const std::string previous = r.IsNull(3) ? "" : r.Str(3);
  if (error == previous) return Json{{"path", path}, {"changed", false}};
  if (error.empty()) {
    RETURN_IF_ERROR(ctx.txn
                        .Exec("UPDATE mirrors SET last_error = NULL, failed_at = NULL "
                              "WHERE path = ?",
                              {SqlText(path)})
                        .status());
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                      .kind = "mirror.recovered",
                                      .summary = "mirror " + path + " written again",
                                      .payload = {{"path", path}, {"format", r.Str(2)}},
                                      .files = Json::array({path})})
                        .status());
  } else {
    RETURN_IF_ERROR(ctx.txn
                        .Exec("UPDATE mirrors SET last_error = ?, failed_at = ? WHERE path = ?",
                              {SqlText(error), SqlText(ctx.now), SqlText(path)})
                        .status());
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                      .kind = "mirror.failed",
                                      .summary = "mirror " + path + " not written: " + error,
                                      .payload = {{"path", path},
                                                  {"format", r.Str(2)},
                                                  {"error", error}},
                                      .files = Json::array({path})})
                        .status());
  }
  return Json{{"path", path}, {"changed", true}};
}

Result<std::vector<MirrorTarget>> MirrorsOf(Txn& txn, const std::vector<std::string>& run_ids) {
  std::vector<MirrorTarget> out;
  if (run_ids.empty()) return out;
  std::string sql = "SELECT path, run_id, format, last_error FROM mirrors WHERE run_id IN (";
  std::vector<SqlValue> params;
  for (size_t i = 0; i < run_ids.size(); ++i) {
    sql += i == 0 ? "?" : ", ?";
    params.push_back(SqlText(run_ids[i]));
  }
  sql += ") ORDER BY path";
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  for (const Row& r : rows) {
    out.push_back({.run_id = r.Str(1),
                   .path = r.Str(0),
                   .format = r.Str(2),
                   .last_error = r.IsNull(3) ? "" : r.Str(3)});
  }
  return out;
}

Result<std::optional<MirrorTarget>> FindMirror(Txn& txn, const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, MirrorRow(txn, path));
  if (rows.empty()) return std::optional<MirrorTarget>();
  const Row& r = rows[0];
  return std::optional<MirrorTarget>(MirrorTarget{.run_id = r.Str(1),
                                                  .path = r.Str(0),
                                                  .format = r.Str(2),
                                                  .last_error = r.IsNull(3) ? "" : r.Str(3)});
}

Result<std::vector<std::string>> MirrorPaths(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT path FROM mirrors ORDER BY path", {}));
  std::vector<std::string> paths;
  for (const Row& r : rows) paths.push_back(r.Str(0));
  return paths;
}

}  // namespace baton
