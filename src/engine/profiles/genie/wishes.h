// File: wishes.h
//
// Genie's wishes (wish-state.ts) on the task graph. A wish is a run with
// profile "genie"; each execution group is a task of kind "group" (machine
// genie.group) keyed by the group's name, with depends_on edges between
// groups. The wishes table maps (project, slug) to the run and keeps the
// structure signature: SHA-256 over the sorted {name, sorted dependsOn} of
// every group, titles excluded, as Genie computes it.
//
// Genie's rules, kept: groups without dependencies start ready, the others
// blocked; start refuses a group in progress, done, or with a dependency not
// done; completing a done group returns it unchanged; completing a blocked
// group fails listing the unmet dependencies; completing a ready group
// promotes it through in_progress (Genie #1214); completion makes every
// dependent whose dependencies are all done ready, in the same transaction;
// reset moves in_progress back to ready; creating a wish again with another
// structure is refused listing the added, removed and changed groups.
// Genie's bugs, fixed: every operation is one transaction (Genie ran several
// statements without one), start checks the status in the same transaction
// it writes (Genie's check-then-act race), and creating again never silently
// deletes the old state (Genie's createState did).

#ifndef BATON_SRC_ENGINE_PROFILES_GENIE_WISHES_H_
#define BATON_SRC_ENGINE_PROFILES_GENIE_WISHES_H_

#ifndef BATON_ENGINE_ROOM_PROFILES_GENIE
#error "engine/profiles/genie/ is above this target: link baton_engine_genie (src/engine/README.md)"
#endif

#include <string>
#include <vector>

#include "engine/ledger/op_context.h"

namespace baton {

struct WishGroupSpec {
  std::string name;
  std::string title;
  std::vector<std::string> depends_on;
};

// InvalidArgument naming the group for a self-dependency, a dependency on a
// group that does not exist, a duplicate name, or a cycle (named).
Status ValidateWishGroups(const std::vector<WishGroupSpec>& groups);
std::string WishSignature(const std::vector<WishGroupSpec>& groups);

Result<Json> CreateWish(OpContext& ctx, const Json& in);
Result<Json> WishStatus(OpContext& ctx, const Json& in);
Result<Json> ListWishes(OpContext& ctx, const Json& in);
Result<Json> StartWishGroup(OpContext& ctx, const Json& in);
Result<Json> CompleteWishGroup(OpContext& ctx, const Json& in);
Result<Json> ResetWishGroup(OpContext& ctx, const Json& in);
Result<Json> ResetWish(OpContext& ctx, const Json& in);
// Genie's WISH.md validation report, and the fixed text when asked.
Result<Json> LintWish(OpContext& ctx, const Json& in);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_PROFILES_GENIE_WISHES_H_
