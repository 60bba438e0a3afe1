#include "engine/profiles/genie/wishes.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "engine/core/core_services.h"
#include "engine/core/task_graph.h"
#include "engine/interchange/imports.h"
#include "engine/ledger/ledger.h"
#include "formats/genie_format.h"
#include "model/wish_lint.h"
#include "model/wish_md.h"
#include "store/tables/task_dep_table.h"
#include "store/tables/task_table.h"
#include "store/tables/wish_table.h"
#include "util/sha256.h"

namespace baton {
namespace {

constexpr char kGroupKind[] = "group";

struct StoredWish {
  std::string run_id;
  std::string slug;
  std::string signature;
  std::string wish_file;
  std::string created_at;
};

struct StoredGroup {
  Task task;
  std::string name;  // the task's key
  std::vector<std::string> depends_on;
};

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "(none)" : out;
}

Result<std::string> ProjectKey(OpContext& ctx, const Json& in) {
  if (!in.contains("project")) return std::string();
  return ResolveProjectId(ctx.txn, in["project"].get<std::string>());
}

Result<StoredWish> FindWish(OpContext& ctx, const std::string& project_key,
                            const std::string& slug) {
  ASSIGN_OR_RETURN(std::optional<WishRow> row, FindWishRow(ctx.txn, project_key, slug));
  if (!row) {
    return NotFoundError("slug: no wish \"" + slug + "\"" +
                         (project_key.empty() ? "" : " in project " + project_key) +
                         "; create it with `baton wish create --file WISH.md`");
  }
  return StoredWish{row->run_id, slug, row->signature, row->wish_file, row->created_at};
}

Result<StoredWish> FindWish(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(std::string project_key, ProjectKey(ctx, in));
  return FindWish(ctx, project_key, in.at("slug").get<std::string>());
}

// The wish's groups in position order, with their dependencies by name.
Result<std::vector<StoredGroup>> LoadGroups(OpContext& ctx, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Task> listed,
                   ListTaskRows(ctx.txn, {.run_id = run_id, .kind = kGroupKind, .limit = 100000}));
  std::vector<StoredGroup> groups;
  for (Task& task : listed) {
    if (!task.key) continue;  // a group task made by hand, without a name
    std::string name = *task.key;
    groups.push_back({std::move(task), std::move(name), {}});
  }
  std::sort(groups.begin(), groups.end(), [](const StoredGroup& a, const StoredGroup& b) {
    return a.task.position < b.task.position;
  });
  std::map<std::string, size_t> by_id;
  for (size_t i = 0; i < groups.size(); ++i) by_id[groups[i].task.id] = i;
  ASSIGN_OR_RETURN(std::vector<GenieGroupDependency> edges,
                   ListGenieGroupDependencies(ctx.txn, run_id, kGroupKind));
  for (const GenieGroupDependency& e : edges) {
    auto it = by_id.find(e.task_id);
    if (it != by_id.end() && e.depends_on_key) {
      groups[it->second].depends_on.push_back(*e.depends_on_key);
    }
  }
  return groups;
}

Result<StoredGroup> FindGroup(const std::vector<StoredGroup>& groups, const std::string& slug,
                              const std::string& name) {
  std::vector<std::string> names;
  for (const StoredGroup& g : groups) {
    if (g.name == name) return g;
    names.push_back(g.name);
  }
  return NotFoundError("group: wish \"" + slug + "\" has no group \"" + name +
                       "\" (groups: " + Joined(names) + ")");
}

std::vector<std::string> UnmetDependencies(const std::vector<StoredGroup>& groups,
                                           const StoredGroup& group) {
  std::vector<std::string> unmet;
  for (const std::string& dep : group.depends_on) {
    for (const StoredGroup& g : groups) {
      if (g.name == dep && g.task.status != "done") {
        unmet.push_back(dep + " (" + g.task.status + ")");
      }
    }
  }
  return unmet;
}

// Genie's WishState with baton's fields, rendered by the genie-wish format
// (formats/genie_format.h), so the file and the operation agree.
Result<Json> CurrentStatus(OpContext& ctx, const StoredWish& wish) {
  ASSIGN_OR_RETURN(RunImage image, ExportImage(ctx.txn, wish.run_id));
  return WishStateDocument(image);
}

// Groups and title from the input: "groups" JSON, "markdown" text or a WISH.md
// "file". A document with error violations is refused with Genie's report.
struct WishSource {
  std::vector<WishGroupSpec> groups;
  std::string slug;
  std::string title;
  std::string wish_file;
};

// A wish file is read from under the roots (util/scoped_path.h); a relative
// one starts at baton's folder.
Result<std::string> ReadWishFile(const OpContext& ctx, const std::string& file) {
  std::error_code ec;
  ASSIGN_OR_RETURN(std::string real,
                   ctx.ScopedPath("file", file, std::filesystem::current_path(ec).string()));
  return ReadFile(real);
}

Result<WishSource> ReadSource(const OpContext& ctx, const Json& in) {
  WishSource src;
  if (in.contains("groups")) {
    for (const Json& g : in["groups"]) {
      WishGroupSpec spec{g.at("name").get<std::string>(), g.value("title", ""), {}};
      for (const Json& d : g.value("depends_on", Json::array())) {
        spec.depends_on.push_back(d.get<std::string>());
      }
      src.groups.push_back(std::move(spec));
    }
    src.title = in.value("title", "");
    return src;
  }
  std::string text;
  if (in.contains("markdown")) {
    text = in["markdown"].get<std::string>();
  } else if (in.contains("file")) {
    src.wish_file = in["file"].get<std::string>();
    ASSIGN_OR_RETURN(text, ReadWishFile(ctx, src.wish_file));
    // .genie/wishes/<slug>/WISH.md names the slug.
    src.slug = std::filesystem::path(src.wish_file).parent_path().filename().string();
  } else {
    return InvalidArgumentError("groups: give one of groups, markdown or file");
  }
  const std::string where = src.wish_file.empty() ? "markdown" : src.wish_file;
  Result<WishDocument> doc = ParseWishMarkdown(text);
  if (!doc.ok()) return doc.status().WithPrefix(where);
  std::string problems;
  int errors = 0;
  for (const WishViolation& v : doc->violations) {
    if (v.severity != "error") continue;
    ++errors;
    problems += "\n  line " + std::to_string(v.line) + ": " + v.rule + ": " + v.message;
  }
  if (errors > 0) {
    return Status(StatusCode::kInvalidArgument,
                  where + ": WISH.md's groups cannot be made: " + std::to_string(errors) +
                      " problem" + (errors == 1 ? "" : "s") +
                      " with its groups and their depends-on (as Genie's createState, which "
                      "also refuses self-dependencies and cycles):" + problems,
                  WishViolationReport(*doc));
  }
  for (const WishGroup& g : doc->groups) src.groups.push_back({g.name, g.title, g.depends_on});
  if (!doc->slug.empty()) src.slug = doc->slug;
  src.title = doc->title;
  return src;
}

// Names of groups in an order where every group follows its dependencies.
std::vector<const WishGroupSpec*> TopologicalOrder(const std::vector<WishGroupSpec>& groups) {
  std::vector<const WishGroupSpec*> order;
  std::set<std::string> placed;
  while (order.size() < groups.size()) {
    for (const WishGroupSpec& g : groups) {
      if (placed.count(g.name) != 0) continue;
      bool ready = std::all_of(g.depends_on.begin(), g.depends_on.end(),
                               [&](const std::string& d) { return placed.count(d) != 0; });
      if (ready) {
        order.push_back(&g);
        placed.insert(g.name);
      }
    }
  }
  return order;
}

Status RefuseChangedStructure(const std::string& slug, const std::vector<WishGroupSpec>& now,
                              const std::vector<StoredGroup>& stored) {
  std::map<std::string, std::vector<std::string>> before, after;
  for (const StoredGroup& g : stored) {
    before[g.name] = g.depends_on;
    std::sort(before[g.name].begin(), before[g.name].end());
  }
  for (const WishGroupSpec& g : now) {
    after[g.name] = g.depends_on;
    std::sort(after[g.name].begin(), after[g.name].end());
  }
  std::vector<std::string> added, removed, changed;
  for (const auto& [name, deps] : after) {
    if (before.count(name) == 0) {
      added.push_back(name);
    } else if (before[name] != deps) {
      changed.push_back(name);
    }
  }
  for (const auto& [name, deps] : before) {
    if (after.count(name) == 0) removed.push_back(name);
  }
  return Status(StatusCode::kFailedPrecondition,
                "slug: wish \"" + slug + "\" changed structure since it was created: added " +
                    Joined(added) + "; removed " + Joined(removed) + "; changed " +
                    Joined(changed) + ". Pass replace to start it over (the old run is kept)",
                Json{{"added", added}, {"removed", removed}, {"changed", changed}});
}

// Moves a group and stamps startedAt / completedAt in its meta.
Status MoveGroup(OpContext& ctx, const Task& task, const std::string& to, const std::string& reason,
                 const std::string& assignee) {
  Json meta = task.meta;
  if (to == "in_progress") meta["startedAt"] = ctx.now;
  if (to == "done") meta["completedAt"] = ctx.now;
  if (to == "ready") meta.erase("startedAt");
  TaskAlsoSet also{.meta = std::move(meta)};
  if (!assignee.empty()) also.assignee = assignee;
  return ChangeTaskStatus(ctx, task, to, reason, also);
}

}  // namespace

Status ValidateWishGroups(const std::vector<WishGroupSpec>& groups) {
  std::set<std::string> names;
  if (groups.empty()) return InvalidArgumentError("groups: a wish needs at least one group");
  for (const WishGroupSpec& g : groups) {
    if (g.name.empty()) return InvalidArgumentError("groups: a group has an empty name");
    if (!names.insert(g.name).second) {
      return InvalidArgumentError("groups: group \"" + g.name + "\" is defined twice");
    }
  }
  for (const WishGroupSpec& g : groups) {
    for (const std::string& d : g.depends_on) {
      if (d == g.name) {
        return InvalidArgumentError("groups: group \"" + g.name + "\" depends on itself");
      }
      if (names.count(d) == 0) {
        return InvalidArgumentError("groups: group \"" + g.name + "\" depends on \"" + d +
                                    "\", which does not exist (groups: " +
                                    Joined({names.begin(), names.end()}) + ")");
      }
    }
  }
  // Depth-first search; "path" is the current chain, so a back edge names the cycle.
  std::map<std::string, const WishGroupSpec*> by_name;
  for (const WishGroupSpec& g : groups) by_name[g.name] = &g;
  std::map<std::string, int> state;  // 0 new, 1 on the path, 2 done
  std::vector<std::string> path;
  std::function<Status(const std::string&)> visit = [&](const std::string& name) -> Status {
    state[name] = 1;
    path.push_back(name);
    for (const std::string& d : by_name[name]->depends_on) {
      if (state[d] == 1) {
        std::string cycle;
        auto start = std::find(path.begin(), path.end(), d);
        for (auto it = start; it != path.end(); ++it) cycle += *it + " -> ";
        return InvalidArgumentError("groups: the dependencies form a cycle: " + cycle + d);
      }
      if (state[d] == 0) RETURN_IF_ERROR(visit(d));
    }
    path.pop_back();
    state[name] = 2;
    return Status();
  };
  for (const WishGroupSpec& g : groups) {
    if (state[g.name] == 0) RETURN_IF_ERROR(visit(g.name));
  }
  return Status();
}

std::string WishSignature(const std::vector<WishGroupSpec>& groups) {
  std::vector<std::pair<std::string, std::vector<std::string>>> sorted;
  for (const WishGroupSpec& g : groups) {
    std::vector<std::string> deps = g.depends_on;
    std::sort(deps.begin(), deps.end());
    sorted.emplace_back(g.name, deps);
  }
  std::sort(sorted.begin(), sorted.end());
  Json canonical = Json::array();
  for (const auto& [name, deps] : sorted) canonical.push_back({{"name", name}, {"dependsOn", deps}});
  return Sha256Hex(CanonicalJson(canonical));
}

Result<Json> CreateWish(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(WishSource src, ReadSource(ctx, in));
  const std::string slug = in.value("slug", src.slug);
  if (slug.empty()) return InvalidArgumentError("slug: the wish needs a slug (none in the document)");
  RETURN_IF_ERROR(ValidateWishGroups(src.groups));
  const std::string signature = WishSignature(src.groups);
  ASSIGN_OR_RETURN(std::string project_key, ProjectKey(ctx, in));
  Result<StoredWish> existing = FindWish(ctx, project_key, slug);
  if (existing.ok()) {
    if (existing->signature == signature) return CurrentStatus(ctx, *existing);  // getOrCreate
    if (!in.value("replace", false)) {
      ASSIGN_OR_RETURN(std::vector<StoredGroup> stored, LoadGroups(ctx, existing->run_id));
      return RefuseChangedStructure(slug, src.groups, stored);
    }
    RETURN_IF_ERROR(DeleteWishRow(ctx.txn, project_key, slug));
  } else if (existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  Json run_in{{"profile", "genie"},
              {"title", src.title.empty() ? "Wish: " + slug : "Wish: " + src.title},
              {"meta", {{"slug", slug}, {"wish_file", src.wish_file}, {"groupsSignature", signature}}}};
  if (!project_key.empty()) run_in["project"] = project_key;
  ASSIGN_OR_RETURN(Run run, MakeRun(ctx, run_in));
  const std::string run_id = run.id;
  std::map<std::string, std::string> task_ids;
  int64_t position = 0;
  for (const WishGroupSpec* g : TopologicalOrder(src.groups)) {
    Json deps = Json::array();
    for (const std::string& d : g->depends_on) deps.push_back(task_ids.at(d));
    const std::string title = "Group " + g->name + (g->title.empty() ? "" : ": " + g->title);
    auto it = std::find_if(src.groups.begin(), src.groups.end(),
                           [&](const WishGroupSpec& s) { return s.name == g->name; });
    position = it - src.groups.begin();
    ASSIGN_OR_RETURN(Task task, MakeTask(ctx, {{"run", run_id},
                                                {"kind", kGroupKind},
                                                {"key", g->name},
                                                {"title", title},
                                                {"position", position},
                                                {"depends_on", deps}}));
    task_ids[g->name] = task.id;
  }
  RETURN_IF_ERROR(InsertWishRow(ctx.txn, {.project_key = project_key,
                                          .slug = slug,
                                          .run_id = run_id,
                                          .wish_file = src.wish_file,
                                          .signature = signature,
                                          .created_at = ctx.now}));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = run_id,
                                    .kind = "wish.created",
                                    .summary = "wish " + slug + " created with " +
                                               std::to_string(src.groups.size()) + " groups",
                                    .payload = {{"slug", slug}, {"signature", signature},
                                                {"replaced", existing.ok()}}})
                      .status());
  ASSIGN_OR_RETURN(StoredWish wish, FindWish(ctx, project_key, slug));
  return CurrentStatus(ctx, wish);
}

Result<Json> WishStatus(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(StoredWish wish, FindWish(ctx, in));
  if (in.contains("file") || in.contains("markdown")) {
    // Genie's getOrCreateState: the document must still have the structure
    // the state was created from.
    ASSIGN_OR_RETURN(WishSource src, ReadSource(ctx, in));
    if (WishSignature(src.groups) != wish.signature) {
      ASSIGN_OR_RETURN(std::vector<StoredGroup> stored, LoadGroups(ctx, wish.run_id));
      return RefuseChangedStructure(wish.slug, src.groups, stored);
    }
  }
  return CurrentStatus(ctx, wish);
}

Result<Json> ListWishes(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(std::string project_key, ProjectKey(ctx, in));
  ASSIGN_OR_RETURN(std::vector<std::string> slugs, ListWishSlugs(ctx.txn, project_key));
  Json list = Json::array();
  for (const std::string& slug : slugs) {
    ASSIGN_OR_RETURN(StoredWish wish, FindWish(ctx, project_key, slug));
    ASSIGN_OR_RETURN(Json status, CurrentStatus(ctx, wish));
    list.push_back(std::move(status));
  }
  return Json{{"wishes", list}};
}

Result<Json> StartWishGroup(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(StoredWish wish, FindWish(ctx, in));
  ASSIGN_OR_RETURN(std::vector<StoredGroup> groups, LoadGroups(ctx, wish.run_id));
  const std::string name = in.at("group").get<std::string>();
  ASSIGN_OR_RETURN(StoredGroup group, FindGroup(groups, wish.slug, name));
  const std::string& status = group.task.status;
  if (status == "in_progress" || status == "done") {
    const std::string who =
        group.task.assignee ? " (assignee " + *group.task.assignee + ")" : std::string();
    return FailedPreconditionError("group: group " + name + " of wish " + wish.slug +
                                   " is already " + status + who);
  }
  std::vector<std::string> unmet = UnmetDependencies(groups, group);
  if (!unmet.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "group: group " + name + " of wish " + wish.slug +
                      " cannot start: unmet dependencies " + Joined(unmet),
                  Json{{"unmet", unmet}});
  }
  const std::string assignee = in.value("assignee", ctx.actor.id);
  RETURN_IF_ERROR(MoveGroup(ctx, group.task, "in_progress", "started by " + assignee, assignee));
  return CurrentStatus(ctx, wish);
}

Result<Json> CompleteWishGroup(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(StoredWish wish, FindWish(ctx, in));
  ASSIGN_OR_RETURN(std::vector<StoredGroup> groups, LoadGroups(ctx, wish.run_id));
  const std::string name = in.at("group").get<std::string>();
  ASSIGN_OR_RETURN(StoredGroup group, FindGroup(groups, wish.slug, name));
  if (group.task.status == "done") {
    ASSIGN_OR_RETURN(Json status, CurrentStatus(ctx, wish));
    status["completed"] = name;
    status["already_done"] = true;
    return status;
  }
  if (group.task.status == "blocked") {
    std::vector<std::string> unmet = UnmetDependencies(groups, group);
    return Status(StatusCode::kFailedPrecondition,
                  "group: group " + name + " of wish " + wish.slug +
                      " is blocked: unmet dependencies " + Joined(unmet),
                  Json{{"unmet", unmet}});
  }
  Task task = group.task;
  if (task.status == "ready") {
    // Genie #1214: `genie done` on a group nobody started used to no-op and
    // stall the wave. Promote it, naming who finished it.
    const std::string assignee = in.value("assignee", ctx.actor.id);
    RETURN_IF_ERROR(MoveGroup(ctx, task, "in_progress",
                              "auto-promoted from ready on completion", assignee));
    ASSIGN_OR_RETURN(task, LoadTask(ctx.txn, group.task.id));
  }
  RETURN_IF_ERROR(MoveGroup(ctx, task, "done", in.value("reason", "completed"), ""));
  ASSIGN_OR_RETURN(Json status, CurrentStatus(ctx, wish));
  Json newly_ready = Json::array();
  for (const StoredGroup& g : groups) {
    if (g.task.status != "ready" && status["groups"][g.name]["status"] == "ready") {
      newly_ready.push_back(g.name);
    }
  }
  status["completed"] = name;
  status["already_done"] = false;
  status["newly_ready"] = newly_ready;
  return status;
}

Result<Json> ResetWishGroup(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(StoredWish wish, FindWish(ctx, in));
  ASSIGN_OR_RETURN(std::vector<StoredGroup> groups, LoadGroups(ctx, wish.run_id));
  const std::string name = in.at("group").get<std::string>();
  ASSIGN_OR_RETURN(StoredGroup group, FindGroup(groups, wish.slug, name));
  if (group.task.status != "in_progress") {
    return FailedPreconditionError("group: group " + name + " of wish " + wish.slug + " is " +
                                   group.task.status + "; only an in_progress group can be reset");
  }
  RETURN_IF_ERROR(MoveGroup(ctx, group.task, "ready", in.value("reason", "reset"), ""));
  return CurrentStatus(ctx, wish);
}

Result<Json> ResetWish(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(StoredWish wish, FindWish(ctx, in));
  ASSIGN_OR_RETURN(std::vector<StoredGroup> groups, LoadGroups(ctx, wish.run_id));
  Json reset = Json::array();
  for (const StoredGroup& g : groups) {
    if (g.task.status != "in_progress") continue;
    RETURN_IF_ERROR(MoveGroup(ctx, g.task, "ready", in.value("reason", "wish reset"), ""));
    reset.push_back(g.name);
  }
  ASSIGN_OR_RETURN(Json status, CurrentStatus(ctx, wish));
  status["reset"] = reset;
  return status;
}

Result<Json> LintWish(OpContext& ctx, const Json& in) {
  (void)ctx;
  std::string text;
  std::string where = "markdown";
  if (in.contains("file")) {
    where = in["file"].get<std::string>();
    ASSIGN_OR_RETURN(text, ReadWishFile(ctx, where));
  } else if (in.contains("markdown")) {
    text = in["markdown"].get<std::string>();
  } else {
    return InvalidArgumentError("file: give file or markdown");
  }
  // Refuses what is not text (NUL, invalid UTF-8, over 1 MiB); the groups
  // are what wish.create would make.
  Result<WishDocument> doc = ParseWishMarkdown(text);
  if (!doc.ok()) return doc.status().WithPrefix(where);
  // The violations are Genie's linter's, rule for rule (model/wish_lint.h).
  const WishLintReport lint = LintWishMarkdown(
      text, {.allow_todo_placeholders = in.value("allow_todo_placeholders", false)});
  Json report = WishLintJson(lint);
  Json groups = Json::array();
  for (const WishGroup& g : doc->groups) {
    groups.push_back({{"name", g.name}, {"title", g.title}, {"depends_on", g.depends_on},
                      {"line", g.line}});
  }
  report["file"] = where;
  report["slug"] = doc->slug;
  report["title"] = doc->title;
  report["groups"] = groups;
  if (in.value("fix", false)) report["fixed"] = ApplyWishFixes(text, lint);
  return report;
}

}  // namespace baton
