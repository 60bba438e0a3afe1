// File: front.h
//
// The connection front of `baton serve`: one epoll thread owns every socket
// from accept to close and reads each request's head and body into memory
// under deadlines; only a complete request reaches a worker, which runs
// httplib's request processing on a Stream over those bytes and hands a
// kept-alive connection back. So a slow, idle or silent client costs a file
// descriptor and a buffer, never a worker.
//
// Bounds, each refused cheaply by the loop and answered with a JSON error
// ({"error": {code, message}}) that names the limit:
//   - connections in total and per peer address: 503 at accept, then close;
//   - the head (request line and headers) within header_timeout_ms of the
//     connection's first byte (of accept, for a new one): 408;
//   - the body within body_timeout_ms of the head: 408;
//   - a head over max_header_bytes: 431; a body over max_body: 413;
//   - a kept-alive connection with no request for idle_timeout_ms: closed.
// Framing is read exactly as httplib reads it (request line to LF, headers
// are CRLF lines, Content-Length or chunked), and ambiguous framing (both,
// twice, not digits, another Transfer-Encoding) is refused with 400/501, so
// the bytes a worker sees are the request the loop measured.
//
// Workers: "workers" threads; a request the classifier calls long (streams,
// waits) may take at most workers - reserve of them, so the reserve always
// answers ordinary requests.

#ifndef BATON_SRC_HTTP_FRONT_H_
#define BATON_SRC_HTTP_FRONT_H_

#include <httplib.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "baton/status.h"

namespace baton::http {

struct FrontLimits {
  int workers = 128;
  int reserve = 32;              // workers that only ordinary requests may take
  int max_connections = 4096;    // open connections in total (clipped to RLIMIT_NOFILE)
  int max_per_peer = 1024;       // open connections from one peer address
  int64_t header_timeout_ms = 10000;
  int64_t body_timeout_ms = 60000;
  int64_t idle_timeout_ms = 60000;
  int64_t write_timeout_ms = 30000;  // one blocked write to a client
  int64_t stop_grace_ms = 10000;     // Stop(): how long requests in flight may finish
  size_t max_header_bytes = 64 << 10;
  size_t max_body = 4 << 20;
};

// Runs one complete request on "strm" (httplib::Server::process_request);
// returns false when the connection must close. "close_connection" asks the
// response to say Connection: close; "closed" is set when the client asked.
using ProcessFn = std::function<bool(httplib::Stream& strm, bool close_connection, bool& closed)>;
// True for a request that may hold its worker long (a stream, a wait).
using IsLongFn = std::function<bool(const std::string& method, const std::string& path)>;

class Front {
 public:
  Front(FrontLimits limits, ProcessFn process, IsLongFn is_long);
  ~Front();

  // Binds and listens on host:port (0: a free port); returns the port.
  Result<int> Listen(const std::string& host, int port);
  // Serves until Stop(), then closes idle and unfinished connections, lets
  // requests in flight finish for stop_grace_ms and returns.
  void Run();
  // From any thread; returns at once.
  void Stop();
  // The requests still running when Run() returned ("POST /v1/ops/x from
  // 127.0.0.1, running 12 s"); their workers are abandoned, not joined.
  std::vector<std::string> Stuck() const;
  const FrontLimits& limits() const { return limits_; }
  int listen_fd() const;  // -1 before Listen()

  // The test and fuzz seam: "raw" as the bytes one connection sends, read
  // by the same head/body reader and handed to the same ProcessFn (on the
  // calling thread); returns every byte the server would have written. A
  // response streamed by a content provider (SSE) is not run: the client
  // here reads nothing after the head. A request "skip" names is answered
  // 503 without running.
  std::string ServeBytes(std::string_view raw, const IsLongFn& skip = nullptr);

 private:
  struct State;
  FrontLimits limits_;
  std::shared_ptr<State> state_;
};

// What the reader made of the bytes so far (exposed for the fuzz target).
struct Framing {
  enum Kind { kNeedMore, kComplete, kError } kind = kNeedMore;
  size_t length = 0;   // kComplete: bytes of head and body
  int http_status = 0; // kError: 400, 413, 431, 501
  std::string message; // kError: what was wrong, naming the limit or header
  std::string method, path;
  bool expect_continue = false;
  size_t head_length = 0;  // once the head is complete
};
Framing ReadFraming(std::string_view buf, const FrontLimits& limits);

}  // namespace baton::http

#endif  // BATON_SRC_HTTP_FRONT_H_
