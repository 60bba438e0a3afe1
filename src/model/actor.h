// File: actor.h
//
// Who makes a call (DESIGN.md §8): an id and one of four roles. Every
// operation has an actor, every ledger event records it, and operations and
// machine transitions may be limited to some roles ("admin" passes them all).

#ifndef BATON_SRC_MODEL_ACTOR_H_
#define BATON_SRC_MODEL_ACTOR_H_

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "baton/status.h"

namespace baton {

inline constexpr std::string_view kRoles[] = {"coordinator", "agent", "human",
                                              "admin"};

// Grants: what a caller may do beyond its role, carried by its credential
// (docs/security.md). The user at the terminal (the CLI) and baton itself
// hold them all; a token holds those it was made with; `baton mcp` those
// named by --grant.
// Run commands: graph command/agent/http/llm/slash nodes, delivery
// commands, gate scripts.
inline constexpr std::string_view kGrantCommands = "commands";
// Run graph definitions given inline or from files outside the roots.
inline constexpr std::string_view kGrantDefinitions = "definitions";
// Name paths outside the server's roots (the store's own files stay refused).
inline constexpr std::string_view kGrantPaths = "paths";
inline constexpr std::string_view kGrants[] = {kGrantCommands, kGrantDefinitions, kGrantPaths};

struct Actor {
  std::string id;
  std::string role;
  std::vector<std::string> grants;

  bool Has(std::string_view grant) const {
    return std::find(grants.begin(), grants.end(), grant) != grants.end();
  }
};

// Every grant: for the local user and baton itself.
inline std::vector<std::string> AllGrants() { return {kGrants, kGrants + std::size(kGrants)}; }

// InvalidArgument naming the allowed roles when "role" is not one of them.
Status CheckRole(std::string_view role);

// The default CLI actor: the login name with role "human".
Actor LocalHumanActor();

// The actor for work baton does by itself (reconcilers, mirrors).
inline Actor SystemActor() { return Actor{"baton", "admin", AllGrants()}; }

}  // namespace baton

#endif  // BATON_SRC_MODEL_ACTOR_H_
