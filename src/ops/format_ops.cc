// Seed formats as operations (docs/formats.md): run.import, run.export and
// the mirror.* group.

#include "engine/interchange/imports.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

Json Str() { return {{"type", "string"}}; }

Json FormatName() {
  Json names = Json::array();
  std::string help = "the seed format:";
  for (const Format& f : AllFormats()) {
    names.push_back(f.name);
    help += std::string(" ") + f.name + " (" + f.file + ")";
  }
  return {{"type", "string"}, {"enum", names}, {"description", help}};
}

Json Notes() { return {{"type", "array"}, {"items", Str()}}; }

Json MirrorOut() {
  return s::Entity({{"path", Str()},
                    {"run_id", Str()},
                    {"format", Str()},
                    {"ok", {{"type", "boolean"}}},
                    {"last_error", s::Nullable("string")},
                    {"failed_at", s::Nullable("string")},
                    {"created_at", Str()}});
}

Json Path() {
  return s::Path("the mirror file's absolute path (the CLI makes a relative one absolute); "
                 "under the server's roots, never the store's own files");
}

}  // namespace

Status RegisterFormatOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "run.import",
      .summary = "Create a run, or update one, from a seed system's state file (sgai, "
                 "Genie, @sys/graph, Stigmergy, Sinfonia)",
      .input_schema = s::Input(
          {{"format", FormatName()},
           // No maxLength: the handler's size check names the file (kMaxImportBytes).
           {"content", {{"type", "string"},
                        {"description", "the file's text, at most 32 MiB (`baton import` reads FILE)"}}},
           {"source", s::String("the file's name, for messages and the ledger", 4096)},
           {"envelopes",
            {{"type", "array"},
             {"maxItems", 10000},
             {"description",
              "sinfonia only: the session's hand-off envelopes, {name, content} each "
              "(`baton import --format sinfonia FOLDER` reads them)"},
             {"items", s::Input({{"name", s::String("the envelope's file name", 4096)},
                                 {"content", {{"type", "string"},
                                              {"description", "its text, at most 1 MiB"}}}},
                                {"name", "content"})}}},
           {"run", s::Id("update this run instead of creating one")},
           {"project", s::Id("the new run's project (id or name)")}},
          {"format", "content"}),
      .output_schema = s::Entity({{"run_id", Str()},
                                  {"created", {{"type", "boolean"}}},
                                  {"format", Str()},
                                  {"status", Str()},
                                  {"counts", {{"type", "object"}}},
                                  {"notes", Notes()}}),
      // An import sets a run's status, context and tasks as the file says,
      // past the machines: steering a run, not doing a task.
      .roles = {"human", "coordinator"},
      .mutating = true,
      .handler = ImportRunOp,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "run.export",
      .summary = "A run as a seed system's state file; notes say what the format cannot hold",
      .input_schema = s::Input({{"run", s::Id("the run")}, {"format", FormatName()}},
                               {"run", "format"}),
      .output_schema = s::Entity(
          {{"run_id", Str()}, {"format", Str()}, {"content", Str()}, {"notes", Notes()}}),
      .positional = {"run"},
      .handler = ExportRunOp,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mirror.bind",
      .summary = "Keep a seed file up to date: rewritten atomically after every commit that "
                 "touches the run",
      .input_schema = s::Input(
          {{"run", s::Id("the run")}, {"format", FormatName()}, {"path", Path()}},
          {"run", "format", "path"}),
      .output_schema = MirrorOut(),
      // A mirror writes run-controlled text to a file at every commit: the
      // people who steer runs choose where (docs/security-paths.md).
      .roles = {"human", "coordinator"},
      .mutating = true,
      .idempotent = true,
      .destructive = true,
      .handler = BindMirror,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mirror.unbind",
      .summary = "Stop mirroring a run (the file stays as last written)",
      .input_schema = s::Input({{"run", s::Id("the run")}, {"path", Path()}}, {"run"}),
      .output_schema = s::Entity({{"run_id", Str()}, {"removed", {{"type", "array"}}}}),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .handler = UnbindMirror,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "mirror.list",
      .summary = "Mirrors, with the error of any whose last write failed",
      .input_schema = s::Input({{"run", s::Id("only this run's")}}),
      .output_schema = s::ListOf("mirrors", MirrorOut()),
      .handler = ListMirrors,
  }));
  return r.Add({
      .name = "mirror.report",
      .summary = "Record a mirror write's outcome (baton itself calls it after writing)",
      .input_schema = s::Input(
          {{"path", Path()},
           {"run", s::Id("the run the write was for")},
           {"format", FormatName()},
           {"error", s::String("why the write failed; empty: it succeeded")}},
          {"path"}),
      .output_schema = s::Entity({{"path", Str()}, {"changed", {{"type", "boolean"}}}}),
      .roles = {"admin"},
      .mutating = true,
      .handler = ReportMirror,
  });
}

}  // namespace baton
