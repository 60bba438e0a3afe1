// File: server.h
//
// The HTTP front end of `baton serve`: every operation as POST /v1/ops/{name}
// with a JSON body, GET /v1/ops (the registry), GET /v1/health, the MCP
// Streamable HTTP endpoint at /mcp (mcp/http_endpoint.h; ?tools=sgai,genie
// picks other tool sets than the server's), the ledger as server-sent events
// at GET /v1/events (http/event_stream.h), and the human's dashboard: "/"
// and "/assets/<file>" (http/dashboard.h), with its session at /v1/session
// (POST {token} sets an HttpOnly SameSite=Strict cookie holding it, GET says
// who it is, DELETE ends it).
//
// The caller (http/identity.h): with auth "token", the default, from
// "Authorization: Bearer <secret>" — the human's secret ("human_secret") or
// a token (token.create); without one a request is 401, and no header raises
// a role. With auth "none", which only a loopback address may use, from the
// X-Baton-Agent, X-Baton-Role and X-Sgai-Agent-Identity headers, holding no
// grant. A request whose Origin header is not a
// loopback origin (or one of "allowed_origins") is refused with 403 (DNS
// rebinding), and so is one whose Host header names neither a loopback
// name or address, the bound address, nor an allowed origin's host. A POST
// body to /v1/ops/{name} is read as JSON whatever its Content-Type
// (multipart/form-data is refused with 415). Connections go through the
// front of http/front.h: read deadlines, connection bounds and a reserve of
// workers (docs/security-http.md). Errors are {"error": {code, message, details}} with the HTTP
// status of include/baton/error_table.h. No rules live here: everything
// goes through Api::Call.

#ifndef BATON_SRC_HTTP_SERVER_H_
#define BATON_SRC_HTTP_SERVER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/identity.h"
#include "ops/api.h"

namespace baton {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8321;          // 0: pick a free port
  int threads = 512;        // request workers, started as needed (only a complete request takes one)
  int reserve = 32;         // workers streams and waits may not take
  size_t max_body = 4 << 20;
  std::string auth = "token";  // "token" or "none" (loopback only): http/identity.h
  std::string human_secret;    // the human's credential under "token"; "" for none
  size_t max_header_bytes = 64 << 10;
  int max_connections = 4096;  // in total (clipped to the descriptor limit)
  int max_per_peer = 1024;     // from one peer address (local hosts all share 127.0.0.1)
  int64_t header_timeout_ms = 10000;  // request line and headers, from the first byte
  int64_t body_timeout_ms = 60000;    // the body, from the end of the head
  int64_t idle_timeout_ms = 60000;    // a kept-alive connection without a request
  int64_t stop_grace_ms = 10000;      // Stop(): for requests in flight
  std::vector<std::string> mcp_tools = {"baton"};
  std::vector<std::string> allowed_origins;
  // The dashboard (http/dashboard.h): "" serves the files compiled in; a
  // folder serves its files, read at each request (development).
  std::string ui_dir;
  size_t max_event_streams = 32;       // GET /v1/events streams open at once
  int64_t event_heartbeat_ms = 15000;  // a ": ping" after this much silence
};

class HttpServer {
 public:
  HttpServer(Api& api, HttpOptions options);
  ~HttpServer();

  // Binds the socket; returns the bound port. InvalidArgument for an
  // unknown auth mode, for auth "none" on a host that is not loopback, or
  // for unknown MCP tool sets; Unavailable if the port is taken.
  Result<int> Bind();
  // Serves until Stop() is called (from any thread or a signal watcher);
  // then returns within stop_grace_ms (and a little), whatever is running.
  void Serve();
  void Stop();
  // Requests still running when Serve() returned: their workers were
  // abandoned; the caller exits the process rather than wait for them.
  std::vector<std::string> Stuck() const;

  // The bytes one connection sends ("raw": request line, headers, body),
  // read by the front's reader and run through the routes on this thread;
  // returns what the server writes back. For tests and the fuzz target;
  // streamed responses (SSE) are not run; "run_long" false answers composed
  // operations (waits, graph runs) 503 instead of running them.
  std::string ServeBytes(std::string_view raw, bool run_long = true);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether a Host header value (name or address, with an optional port) may
// reach a server bound to "bound_host" on a connection to "local_addr":
// loopback names and addresses, the bound host and address, and the hosts of
// "allowed_origins".
bool HostAllowed(const std::string& host_header, const std::string& bound_host,
                 const std::string& local_addr, const std::vector<std::string>& allowed_origins);

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

}  // namespace baton

#endif  // BATON_SRC_HTTP_SERVER_H_
