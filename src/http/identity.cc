#include "http/identity.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>

#include "mcp/http_endpoint.h"
#include "util/sha256.h"

namespace baton {
namespace {

std::string Header(const httplib::Request& req, const char* name) {
  return req.has_header(name) ? req.get_header_value(name) : "";
}

// Equal strings, in a time that does not depend on where they differ: the
// human's secret must not leak one character per timing measurement.
bool SameSecret(const std::string& a, const std::string& b) {
  const std::string ha = Sha256Hex(a);
  const std::string hb = Sha256Hex(b);
  unsigned char diff = ha.size() == hb.size() ? 0 : 1;
  for (size_t i = 0; i < ha.size() && i < hb.size(); ++i) diff |= ha[i] ^ hb[i];
  return diff == 0;
}

// The caller named by headers (auth "none"); one who names nobody is the
// local user with "default_role". No grant: nobody proved anything.
Result<Actor> CallerFromHeaders(const httplib::Request& req, const std::string& default_role) {
  Actor actor = LocalHumanActor();
  actor.role = default_role;
  actor.grants.clear();
  if (req.has_header("X-Sgai-Agent-Identity")) {
    actor.id = SgaiIdentityName(req.get_header_value("X-Sgai-Agent-Identity"));
    actor.role = actor.id == "coordinator" ? "coordinator" : "agent";
    if (actor.id.empty()) return InvalidArgumentError("X-Sgai-Agent-Identity: names no agent");
  }
  if (req.has_header("X-Baton-Agent")) {
    actor.id = req.get_header_value("X-Baton-Agent");
    if (!req.has_header("X-Sgai-Agent-Identity")) actor.role = "agent";
  }
  if (req.has_header("X-Baton-Role")) actor.role = req.get_header_value("X-Baton-Role");
  if (actor.id.empty()) return InvalidArgumentError("X-Baton-Agent: must not be empty");
  RETURN_IF_ERROR(CheckRole(actor.role).WithPrefix("X-Baton-Role"));
  return actor;
}

// Under tokens a header may repeat the credential's identity, never change it.
Status CheckIdentityHeaders(const httplib::Request& req, const Actor& actor) {
  const std::string who = " (the credential speaks for " + actor.id + ", role " + actor.role +
                          "; under --auth token a header cannot change the caller: make a token "
                          "for the agent with baton token create)";
  if (req.has_header("X-Baton-Role") && Header(req, "X-Baton-Role") != actor.role) {
    return PermissionDeniedError("X-Baton-Role: " + Header(req, "X-Baton-Role") + ": refused" +
                                 who);
  }
  if (req.has_header("X-Baton-Agent") && Header(req, "X-Baton-Agent") != actor.id) {
    return PermissionDeniedError("X-Baton-Agent: " + Header(req, "X-Baton-Agent") + ": refused" +
                                 who);
  }
  if (req.has_header("X-Sgai-Agent-Identity") &&
      SgaiIdentityName(Header(req, "X-Sgai-Agent-Identity")) != actor.id) {
    return PermissionDeniedError("X-Sgai-Agent-Identity: " + Header(req, "X-Sgai-Agent-Identity") +
                                 ": refused" + who);
  }
  return Status();
}

// A request the dashboard's cookie authenticates changes nothing unless the
// dashboard's own page sent it (cross-site request forgery): its Origin must
// be this server as the Host header names it.
Status CheckCookieOrigin(const httplib::Request& req) {
  if (req.method == "GET" || req.method == "HEAD") return Status();
  const std::string origin = Header(req, "Origin");
  const std::string own = "http://" + Header(req, "Host");
  if (!origin.empty() && origin.size() == own.size() &&
      std::equal(origin.begin(), origin.end(), own.begin(),
                 [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
    return Status();
  }
  return PermissionDeniedError(
      "Origin " + (origin.empty() ? std::string("(none)") : origin.substr(0, 200)) +
      ": a request other than GET authenticated by the dashboard's cookie must come from the "
      "dashboard's own page (" +
      own.substr(0, 200) + "); scripts send Authorization: Bearer instead");
}

Result<Actor> CallerFromCredential(Api& api, const CallerAuth& auth, const httplib::Request& req) {
  const std::string header = Header(req, "Authorization");
  const bool bearer =
      header.size() > 7 && (header.rfind("Bearer ", 0) == 0 || header.rfind("bearer ", 0) == 0);
  if (!bearer && !auth.cookie_name.empty()) {
    const std::string cookie = CookieValue(req, auth.cookie_name);
    if (!cookie.empty()) {
      RETURN_IF_ERROR(CheckCookieOrigin(req));
      return ActorForSession(api, cookie, SessionProof(req));
    }
  }
  if (!bearer) {
    return UnauthenticatedError(
        "Authorization: this server needs \"Bearer <secret>\": the human's link (baton url) or an "
        "agent's token (baton token create); --auth none turns this off on loopback");
  }
  return ActorForSecret(api, auth, header.substr(7));
}

}  // namespace

Result<Actor> IdentifyCaller(Api& api, const CallerAuth& auth, const httplib::Request& req,
                             const std::string& default_role) {
  if (auth.mode == kAuthNone) return CallerFromHeaders(req, default_role);
  ASSIGN_OR_RETURN(Actor actor, CallerFromCredential(api, auth, req));
  RETURN_IF_ERROR(CheckIdentityHeaders(req, actor));
  return actor;
}

std::string SessionProof(const httplib::Request& req) {
  if (req.has_header("X-Baton-Proof")) return req.get_header_value("X-Baton-Proof");
  return req.has_param("proof") ? req.get_param_value("proof") : "";
}

Result<Actor> ActorForSession(Api& api, const std::string& session, const std::string& proof) {
  if (proof.empty()) {
    return UnauthenticatedError(
        "X-Baton-Proof: the dashboard's session cookie counts only with its page's proof (the "
        "browser sends the cookie to every port of this host); sign in again");
  }
  if (session.size() > 200 || proof.size() > 200) {
    return UnauthenticatedError("the dashboard's session is unknown");
  }
  ASSIGN_OR_RETURN(Json who, api.Call("session.resolve", {{"session", session}, {"proof", proof}},
                                      SystemActor()));
  if (who["credential"] == "human") return LocalHumanActor();
  Actor actor{who["agent"].get<std::string>(), who["role"].get<std::string>(), {}};
  for (const Json& g : who["grants"]) actor.grants.push_back(g.get<std::string>());
  return actor;
}

bool IsHumanSecret(const CallerAuth& auth, const std::string& secret) {
  return !auth.human_secret.empty() && SameSecret(secret, auth.human_secret);
}

Result<Actor> ActorForSecret(Api& api, const CallerAuth& auth, const std::string& secret) {
  if (IsHumanSecret(auth, secret)) return LocalHumanActor();
  if (secret.empty() || secret.size() > 200) {
    return UnauthenticatedError("the bearer token is unknown or revoked");
  }
  ASSIGN_OR_RETURN(Json who, api.Call("token.resolve", {{"token", secret}}, SystemActor()));
  Actor actor{who["agent"].get<std::string>(), who["role"].get<std::string>(), {}};
  for (const Json& g : who.value("grants", Json::array()))
    actor.grants.push_back(g.get<std::string>());
  return actor;
}

std::string CookieValue(const httplib::Request& req, const std::string& name) {
  const auto range = req.headers.equal_range("Cookie");
  for (auto it = range.first; it != range.second; ++it) {
    const std::string& line = it->second;
    for (size_t start = 0; start < line.size();) {
      size_t end = line.find(';', start);
      if (end == std::string::npos) end = line.size();
      size_t from = line.find_first_not_of(' ', start);
      if (from < end) {
        const std::string pair = line.substr(from, end - from);
        const size_t eq = pair.find('=');
        if (eq != std::string::npos && pair.compare(0, eq, name) == 0 && eq == name.size()) {
          return pair.substr(eq + 1);
        }
      }
      start = end + 1;
    }
  }
  return "";
}

Status CheckAuthMode(const std::string& mode, const std::string& host) {
  if (mode != kAuthNone && mode != kAuthToken) {
    return InvalidArgumentError("--auth: must be token or none (got \"" + mode + "\")");
  }
  if (mode == kAuthNone && !mcp::IsLoopbackHostName(host)) {
    return InvalidArgumentError("--auth none: only on a loopback address (--listen " + host +
                                " is not one): callers there would be whoever their headers say; "
                                "drop --auth none (callers then prove who they are with tokens)");
  }
  return Status();
}

std::string AuthNoneWarning(const std::string& url) {
  return "baton serve: WARNING: --auth none: nobody proves who they are. Any process or user on "
         "this machine, and any web page that can reach " +
         url +
         ", is whoever its X-Baton-Agent/X-Baton-Role headers say, the human included (it can "
         "answer questions and approve runs); one that names nobody is the human on /v1/ops. No "
         "caller "
         "holds a grant: nothing runs commands, reads definitions from files or names paths "
         "outside the roots. Leave out --auth none to require tokens.\n";
}

std::string SgaiIdentityName(const std::string& header) {
  std::string name = header.substr(0, header.find('|'));
  const size_t first = name.find_first_not_of(" \t");
  const size_t last = name.find_last_not_of(" \t");
  return first == std::string::npos ? "" : name.substr(first, last - first + 1);
}

}  // namespace baton
