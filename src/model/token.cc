#include "model/token.h"

#include "model/actor.h"
#include "util/json_or_null.h"

namespace baton {

Json GrantsFromText(const std::string& text) {
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

Json TokenToJson(const Token& t) {
  return Json{{"id", t.id},
              {"agent", t.agent_id},
              {"role", t.role},
              {"grants", t.grants},
              {"note", t.note},
              {"created_by", t.created_by},
              {"created_at", t.created_at},
              {"revoked_at", OrNull(t.revoked_at)}};
}

}  // namespace baton
