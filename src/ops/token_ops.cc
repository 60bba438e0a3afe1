// Bearer tokens for HTTP callers: token.*.

#include "engine/core/tokens.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

// The grant names of model/actor.h.
Json Grants(std::string description) {
  Json names = Json::array();
  for (std::string_view g : kGrants) names.push_back(std::string(g));
  return {{"type", "array"},
          {"description", std::move(description)},
          {"items", {{"type", "string"}, {"enum", names}}},
          {"maxItems", 8}};
}

Json TokenOut() {
  return s::Entity({{"id", {{"type", "string"}}},
                    {"agent", {{"type", "string"}}},
                    {"role", {{"type", "string"}}},
                    {"grants", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                    {"note", {{"type", "string"}}},
                    {"created_at", {{"type", "string"}}}});
}

}  // namespace

Status RegisterTokenOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "token.create",
      .summary = "Make a bearer token for an HTTP caller (the secret is shown only now; baton "
                 "keeps its hash)",
      // Not "agent" and "role": those are the CLI's global caller flags.
      .input_schema = s::Input({{"holder", s::Id("the agent id the token speaks for")},
                                {"holder_role", s::Enum("the role it speaks with",
                                                        {"coordinator", "agent", "human", "admin"})},
                                {"grants", Grants("what the holder may do beyond its role: commands "
                                                  "(run command, agent and HTTP nodes), definitions "
                                                  "(graph definitions inline or from outside the "
                                                  "roots), paths (paths outside the roots); only "
                                                  "grants the caller holds itself")},
                                {"note", s::String("what it is for", 500)}},
                               {"holder", "holder_role"}),
      .output_schema = [] {
        Json out = TokenOut();
        out["properties"]["token"] = {{"type", "string"}};
        out["required"].push_back("token");
        return out;
      }(),
      .roles = {"human"},
      .mutating = true,
      // The role is a flag: a positional "agent" would be read as the agent group.
      .positional = {"holder"},
      .handler = CreateToken,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "token.list",
      .summary = "List bearer tokens (never their secrets), revoked ones included",
      .input_schema = s::Input({}),
      .output_schema = s::ListOf("tokens", TokenOut()),
      .roles = {"human"},
      .handler = ListTokens,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "token.revoke",
      .summary = "Revoke a bearer token: its next request is refused",
      .input_schema = s::Input({{"id", s::Id("the token's id (tok-...)")}}, {"id"}),
      .output_schema = TokenOut(),
      .roles = {"human"},
      .mutating = true,
      .idempotent = true,
      .positional = {"id"},
      .handler = RevokeToken,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "token.resolve",
      .summary = "Internal: the caller a bearer token speaks for",
      .input_schema = s::Input({{"token", s::String("the secret", 200)}}, {"token"}),
      .output_schema = s::Entity({{"agent", {{"type", "string"}}},
                                  {"role", {{"type", "string"}}},
                                  {"grants", {{"type", "array"}, {"items", {{"type", "string"}}}}}}),
      .roles = {"admin"},
      .handler = ResolveToken,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "session.create",
      .summary = "Internal: a dashboard session (POST /v1/session) for the human or a token",
      .input_schema = s::Input({{"credential", s::Enum("whose", {"human", "token"})},
                                {"token", s::String("the token signed in with", 200)},
                                {"agent", s::Id("who the session speaks for")},
                                {"role", s::Id("their role")}},
                               {"credential", "agent", "role"}),
      .output_schema = s::Entity({{"session", {{"type", "string"}}},
                                  {"proof", {{"type", "string"}}},
                                  {"expires_at", {{"type", "string"}}}}),
      .roles = {"admin"},
      .mutating = true,
      .handler = CreateWebSession,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "session.resolve",
      .summary = "Internal: the caller a dashboard session (its cookie and its page's proof) "
                 "speaks for",
      .input_schema = s::Input({{"session", s::String("the cookie's secret", 200)},
                                {"proof", s::String("the page's proof", 200)}},
                               {"session", "proof"}),
      .output_schema = s::Entity({{"credential", {{"type", "string"}}},
                                  {"agent", {{"type", "string"}}},
                                  {"role", {{"type", "string"}}},
                                  {"grants", {{"type", "array"}, {"items", {{"type", "string"}}}}}}),
      .roles = {"admin"},
      .handler = ResolveWebSession,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "session.list",
      .summary = "Who is signed in to the dashboard: its live sessions (the human, agents' tokens)",
      .input_schema = s::Input({}),
      .output_schema = s::ListOf(
          "sessions", s::Entity({{"id", {{"type", "string"}}},
                                 {"agent", {{"type", "string"}}},
                                 {"role", {{"type", "string"}}},
                                 {"credential", {{"type", "string"}}},
                                 {"created_at", {{"type", "string"}}},
                                 {"expires_at", {{"type", "string"}}}})),
      .roles = {"human"},
      .handler = ListWebSessions,
  }));
  return r.Add({
      .name = "session.end",
      .summary = "Internal: sign a dashboard session out",
      .input_schema = s::Input({{"session", s::String("the cookie's secret", 200)}}, {"session"}),
      .output_schema = s::Entity({{"ended", {{"type", "boolean"}}}}),
      .roles = {"admin"},
      .mutating = true,
      .handler = EndWebSession,
  });
}

}  // namespace baton
