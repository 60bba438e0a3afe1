// File: http_endpoint.h
//
// The MCP Streamable HTTP endpoint of `baton serve` (one URL, /mcp):
//   POST    a JSON-RPC message. Requests get application/json, or — for
//           tools/call and subscriptions/listen when the client accepts
//           text/event-stream — an SSE stream carrying the request's
//           progress notifications and then its response. Notifications
//           and responses get 202.
//   GET     the 2025 session's stream of server notifications (resource
//           updates, tools/list_changed); one per session (409 for more).
//   DELETE  ends a 2025 session.
// 2025-03-26 / 2025-06-18 / 2025-11-25: initialize creates a session and
// returns its Mcp-Session-Id; later requests must carry it (400 without, 404
// for an unknown or ended one) and MCP-Protocol-Version, when sent, must be
// one of those three (400). 2026-07-28 is stateless: every POST carries
// MCP-Protocol-Version and params._meta's version, which must agree (400,
// -32020), as must Mcp-Method with the method.
// Every request: an Origin header that is not a loopback origin (or one of
// "allowed_origins") gets 403 — DNS rebinding; bodies over the server's
// limit get 413. The caller comes from "identify" (bearer token, or headers
// on loopback); a session keeps the caller that created it and refuses
// anyone else (403).

#ifndef BATON_SRC_MCP_HTTP_ENDPOINT_H_
#define BATON_SRC_MCP_HTTP_ENDPOINT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mcp/session.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace baton::mcp {

struct HttpEndpointOptions {
  std::vector<std::string> allowed_origins;  // exact Origin values, besides loopback ones
  size_t max_sessions = 1024;  // beyond, the least recently used makes room
  // SSE responses at once (GET streams, streamed calls, listens): each
  // holds a server worker for its life, so keep it well below their number.
  size_t max_streams = 48;
  int64_t session_idle_ms = 24LL * 3600 * 1000;  // idle sessions end after this
};

using Identify = std::function<Result<Actor>(const httplib::Request&)>;

class HttpEndpoint {
 public:
  HttpEndpoint(McpServer& server, Identify identify, HttpEndpointOptions options);
  ~HttpEndpoint();
  // Answers a POST, GET or DELETE of the endpoint.
  void Handle(const httplib::Request& req, httplib::Response& res);
  // Ends every session and its streams (the server is stopping).
  void CloseAll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when a request with Origin "origin" may be served: none given, a
// loopback origin, or one of "allowed".
bool OriginAllowed(const std::string& origin, const std::vector<std::string>& allowed);
// True when "origin" (an Origin header value) names a loopback host.
bool IsLoopbackOrigin(const std::string& origin);
// True for "localhost", ::1 (bracketed or not) and IPv4 literals in
// 127.0.0.0/8 — never a name that merely starts with "127.".
bool IsLoopbackHostName(const std::string& host);

}  // namespace baton::mcp

#endif  // BATON_SRC_MCP_HTTP_ENDPOINT_H_
