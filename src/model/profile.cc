#include "model/profile.h"

namespace baton {
namespace {

constexpr TaskKindMachine kBatonKinds[] = {{"task", "baton.task"}};
constexpr TaskKindMachine kSgaiKinds[] = {{"todo", "sgai.todo"},
                                          {"project_todo", "sgai.todo"}};
constexpr TaskKindMachine kGenieKinds[] = {{"task", "genie.task"},
                                           {"group", "genie.group"}};
constexpr TaskKindMachine kGraphKinds[] = {{"node", "graph.node"}};
constexpr TaskKindMachine kStigmergyKinds[] = {{"story", "stigmergy.story"},
                                               {"epic", "stigmergy.epic"},
                                               {"issue", "stigmergy.issue"}};
constexpr TaskKindMachine kSinfoniaKinds[] = {{"step", "sinfonia.step"}};

constexpr Profile kProfiles[] = {
    {"baton", "baton's own vocabulary", "baton.run", "paused", "task", kBatonKinds},
    {"sgai", "sgai workflow (.sgai/state.json)", "sgai.run", "waiting-for-human", "todo", kSgaiKinds},
    {"genie", "Genie wishes and tasks", "baton.run", "paused", "task", kGenieKinds},
    {"graph", "@sys/graph workflow", "graph.run", "paused", "node", kGraphKinds},
    {"stigmergy", "Stigmergy project ledger (.ai/state.json)",
     "stigmergy.project", "HUMAN_INPUT_REQUIRED", "story", kStigmergyKinds},
    {"sinfonia", "Sinfonia workflow (workflow.md)", "sinfonia.workflow", "blocked", "step",
     kSinfoniaKinds},
};

}  // namespace

std::span<const Profile> AllProfiles() { return kProfiles; }

Result<const Profile*> FindProfile(std::string_view name) {
  std::string names;
  for (const Profile& p : kProfiles) {
    if (name == p.name) return &p;
    names += std::string(names.empty() ? "" : ", ") + p.name;
  }
  return InvalidArgumentError("profile: unknown profile \"" + std::string(name) +
                              "\" (profiles: " + names + ")");
}

Result<std::string> TaskMachineFor(const Profile& profile, std::string_view kind) {
  std::string kinds;
  for (const TaskKindMachine& k : profile.task_kinds) {
    if (kind == k.kind) return std::string(k.machine);
    kinds += std::string(kinds.empty() ? "" : ", ") + k.kind;
  }
  return InvalidArgumentError("kind: profile " + std::string(profile.name) +
                              " has no task kind \"" + std::string(kind) +
                              "\" (kinds: " + kinds + ")");
}

}  // namespace baton
