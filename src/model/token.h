// File: token.h
//
// One row of the tokens table, typed (store/tables/token_table.h reads it;
// engine/core/tokens.h says what a token is). Never the secret, nor its hash.
// TokenToJson gives the shape token.list and token.revoke return.

#ifndef BATON_SRC_MODEL_TOKEN_H_
#define BATON_SRC_MODEL_TOKEN_H_

#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct Token {
  std::string id;
  std::string agent_id;
  std::string role;
  Json grants = Json::array();  // grant names, each once, in kGrants order
  std::string note;
  std::string created_by;
  std::string created_at;
  std::optional<std::string> revoked_at;  // none: live
};

// The grants a stored grants column carries: the names of model/actor.h's
// kGrants it lists, in kGrants order. Anything but a JSON array (a row
// edited by hand) carries no grant rather than failing every request.
Json GrantsFromText(const std::string& text);

// {id, agent, role, grants, note, created_by, created_at, revoked_at | null}.
Json TokenToJson(const Token& token);

}  // namespace baton

#endif  // BATON_SRC_MODEL_TOKEN_H_
