// File: store_location.h
//
// What a --store location names, for every layer that must tell a
// PostgreSQL database from a SQLite file before opening it (the CLI, the
// path scope, the files kept beside a SQLite store), and how to show one
// without its password.

#ifndef BATON_SRC_UTIL_STORE_LOCATION_H_
#define BATON_SRC_UTIL_STORE_LOCATION_H_

#include <string>
#include <string_view>

namespace baton {

// Whether "location" names a PostgreSQL database: a postgres:// or
// postgresql:// URL, or a libpq "keyword=value" string.
bool IsPostgresLocation(std::string_view location);
// "location" with any password in it replaced by "***", fit for output and
// logs.
std::string RedactedLocation(std::string_view location);
// Whether "location" has no file of its own (":memory:", "", PostgreSQL):
// nothing is kept beside it.
inline bool HasNoStoreFile(std::string_view location) {
  return location.empty() || location == ":memory:" || IsPostgresLocation(location);
}

}  // namespace baton

#endif  // BATON_SRC_UTIL_STORE_LOCATION_H_
