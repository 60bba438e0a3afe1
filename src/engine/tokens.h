// File: tokens.h
//
// Bearer tokens for HTTP callers (DESIGN.md §8). A token names an agent id
// and a role; only its SHA-256 is stored, so the secret is shown once, when
// it is made. Resolving a token gives the caller every HTTP request of
// `baton serve --auth token` runs as; a revoked token resolves to nothing.

#ifndef BATON_SRC_ENGINE_TOKENS_H_
#define BATON_SRC_ENGINE_TOKENS_H_

#include "engine/op_context.h"

namespace baton {

// token.create {holder, holder_role, note?} -> {id, token, agent, role, note,
// created_at}: "token" is the secret, returned only here.
Result<Json> CreateToken(OpContext& ctx, const Json& in);
// token.list -> {tokens: [{id, agent, role, note, created_by, created_at,
// revoked_at}]}, never the secret.
Result<Json> ListTokens(OpContext& ctx, const Json& in);
// token.revoke {id} -> the token; NotFound for an unknown id.
Result<Json> RevokeToken(OpContext& ctx, const Json& in);
// token.resolve {token} -> {agent, role}; Unauthenticated for a token
// that is unknown or revoked.
Result<Json> ResolveToken(OpContext& ctx, const Json& in);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_TOKENS_H_
