// File: machine.h
//
// State machines as data (DESIGN.md §4). A Machine is a small table — states
// (one initial, some terminal) and allowed transitions, each optionally limited
// to some operations or some roles — read from a JSON document. Every status
// change in baton passes through Machine::Check; nothing else decides whether
// a change is legal. The file format is documented in docs/machines.md.
//
// Machines are immutable after loading and safe to share between threads.

#ifndef BATON_SRC_MODEL_MACHINE_H_
#define BATON_SRC_MODEL_MACHINE_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/status.h"

namespace baton {

struct MachineState {
  std::string name;
  std::string description;
  bool initial = false;
  bool terminal = false;
};

struct MachineTransition {
  std::string from;
  std::string to;
  // When non-empty, only these operations may take the transition.
  std::vector<std::string> ops;
  // When non-empty, only callers with one of these roles may take it
  // ("admin" always may).
  std::vector<std::string> roles;
  std::string note;
};

// Who asks for a change: the operation running it and the caller's role.
struct TransitionContext {
  std::string_view op;
  std::string_view role;
};

class Machine {
 public:
  // Parses a machine document. "source" names where it came from (a file path
  // or "built-in") and prefixes every error, which also names the field, e.g.
  // ".baton/machines/review.json: transitions[2].to: unknown state \"dne\"".
  static Result<Machine> FromJson(const nlohmann::json& doc,
                                  std::string_view source);

  const std::string& name() const { return name_; }
  const std::string& system() const { return system_; }
  const std::string& description() const { return description_; }
  const std::string& source() const { return source_; }
  const std::string& initial() const { return initial_; }
  const std::vector<MachineState>& states() const { return states_; }
  const std::vector<MachineTransition>& transitions() const {
    return transitions_;
  }

  bool HasState(std::string_view state) const;
  bool IsTerminal(std::string_view state) const;

  // The states reachable from "from" in one step by this caller, in table
  // order, without duplicates.
  std::vector<std::string> AllowedNext(std::string_view from,
                                       const TransitionContext& ctx) const;

  // The one checker. OK when "from" -> "to" is allowed for "ctx". Otherwise:
  //   InvalidArgument     "to" (or "from") is not a state of this machine;
  //   FailedPrecondition  no such transition, or it is reserved to other ops;
  //   PermissionDenied    the transition is reserved to other roles.
  // Each error names the machine, current state, asked state and the allowed
  // next states, and carries them in details():
  //   {"machine", "current", "requested", "allowed": [...]}.
  Status Check(std::string_view from, std::string_view to,
               const TransitionContext& ctx) const;

  // The document form (what FromJson reads), with "from" lists expanded.
  nlohmann::json ToJson() const;
  // A Mermaid stateDiagram-v2.
  std::string ToMermaid() const;
  // A readable table for terminals.
  std::string ToText() const;

 private:
  Machine() = default;
  Status Refuse(StatusCode code, std::string_view from, std::string_view to,
                std::string_view why, const TransitionContext& ctx) const;

  std::string name_;
  std::string system_;
  std::string description_;
  std::string source_;
  std::string initial_;
  std::vector<MachineState> states_;
  std::vector<MachineTransition> transitions_;
};

// All machines known to one store: the built-in ones (each parsed the first
// time it is asked for, once per process) and the user's files. Thread-safe.
class MachineSet {
 public:
  // The built-in machines only (compiled into the binary).
  static const MachineSet& Builtin();

  // Built-ins plus every "*.json" in "dir" (missing folder = none). A file
  // that does not parse, is invalid, or reuses a built-in name is an
  // InvalidArgument naming the file and the field.
  static Result<std::shared_ptr<const MachineSet>> Load(
      const std::string& dir);

  // nullptr when there is no machine of that name.
  const Machine* Find(std::string_view name) const;
  // NotFound naming the known machines.
  Result<const Machine*> Get(std::string_view name) const;
  std::vector<const Machine*> All() const;

 private:
  Status Add(Machine machine);

  std::map<std::string, Machine, std::less<>> machines_;  // the user's
};

}  // namespace baton

#endif  // BATON_SRC_MODEL_MACHINE_H_
