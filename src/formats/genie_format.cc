// File: genie_format.cc
//
// Genie's file-era wish state, .genie/state/<slug>.json (genie_format.h says
// how it maps onto a wish run), and the wish.status document.

#include "formats/genie_format.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "formats/genie_internal.h"
#include "formats/reader.h"
#include "util/sha256.h"

namespace baton {
namespace {

using namespace genie_internal;  // NOLINT: the formats' own helpers

struct WishGroupIn {
  std::string name;
  std::string pointer;
  std::string status;
  std::optional<std::string> assignee, started_at, completed_at;
  std::vector<std::string> depends_on;
};

// The group names in the order the file lists them (Json sorts its keys).
std::vector<std::string> GroupOrder(std::string_view text, const Json& groups) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  const OrderedJson ordered = OrderedJson::parse(text.begin(), text.end(), nullptr, false);
  if (ordered.is_object()) {
    auto it = ordered.find("groups");
    if (it != ordered.end() && it->is_object()) {
      for (const auto& [name, value] : it->items()) {
        if (groups.contains(name) && seen.insert(name).second) names.push_back(name);
      }
    }
  }
  for (const auto& [name, value] : groups.items()) {
    if (seen.insert(name).second) names.push_back(name);
  }
  return names;
}

Result<WishGroupIn> ReadWishGroup(const Json& value, const std::string& source,
                                  const std::string& name, Json& kept) {
  WishGroupIn g{name, PointerAppend("/groups", name), "", {}, {}, {}, {}};
  if (name.empty()) return FieldError(source, g.pointer, "a group needs a name");
  ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(value, source, g.pointer));
  ASSIGN_OR_RETURN(g.status, r.String("status"));
  if (!IsGenieStatus(g.status)) {
    return r.Error("status",
                   "unknown status " + Quote(g.status) + " (allowed: " + kAllowedStatuses + ")");
  }
  ASSIGN_OR_RETURN(g.assignee, r.OptString("assignee"));
  ASSIGN_OR_RETURN(std::optional<Json> deps, r.OptArray("dependsOn"));
  for (size_t i = 0; deps && i < deps->size(); ++i) {
    const Json& d = (*deps)[i];
    if (!d.is_string()) {
      return FieldError(source, PointerAppend(r.Path("dependsOn"), i),
                        "must be a group name (a string), not " + TypeName(d));
    }
    g.depends_on.push_back(d.get<std::string>());
  }
  ASSIGN_OR_RETURN(g.started_at, r.OptString("startedAt"));
  ASSIGN_OR_RETURN(g.completed_at, r.OptString("completedAt"));
  r.KeepRest(kept);
  return g;
}

// Genie's createState checks: no self-dependency, no dependency on a group
// that does not exist, no cycle (and, as task_deps' key demands, no
// dependency listed twice).
Status CheckWishGraph(const std::vector<WishGroupIn>& groups, const std::string& source) {
  std::map<std::string, size_t> index;
  std::vector<std::string> names;
  for (size_t i = 0; i < groups.size(); ++i) {
    index[groups[i].name] = i;
    names.push_back(groups[i].name);
  }
  // The refusals' messages, made outside the loops below.
  const auto self = [&](const std::string& at, const WishGroupIn& g) {
    return FieldError(source, at, "group \"" + g.name + "\" depends on itself");
  };
  const auto missing = [&](const std::string& at, const WishGroupIn& g, const std::string& d) {
    return FieldError(source, at,
                      "group \"" + g.name + "\" depends on \"" + d +
                          "\", which does not exist (groups: " + JoinNames(names) + ")");
  };
  const auto twice = [&](const std::string& at, const WishGroupIn& g, const std::string& d) {
    return FieldError(source, at, "group \"" + g.name + "\" lists \"" + d + "\" twice");
  };
  std::vector<std::vector<size_t>> deps(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    const WishGroupIn& g = groups[i];
    std::set<size_t> listed;
    for (size_t j = 0; j < g.depends_on.size(); ++j) {
      const std::string& d = g.depends_on[j];
      const std::string at = PointerAppend(PointerAppend(g.pointer, "dependsOn"), j);
      if (d == g.name) return self(at, g);
      auto it = index.find(d);
      if (it == index.end()) return missing(at, g, d);
      if (!listed.insert(it->second).second) return twice(at, g, d);
      deps[i].push_back(it->second);
    }
  }
  if (std::vector<size_t> cycle = FindCycle(deps); !cycle.empty()) {
    return FieldError(source, PointerAppend(groups[cycle.front()].pointer, "dependsOn"),
                      "the dependencies form a cycle: " + CyclePath(cycle, names));
  }
  return Status();
}

// engine/profiles/genie/wishes.cc's WishSignature: SHA-256 of the canonical JSON of the
// groups sorted by name, each {name, dependsOn sorted}.
std::string GroupsSignature(const std::vector<WishGroupIn>& groups) {
  std::vector<std::pair<std::string, std::vector<std::string>>> sorted;
  for (const WishGroupIn& g : groups) {
    std::vector<std::string> deps = g.depends_on;
    std::sort(deps.begin(), deps.end());
    sorted.emplace_back(g.name, deps);
  }
  std::sort(sorted.begin(), sorted.end());
  Json canonical = Json::array();
  for (const auto& [name, deps] : sorted)
    canonical.push_back({{"name", name}, {"dependsOn", deps}});
  return Sha256Hex(CanonicalJson(canonical));
}

Json WishGroupTask(const WishGroupIn& g, size_t position, const std::optional<std::string>& created,
                   const std::optional<std::string>& updated) {
  Json deps = Json::array();
  for (const std::string& d : g.depends_on) deps.push_back("group:" + d);
  Json meta = Json::object();
  if (g.started_at) meta["startedAt"] = *g.started_at;
  if (g.completed_at) meta["completedAt"] = *g.completed_at;
  Json task{{"ref", "group:" + g.name},
            {"key", g.name},
            {"kind", "group"},
            {"parent", nullptr},
            {"depends_on", deps},
            {"title", "Group " + g.name},
            {"body", ""},
            {"status", g.status},
            {"priority", 0},
            {"position", position},
            {"attempts", 0},
            {"board_column", nullptr},
            {"result", nullptr},
            {"meta", meta},
            {"assignee", g.assignee ? Json(*g.assignee) : Json()}};
  // The file has no times per group: the wish's own, so that the writer's
  // updatedAt (the latest of the run's and the groups') is the file's again.
  if (created) task["created_at"] = *created;
  if (updated) task["updated_at"] = *updated;
  return task;
}

// A slug for a run that has none: its title (or id) in lowercase words.
std::string SlugFor(const Json& run) {
  std::string slug;
  for (char c : StrOr(run, "title", StrOr(run, "id"))) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      slug += c;
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "wish" : slug;
}

// The latest of the run's and the groups' updated_at (wish.status's updatedAt).
std::optional<std::string> LatestUpdate(const Json& run, const std::vector<const Json*>& tasks) {
  std::optional<std::string> latest;
  if (const Json* u = Find(run, "updated_at"); u != nullptr && u->is_string()) latest = *u;
  for (const Json* t : tasks) {
    if (const Json* u = Find(*t, "updated_at"); u != nullptr && u->is_string()) {
      if (!latest || u->get<std::string>() > *latest) latest = u->get<std::string>();
    }
  }
  return latest;
}

}  // namespace

Result<RunImage> ReadGenieWish(std::string_view text, const std::string& source) {
  ASSIGN_OR_RETURN(Json doc, ReadJsonObject(text, source));
  ASSIGN_OR_RETURN(ObjectReader top, ObjectReader::Make(doc, source, ""));
  ASSIGN_OR_RETURN(std::string slug, top.String("wish"));
  if (slug.empty()) return top.Error("wish", "must be the wish's slug, not empty");
  ASSIGN_OR_RETURN(std::optional<Json> groups_json, top.OptObject("groups"));
  if (!groups_json) return top.Error("groups", "is required");
  ASSIGN_OR_RETURN(std::optional<std::string> created, top.OptString("createdAt"));
  ASSIGN_OR_RETURN(std::optional<std::string> updated, top.OptString("updatedAt"));
  Json kept = Json::object();
  top.KeepRest(kept);
  std::vector<WishGroupIn> groups;
  for (const std::string& name : GroupOrder(text, *groups_json)) {
    ASSIGN_OR_RETURN(WishGroupIn g, ReadWishGroup((*groups_json)[name], source, name, kept));
    groups.push_back(std::move(g));
  }
  RETURN_IF_ERROR(CheckWishGraph(groups, source));
  std::vector<std::string> statuses;
  statuses.reserve(groups.size());
  for (const WishGroupIn& g : groups) statuses.push_back(g.status);
  Json image =
      NewImage(kWishFormat, source, RunStatusFor(statuses), "Wish: " + slug,
               {{"slug", slug}, {"wish_file", ""}, {"groupsSignature", GroupsSignature(groups)}});
  if (created) image["run"]["created_at"] = *created;
  if (updated) image["run"]["updated_at"] = *updated;
  for (size_t i = 0; i < groups.size(); ++i) {
    image["tasks"].push_back(WishGroupTask(groups[i], i, created, updated));
  }
  KeepInImage(image, kWishFormat, kept);
  return image;
}

Result<FormatOutput> WriteGenieWish(const RunImage& image) {
  ASSIGN_OR_RETURN(const Json* run, RunOf(image));
  FormatOutput out;
  const std::string profile = StrOr(*run, "profile");
  size_t groups = 0, others = 0;
  for (const Json& t : ArrayAt(image, "tasks")) (StrOr(t, "kind") == "group" ? groups : others)++;
  const bool only_groups = groups > 0;
  if (only_groups && others > 0) {
    out.notes.push_back("tasks: a wish state lists groups only; " + std::to_string(others) +
                        " tasks of other kinds not written");
  } else if (!only_groups && others > 0) {
    out.notes.push_back("tasks: the run has no wish groups; its " + std::to_string(others) +
                        " tasks are written as groups named by their keys" +
                        (profile == "genie" ? "" : " (titles, kinds and parents are not kept)"));
  }
  ASSIGN_OR_RETURN(
      std::vector<Picked> picked,
      PickTasks(
          image, *run, [&](const Json& t) { return !only_groups || StrOr(t, "kind") == "group"; },
          out.notes));
  std::string slug = StrOr(ObjectAt(*run, "meta"), "slug");
  if (slug.empty()) {
    slug = SlugFor(*run);
    out.notes.push_back("wish: the run has no wish slug; written as \"" + slug + "\"");
  }
  std::set<std::string> taken;
  std::vector<std::string> names;
  std::vector<const Json*> tasks;
  for (const Picked& p : picked) {
    names.push_back(UniqueName(StrOr(*p.task, "key"), *p.task, taken));
    tasks.push_back(p.task);
  }
  OrderedJson doc = OrderedJson::object();
  doc["wish"] = slug;
  doc["groups"] = OrderedJson::object();
  for (size_t i = 0; i < picked.size(); ++i) {
    const Json& task = *picked[i].task;
    const Json& meta = ObjectAt(task, "meta");
    OrderedJson g = OrderedJson::object();
    g["status"] = picked[i].status;
    if (const Json* a = Find(task, "assignee"); a != nullptr && a->is_string()) g["assignee"] = *a;
    // As wish.status lists them: by the dependency's position ("picked" is in
    // position order).
    std::vector<size_t> deps = picked[i].deps;
    std::sort(deps.begin(), deps.end());
    g["dependsOn"] = OrderedJson::array();
    for (size_t d : deps) g["dependsOn"].push_back(names[d]);
    for (const char* key : {"startedAt", "completedAt"}) {
      if (const Json* v = Find(meta, key); v != nullptr && v->is_string()) g[key] = *v;
    }
    doc["groups"][names[i]] = std::move(g);
  }
  if (const Json* c = Find(*run, "created_at"); c != nullptr && c->is_string()) {
    doc["createdAt"] = *c;
  }
  if (std::optional<std::string> updated = LatestUpdate(*run, tasks)) doc["updatedAt"] = *updated;
  RestoreKept(KeptOf(*run, kWishFormat), doc);
  NoteUnwritten(image, "a wish state", out.notes);
  out.text = Dump(doc);
  return out;
}

Json WishStateDocument(const RunImage& image) {
  const Json& run = ObjectAt(image, "run");
  const Json& meta = ObjectAt(run, "meta");
  std::vector<const Json*> groups;
  for (const Json& t : ArrayAt(image, "tasks")) {
    if (StrOr(t, "kind") == "group" && Find(t, "key") && t["key"].is_string()) groups.push_back(&t);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Json* a, const Json* b) {
    return IntOr(*a, "position", 0) < IntOr(*b, "position", 0);
  });
  std::map<std::string, size_t> by_ref;
  for (size_t i = 0; i < groups.size(); ++i) by_ref.emplace(StrOr(*groups[i], "ref"), i);
  Json out_groups = Json::object();
  for (const Json* g : groups) {
    std::vector<size_t> deps;
    for (const Json& d : ArrayAt(*g, "depends_on")) {
      auto it = d.is_string() ? by_ref.find(d.get<std::string>()) : by_ref.end();
      if (it != by_ref.end()) deps.push_back(it->second);
    }
    std::stable_sort(deps.begin(), deps.end(), [&](size_t a, size_t b) {
      return IntOr(*groups[a], "position", 0) < IntOr(*groups[b], "position", 0);
    });
    Json depends_on = Json::array();
    for (size_t d : deps) depends_on.push_back((*groups[d])["key"]);
    Json entry{{"status", StrOr(*g, "status")},
               {"dependsOn", depends_on},
               {"task_id", StrOr(*g, "id")},
               {"title", StrOr(*g, "title")}};
    if (const Json* a = Find(*g, "assignee"); a != nullptr && !a->is_null()) entry["assignee"] = *a;
    for (const char* key : {"startedAt", "completedAt"}) {
      if (const Json* v = Find(ObjectAt(*g, "meta"), key)) entry[key] = *v;
    }
    if (const Json* r = Find(*g, "blocked_reason"); r != nullptr && !r->is_null()) {
      entry["blocked_reason"] = *r;
    }
    out_groups[(*g)["key"].get<std::string>()] = entry;
  }
  return Json{{"wish", StrOr(meta, "slug")},
              {"run_id", StrOr(run, "id")},
              {"title", StrOr(run, "title")},
              {"wish_file", StrOr(meta, "wish_file")},
              {"signature", StrOr(meta, "groupsSignature")},
              {"groups", out_groups},
              {"createdAt", StrOr(run, "created_at")},
              {"updatedAt", LatestUpdate(run, groups).value_or("")}};
}

}  // namespace baton
