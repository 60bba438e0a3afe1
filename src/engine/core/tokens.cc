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
#include "store/tables/token_table.h"
#include "store/tables/web_session_table.h"
#include "util/clock.h"
#include "util/sha256.h"
#include "util/store_location.h"

namespace baton {
namespace {

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
  RETURN_IF_ERROR(InsertTokenRow(ctx.txn,
                                 {.id = id,
                                  .agent_id = agent,
                                  .role = role,
                                  .grants = grants,
                                  .note = note,
                                  .created_by = ctx.actor.id,
                                  .created_at = ctx.now},
                                 Sha256Hex(secret)));
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
  ASSIGN_OR_RETURN(std::vector<Token> tokens, ListTokenRows(ctx.txn));
  Json list = Json::array();
  for (const Token& t : tokens) list.push_back(TokenToJson(t));
  return Json{{"tokens", list}};
}

Result<Json> RevokeToken(OpContext& ctx, const Json& in) {
  const std::string id = in.at("id").get<std::string>();
  ASSIGN_OR_RETURN(std::optional<Token> token, FindTokenRow(ctx.txn, id));
  if (!token) return NotFoundError("id: no token " + id + "; baton token list shows them");
  if (token->revoked_at) return TokenToJson(*token);  // revoking twice changes nothing
  RETURN_IF_ERROR(RevokeTokenRow(ctx.txn, id, ctx.now));
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "token.revoked",
                                    .summary =
                                        "token " + id + " of " + token->agent_id + " revoked",
                                    .payload = {{"token_id", id}, {"agent", token->agent_id}}})
                      .status());
  token->revoked_at = ctx.now;
  return TokenToJson(*token);
}

Result<Json> ResolveToken(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(std::optional<TokenHolder> holder,
                   FindLiveTokenHolder(ctx.txn, Sha256Hex(in.at("token").get<std::string>())));
  if (!holder) return UnauthenticatedError("the bearer token is unknown or revoked");
  return Json{{"agent", holder->agent_id}, {"role", holder->role}, {"grants", holder->grants}};
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
  RETURN_IF_ERROR(InsertWebSession(ctx.txn, {.id_hash = Sha256Hex(session),
                                             .proof_hash = Sha256Hex(proof),
                                             .credential = credential,
                                             .agent_id = agent,
                                             .role = role,
                                             .created_at = ctx.now,
                                             .expires_ms = expires}));
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
  ASSIGN_OR_RETURN(std::optional<WebSession> session,
                   FindWebSession(ctx.txn, Sha256Hex(in.at("session").get<std::string>())));
  if (!session || session->expires_ms < ctx.now_ms) return refused;
  // Both are hashes of random secrets: comparing them leaks nothing useful.
  if (session->proof_hash != Sha256Hex(in.at("proof").get<std::string>())) return refused;
  if (session->credential == "human") {
    return Json{{"credential", "human"},
                {"agent", session->agent_id},
                {"role", session->role},
                {"grants", Json::array()}};
  }
  ASSIGN_OR_RETURN(std::optional<TokenHolder> holder,
                   FindLiveTokenHolder(ctx.txn, session->credential.substr(6)));
  if (!holder) return refused;
  return Json{{"credential", "token"},
              {"agent", holder->agent_id},
              {"role", holder->role},
              {"grants", holder->grants}};
}

Result<Json> ListWebSessions(OpContext& ctx, const Json&) {
  ASSIGN_OR_RETURN(std::vector<WebSession> sessions, ListLiveWebSessions(ctx.txn, ctx.now_ms));
  Json list = Json::array();
  for (const WebSession& s : sessions) {
    list.push_back({{"id", s.id_hash.substr(0, 12)},
                    {"agent", s.agent_id},
                    {"role", s.role},
                    {"credential", s.credential == "human" ? "human" : "token"},
                    {"created_at", s.created_at},
                    {"expires_at", FormatTime(s.expires_ms)}});
  }
  return Json{{"sessions", list}};
}

Result<Json> EndWebSession(OpContext& ctx, const Json& in) {
  const std::string hash = Sha256Hex(in.at("session").get<std::string>());
  ASSIGN_OR_RETURN(const bool gone, DeleteWebSession(ctx.txn, hash));
  if (gone) {
    RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "session.ended",
                                      .summary = "dashboard sign-out",
                                      .payload = {{"session", hash.substr(0, 12)}}})
                        .status());
  }
  return Json{{"ended", gone}};
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
  // The error names the file the caller named, not our temporary one.
  if (fd < 0) return FailedPreconditionError(path + ": cannot create the human's secret: " + std::strerror(errno));
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
  if (HasNoStoreFile(store_location)) return "";
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
