#include "http/event_stream.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>

#include "mcp/change_feed.h"

namespace baton {
namespace {

struct Stream {
  std::mutex mu;  // guards the fields below
  std::condition_variable cv;
  std::deque<Json> queue;
  bool overflow = false;  // the queue was dropped: the client gets a reset
  bool closed = false;
};

std::string Frame(std::string_view event, const Json& data) {
  return "event: " + std::string(event) + "\ndata: " + DumpJson(data) + "\n\n";
}

bool Write(httplib::DataSink& sink, const std::string& text) {
  return sink.write(text.data(), text.size());
}

// The seq the client saw last: Last-Event-ID (EventSource's reconnect) or
// ?after=; -1 for a fresh stream. InvalidArgument names the field.
Result<int64_t> LastSeen(const httplib::Request& req) {
  const char* field = req.has_header("Last-Event-ID") ? "Last-Event-ID" : "after";
  const std::string text = req.has_header("Last-Event-ID") ? req.get_header_value("Last-Event-ID")
                           : req.has_param("after")         ? req.get_param_value("after")
                                                            : "";
  if (text.empty()) return int64_t{-1};
  int64_t seq = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || seq > (int64_t{1} << 53)) {
      return InvalidArgumentError(std::string(field) + ": must be a ledger seq (a number), not \"" +
                                  text.substr(0, 40) + "\"");
    }
    seq = seq * 10 + (c - '0');
  }
  return seq;
}

}  // namespace

std::string LedgerEventFrame(const Json& event) {
  const Json data = {{"seq", event["seq"]},         {"time", event["time"]},
                     {"kind", event["kind"]},       {"run_id", event["run_id"]},
                     {"actor", event["actor"]},     {"summary", event["summary"]}};
  return "id: " + std::to_string(event["seq"].get<int64_t>()) + "\n" + Frame("ledger", data);
}

struct EventStreams::Impl {
  Api& api;
  EventStreamOptions options;
  mcp::ChangeFeed feed{api};

  std::mutex mu;  // guards the fields below
  std::set<std::shared_ptr<Stream>> streams;
  bool stopping = false;

  bool Take(const std::shared_ptr<Stream>& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (stopping || streams.size() >= options.max_streams) return false;
    streams.insert(s);
    return true;
  }
  void Give(const std::shared_ptr<Stream>& s) {
    std::lock_guard<std::mutex> lock(mu);
    streams.erase(s);
  }

  // The events after "after" up to "head", written as frames; false when
  // the client is gone.
  bool Replay(httplib::DataSink& sink, int64_t after, int64_t head) {
    while (after < head) {
      Result<Json> got = api.Call(
          "ledger.events", {{"since", after}, {"limit", std::min<int64_t>(500, head - after)}},
          SystemActor());
      if (!got.ok() || (*got)["events"].empty()) return true;
      for (const Json& e : (*got)["events"]) {
        if (e["seq"].get<int64_t>() > head) return true;
        if (!Write(sink, LedgerEventFrame(e))) return false;
        after = e["seq"].get<int64_t>();
      }
    }
    return true;
  }

  // Runs on the worker the stream holds until the client or the server goes.
  void Pump(const std::shared_ptr<Stream>& s, int64_t last_seen, int64_t head,
            httplib::DataSink& sink) {
    bool ok = Write(sink, "retry: 2000\n\n") && Write(sink, Frame("hello", {{"head", head}}));
    if (ok && last_seen >= 0) {
      if (last_seen > head || head - last_seen > options.replay_limit) {
        ok = Write(sink, Frame("reset", {{"head", head}, {"missed", head - last_seen}}));
      } else {
        ok = Replay(sink, last_seen, head);
      }
    }
    std::unique_lock<std::mutex> lock(s->mu);
    while (ok && !s->closed) {
      s->cv.wait_for(lock, std::chrono::milliseconds(options.heartbeat_ms),
                     [&] { return s->closed || s->overflow || !s->queue.empty(); });
      if (s->closed) break;
      std::deque<Json> batch;
      batch.swap(s->queue);
      const bool overflow = std::exchange(s->overflow, false);
      lock.unlock();
      if (overflow) {
        ok = Write(sink, Frame("reset", {{"reason", "the client read too slowly"}}));
      } else if (batch.empty()) {
        ok = Write(sink, ": ping\n\n");
      }
      for (const Json& e : batch) ok = ok && Write(sink, LedgerEventFrame(e));
      lock.lock();
    }
  }
};

EventStreams::EventStreams(Api& api, EventStreamOptions options)
    : impl_(new Impl{api, options}) {}

EventStreams::~EventStreams() { CloseAll(); }

void EventStreams::Handle(const httplib::Request& req, httplib::Response& res) {
  Result<int64_t> last_seen = LastSeen(req);
  if (!last_seen.ok()) {
    res.status = 400;
    res.set_content(DumpJson(Json{{"error", last_seen.status().ToJson()}}) + "\n",
                     "application/json");
    return;
  }
  auto s = std::make_shared<Stream>();
  if (!impl_->Take(s)) {
    res.status = 503;
    res.set_header("Retry-After", "5");
    res.set_content(
        DumpJson(Json{{"error", UnavailableError("too many open event streams (" +
                                                 std::to_string(impl_->options.max_streams) +
                                                 ", --max-event-streams); retry later")
                                    .ToJson()}}) +
            "\n",
        "application/json");
    return;
  }
  const size_t max_queue = impl_->options.max_queue;
  int64_t head = 0;
  const int listener = impl_->feed.Add(
      [s, max_queue](const Json& event) {
        std::lock_guard<std::mutex> lock(s->mu);
        if (s->overflow) return;
        if (s->queue.size() >= max_queue) {
          s->queue.clear();
          s->overflow = true;
        } else {
          s->queue.push_back(event);
        }
        s->cv.notify_all();
      },
      &head);
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  Impl* impl = impl_.get();
  const int64_t after = *last_seen;
  res.set_chunked_content_provider(
      "text/event-stream",
      [impl, s, after, head](size_t, httplib::DataSink& sink) {
        impl->Pump(s, after, head, sink);
        sink.done();
        return true;
      },
      // Runs whether or not the provider ever did (a client gone first).
      [impl, s, listener](bool) {
        impl->feed.Remove(listener);
        impl->Give(s);
      });
}

void EventStreams::CloseAll() {
  std::set<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
    streams = impl_->streams;
  }
  for (const auto& s : streams) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->closed = true;
    s->cv.notify_all();
  }
}

}  // namespace baton
