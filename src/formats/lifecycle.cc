#include "formats/lifecycle.h"

#include <array>
#include <span>

namespace baton {
namespace {

using enum Phase;

struct StatusPhase {
  std::string_view status;
  Phase phase;
};

struct MachinePhases {
  std::string_view machine;
  std::span<const StatusPhase> statuses;
};

// For each machine: every status with its phase; the first status of a phase
// is the one written for it.
constexpr StatusPhase kBatonRun[] = {{"pending", kPending},   {"running", kActive},
                                     {"paused", kWaiting},    {"completed", kDone},
                                     {"failed", kFailed},     {"cancelled", kCancelled}};
constexpr StatusPhase kBatonTask[] = {{"ready", kPending},       {"blocked", kPending},
                                      {"in_progress", kActive},  {"done", kDone},
                                      {"failed", kFailed},       {"cancelled", kCancelled}};
constexpr StatusPhase kGenie[] = {{"ready", kPending},  {"blocked", kPending},
                                  {"in_progress", kActive}, {"done", kDone},
                                  {"failed", kFailed}, {"cancelled", kCancelled},
                                  {"archived", kCancelled}};
constexpr StatusPhase kGraphRun[] = {{"pending", kPending}, {"running", kActive},
                                     {"paused", kWaiting},  {"completed", kDone},
                                     {"failed", kFailed}};
constexpr StatusPhase kGraphNode[] = {{"pending", kPending},   {"running", kActive},
                                      {"completed", kDone},    {"failed", kFailed},
                                      {"skipped", kCancelled}};
constexpr StatusPhase kSgaiRun[] = {{"working", kActive},
                                    {"agent-done", kActive},
                                    {"waiting-for-human", kWaiting},
                                    {"complete", kDone}};
constexpr StatusPhase kSgaiTodo[] = {{"pending", kPending}, {"in_progress", kActive},
                                     {"completed", kDone},  {"cancelled", kCancelled}};
constexpr StatusPhase kSinfoniaWorkflow[] = {{"created", kPending},
                                             {"in-progress", kActive},
                                             {"blocked", kWaiting},
                                             {"complete", kDone},
                                             {"failed", kFailed}};
constexpr StatusPhase kSinfoniaStep[] = {{"pending", kPending},   {"in-progress", kActive},
                                         {"blocked", kWaiting},   {"completed", kDone},
                                         {"failed", kFailed}};
constexpr StatusPhase kStigmergyProject[] = {{"NEEDS_BRIEFING", kPending},
                                             {"NEEDS_PLANNING", kPending},
                                             {"READY_FOR_EXECUTION", kPending},
                                             {"EXECUTION_IN_PROGRESS", kActive},
                                             {"HUMAN_INPUT_REQUIRED", kWaiting},
                                             {"EXECUTION_HALTED", kWaiting},
                                             {"PROJECT_COMPLETE", kDone}};
constexpr StatusPhase kStigmergyEpic[] = {
    {"PENDING", kPending}, {"IN_PROGRESS", kActive}, {"COMPLETE", kDone}};
constexpr StatusPhase kStigmergyStory[] = {{"PENDING", kPending},
                                           {"IN_PROGRESS", kActive},
                                           {"AWAITING_VERIFICATION", kActive},
                                           {"COMPLETE", kDone},
                                           {"FAILED", kFailed}};
constexpr StatusPhase kStigmergyIssue[] = {{"OPEN", kPending},
                                           {"IN_PROGRESS", kActive},
                                           {"RESOLVED", kDone},
                                           {"FAILED_TO_RESOLVE", kFailed}};

constexpr MachinePhases kMachines[] = {
    {"baton.run", kBatonRun},
    {"baton.task", kBatonTask},
    {"genie.group", kGenie},
    {"genie.task", kGenie},
    {"graph.run", kGraphRun},
    {"graph.node", kGraphNode},
    {"sgai.run", kSgaiRun},
    {"sgai.todo", kSgaiTodo},
    {"sinfonia.workflow", kSinfoniaWorkflow},
    {"sinfonia.step", kSinfoniaStep},
    {"stigmergy.project", kStigmergyProject},
    {"stigmergy.epic", kStigmergyEpic},
    {"stigmergy.story", kStigmergyStory},
    {"stigmergy.issue", kStigmergyIssue},
};

const MachinePhases* Find(std::string_view machine) {
  for (const MachinePhases& m : kMachines) {
    if (m.machine == machine) return &m;
  }
  return nullptr;
}

// When a machine has no status of a phase, the nearest phase it has.
constexpr std::array<Phase, 6> kFallback = {
    /*kPending=*/kActive, /*kActive=*/kPending, /*kWaiting=*/kActive,
    /*kDone=*/kActive,    /*kFailed=*/kCancelled, /*kCancelled=*/kFailed};

}  // namespace

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case kPending: return "pending";
    case kActive: return "active";
    case kWaiting: return "waiting";
    case kDone: return "done";
    case kFailed: return "failed";
    case kCancelled: return "cancelled";
  }
  return "active";
}

std::optional<Phase> PhaseOf(std::string_view machine, std::string_view status) {
  const MachinePhases* m = Find(machine);
  if (m == nullptr) return std::nullopt;
  for (const StatusPhase& s : m->statuses) {
    if (s.status == status) return s.phase;
  }
  return std::nullopt;
}

std::string StatusFor(std::string_view machine, Phase phase) {
  const MachinePhases* m = Find(machine);
  if (m == nullptr || m->statuses.empty()) return std::string(PhaseName(phase));
  // At most a few hops: every machine has an active or a pending status.
  for (int hop = 0; hop < 6; ++hop) {
    for (const StatusPhase& s : m->statuses) {
      if (s.phase == phase) return std::string(s.status);
    }
    phase = kFallback[static_cast<size_t>(phase)];
  }
  return std::string(m->statuses.front().status);
}

std::string ConvertStatus(std::string_view from, std::string_view status, std::string_view to) {
  if (from == to) return std::string(status);
  return StatusFor(to, PhaseOf(from, status).value_or(kActive));
}

}  // namespace baton
