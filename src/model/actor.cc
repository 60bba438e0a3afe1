#include "model/actor.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

namespace baton {

Status CheckRole(std::string_view role) {
  for (std::string_view r : kRoles) {
    if (r == role) return Status();
  }
  return InvalidArgumentError("role: must be one of coordinator, agent, human, admin (got \"" +
                              std::string(role) + "\")");
}

Actor LocalHumanActor() {
  const char* user = std::getenv("USER");
  std::string id = user != nullptr && *user != '\0' ? user : "";
  if (id.empty()) {
    if (const passwd* pw = getpwuid(getuid()); pw != nullptr) id = pw->pw_name;
  }
  if (id.empty()) id = "human";
  return Actor{id, "human", AllGrants()};
}

}  // namespace baton
