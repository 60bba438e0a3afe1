// File: profile.h
//
// A profile says which machines and vocabulary a run uses (DESIGN.md §3): the
// machine of the run itself and the machine of each kind of task below it.
// Profiles are a fixed table; runs may still name any machine explicitly.

#ifndef BATON_SRC_MODEL_PROFILE_H_
#define BATON_SRC_MODEL_PROFILE_H_

#include <span>
#include <string>
#include <string_view>

#include "baton/status.h"

namespace baton {

struct TaskKindMachine {
  const char* kind;     // "todo", "group", "story", ...
  const char* machine;  // "sgai.todo", ...
};

struct Profile {
  const char* name;         // "baton", "sgai", "genie", "graph", "stigmergy", "sinfonia"
  const char* description;
  const char* run_machine;  // machine of runs with this profile
  // The run status an open question holds the run in (question.ask enters
  // it, the last answer leaves it).
  const char* waiting_status;
  const char* default_task_kind;
  std::span<const TaskKindMachine> task_kinds;  // the first is the default
};

std::span<const Profile> AllProfiles();
// InvalidArgument listing the profiles when "name" is unknown.
Result<const Profile*> FindProfile(std::string_view name);
// The machine for a task of "kind" under "profile"; InvalidArgument listing
// the kinds the profile knows when it has none for "kind".
Result<std::string> TaskMachineFor(const Profile& profile, std::string_view kind);

}  // namespace baton

#endif  // BATON_SRC_MODEL_PROFILE_H_
