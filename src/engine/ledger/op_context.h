// File: op_context.h
//
// What a running operation sees: its transaction, the caller, the machines,
// its own name and the time it started. One OpContext lives for one
// operation; it is not shared between threads.

#ifndef BATON_SRC_ENGINE_LEDGER_OP_CONTEXT_H_
#define BATON_SRC_ENGINE_LEDGER_OP_CONTEXT_H_

#ifndef BATON_ENGINE_ROOM_LEDGER
#error "engine/ledger/ is above this target: link baton_engine_ledger (src/engine/README.md)"
#endif

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "model/actor.h"
#include "model/machine.h"
#include "store/store.h"
#include "util/json_util.h"
#include "util/scoped_path.h"

namespace baton {

struct EngineHooks;  // engine/core/engine_hooks.h

struct OpContext {
  Txn& txn;
  const Actor& actor;
  const MachineSet& machines;
  std::string_view op;
  std::string now;          // RFC 3339, fixed for the whole operation
  int64_t now_ms = 0;
  const StoreInfo* store = nullptr;
  // Runs this operation changed: AppendEvent adds the run of each event, and
  // a change whose event names no run adds its run itself. Their seed-file
  // mirrors are rewritten after the commit.
  std::set<std::string> touched_runs;
  // Of those, the runs changed with no event of theirs (a message marked
  // read): a check of a mirror against its run's newest event (MirrorsBehind)
  // cannot see that change, so their mirrors are rewritten by the call
  // itself, never handed off (ApiOptions::start_background_flush).
  std::set<std::string> touched_runs_without_event;
  // The roots and the store callers' paths are checked against (Api sets it;
  // null: no path a caller names is accepted).
  const PathScope* paths = nullptr;
  // What rooms above the core add to its changes (Api sets it; null: none).
  const EngineHooks* hooks = nullptr;

  TransitionContext transition() const { return {op, actor.role}; }

  // "path" (input field "field") resolved and checked against the roots —
  // which the caller may leave with the grant "paths" — and the store's
  // files (util/scoped_path.h). A relative path starts at "base"; with no
  // base it is refused.
  Result<std::string> ScopedPath(std::string_view field, std::string_view path,
                                 std::string base = "") const {
    if (paths == nullptr) {
      return PermissionDeniedError(std::string(field) + ": " + std::string(op) +
                                   " runs without a path scope here, so it names no path");
    }
    return ResolveScopedPath(*paths, {.field = field,
                                      .path = path,
                                      .base = std::move(base),
                                      .may_leave_roots = actor.Has(kGrantPaths)});
  }
};

}  // namespace baton

#endif  // BATON_SRC_ENGINE_LEDGER_OP_CONTEXT_H_
