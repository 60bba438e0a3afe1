#include "engine/core/tokens.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/ledger/ledger.h"
#include "util/clock.h"
#include "util/sha256.h"

namespace baton {
namespace {

constexpr char kColumns[] =
    "id, agent_id, role, note, created_by, created_at, revoked_at, grants";

// A stored grants column: a JSON array of grant names; anything else (a row
// edited by hand) carries no grant rather than failing every request.
Json GrantsOf(const std::string& text) {
  Result<Json> parsed = ParseJson(text, "tokens.grants");
  Json out = Json::array();
  if (!parsed.ok() || !parsed->is_array()) return out;
  for (std::string_view grant : kGrants) {
    for (const Json& g : *parsed) {
      if (g.is_string() && g.get<std::string>() == grant) {
        out.push_back(std::string(grant));
        break;
      }
    }
  }
  return out;
}

Json TokenOf(const Row& r) {
  return Json{{"id", r.Str(0)},
              {"agent", r.Str(1)},
              {"role", r.Str(2)},
              {"grants", GrantsOf(r.Str(7))},
              {"note", r.Str(3)},
              {"created_by", r.Str(4)},
              {"created_at", r.Str(5)},
              {"revoked_at", r.IsNull(6) ? Json() : Json(r.Str(6))}};
}

// The grants asked for, each once in kGrants order; PermissionDenied for one
// the caller does not hold (the schema has already refused unknown names).
Result<Json> GrantsToGive(const OpContext& ctx, const Json& in) {
  const Json asked = in.value("grants", Json::array());
  Json out = Json::array();
  for (std::string_view grant : kGrants) {
    if (std::find(asked.begin(), asked.end(), Json(std::string(grant))) == asked.end()) continue;
    if (!ctx.actor.Has(grant)) {
      return PermissionDeniedError("grants: " + std::string(grant) +
                                   ": a caller gives only grants it holds itself (" + ctx.actor.id +
                                   ", role " + ctx.actor.role + ", does not hold it)");
    }
    out.push_back(std::string(grant));
  }
  return out;
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
  ASSIGN_OR_RETURN(Json grants, GrantsToGive(ctx, in));
  ASSIGN_OR_RETURN(std::string secret, NewSecret());
  const std::string id = NewId("tok");
  const std::string note = in.value("note", "");
  RETURN_IF_ERROR(ctx.txn.Exec("INSERT INTO tokens (id, hash, agent_id, role, note, created_by, "
                               "created_at, grants) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                               {SqlText(id), SqlText(Sha256Hex(secret)), SqlText(agent),
                                SqlText(role), SqlText(note), SqlText(ctx.actor.id),
                                SqlText(ctx.now), SqlText(grants.dump())})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "token.created",
                                    .summary = "token " + id + " for " + agent + " (" + role + ")",
                                    .payload = {{"token_id", id},
                                                {"agent", agent},
                                                {"role", role},
                                                {"grants", grants}}})
                      .status());
  return Json{{"id", id},         {"token", secret}, {"agent", agent},   {"role", role},
              {"grants", grants}, {"note", note},    {"created_at", ctx.now}};
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
                   ctx.txn.Query("SELECT agent_id, role, grants FROM tokens WHERE hash = ? AND "
                                 "revoked_at IS NULL",
                                 {SqlText(Sha256Hex(in.at("token").get<std::string>()))}));
  if (rows.empty()) return UnauthenticatedError("the bearer token is unknown or revoked");
  return Json{{"agent", rows[0].Str(0)}, {"role", rows[0].Str(1)}, {"grants", GrantsOf(rows[0].Str(2))}};
}

// ---- the dashboard's sessions ------------------------------------------------

namespace {

constexpr int64_t kSessionMillis = int64_t{30} * 24 * 3600 * 1000;

}  // namespace

Result<Json> CreateWebSession(OpContext& ctx, const Json& in) {
  const std::string kind = in.at("credential").get<std::string>();
  std::string credential = "human";
  if (kind == "token") {
    // The token must be live now; the session follows it from then on.
    ASSIGN_OR_RETURN(Json who, ResolveToken(ctx, {{"token", in.value("token", "")}}));
    credential = "token:" + Sha256Hex(in["token"].get<std::string>());
  }
  ASSIGN_OR_RETURN(std::string session, NewSecret());
  ASSIGN_OR_RETURN(std::string proof, NewSecret());
  const std::string agent = in.at("agent").get<std::string>();
  const std::string role = in.at("role").get<std::string>();
  const int64_t expires = ctx.now_ms + kSessionMillis;
  RETURN_IF_ERROR(ctx.txn
                      .Exec("INSERT INTO web_sessions (id_hash, proof_hash, credential, agent_id, "
                            "role, created_at, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            {SqlText(Sha256Hex(session)), SqlText(Sha256Hex(proof)),
                             SqlText(credential), SqlText(agent), SqlText(role), SqlText(ctx.now),
                             SqlInt(expires)})
                      .status());
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "session.created",
                                    .summary = "dashboard sign-in as " + agent + " (" + role + ")",
                                    .payload = {{"agent", agent},
                                                {"role", role},
                                                {"credential", kind},
                                                {"session", Sha256Hex(session).substr(0, 12)}}})
                      .status());
  return Json{{"session", session}, {"proof", proof}, {"expires_at", FormatTime(expires)}};
}

Result<Json> ResolveWebSession(OpContext& ctx, const Json& in) {
  const Status refused = UnauthenticatedError(
      "the dashboard's session is unknown, ended or expired, or its proof is wrong: sign in "
      "again with the link baton serve printed (baton url)");
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   ctx.txn.Query("SELECT proof_hash, credential, agent_id, role, expires_ms FROM "
                                 "web_sessions WHERE id_hash = ?",
                                 {SqlText(Sha256Hex(in.at("session").get<std::string>()))}));
  if (rows.empty() || rows[0].Int(4) < ctx.now_ms) return refused;
  // Both are hashes of random secrets: comparing them leaks nothing useful.
  if (rows[0].Str(0) != Sha256Hex(in.at("proof").get<std::string>())) return refused;
  const std::string credential = rows[0].Str(1);
  if (credential == "human") {
    return Json{{"credential", "human"},
                {"agent", rows[0].Str(2)},
                {"role", rows[0].Str(3)},
                {"grants", Json::array()}};
  }
  ASSIGN_OR_RETURN(std::vector<Row> token,
                   ctx.txn.Query("SELECT agent_id, role, grants FROM tokens WHERE hash = ? AND "
                                 "revoked_at IS NULL",
                                 {SqlText(credential.substr(6))}));
  if (token.empty()) return refused;
  return Json{{"credential", "token"},
              {"agent", token[0].Str(0)},
              {"role", token[0].Str(1)},
              {"grants", GrantsOf(token[0].Str(2))}};
}

Result<Json> ListWebSessions(OpContext& ctx, const Json&) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   ctx.txn.Query("SELECT id_hash, agent_id, role, credential, created_at, "
                                 "expires_ms FROM web_sessions WHERE expires_ms >= ? ORDER BY "
                                 "created_at, id_hash",
                                 {SqlInt(ctx.now_ms)}));
  Json list = Json::array();
  for (const Row& r : rows) {
    list.push_back({{"id", r.Str(0).substr(0, 12)},
                    {"agent", r.Str(1)},
                    {"role", r.Str(2)},
                    {"credential", r.Str(3) == "human" ? "human" : "token"},
                    {"created_at", r.Str(4)},
                    {"expires_at", FormatTime(r.Int(5))}});
  }
  return Json{{"sessions", list}};
}

Result<Json> EndWebSession(OpContext& ctx, const Json& in) {
  const std::string hash = Sha256Hex(in.at("session").get<std::string>());
  ASSIGN_OR_RETURN(int64_t gone,
                   ctx.txn.Exec("DELETE FROM web_sessions WHERE id_hash = ?", {SqlText(hash)}));
  if (gone > 0) {
    RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "session.ended",
                                      .summary = "dashboard sign-out",
                                      .payload = {{"session", hash.substr(0, 12)}}})
                        .status());
  }
  return Json{{"ended", gone > 0}};
}

// ---- the human's secret ------------------------------------------------------

namespace {

constexpr size_t kMinSecret = 32;
constexpr size_t kMaxSecret = 256;

// Refuses a secret file anyone but its owner could read or change.
Status CheckSecretFile(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) {
    return FailedPreconditionError(path + ": the human's secret must be a regular file");
  }
  if (st.st_uid != geteuid()) {
    return FailedPreconditionError(path + ": the human's secret must belong to the user running baton (uid " +
                                   std::to_string(geteuid()) + "; it belongs to uid " +
                                   std::to_string(st.st_uid) + "); delete it and baton makes a new one");
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return FailedPreconditionError(
        path + ": the human's secret must be readable by its owner only (mode 0600), it is " + mode +
        ": anyone who read it can act as the human; delete it and baton makes a new one (or chmod 600 " +
        path + " if nobody else can have read it)");
  }
  return Status();
}

Result<std::string> ReadSecret(const std::string& path, int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return InternalError(path + ": " + std::strerror(errno));
  RETURN_IF_ERROR(CheckSecretFile(path, st));
  char buf[kMaxSecret + 2];
  ssize_t n = 0;
  size_t got = 0;
  while (got < sizeof buf && (n = read(fd, buf + got, sizeof buf - got)) > 0) got += static_cast<size_t>(n);
  if (n < 0) return InternalError(path + ": " + std::strerror(errno));
  std::string secret(buf, got);
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  const bool printable = std::all_of(secret.begin(), secret.end(), [](char c) { return c > ' ' && c < 127; });
  if (secret.size() < kMinSecret || secret.size() > kMaxSecret || !printable) {
    return DataLossError(path + ": holds no secret (one line of 32 to 256 printable characters); "
                         "delete it and baton makes a new one");
  }
  return secret;
}

// Writes a new secret to a private temporary file, then links it to "path":
// link() never replaces, so of two processes making it at once one wins and
// both then read the winner's.
Status MakeSecretFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string secret, NewSecret());
  const std::string temp = path + ".tmp-" + std::to_string(getpid()) + "-" + NewId("s");
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return FailedPreconditionError(temp + ": cannot create the human's secret: " + std::strerror(errno));
  const std::string line = secret + "\n";
  const bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                       fsync(fd) == 0;
  close(fd);
  const int linked = written ? link(temp.c_str(), path.c_str()) : -1;
  const int link_errno = errno;
  unlink(temp.c_str());
  if (!written) return InternalError(temp + ": cannot write the human's secret");
  if (linked != 0 && link_errno != EEXIST) {
    return FailedPreconditionError(path + ": cannot create the human's secret: " + std::strerror(link_errno));
  }
  return Status();
}

}  // namespace

std::string HumanSecretPath(const std::string& store_location) {
  if (store_location.empty() || store_location == ":memory:") return "";
  return store_location + ".secret";
}

Result<std::string> LoadOrCreateHumanSecret(const std::string& path) {
  if (path.empty()) return NewSecret();
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      Result<std::string> secret = ReadSecret(path, fd);
      close(fd);
      return secret;
    }
    if (errno == ELOOP) {
      return FailedPreconditionError(path + ": the human's secret must be a regular file, not a symbolic link");
    }
    if (errno != ENOENT) return FailedPreconditionError(path + ": cannot read the human's secret: " + std::strerror(errno));
    RETURN_IF_ERROR(MakeSecretFile(path));
  }
  return InternalError(path + ": the human's secret vanished while it was being made");
}

}  // namespace baton
