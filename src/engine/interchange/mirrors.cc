// Seed-file mirrors (imports.h, docs/formats.md "Mirrors"): binding a file
// to a run, and recording how its writes went. Api::RunWrite writes them.

#include <filesystem>

#include "engine/core/core_services.h"
#include "engine/interchange/imports.h"
#include "engine/ledger/ledger.h"
#include "engine/ledger/witness.h"
#include "store/tables/event_table.h"
#include "store/tables/mirror_table.h"
#include "util/json_or_null.h"

namespace baton {
namespace {

Json MirrorToJson(const MirrorRow& m) {
  return Json{{"path", m.path},
              {"run_id", m.run_id},
              {"format", m.format},
              {"ok", !m.last_error.has_value()},
              {"last_error", OrNull(m.last_error)},
              {"failed_at", OrNull(m.failed_at)},
              {"created_at", m.created_at}};
}

MirrorTarget TargetOf(const MirrorRow& m) {
  return MirrorTarget{.run_id = m.run_id,
                      .path = m.path,
                      .format = m.format,
                      .last_error = m.last_error.value_or("")};
}

// One spelling per file: "/a/./b/../c.json" and "/a/c.json" are one mirror.
std::string NormalPath(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
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
  ASSIGN_OR_RETURN(std::optional<MirrorRow> bound, LoadMirrorRow(ctx.txn, path));
  // A mirror replaces its file at every commit with text the run controls:
  // a file baton did not write (a script, a source file, .git/config) is
  // replaced only for a caller who may name any path. A new file, or one a
  // mirror wrote (it carries the ledger head), is baton's to write.
  if (!bound && fs::exists(fs::symlink_status(p, ec)) && !ReadMirrorHead(path) &&
      !ctx.actor.Has(kGrantPaths)) {
    return PermissionDeniedError("path: " + path +
                                 " exists and was not written by baton; a mirror would replace it "
                                 "at every commit, which needs the grant \"paths\" (bind a new "
                                 "file, or ask the human)");
  }
  RETURN_IF_ERROR(LoadRun(ctx.txn, run_id).status());
  // A format that cannot write this run is refused now, not at every commit.
  ASSIGN_OR_RETURN(FormatOutput out, RenderRun(ctx.txn, run_id, format));
  ASSIGN_OR_RETURN(std::optional<MirrorRow> held, LoadMirrorRow(ctx.txn, path));
  if (held && held->run_id != run_id) {
    return AlreadyExistsError("path: " + path + " already mirrors run " + held->run_id +
                              "; unbind it first");
  }
  RETURN_IF_ERROR(UpsertMirrorRow(ctx.txn, path, run_id, format, ctx.now));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "mirror.bound",
                                    .summary = "mirrored as " + format + " to " + path,
                                    .payload = {{"path", path},
                                                {"format", format},
                                                {"notes", out.notes}},
                                    .files = Json::array({path})})
                      .status());
  ASSIGN_OR_RETURN(std::optional<MirrorRow> row, LoadMirrorRow(ctx.txn, path));
  if (!row) return InternalError("mirror: " + path + " is not bound after binding it");
  Json result = MirrorToJson(*row);
  result["notes"] = out.notes;
  return result;
}

Result<Json> UnbindMirror(OpContext& ctx, const Json& in) {
  const std::string run_id = in.at("run").get<std::string>();
  RETURN_IF_ERROR(LoadRun(ctx.txn, run_id).status());
  std::string path;
  if (in.contains("path")) {
    // Resolved as bind resolved it, so any spelling of a bound file finds
    // it; the scope is checked as for bind (no path outside it is bound).
    ASSIGN_OR_RETURN(path, ctx.ScopedPath("path", in["path"].get<std::string>()));
  }
  ASSIGN_OR_RETURN(
      std::vector<MirrorRow> rows,
      ListRunMirrorRows(ctx.txn, run_id, path.empty() ? std::nullopt : std::optional(path)));
  if (rows.empty()) {
    return NotFoundError("run " + run_id + " has no mirror" +
                         (path.empty() ? "" : " at " + path));
  }
  Json removed = Json::array();
  for (const MirrorRow& m : rows) {
    RETURN_IF_ERROR(DeleteMirrorRow(ctx.txn, m.path));
    removed.push_back(MirrorToJson(m));
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                      .kind = "mirror.unbound",
                                      .summary = "no longer mirrored to " + m.path,
                                      .payload = {{"path", m.path}, {"format", m.format}}})
                        .status());
  }
  return Json{{"run_id", run_id}, {"removed", removed}};
}

Result<Json> ListMirrors(OpContext& ctx, const Json& in) {
  std::optional<std::string> run_id;
  if (in.contains("run")) run_id = in["run"].get<std::string>();
  ASSIGN_OR_RETURN(std::vector<MirrorRow> rows, ListMirrorRows(ctx.txn, run_id));
  Json mirrors = Json::array();
  for (const MirrorRow& m : rows) mirrors.push_back(MirrorToJson(m));
  return Json{{"mirrors", mirrors}};
}

Result<Json> ReportMirror(OpContext& ctx, const Json& in) {
  const std::string path = NormalPath(in.at("path").get<std::string>());
  const std::string error = in.value("error", "");
  ASSIGN_OR_RETURN(std::optional<MirrorRow> bound, LoadMirrorRow(ctx.txn, path));
  if (!bound) return Json{{"path", path}, {"changed", false}};  // unbound meanwhile
  const MirrorRow& m = *bound;
  const std::string run_id = m.run_id;
  // A report about a binding that has changed since (another run or
  // format at the same path) is not this binding's.
  if ((in.contains("run") && in["run"] != run_id) ||
      (in.contains("format") && in["format"] != m.format)) {
    return Json{{"path", path}, {"changed", false}};
  }
  const std::string previous = m.last_error.value_or("");
  if (error == previous) return Json{{"path", path}, {"changed", false}};
  if (error.empty()) {
    RETURN_IF_ERROR(ClearMirrorError(ctx.txn, path));
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                      .kind = "mirror.recovered",
                                      .summary = "mirror " + path + " written again",
                                      .payload = {{"path", path}, {"format", m.format}},
                                      .files = Json::array({path})})
                        .status());
  } else {
    RETURN_IF_ERROR(SetMirrorError(ctx.txn, path, error, ctx.now));
    RETURN_IF_ERROR(
        AppendEvent(ctx, {.run_id = run_id,
                          .kind = "mirror.failed",
                          .summary = "mirror " + path + " not written: " + error,
                          .payload = {{"path", path}, {"format", m.format}, {"error", error}},
                          .files = Json::array({path})})
            .status());
  }
  return Json{{"path", path}, {"changed", true}};
}

Result<std::vector<MirrorTarget>> MirrorsOf(Txn& txn, const std::vector<std::string>& run_ids) {
  ASSIGN_OR_RETURN(std::vector<MirrorRow> rows, ListMirrorRowsOfRuns(txn, run_ids));
  std::vector<MirrorTarget> out;
  out.reserve(rows.size());
  for (const MirrorRow& m : rows) out.push_back(TargetOf(m));
  return out;
}

Result<std::optional<MirrorTarget>> FindMirror(Txn& txn, const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<MirrorRow> m, LoadMirrorRow(txn, path));
  if (!m) return std::optional<MirrorTarget>();
  return std::optional<MirrorTarget>(TargetOf(*m));
}

Result<std::vector<std::string>> MirrorPaths(Txn& txn) { return ListMirrorPaths(txn); }

namespace {

Result<bool> HeadIsOurs(Txn& txn, const Witness& seen) {
  ASSIGN_OR_RETURN(std::optional<std::string> hash, FindEventHash(txn, seen.head.seq));
  return hash && *hash == seen.head.hash;
}

}  // namespace

Result<std::vector<MirrorTarget>> MirrorsBehind(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<MirrorRow> rows, ListMirrorRows(txn, std::nullopt));
  std::vector<MirrorTarget> out;
  for (const MirrorRow& m : rows) {
    ASSIGN_OR_RETURN(int64_t newest, LastMirroredEventSeq(txn, m.run_id));
    const std::optional<Witness> seen = ReadMirrorHead(m.path);
    bool ours = false;
    if (seen && seen->head.seq >= newest) {
      ASSIGN_OR_RETURN(ours, HeadIsOurs(txn, *seen));
    }
    if (!ours) out.push_back(TargetOf(m));
  }
  return out;
}

Result<bool> MirrorHeadIsOurs(Txn& txn, const std::string& path) {
  const std::optional<Witness> seen = ReadMirrorHead(path);
  if (!seen) return false;
  return HeadIsOurs(txn, *seen);
}

}  // namespace baton
