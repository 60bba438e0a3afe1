// File: actor.h
//
// Who makes a call (DESIGN.md §8): an id and one of four roles. Every
// operation has an actor, every ledger event records it, and operations and
// machine transitions may be limited to some roles ("admin" passes them all).

#ifndef BATON_SRC_MODEL_ACTOR_H_
#define BATON_SRC_MODEL_ACTOR_H_

#include <string>
#include <string_view>

#include "baton/status.h"

namespace baton {

inline constexpr std::string_view kRoles[] = {"coordinator", "agent", "human",
                                              "admin"};

struct Actor {
  std::string id;
  std::string role;
};

// InvalidArgument naming the allowed roles when "role" is not one of them.
Status CheckRole(std::string_view role);

// The default CLI actor: the login name with role "human".
Actor LocalHumanActor();

// The actor for work baton does by itself (reconcilers, mirrors).
inline Actor SystemActor() { return Actor{"baton", "admin"}; }

}  // namespace baton

#endif  // BATON_SRC_MODEL_ACTOR_H_
