#include "http/event_stream.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <set>

#include "mcp/change_feed.h"
#include "util/mutex.h"

namespace baton {
namespace {

constexpr int64_t kReplayBatch = 200;

struct Stream {
  std::string role;  // the caller's: streams are rationed by role
  Mutex mu;
  CondVar cv;
  // Events (summaries) in seq order; their bytes are bounded.
  std::deque<std::pair<int64_t, Json>> queue GUARDED_BY(mu);
  size_t queued_bytes GUARDED_BY(mu) = 0;
  bool overflow GUARDED_BY(mu) = false;  // the queue was dropped: the client gets a reset
  bool closed GUARDED_BY(mu) = false;
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

void SendError(httplib::Response& res, int status, const Status& s) {
  res.status = status;
  res.set_content(DumpJson(Json{{"error", s.ToJson()}}) + "\n", "application/json");
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
  mcp::ChangeFeed feed{api, /*with_payload=*/false};

  Mutex mu;
  std::set<std::shared_ptr<Stream>> streams GUARDED_BY(mu);
  bool stopping GUARDED_BY(mu) = false;

  // Streams are a shared budget: the human's tabs may use all of it, every
  // other role together at most three quarters, so agents and scripts can
  // never lock the human's page out.
  Status Take(const std::shared_ptr<Stream>& s) EXCLUDES(mu) {
    MutexLock lock(&mu);
    if (stopping) return UnavailableError("the server is stopping");
    const size_t others = static_cast<size_t>(std::count_if(
        streams.begin(), streams.end(), [](const auto& o) { return o->role != "human"; }));
    const size_t others_cap = options.max_streams * 3 / 4;
    if (streams.size() >= options.max_streams || (s->role != "human" && others >= others_cap)) {
      return UnavailableError(
          "too many open event streams (" + std::to_string(options.max_streams) +
          ", --max-event-streams; callers other than the human share " +
          std::to_string(others_cap) + " of them); retry later");
    }
    streams.insert(s);
    return Status();
  }
  void Give(const std::shared_ptr<Stream>& s) EXCLUDES(mu) {
    MutexLock lock(&mu);
    streams.erase(s);
  }

  // The events after "*cursor" up to "until" as frames, moving "*cursor";
  // false when the client is gone.
  bool Replay(httplib::DataSink& sink, int64_t* cursor, int64_t until) {
    while (*cursor < until) {
      Result<Json> got = api.Call("ledger.events",
                                  {{"since", *cursor},
                                   {"limit", std::min(kReplayBatch, until - *cursor)},
                                   {"summary_only", true}},
                                  SystemActor());
      if (!got.ok() || (*got)["events"].empty()) return true;
      for (const Json& e : (*got)["events"]) {
        const int64_t seq = e["seq"].get<int64_t>();
        if (seq > until) return true;
        if (!Write(sink, LedgerEventFrame(e))) return false;
        *cursor = seq;
      }
    }
    return true;
  }

  bool Reset(httplib::DataSink& sink, int64_t head, const char* why) {
    // With the head as its id, the browser's next Last-Event-ID starts there.
    return Write(sink, "id: " + std::to_string(head) + "\n" +
                           Frame("reset", {{"head", head}, {"reason", why}}));
  }

  // Runs on the worker the stream holds until the client or the server goes.
  // "cursor" is the last seq the client has: a live event past cursor + 1
  // means the feed told of it before this stream joined (or the queue was
  // cut), and the gap is read from the ledger first, so none is missed.
  void Pump(const std::shared_ptr<Stream>& s, int64_t last_seen, int64_t head,
            httplib::DataSink& sink) {
    bool ok = Write(sink, "retry: 2000\n\n") && Write(sink, Frame("hello", {{"head", head}}));
    int64_t cursor = head;
    if (ok && last_seen >= 0) {
      if (last_seen > head) {
        ok = Reset(sink, head, "the position is past the store's head (another store?)");
      } else if (head - last_seen > options.replay_limit) {
        ok = Reset(sink, head, "more events were missed than are replayed");
      } else {
        cursor = last_seen;
        ok = Replay(sink, &cursor, head);
      }
    }
    while (ok) {
      std::deque<std::pair<int64_t, Json>> batch;
      bool overflow = false;
      {
        MutexLock lock(&s->mu);
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(options.heartbeat_ms);
        while (!s->closed && !s->overflow && s->queue.empty() && s->cv.WaitUntil(&s->mu, until)) {
        }
        if (s->closed) break;
        batch.swap(s->queue);
        s->queued_bytes = 0;
        overflow = std::exchange(s->overflow, false);
      }
      if (overflow) {
        // What the client missed is in the ledger: fill it in while it is
        // within the replay limit, else tell the page to re-read.
        const int64_t now = feed.Head();
        if (now - cursor > options.replay_limit) {
          ok = Reset(sink, now, "the client read too slowly to keep up");
          cursor = std::max(cursor, now);
        } else {
          ok = Replay(sink, &cursor, now);
        }
      } else if (batch.empty()) {
        ok = Write(sink, ": ping\n\n");
      }
      for (auto& [seq, event] : batch) {
        if (!ok) break;
        if (seq <= cursor) continue;
        if (seq > cursor + 1) {
          ok = seq - 1 - cursor > options.replay_limit
                   ? Reset(sink, seq - 1, "more events were missed than are replayed")
                   : Replay(sink, &cursor, seq - 1);
          cursor = std::max(cursor, seq - 1);
        }
        // Made here, on the stream's own worker: the feed's one thread only
        // hands events out.
        ok = ok && Write(sink, LedgerEventFrame(event));
        cursor = seq;
      }
    }
  }
};

EventStreams::EventStreams(Api& api, EventStreamOptions options)
    : impl_(new Impl{api, options}) {}

EventStreams::~EventStreams() { CloseAll(); }

void EventStreams::Handle(const httplib::Request& req, httplib::Response& res,
                          const std::string& role) {
  Result<int64_t> last_seen = LastSeen(req);
  if (!last_seen.ok()) return SendError(res, 400, last_seen.status());
  auto s = std::make_shared<Stream>();
  s->role = role;
  Status taken = impl_->Take(s);
  if (!taken.ok()) {
    res.set_header("Retry-After", "5");
    return SendError(res, 503, taken);
  }
  const size_t max_bytes = impl_->options.max_queue_bytes;
  int64_t head = 0;
  const int listener = impl_->feed.Add(
      [s, max_bytes](const Json& event) {
        // A summary's size: its text plus what every event carries.
        const size_t bytes = 256 + event["summary"].get_ref<const std::string&>().size();
        MutexLock lock(&s->mu);
        if (s->overflow) return;
        if (s->queued_bytes + bytes > max_bytes) {
          // A client this far behind is caught up from the ledger instead.
          s->queue.clear();
          s->queued_bytes = 0;
          s->overflow = true;
        } else {
          s->queued_bytes += bytes;
          s->queue.emplace_back(event["seq"].get<int64_t>(), event);
        }
        s->cv.SignalAll();
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
    MutexLock lock(&impl_->mu);
    impl_->stopping = true;
    streams = impl_->streams;
  }
  for (const auto& s : streams) {
    MutexLock lock(&s->mu);
    s->closed = true;
    s->cv.SignalAll();
  }
}

}  // namespace baton
