// File: tokens.h
//
// Bearer tokens for HTTP callers (DESIGN.md §8). A token names an agent id,
// a role and the grants it carries (model/actor.h: commands, definitions,
// paths); only its SHA-256 is stored, so the secret is shown once, when it is
// made. Resolving a token gives the caller every HTTP request of
// `baton serve` (auth "token", the default) runs as; a revoked token
// resolves to nothing.
//
// The human's own credential is not a token row: it is a secret in a file
// beside the store (HumanSecretPath), readable by its owner only, which
// `baton serve` and `baton url` make on first use (docs/mcp.md
// "Authentication").

#ifndef BATON_SRC_ENGINE_CORE_TOKENS_H_
#define BATON_SRC_ENGINE_CORE_TOKENS_H_

#ifndef BATON_ENGINE_ROOM_CORE
#error "engine/core/ is above this target: link baton_engine_core (src/engine/README.md)"
#endif

#include <string>

#include "engine/ledger/op_context.h"

namespace baton {

// token.create {holder, holder_role, grants?, note?} -> {id, token, agent,
// role, grants, note, created_at}: "token" is the secret, returned only here.
// PermissionDenied for an admin token made by a non-admin, and for a grant
// the caller does not hold itself (nobody gives what it lacks).
Result<Json> CreateToken(OpContext& ctx, const Json& in);
// token.list -> {tokens: [{id, agent, role, grants, note, created_by,
// created_at, revoked_at}]}, never the secret.
Result<Json> ListTokens(OpContext& ctx, const Json& in);
// token.revoke {id} -> the token; NotFound for an unknown id.
Result<Json> RevokeToken(OpContext& ctx, const Json& in);
// token.resolve {token} -> {agent, role, grants}; Unauthenticated for a
// token that is unknown or revoked.
Result<Json> ResolveToken(OpContext& ctx, const Json& in);

// The dashboard's sessions (http/server.cc /v1/session). Signing in with the
// human's secret or a token makes a session of two random secrets: "session"
// travels in an HttpOnly cookie, "proof" stays in the page's storage (per
// origin, port included) and comes back in a header. Browsers send a cookie
// to every port of a host, so the cookie alone proves nothing: a request
// needs both. Only their SHA-256 is stored; a session made with a token dies
// with the token.
//
// session.create {credential: "human" | "token", token?, agent, role} ->
// {session, proof, expires_at}, with a "session.created" event.
Result<Json> CreateWebSession(OpContext& ctx, const Json& in);
// session.resolve {session, proof} -> {credential, agent, role, grants};
// Unauthenticated for an unknown, expired or ended session, a wrong proof,
// or a revoked token.
Result<Json> ResolveWebSession(OpContext& ctx, const Json& in);
// session.list -> {sessions: [{id, agent, role, credential, created_at,
// expires_at}]}: who is signed in to the dashboard (live sessions; "id" is
// a prefix of the session's hash, as its events name it).
Result<Json> ListWebSessions(OpContext& ctx, const Json& in);
// session.end {session}: signs out ("session.ended"); ending an unknown
// session changes nothing.
Result<Json> EndWebSession(OpContext& ctx, const Json& in);

// Where the human's secret of the store at "store_location" lives: the
// store's path plus ".secret" (.baton/baton.db -> .baton/baton.db.secret).
// "" for a store without a file (":memory:").
std::string HumanSecretPath(const std::string& store_location);

// The human's secret at "path", made first when the file does not exist:
// written to a new file opened O_EXCL with mode 0600 (never readable by
// anyone else, even for an instant) and linked into place, so two processes
// making it at once agree on one secret. For "path" "" a fresh secret that
// lives only in memory. FailedPrecondition naming the path and the rule when
// the file is a symbolic link or not a regular file, is not owned by this
// user, or is readable or writable by group or others (its mode must be
// 0600 or stricter); DataLoss when it holds no secret.
Result<std::string> LoadOrCreateHumanSecret(const std::string& path);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_CORE_TOKENS_H_
