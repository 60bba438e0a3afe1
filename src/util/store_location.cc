#include "util/store_location.h"

#include <cctype>

namespace baton {
namespace {

bool IsUrl(std::string_view location) {
  return location.rfind("postgres://", 0) == 0 || location.rfind("postgresql://", 0) == 0;
}

// The keyword of a libpq "keyword=value" string at "location"'s start, or "".
std::string_view LeadingKeyword(std::string_view location) {
  size_t i = 0;
  while (i < location.size() && std::isspace(static_cast<unsigned char>(location[i]))) ++i;
  size_t end = i;
  while (end < location.size() && (std::islower(static_cast<unsigned char>(location[end])) ||
                                   location[end] == '_')) {
    ++end;
  }
  size_t eq = end;
  while (eq < location.size() && location[eq] == ' ') ++eq;
  if (end == i || eq >= location.size() || location[eq] != '=') return "";
  return location.substr(i, end - i);
}

}  // namespace

bool IsPostgresLocation(std::string_view location) {
  if (IsUrl(location)) return true;
  // The keywords a connection string starts with in practice (libpq's
  // "Parameter Key Words"); a file named "x=y.db" stays a file.
  static constexpr std::string_view kKeywords[] = {
      "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service",
      "sslmode", "connect_timeout", "application_name", "options", "target_session_attrs"};
  const std::string_view keyword = LeadingKeyword(location);
  for (std::string_view k : kKeywords) {
    if (keyword == k) return true;
  }
  return false;
}

std::string RedactedLocation(std::string_view location) {
  std::string out(location);
  if (IsUrl(out)) {
    // postgresql://user:SECRET@host/...: the userinfo ends at the last '@'
    // before the path.
    const size_t start = out.find("://") + 3;
    const size_t path = out.find_first_of("/?", start);
    const size_t at = out.rfind('@', path == std::string::npos ? out.size() : path);
    if (at != std::string::npos && at >= start) {
      const size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // password=SECRET as a URL parameter or a connection-string keyword
  // (quoted with '...' or up to the next space or '&').
  for (size_t pos = out.find("password"); pos != std::string::npos;
       pos = out.find("password", pos + 1)) {
    if (pos > 0 && (std::isalnum(static_cast<unsigned char>(out[pos - 1])) || out[pos - 1] == '_')) {
      continue;  // passfile's neighbours, "sslpassword" and the like stay
    }
    size_t v = pos + 8;
    while (v < out.size() && out[v] == ' ') ++v;
    if (v >= out.size() || out[v] != '=') continue;
    ++v;
    while (v < out.size() && out[v] == ' ') ++v;
    size_t end = v;
    if (end < out.size() && out[end] == '\'') {
      for (++end; end < out.size() && out[end] != '\''; ++end) {
        if (out[end] == '\\') ++end;
      }
      if (end < out.size()) ++end;
    } else {
      while (end < out.size() && out[end] != ' ' && out[end] != '&') ++end;
    }
    out.replace(v, end - v, "***");
  }
  return out;
}

}  // namespace baton
