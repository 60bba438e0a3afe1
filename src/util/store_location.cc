#include "util/store_location.h"

#include <algorithm>
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
  // libpq's "Parameter Key Words" (PostgreSQL 16's list); a file named
  // "x=y.db" stays a file.
  static constexpr std::string_view kKeywords[] = {
      "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth",
      "channel_binding", "connect_timeout", "client_encoding", "options", "application_name",
      "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
      "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode",
      "requiressl", "sslcompression", "sslcert", "sslkey", "sslpassword", "sslcertmode",
      "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
      "ssl_max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service",
      "target_session_attrs", "load_balance_hosts"};
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
    // before the path (libpq reads a '?' in a password as part of it).
    const size_t start = out.find("://") + 3;
    const size_t path = out.find('/', start);
    const size_t at = out.rfind('@', path == std::string::npos ? out.size() : path);
    if (at != std::string::npos && at >= start) {
      const size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // password=SECRET (and sslpassword=) as a URL parameter, up to the next
  // '&', or a connection-string keyword, quoted with '...' or up to the
  // next unescaped space.
  const bool url = IsUrl(out);
  for (size_t pos = out.find("password"); pos != std::string::npos;
       pos = out.find("password", pos + 1)) {
    const bool ssl = pos >= 3 && out.compare(pos - 3, 3, "ssl") == 0;
    const size_t word = ssl ? pos - 3 : pos;
    if (word > 0 && (std::isalnum(static_cast<unsigned char>(out[word - 1])) || out[word - 1] == '_')) {
      continue;
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
    } else if (url) {
      while (end < out.size() && out[end] != '&') ++end;
    } else {
      for (; end < out.size() && out[end] != ' '; ++end) {
        if (out[end] == '\\') ++end;
      }
      end = std::min(end, out.size());
    }
    out.replace(v, end - v, "***");
  }
  return out;
}

}  // namespace baton
