// File: genie_internal.cc
//
// What the two Genie formats share (genie_internal.h).

#include "formats/genie_internal.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "formats/lifecycle.h"

namespace baton::genie_internal {
namespace {

constexpr std::string_view kGenieStatuses[] = {"blocked", "ready", "in_progress", "done"};

// The machine of a task's status: its own, else its profile's for its kind.
std::string MachineOf(std::string_view profile, const Json& task) {
  struct KindMachine {
    std::string_view profile, kind, machine;
  };
  static constexpr KindMachine kKinds[] = {
      {"baton", "task", "baton.task"},         {"sgai", "todo", "sgai.todo"},
      {"genie", "task", "genie.task"},         {"genie", "group", "genie.group"},
      {"graph", "node", "graph.node"},         {"stigmergy", "story", "stigmergy.story"},
      {"stigmergy", "epic", "stigmergy.epic"}, {"stigmergy", "issue", "stigmergy.issue"},
      {"sinfonia", "step", "sinfonia.step"}};
  std::string machine = StrOr(task, "machine");
  if (!machine.empty()) return machine;
  const std::string kind = StrOr(task, "kind");
  for (const KindMachine& k : kKinds) {
    if (k.profile == profile && k.kind == kind) return std::string(k.machine);
  }
  return "baton.task";
}

// Genie's status for "phase": pending work is blocked or ready by its
// dependencies (decided later), failed work needs someone (blocked), and work
// that will not be done no longer holds anything back (done).
std::string GenieStatusFor(Phase phase) {
  switch (phase) {
    case Phase::kPending:
      return "ready";
    case Phase::kActive:
      return "in_progress";
    case Phase::kWaiting:
    case Phase::kFailed:
      return "blocked";
    case Phase::kDone:
    case Phase::kCancelled:
      return "done";
  }
  return "in_progress";
}

}  // namespace

// ---- JSON access that never throws -------------------------------------------

const Json* Find(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string StrOr(const Json& obj, std::string_view key, const std::string& fallback) {
  const Json* v = Find(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}

int64_t IntOr(const Json& obj, std::string_view key, int64_t fallback) {
  const Json* v = Find(obj, key);
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : fallback;
}

namespace {

const Json& Member(const Json& obj, std::string_view key, bool (Json::*is)() const noexcept) {
  static const Json kNull;
  const Json* v = Find(obj, key);
  return v != nullptr && ((*v).*is)() ? *v : kNull;
}

}  // namespace

const Json& ObjectAt(const Json& obj, std::string_view key) {
  return Member(obj, key, &Json::is_object);
}
const Json& ArrayAt(const Json& obj, std::string_view key) {
  return Member(obj, key, &Json::is_array);
}
const Json& StringAt(const Json& obj, std::string_view key) {
  return Member(obj, key, &Json::is_string);
}

std::string Quote(const std::string& text) {
  return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// As wish-state.ts writes (JSON.stringify(state, null, 2)); Genie's task
// export adds a newline.
std::string Dump(const OrderedJson& doc) {
  return doc.dump(2, ' ', false, Json::error_handler_t::replace);
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 20; ++i) out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > 20) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out.empty() ? "(none)" : out;
}

// ---- Statuses and graphs ----------------------------------------------------

bool IsGenieStatus(std::string_view s) {
  return std::find(std::begin(kGenieStatuses), std::end(kGenieStatuses), s) !=
         std::end(kGenieStatuses);
}

// A depth-first walk with its own stack; a back edge to a node on the path
// closes the cycle.
std::vector<size_t> FindCycle(const std::vector<std::vector<size_t>>& deps) {
  std::vector<int> color(deps.size(), 0);       // 0 new, 1 on the path, 2 done
  std::vector<std::pair<size_t, size_t>> path;  // node, next dependency to visit
  for (size_t root = 0; root < deps.size(); ++root) {
    if (color[root] != 0) continue;
    color[root] = 1;
    path.emplace_back(root, 0);
    while (!path.empty()) {
      const size_t node = path.back().first;
      if (path.back().second == deps[node].size()) {
        color[node] = 2;
        path.pop_back();
        continue;
      }
      const size_t dep = deps[node][path.back().second++];
      if (color[dep] == 1) {
        std::vector<size_t> cycle;
        auto it = std::find_if(path.begin(), path.end(), [&](auto& p) { return p.first == dep; });
        for (; it != path.end(); ++it) cycle.push_back(it->first);
        cycle.push_back(dep);
        return cycle;
      }
      if (color[dep] == 0) {
        color[dep] = 1;
        path.emplace_back(dep, 0);
      }
    }
  }
  return {};
}

std::string CyclePath(const std::vector<size_t>& cycle, const std::vector<std::string>& names) {
  std::string out;
  for (size_t i : cycle) out += (out.empty() ? "" : " -> ") + names[i];
  return out;
}

std::string RunStatusFor(const std::vector<std::string>& statuses) {
  bool all_done = !statuses.empty(), started = false;
  for (const std::string& s : statuses) {
    all_done = all_done && s == "done";
    started = started || s == "done" || s == "in_progress";
  }
  return all_done ? "completed" : started ? "running" : "pending";
}

Json NewImage(const char* format, const std::string& source, const std::string& status,
              const std::string& title, Json meta) {
  Json run{{"profile", "genie"},        {"machine", "baton.run"},
           {"status", status},          {"title", title},
           {"cursor", nullptr},         {"cursor_index", nullptr},
           {"context", Json::object()}, {"meta", std::move(meta)}};
  return Json{{"image", 1},
              {"source", {{"format", format}, {"name", source}}},
              {"run", std::move(run)},
              {"tasks", Json::array()}};
}

void KeepInImage(Json& image, const char* format, const Json& kept) {
  if (!kept.empty()) image["run"]["meta"]["kept"][format] = kept;
}

// ---- What writers share -----------------------------------------------------

Result<const Json*> RunOf(const RunImage& image) {
  const Json& run = ObjectAt(image, "run");
  if (!run.is_object()) return FailedPreconditionError("image: has no run object");
  return &run;
}

const Json& KeptOf(const Json& run, const char* format) {
  return ObjectAt(ObjectAt(ObjectAt(run, "meta"), "kept"), format);
}

Result<std::vector<Picked>> PickTasks(const RunImage& image, const Json& run,
                                      const std::function<bool(const Json&)>& keep,
                                      std::vector<std::string>& notes) {
  std::vector<Picked> picked;
  for (const Json& task : ArrayAt(image, "tasks")) {
    if (task.is_object() && keep(task)) picked.push_back({&task, "", {}});
  }
  std::stable_sort(picked.begin(), picked.end(), [](const Picked& a, const Picked& b) {
    return IntOr(*a.task, "position", 0) < IntOr(*b.task, "position", 0);
  });
  std::map<std::string, size_t> by_ref;
  for (size_t i = 0; i < picked.size(); ++i) by_ref.emplace(StrOr(*picked[i].task, "ref"), i);
  const std::string profile = StrOr(run, "profile");
  std::vector<size_t> converted;
  std::vector<bool> pending(picked.size(), false);
  size_t dropped = 0;
  for (size_t i = 0; i < picked.size(); ++i) {
    const Json& task = *picked[i].task;
    std::set<size_t> listed{i};  // a task never waits for itself
    const std::string machine = MachineOf(profile, task);
    const std::string status = StrOr(task, "status");
    const std::optional<Phase> phase = PhaseOf(machine, status);
    if (IsGenieStatus(status) && (!phase || phase == PhaseOf("genie.task", status))) {
      picked[i].status = status;
    } else {
      pending[i] = phase.value_or(Phase::kActive) == Phase::kPending;
      picked[i].status = GenieStatusFor(phase.value_or(Phase::kActive));
      converted.push_back(i);
    }
    for (const Json& dep : ArrayAt(task, "depends_on")) {
      auto it = dep.is_string() ? by_ref.find(dep.get<std::string>()) : by_ref.end();
      if (it == by_ref.end()) {
        ++dropped;
      } else if (listed.insert(it->second).second) {
        picked[i].deps.push_back(it->second);
      }
    }
  }
  // Genie's rule for work not started: ready once every dependency is done.
  for (size_t i = 0; i < picked.size(); ++i) {
    if (!pending[i]) continue;
    const bool met = std::all_of(picked[i].deps.begin(), picked[i].deps.end(),
                                 [&](size_t d) { return picked[d].status == "done"; });
    picked[i].status = met ? "ready" : "blocked";
  }
  std::vector<std::vector<size_t>> graph;
  std::vector<std::string> refs;
  for (const Picked& p : picked) {
    graph.push_back(p.deps);
    refs.push_back(StrOr(*p.task, "ref"));
  }
  if (std::vector<size_t> cycle = FindCycle(graph); !cycle.empty()) {
    return FailedPreconditionError("tasks: the dependencies form a cycle, which Genie refuses: " +
                                   CyclePath(cycle, refs));
  }
  if (!converted.empty()) {
    std::vector<std::string> changes;
    for (size_t i : converted) {
      const Json& task = *picked[i].task;
      changes.push_back(StrOr(task, "ref", StrOr(task, "id")) + " " + StrOr(task, "status") +
                        " -> " + picked[i].status);
    }
    notes.push_back("statuses: " + std::to_string(converted.size()) +
                    " written in Genie's vocabulary (blocked, ready, in_progress, done): " +
                    JoinNames(changes));
  }
  if (dropped > 0) {
    notes.push_back("dependencies: " + std::to_string(dropped) +
                    " on tasks the file does not list were not written");
  }
  return picked;
}

void NoteUnwritten(const RunImage& image, const std::string& file,
                   std::vector<std::string>& notes) {
  static constexpr std::pair<const char*, const char*> kLists[] = {
      {"messages", "messages"},  {"approvals", "decisions"}, {"sessions", "sessions"},
      {"handoffs", "hand-offs"}, {"usage", "usage records"}, {"questions", "open questions"}};
  for (const auto& [list, what] : kLists) {
    const size_t n = ArrayAt(image, list).size();
    if (n > 0) {
      notes.push_back(std::string(list) + ": " + file + " has no " + what + "; " +
                      std::to_string(n) + " not written");
    }
  }
  size_t history = 0;
  for (const Json& e : ArrayAt(image, "history")) {
    const std::string kind = StrOr(e, "kind");
    history += kind == "run.progress" || kind == "sgai.handoff" || kind == "stigmergy.signal" ||
               kind == "graph.node";
  }
  if (history > 0) {
    notes.push_back("history: " + file + " has no history; " + std::to_string(history) +
                    " events not written");
  }
  size_t bodies = 0;
  for (const Json& t : ArrayAt(image, "tasks")) bodies += !StrOr(t, "body").empty();
  if (bodies > 0) {
    notes.push_back("bodies: " + file + " has no task descriptions; " + std::to_string(bodies) +
                    " not written");
  }
}

std::string UniqueName(const std::string& preferred, const Json& task,
                       std::set<std::string>& taken) {
  std::string base = preferred;
  if (base.empty() || taken.count(base) != 0) {
    const std::string ref = StrOr(task, "ref", StrOr(task, "id"));
    if (base.empty() || (!ref.empty() && taken.count(ref) == 0)) base = ref;
  }
  if (base.empty()) base = "task";
  std::string name = base;
  for (int n = 2; taken.count(name) != 0; ++n) name = base + "#" + std::to_string(n);
  taken.insert(name);
  return name;
}

}  // namespace baton::genie_internal
