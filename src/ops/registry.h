// File: registry.h
//
// The operation registry (DESIGN.md §2): the one API surface. Each operation
// is defined once — name, summary, input and output JSON Schema, the roles
// that may call it, whether it mutates, and its handler — and the CLI verbs,
// the HTTP routes and (later) the MCP tools are all generated from here.
//
// Registry::Add completes the input schema of every mutating operation
// (procedures aside: their changes are the operations they call) with the
// two fields all of them accept: "idempotency_key" (a retry with the same key
// returns the first result and changes nothing) and, for operations that
// change an existing row, "expect_version" (compare-and-set: Aborted when the
// row moved). It also gives every integer of the input schema a range — the
// one the operation states, or +-(2^53 - 1) — so no input wraps into
// another number in a handler. A Registry is built once (each family of
// operations when it is first asked for) and then only read.

#ifndef BATON_SRC_OPS_REGISTRY_H_
#define BATON_SRC_OPS_REGISTRY_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/engine_hooks.h"
#include "engine/ledger/op_context.h"
#include "util/clock.h"
#include "util/mutex.h"

namespace baton {

using OpHandler = std::function<Result<Json>(OpContext&, const Json&)>;
// Optional rendering of an operation's result for `--output text`.
using OpRenderer = std::function<std::string(const Json&)>;

// What a procedure (below) may do: call other operations and wait for the
// store to change. Implemented by Api.
class OpRunner {
 public:
  virtual ~OpRunner() = default;
  // Calls "op" as the procedure's caller.
  virtual Result<Json> Call(std::string_view op, const Json& input) = 0;
  // Calls "op" as baton itself (SystemActor): for bookkeeping a procedure
  // does on the caller's behalf, such as recording a delivery attempt.
  virtual Result<Json> CallAsSystem(std::string_view op, const Json& input) = 0;
  // Sleeps until a write may have committed — at once for writes made in this
  // process, at most a quarter second later for other processes' — or until
  // "deadline_ms" (NowMillis time). False once the deadline has passed.
  virtual bool WaitForChange(int64_t deadline_ms) = 0;
  virtual const Actor& actor() const = 0;
  // Tells whoever called a line about long work as it goes (a graph run's
  // nodes, a wait for a human); the CLI prints it on stderr. May do nothing.
  virtual void Progress(const std::string& line) {}
  // The roots and store the caller's paths are checked against
  // (util/scoped_path.h); null: no path a caller names is accepted.
  virtual const PathScope* paths() const { return nullptr; }
  // What the procedure's operations see as "now" (ApiOptions::time).
  virtual const TimeSource& time() const { return SystemTime(); }
};

// An operation that is not one transaction: a long poll (mail.wait) or work
// with effects outside the store between transactions (mail.deliver runs
// delivery commands). It composes other operations through the runner, so
// each of its changes is still one operation with its ledger events.
using OpProcedure = std::function<Result<Json>(OpRunner&, const Json&)>;

struct Operation {
  std::string name;     // "group.verb", e.g. "run.set_status"
  std::string summary;  // one line, shown by `baton ops` and `--help`
  Json input_schema;
  Json output_schema;
  std::vector<std::string> roles;  // empty: any role; "admin" always may
  bool mutating = false;
  bool versioned = false;    // mutates an existing row: takes expect_version
  bool idempotent = false;   // calling twice with the same input acts once
  bool destructive = false;  // may destroy or overwrite data
  std::vector<std::string> positional;  // CLI positional arguments, in order
  OpHandler handler;
  // false for operations that never touch the store (machines, the registry):
  // they work without creating a store.
  bool uses_store = true;
  OpRenderer render_text;
  // The CLI's exit status for a result (0 when unset): an operation that
  // succeeds while what it ran failed (a graph run that ended failed) says
  // so to scripts.
  std::function<int(const Json&)> exit_code;
  // Set instead of "handler" for operations that compose others.
  OpProcedure procedure;
};

class Registry;

// Operations that one function adds together, and the groups they are in
// (the part of an operation's name before the dot). A registry adds a
// family the first time an operation of one of its groups is asked for, so
// a process that runs one verb builds that group's schemas only (a `baton`
// command); listing them all adds every family.
struct OpFamily {
  std::vector<std::string> groups;
  Status (*add)(Registry&) = nullptr;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Adds "op" after completing and checking its schemas. InvalidArgument for
  // a bad schema, AlreadyExists for a duplicate name. Called while the
  // registry is built (directly, or by a family being added).
  Status Add(Operation op);
  // Adds "family" when one of its groups is first asked for.
  void AddFamily(OpFamily family);

  // Thread-safe; may add families of the name's group first, up to the one
  // that defines it.
  const Operation* Find(std::string_view name) const;
  // All operations sorted by name (every family added first).
  std::vector<const Operation*> All() const;
  // The operations of "group" sorted by name (its families added first).
  std::vector<const Operation*> InGroup(std::string_view group) const;
  // Every group, of the operations added and of the families not yet
  // added, sorted; adds nothing.
  std::vector<std::string> Groups() const;
  // Adds every family not yet added: the first failure (a family whose
  // schemas do not check), also the one a Find met and answered null for.
  Status Complete() const;

  // {name, summary, roles, mutating, annotations, input_schema, output_schema}
  static Json Describe(const Operation& op);

  // What the rooms above the engine's core add to its changes; added before
  // any family (a hook must run whichever operations were built). Every
  // operation's context points here.
  EngineHooks& hooks() { return hooks_; }
  const EngineHooks& hooks() const { return hooks_; }

 private:
  // Adds the pending families that define "group" (all of them when
  // "group" is empty), in the order they were given; stops at the one that
  // defines "name" when one is named.
  void AddFamilies(std::string_view group, std::string_view name = "") const REQUIRES(mu_);

  mutable Mutex mu_;
  mutable std::vector<OpFamily> pending_ GUARDED_BY(mu_);
  mutable Status family_error_ GUARDED_BY(mu_);
  // True once no family is pending: ops_ no longer changes, and is read
  // without mu_.
  mutable std::atomic<bool> complete_{true};
  // Written under mu_ (or before the registry is shared), read under it
  // until complete_.
  mutable std::map<std::string, Operation, std::less<>> ops_;
  EngineHooks hooks_;
};

// PermissionDenied unless "role" may call "op".
Status CheckOpRole(const Operation& op, std::string_view role);

}  // namespace baton

#endif  // BATON_SRC_OPS_REGISTRY_H_
