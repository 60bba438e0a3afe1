// File: server.h
//
// The HTTP front end of `baton serve`: every operation as POST /v1/ops/{name}
// with a JSON body, GET /v1/ops (the registry), GET /v1/health, and the MCP
// Streamable HTTP endpoint at /mcp (mcp/http_endpoint.h; ?tools=sgai,genie
// picks other tool sets than the server's).
//
// The caller (http/identity.h): with auth "token", the default, from
// "Authorization: Bearer <secret>" — the human's secret ("human_secret") or
// a token (token.create); without one a request is 401, and no header raises
// a role. With auth "none", which only a loopback address may use, from the
// X-Baton-Agent, X-Baton-Role and X-Sgai-Agent-Identity headers, holding no
// grant. A request whose Origin header is not a
// loopback origin (or one of "allowed_origins") is refused with 403 (DNS
// rebinding). Errors are {"error": {code, message, details}} with the HTTP
// status of include/baton/error_table.h. No rules live here: everything
// goes through Api::Call.

#ifndef BATON_SRC_HTTP_SERVER_H_
#define BATON_SRC_HTTP_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "http/identity.h"
#include "ops/api.h"

namespace baton {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8321;          // 0: pick a free port
  int threads = 128;        // request workers (a keep-alive connection holds one)
  size_t max_body = 4 << 20;
  std::string auth = "token";  // "token" or "none" (loopback only): http/identity.h
  std::string human_secret;    // the human's credential under "token"; "" for none
  std::vector<std::string> mcp_tools = {"baton"};
  std::vector<std::string> allowed_origins;
};

class HttpServer {
 public:
  HttpServer(Api& api, HttpOptions options);
  ~HttpServer();

  // Binds the socket; returns the bound port. InvalidArgument for an
  // unknown auth mode, for auth "none" on a host that is not loopback, or
  // for unknown MCP tool sets; Unavailable if the port is taken.
  Result<int> Bind();
  // Serves until Stop() is called (from any thread or a signal watcher).
  void Serve();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

}  // namespace baton

#endif  // BATON_SRC_HTTP_SERVER_H_
