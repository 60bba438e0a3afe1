// File: op_context.h
//
// What a running operation sees: its transaction, the caller, the machines,
// its own name and the time it started. One OpContext lives for one
// operation; it is not shared between threads.

#ifndef BATON_SRC_ENGINE_OP_CONTEXT_H_
#define BATON_SRC_ENGINE_OP_CONTEXT_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "model/actor.h"
#include "model/machine.h"
#include "store/store.h"
#include "util/json_util.h"

namespace baton {

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

  TransitionContext transition() const { return {op, actor.role}; }
};

}  // namespace baton

#endif  // BATON_SRC_ENGINE_OP_CONTEXT_H_
