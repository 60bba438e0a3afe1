// Genie's wishes: execution groups with dependencies, from WISH.md or JSON.

#include "baton/error_table.h"
#include "engine/profiles/genie/wishes.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

Json WishOut() {
  return s::Entity({{"wish", {{"type", "string"}}},
                    {"run_id", {{"type", "string"}}},
                    {"groups", {{"type", "object"}}},
                    {"createdAt", {{"type", "string"}}},
                    {"updatedAt", {{"type", "string"}}}});
}

Json Slug() { return s::Id("the wish's slug"); }
Json Project() { return s::Id("project id or name (wishes are per project)"); }
Json WishFile() { return s::String("path of a WISH.md", 4096); }
Json Markdown() { return s::String("WISH.md text", 1 << 20); }

Json GroupIn(std::initializer_list<std::pair<const char*, Json>> extra) {
  Json in = s::Input({{"slug", Slug()}, {"group", s::String("group name (\"1\", \"A\", ...)", 200)},
                      {"project", Project()}},
                     {"slug", "group"});
  for (const auto& [name, schema] : extra) in["properties"][name] = schema;
  return in;
}

// Genie's human report: "FILE:LINE:COL: error [rule] (fixable) — message",
// then the counts; the repaired text after it with fix.
std::string RenderLintReport(const Json& out) {
  const std::string file = out.value("file", "markdown");
  std::string text;
  for (const Json& v : out["violations"]) {
    text += file + ":" + std::to_string(v.value("line", 0)) + ":" +
            std::to_string(v.value("column", 0)) + ": " + v.value("severity", "") + " [" +
            v.value("rule", "") + "]" + (v.value("fixable", false) ? " (fixable)" : "") +
            " \u2014 " + v.value("message", "") + "\n";
  }
  const Json& sum = out["summary"];
  if (sum.value("total", 0) == 0) {
    text += file + ": no violations \u2014 wish is structurally clean\n";
  } else {
    text += "\n" + std::to_string(sum.value("total", 0)) + " violation(s): " +
            std::to_string(sum.value("fixable", 0)) + " fixable, " +
            std::to_string(sum.value("unfixable", 0)) + " unfixable\n";
  }
  if (out.contains("fixed")) text += "\n--- fixed ---\n" + out["fixed"].get<std::string>();
  return text;
}

}  // namespace

Status RegisterWishOps(Registry& r) {
  Json groups = {{"type", "array"},
                 {"maxItems", 1000},
                 {"items",
                  {{"type", "object"},
                   {"properties",
                    {{"name", s::String("group name", 200)},
                     {"title", s::String("group title", 2000)},
                     {"depends_on", {{"type", "array"}, {"items", s::String("group name", 200)}}}}},
                   {"required", {"name"}},
                   {"additionalProperties", false}}}};
  RETURN_IF_ERROR(r.Add({
      .name = "wish.create",
      .summary = "Create a wish from a WISH.md (file or text) or JSON groups; the same structure again returns it",
      .input_schema = s::Input({{"file", WishFile()},
                                {"markdown", Markdown()},
                                {"groups", groups},
                                {"slug", Slug()},
                                {"title", s::String("title (JSON groups)", 2000)},
                                {"project", Project()},
                                {"replace", {{"type", "boolean"},
                                             {"description", "start over when the structure changed "
                                                             "(the old run is kept)"}}}}),
      .output_schema = WishOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .idempotent = true,
      .handler = CreateWish,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "wish.status",
      .summary = "A wish's groups with status, dependsOn, assignee, startedAt and completedAt",
      .input_schema = s::Input({{"slug", Slug()}, {"project", Project()},
                                {"file", WishFile()}, {"markdown", Markdown()}},
                               {"slug"}),
      .output_schema = WishOut(),
      .positional = {"slug"},
      .handler = WishStatus,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "wish.list",
      .summary = "List wishes with their status",
      .input_schema = s::Input({{"project", Project()}}),
      .output_schema = s::ListOf("wishes", WishOut()),
      .handler = ListWishes,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "wish.start_group",
      .summary = "Start a ready group (refused while in progress, done or with unmet dependencies)",
      .input_schema = GroupIn({{"assignee", s::Id("who works on it (default: the caller)")}}),
      .output_schema = WishOut(),
      .mutating = true,
      .positional = {"slug", "group"},
      .handler = StartWishGroup,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "wish.complete_group",
      .summary = "Complete a group (idempotent; a ready group is promoted); dependents become ready",
      .input_schema = GroupIn({{"assignee", s::Id("who finished it, if it was never started")},
                               {"reason", s::String("a note for the ledger", 2000)}}),
      .output_schema = WishOut(),
      .mutating = true,
      .idempotent = true,
      .positional = {"slug", "group"},
      .handler = CompleteWishGroup,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "wish.reset_group",
      .summary = "Return an in-progress group to ready",
      .input_schema = GroupIn({{"reason", s::String("why, for the ledger", 2000)}}),
      .output_schema = WishOut(),
      .mutating = true,
      .positional = {"slug", "group"},
      .handler = ResetWishGroup,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "wish.reset",
      .summary = "Return every in-progress group of a wish to ready",
      .input_schema = s::Input({{"slug", Slug()}, {"project", Project()},
                                {"reason", s::String("why, for the ledger", 2000)}},
                               {"slug"}),
      .output_schema = WishOut(),
      .mutating = true,
      .positional = {"slug"},
      .handler = ResetWish,
  }));
  return r.Add({
      .name = "wish.lint",
      .summary = "Genie's validation report of a WISH.md; with fix, the repaired text",
      .input_schema = s::Input({{"file", WishFile()},
                                {"markdown", Markdown()},
                                {"fix", {{"type", "boolean"},
                                         {"description", "also return the text with fixable violations repaired"}}},
                                {"allow_todo_placeholders",
                                 {{"type", "boolean"},
                                  {"description", "do not report <TODO> placeholders (Genie's --allow-todo-placeholders)"}}}}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"summary", {{"type", "object"}}},
                                        {"violations", {{"type", "array"}}}}},
                        {"required", {"summary", "violations"}}},
      .positional = {"file"},
      .handler = LintWish,
      .render_text = RenderLintReport,
      .exit_code = [](const Json& out) {
        return out["summary"].value("total", 0) > 0 ? kLintFoundViolationsExitCode : 0;
      },
  });
}

}  // namespace baton
