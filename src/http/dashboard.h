// File: dashboard.h
//
// The human's dashboard as files: the page's shell, script and style
// (src/http/dashboard/*), compiled into the binary by CMake
// (cmake/embed_files.cmake), or read from a folder at each request for
// development (`baton serve --ui-dir`). server.cc serves "/" as index.html
// and "/assets/<name>" as the file of that name, with the headers below.
// The page reads and writes through POST /v1/ops and listens on
// GET /v1/events (docs/dashboard.md).

#ifndef BATON_SRC_HTTP_DASHBOARD_H_
#define BATON_SRC_HTTP_DASHBOARD_H_

#include <optional>
#include <string>
#include <string_view>

namespace baton {

struct DashboardAsset {
  std::string name;          // "app.js"
  std::string content_type;  // "text/javascript; charset=utf-8"
  std::string body;
  std::string etag;          // "\"<sha256 prefix>\"": strong, from the content
};

// The file "name" of the dashboard: from "ui_dir" when it is not empty,
// else the one compiled in. nullopt for a name that is not one of them
// (names with a '/' or a leading '.' never are).
std::optional<DashboardAsset> FindDashboardAsset(const std::string& ui_dir, std::string_view name);

// The Content-Security-Policy of every dashboard response: nothing but this
// server's own files and API; no inline script or style, no framing.
inline constexpr std::string_view kDashboardCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'";

}  // namespace baton

#endif  // BATON_SRC_HTTP_DASHBOARD_H_
