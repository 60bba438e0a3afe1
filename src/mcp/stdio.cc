#include "mcp/stdio.h"

#include <unistd.h>

#include <cerrno>
#include <deque>
#include <thread>
#include <vector>

#include "mcp/protocol.h"
#include "util/mutex.h"

namespace baton::mcp {
namespace {

constexpr size_t kMaxWorkers = 256;

// Serialises writes to the output: each message is one line, whole.
class LineWriter {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}
  void Write(const Json& message) EXCLUDES(mu_) {
    std::string line = DumpJson(message);
    line += '\n';
    MutexLock lock(&mu_);
    size_t done = 0;
    while (!broken_ && done < line.size()) {
      ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        broken_ = true;  // the client is gone; reading will see it too
        break;
      }
      done += static_cast<size_t>(n);
    }
  }

 private:
  const int fd_;
  Mutex mu_;
  bool broken_ GUARDED_BY(mu_) = false;
};

// Runs requests on threads that wait for more work when done; grows to
// kMaxWorkers, so a few blocked waits never starve quick calls.
class WorkerPool {
 public:
  ~WorkerPool() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.SignalAll();
    for (std::thread& t : threads_) t.join();
  }
  // False when every worker is busy and no more may start.
  bool Run(std::function<void()> job) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (idle_ == 0) {
      if (threads_.size() >= kMaxWorkers) return false;
      threads_.emplace_back([this] { Loop(); });
      ++idle_;
    }
    --idle_;
    jobs_.push_back(std::move(job));
    cv_.Signal();
    return true;
  }

 private:
  void Loop() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    for (;;) {
      while (!stop_ && jobs_.empty()) cv_.Wait(&mu_);
      if (jobs_.empty()) return;  // stopping, nothing left
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      mu_.Unlock();
      job();
      mu_.Lock();
      ++idle_;
    }
  }

  Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
  size_t idle_ GUARDED_BY(mu_) = 0;  // workers free or about to be
  bool stop_ GUARDED_BY(mu_) = false;
};

void HandleLine(McpSession& session, LineWriter& out, WorkerPool& pool, std::string line) {
  Result<Json> message = ParseJson(line, "message");
  if (!message.ok()) {
    out.Write(ErrorResponse(nullptr, kParseError, "Parse error: " + message.status().message()));
    return;
  }
  const bool request = message->is_object() && message->contains("method") && message->contains("id");
  const Json id = request ? (*message)["id"] : Json();
  // initialize too runs in order: what follows it depends on it. A batch a
  // 2025-03-26 session takes may wait like any request, so it gets a worker
  // (pings and cancellations are still read meanwhile); other arrays are
  // refused at once, in order.
  const bool batch = message->is_array() && !message->empty() &&
                     session.legacy_version() == kVersion20250326;
  const bool in_order = request ? (*message)["method"] == "initialize" : !batch;
  auto handle = [&session, &out, m = std::move(message).value()] {
    RequestIo io;
    io.send = [&out](const Json& n) { out.Write(n); };
    Json response = session.Handle(m, io);
    if (!response.is_null()) out.Write(response);
  };
  // Notifications (a cancellation above all), protocol errors and
  // initialize are handled at once, in order; other requests may wait, so
  // they get a worker.
  if (in_order) return handle();
  if (!pool.Run(handle)) {
    out.Write(ErrorResponse(id, kInternalError,
                            "too many requests in flight; retry when some have finished"));
  }
}

}  // namespace

void ServeStdio(McpServer& server, const Actor& actor, int in_fd, int out_fd) {
  LineWriter out(out_fd);
  McpSession session(server, actor, server.options().run, [&out](const Json& n) { out.Write(n); });
  const size_t limit = server.options().max_message_bytes;
  {
    WorkerPool pool;
    std::string line;
    bool oversized = false;  // discarding the rest of a line that is too long
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(in_fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) {
        const char c = buf[i];
        if (c != '\n') {
          if (oversized) continue;
          line.push_back(c);
          if (line.size() > limit) {
            oversized = true;
            line.clear();
            line.shrink_to_fit();
          }
          continue;
        }
        if (oversized) {
          out.Write(ErrorResponse(nullptr, kInvalidRequest,
                                  "Invalid Request: message larger than " + std::to_string(limit) +
                                      " bytes was refused"));
          oversized = false;
        } else if (line.find_first_not_of(" \t\r") != std::string::npos) {
          HandleLine(session, out, pool, std::move(line));
        }
        line.clear();
      }
    }
    // End of input: the client is gone. A trailing line without a newline
    // is still a message.
    if (!oversized && line.find_first_not_of(" \t\r") != std::string::npos) {
      HandleLine(session, out, pool, std::move(line));
    }
    session.CancelAll();
  }  // the pool joins its workers here
}

}  // namespace baton::mcp
