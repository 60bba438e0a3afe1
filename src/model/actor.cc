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
  // Looked up once: the HTTP server names the human on every request it
  // serves as the human's, and without $USER (a service) the lookup reads
  // /etc/passwd.
  static const std::string* const id = [] {
    const char* user = std::getenv("USER");
    std::string name = user != nullptr && *user != '\0' ? user : "";
    if (name.empty()) {
      if (const passwd* pw = getpwuid(getuid()); pw != nullptr) name = pw->pw_name;
    }
    return new std::string(name.empty() ? "human" : name);
  }();
  return Actor{*id, "human", AllGrants()};
}

}  // namespace baton
