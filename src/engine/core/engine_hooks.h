// File: engine_hooks.h
//
// What the rooms above the core add to the core's own changes, so that the
// core calls no feature: a board moves a card when its task succeeds, sgai
// moves its workflow to building when its work gate is approved. Each room
// adds its hooks when its operations are registered (ops/registry.h
// Registry::hooks), explicitly: a static initialiser in a static library
// would be dropped by the linker and the hook would vanish without a sound.
// Hooks run inside the operation's transaction, in the order added; an
// error fails the operation.

#ifndef BATON_SRC_ENGINE_CORE_ENGINE_HOOKS_H_
#define BATON_SRC_ENGINE_CORE_ENGINE_HOOKS_H_

#ifndef BATON_ENGINE_ROOM_CORE
#error "engine/core/ is above this target: link baton_engine_core (src/engine/README.md)"
#endif

#include <functional>
#include <string>
#include <vector>

#include "engine/ledger/op_context.h"
#include "model/question.h"

namespace baton {

struct EngineHooks {
  // A task's status moved to a success outcome; called before its
  // dependents are re-evaluated (the ledger's order of events follows).
  std::vector<std::function<Status(OpContext& ctx, const std::string& task_id)>> task_succeeded;
  // A question (as it was before the answer) was answered with "answer"
  // ({answers, text}); a hook may add to the question.answered event's
  // "payload", appended after the hooks ran.
  std::vector<std::function<Status(OpContext& ctx, const Question& question, const Json& answer,
                                   Json& payload)>>
      question_answered;
};

}  // namespace baton

#endif  // BATON_SRC_ENGINE_CORE_ENGINE_HOOKS_H_
