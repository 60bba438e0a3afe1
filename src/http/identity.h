// File: identity.h
//
// Who an HTTP request speaks for (DESIGN.md §8, docs/mcp.md
// "Authentication"). Two modes:
//
// "token" (the default of `baton serve`): the caller proves who it is with
// "Authorization: Bearer <secret>". The human's secret (the file beside the
// store, engine/core/tokens.h HumanSecretPath) is the human: the local user's id,
// role human, every grant. Any other secret must be a live token
// (token.create): its agent, role and grants. Nothing else is believed: a
// request without a credential, or with an unknown or revoked one, is
// Unauthenticated (401), and an identity header (X-Baton-Agent,
// X-Baton-Role, X-Sgai-Agent-Identity) that names another agent or role
// than the credential's is PermissionDenied (403): no header raises a role.
// A header that agrees with the credential is accepted, so an agent host may
// keep sending its name.
//
// "none" (only when asked for by name, loopback only): the caller is whoever
// the headers say, as before tokens existed; one that names nobody is the
// local user with "default_role". Nobody proves anything, so no caller holds
// a grant: nothing it asks for runs commands, reads definitions from files
// or names paths outside the roots.

#ifndef BATON_SRC_HTTP_IDENTITY_H_
#define BATON_SRC_HTTP_IDENTITY_H_

#include <string>
#include <string_view>

#include "ops/api.h"

namespace httplib {
struct Request;
}  // namespace httplib

namespace baton {

inline constexpr std::string_view kAuthToken = "token";
inline constexpr std::string_view kAuthNone = "none";

struct CallerAuth {
  std::string mode = std::string(kAuthToken);
  // The human's secret; "" when no credential is the human's (tokens only).
  std::string human_secret;
  // The dashboard's session cookie (http/server.cc sets it from
  // POST /v1/session; engine/core/tokens.h "sessions"): it counts only with the
  // page's proof beside it (X-Baton-Proof, or ?proof= for an EventSource),
  // since browsers send a cookie to every port of the host. "" for none. A
  // request it authenticates that changes anything (not GET or HEAD) must
  // also come from the server's own page: an Origin header naming the Host
  // it was sent to (PermissionDenied otherwise).
  std::string cookie_name;
};

// The caller of "req" under "auth" (see above); tokens are resolved through
// "api" (token.resolve as baton itself).
Result<Actor> IdentifyCaller(Api& api, const CallerAuth& auth, const httplib::Request& req,
                             const std::string& default_role);

// The caller "secret" proves to be under "auth" (mode "token"): the human
// for the human's secret, else the live token's agent, role and grants;
// Unauthenticated for anything else.
Result<Actor> ActorForSecret(Api& api, const CallerAuth& auth, const std::string& secret);

// Whether "secret" is the human's (compared in constant time).
bool IsHumanSecret(const CallerAuth& auth, const std::string& secret);

// The caller of a dashboard session: its cookie's secret and the page's
// proof (session.resolve); Unauthenticated without a proof or for a session
// that is unknown, ended or expired.
Result<Actor> ActorForSession(Api& api, const std::string& session, const std::string& proof);

// The page's proof a request carries: X-Baton-Proof, else ?proof=.
std::string SessionProof(const httplib::Request& req);

// The value of cookie "name" in "req"'s Cookie headers; "" when absent.
std::string CookieValue(const httplib::Request& req, const std::string& name);

// InvalidArgument for an unknown mode, and for mode "none" on a "host" that
// is not loopback (naming --auth and --listen and what to do instead).
Status CheckAuthMode(const std::string& mode, const std::string& host);

// What `baton serve --auth none` prints on stderr at start: what the mode
// means for anyone who can reach "url".
std::string AuthNoneWarning(const std::string& url);

// The agent name of sgai's X-Sgai-Agent-Identity header ("name|model|...").
std::string SgaiIdentityName(const std::string& header);

}  // namespace baton

#endif  // BATON_SRC_HTTP_IDENTITY_H_
