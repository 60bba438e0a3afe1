// File: server.h
//
// The HTTP front end of `baton serve`: every operation as POST /v1/ops/{name}
// with a JSON body, GET /v1/ops (the registry), GET /v1/health. The caller is
// identified on loopback by the X-Baton-Agent and X-Baton-Role headers
// (default: the local user as "human"); bearer tokens come with the MCP
// issue. Errors are {"error": {code, message, details}} with the HTTP status
// of include/baton/error_table.h. No rules live here: everything goes
// through Api::Call.

#ifndef BATON_SRC_HTTP_SERVER_H_
#define BATON_SRC_HTTP_SERVER_H_

#include <memory>
#include <string>

#include "ops/api.h"

namespace baton {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8321;          // 0: pick a free port
  int threads = 128;        // request workers (a keep-alive connection holds one)
  size_t max_body = 4 << 20;
};

class HttpServer {
 public:
  HttpServer(Api& api, HttpOptions options);
  ~HttpServer();

  // Binds the socket; returns the bound port. InvalidArgument for a host
  // that is not loopback (no tokens yet), Unavailable if the port is taken.
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
