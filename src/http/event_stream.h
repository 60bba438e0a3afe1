// File: event_stream.h
//
// GET /v1/events: the ledger as server-sent events, one stream per browser
// tab (or script). Each ledger event is a frame
//
//   id: <seq>
//   event: ledger
//   data: {"seq", "time", "kind", "run_id", "actor", "summary"}
//
// in seq order, each once, none skipped: a stream keeps the last seq its
// client has and reads any gap from the ledger before going on. A stream
// opens with "event: hello" (data {"head"}: the last seq before the stream).
// A client that reconnects with Last-Event-ID (as EventSource does by
// itself) or ?after=<seq> gets the events it missed first; when more than
// "replay_limit" were missed, or the store's head is behind the id (another
// store), it gets "event: reset" (its id the head) instead and re-reads
// what it shows. Frames wait for a slow client up to "max_queue_bytes";
// past that they are dropped and read again from the ledger when it catches
// up (or it gets a reset). A ": ping" comment goes out every "heartbeat_ms"
// of silence, so proxies and the client notice a dead peer. Frames carry no
// payload (ledger.events summary_only): what an agent wrote at length stays
// out of every tab.
//
// Each stream holds one of the server's workers for its life, so at most
// "max_streams" are open at once — callers other than the human together at
// most three quarters of them, so they never lock the human's page out;
// another is refused with 503 and Retry-After. The server checks that
// streams leave workers for API requests and MCP calls (http/server.h).

#ifndef BATON_SRC_HTTP_EVENT_STREAM_H_
#define BATON_SRC_HTTP_EVENT_STREAM_H_

#include <cstdint>
#include <memory>

#include "ops/api.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace baton {

struct EventStreamOptions {
  size_t max_streams = 32;
  int64_t heartbeat_ms = 15000;
  int64_t replay_limit = 1000;
  size_t max_queue_bytes = size_t{4} << 20;
};

class EventStreams {
 public:
  EventStreams(Api& api, EventStreamOptions options);
  ~EventStreams();
  EventStreams(const EventStreams&) = delete;
  EventStreams& operator=(const EventStreams&) = delete;

  // Answers GET /v1/events for a caller already identified, of "role".
  void Handle(const httplib::Request& req, httplib::Response& res, const std::string& role);
  // Ends every stream (the server is stopping); later requests get 503.
  void CloseAll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The frame of one ledger event (as ledger.events lists it).
std::string LedgerEventFrame(const Json& event);

}  // namespace baton

#endif  // BATON_SRC_HTTP_EVENT_STREAM_H_
