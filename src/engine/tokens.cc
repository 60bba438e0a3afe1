#include "engine/tokens.h"

#include <openssl/rand.h>

#include "engine/ledger.h"
#include "util/clock.h"
#include "util/sha256.h"

namespace baton {
namespace {

constexpr char kColumns[] =
    "id, agent_id, role, note, created_by, created_at, revoked_at";

Json TokenOf(const Row& r) {
  return Json{{"id", r.Str(0)},
              {"agent", r.Str(1)},
              {"role", r.Str(2)},
              {"note", r.Str(3)},
              {"created_by", r.Str(4)},
              {"created_at", r.Str(5)},
              {"revoked_at", r.IsNull(6) ? Json() : Json(r.Str(6))}};
}

Result<std::string> NewSecret() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    return InternalError("token: the system's random source failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string secret = "baton_";
  for (unsigned char b : bytes) {
    secret.push_back(kHex[b >> 4]);
    secret.push_back(kHex[b & 15]);
  }
  return secret;
}

}  // namespace

Result<Json> CreateToken(OpContext& ctx, const Json& in) {
  const std::string agent = in.at("holder").get<std::string>();
  const std::string role = in.at("holder_role").get<std::string>();
  RETURN_IF_ERROR(CheckRole(role).WithPrefix("holder_role"));
  // An admin passes every role check: only an admin may make another.
  if (role == "admin" && ctx.actor.role != "admin") {
    return PermissionDeniedError("holder_role: only an admin may make an admin token (caller's role: " +
                                 ctx.actor.role + ")");
  }
  ASSIGN_OR_RETURN(std::string secret, NewSecret());
  const std::string id = NewId("tok");
  const std::string note = in.value("note", "");
  RETURN_IF_ERROR(ctx.txn.Exec("INSERT INTO tokens (id, hash, agent_id, role, note, created_by, "
                               "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                               {SqlText(id), SqlText(Sha256Hex(secret)), SqlText(agent),
                                SqlText(role), SqlText(note), SqlText(ctx.actor.id),
                                SqlText(ctx.now)})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "token.created",
                                    .summary = "token " + id + " for " + agent + " (" + role + ")",
                                    .payload = {{"token_id", id}, {"agent", agent}, {"role", role}}})
                      .status());
  return Json{{"id", id},      {"token", secret}, {"agent", agent},
              {"role", role},  {"note", note},    {"created_at", ctx.now}};
}

Result<Json> ListTokens(OpContext& ctx, const Json&) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   ctx.txn.Query(std::string("SELECT ") + kColumns + " FROM tokens ORDER BY created_at, id", {}));
  Json list = Json::array();
  for (const Row& r : rows) list.push_back(TokenOf(r));
  return Json{{"tokens", list}};
}

Result<Json> RevokeToken(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   ctx.txn.Query(std::string("SELECT ") + kColumns + " FROM tokens WHERE id = ?", {SqlText(id)}));
  if (rows.empty()) return NotFoundError("id: no token " + id + "; baton token list shows them");
  if (!rows[0].IsNull(6)) return TokenOf(rows[0]);  // revoking twice changes nothing
  RETURN_IF_ERROR(ctx.txn.Exec("UPDATE tokens SET revoked_at = ? WHERE id = ?",
                               {SqlText(ctx.now), SqlText(id)})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "token.revoked",
                                    .summary = "token " + id + " of " + rows[0].Str(1) + " revoked",
                                    .payload = {{"token_id", id}, {"agent", rows[0].Str(1)}}})
                      .status());
  Json out = TokenOf(rows[0]);
  out["revoked_at"] = ctx.now;
  return out;
}

Result<Json> ResolveToken(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   ctx.txn.Query("SELECT agent_id, role FROM tokens WHERE hash = ? AND revoked_at IS NULL",
                                 {SqlText(Sha256Hex(in.at("token").get<std::string>()))}));
  if (rows.empty()) return UnauthenticatedError("the bearer token is unknown or revoked");
  return Json{{"agent", rows[0].Str(0)}, {"role", rows[0].Str(1)}};
}

}  // namespace baton
