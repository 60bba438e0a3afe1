#include "http/front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "util/json_util.h"
#include "util/mutex.h"

namespace baton::http {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* Reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

// A whole response the loop writes itself (it never reaches httplib).
std::string CannedResponse(int status, const std::string& message) {
  Status s = status == 503   ? UnavailableError(message)
             : status == 408 ? DeadlineExceededError(message)
             : status == 413 || status == 431 ? ResourceExhaustedError(message)
                                              : InvalidArgumentError(message);
  const std::string body = DumpJson(Json{{"error", s.ToJson()}}) + "\n";
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\n";
  out += "Content-Type: application/json\r\nConnection: close\r\n";
  if (status == 503) out += "Retry-After: 1\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return out;
}

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace


namespace {

// The bytes of one complete request for httplib, and the connection to
// write the answer to (or a string, for ServeBytes).
class BufferedStream : public httplib::Stream {
 public:
  BufferedStream(std::string_view request, int fd, std::string* out, int64_t write_timeout_ms,
                 bool continue_sent, std::string peer_ip, int peer_port)
      : request_(request), fd_(fd), out_(out), write_timeout_ms_(write_timeout_ms),
        swallow_continue_(continue_sent), peer_ip_(std::move(peer_ip)), peer_port_(peer_port) {}

  bool is_readable() const override { return pos_ < request_.size(); }
  bool is_writable() const override {
    if (out_ != nullptr) return false;  // ServeBytes: no stream is run
    // Whatever write() held goes out before a stream waits (a streamed head
    // is never held; this is for a provider that asks first).
    if (!const_cast<BufferedStream*>(this)->Flush()) return false;
    // A peer that has shut its side (POLLRDHUP) has left, so a stream ends
    // at once, not at its next failed write.
    pollfd p{fd_, POLLOUT | POLLRDHUP, 0};
    return ::poll(&p, 1, static_cast<int>(write_timeout_ms_)) > 0 &&
           (p.revents & (POLLERR | POLLHUP | POLLNVAL | POLLRDHUP)) == 0;
  }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, request_.size() - pos_);
    std::memcpy(ptr, request_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    const std::string_view data(ptr, size);
    // The loop already said 100 Continue before it read the body.
    if (swallow_continue_ && data == kContinue) {
      swallow_continue_ = false;
      return static_cast<ssize_t>(size);
    }
    if (out_ != nullptr) {
      out_->append(data);
      return static_cast<ssize_t>(size);
    }
    // httplib writes a response's head, then its body: a head that says
    // how long its body is (the body follows at once) is held until the
    // body comes, and the two leave in one send (one TCP segment, not two).
    // A streamed (chunked) head goes out alone: its first piece may wait.
    if (held_.empty() && data.ends_with("\r\n\r\n") && HasContentLength(data)) {
      held_.assign(data);
      return static_cast<ssize_t>(size);
    }
    if (!held_.empty() && data.size() <= kCoalesceBytes) {
      held_.append(data);
      return Flush() ? static_cast<ssize_t>(size) : -1;
    }
    if (!Flush()) return -1;  // a large body is not copied: two sends
    return SendAll(data) ? static_cast<ssize_t>(size) : -1;
  }
  // Sends what write() held back; false if the connection failed.
  bool Flush() {
    if (held_.empty()) return true;
    const bool ok = SendAll(held_);
    held_.clear();
    return ok;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_ip_;
    port = peer_port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 0;
    if (fd_ < 0) return;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host;
      port = std::atoi(serv);
    }
  }
  // httplib's FD_SETSIZE check answers 500 for a descriptor >= 1024; the
  // front never selects on it, so it is not given.
  socket_t socket() const override { return -1; }

 private:
  static constexpr size_t kCoalesceBytes = 16 << 10;

  static bool HasContentLength(std::string_view head) {
    constexpr std::string_view kName = "\r\ncontent-length:";
    for (size_t at = head.find("\r\n"); at != std::string_view::npos;
         at = head.find("\r\n", at + 2)) {
      if (head.size() - at < kName.size()) return false;
      bool same = true;
      for (size_t i = 0; i < kName.size() && same; ++i) {
        same = std::tolower(static_cast<unsigned char>(head[at + i])) == kName[i];
      }
      if (same) return true;
    }
    return false;
  }

  bool SendAll(std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p{fd_, POLLOUT, 0};
        if (::poll(&p, 1, static_cast<int>(write_timeout_ms_)) <= 0) return false;
        continue;
      }
      return false;
    }
    return true;
  }

  std::string_view request_;
  size_t pos_ = 0;
  int fd_;
  std::string* out_;
  int64_t write_timeout_ms_;
  bool swallow_continue_;
  std::string peer_ip_;
  int peer_port_;
  std::string held_;  // a response's head, until its body (or Flush)
};

enum class ConnState { kHead, kBody, kIdle, kQueued, kWorking, kDraining };

struct Conn {
  int fd = -1;
  std::string peer;
  int peer_port = 0;
  ConnState state = ConnState::kHead;
  std::string buf;
  int64_t deadline = 0;
  // When it last began to wait for a request (accepted, or back from a
  // worker): the connection waiting longest is the first to make room.
  int64_t waiting_since = 0;
  bool continue_sent = false;
  bool is_long = false;
  // Set before a worker takes it; read by Stuck().
  std::string what;
  int64_t started = 0;
  // Set by the worker.
  bool keep = false;
};

std::string PeerOf(const sockaddr_storage& addr, socklen_t len, int* port) {
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, serv,
                  sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  *port = std::atoi(serv);
  std::string ip = host;
  if (ip.rfind("::ffff:", 0) == 0) ip = ip.substr(7);
  return ip;
}

void SendBestEffort(int fd, const std::string& bytes) {
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

struct Front::State {
  FrontLimits limits;
  ProcessFn process;
  IsLongFn is_long;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  int spare_fd = -1;  // given up to accept-and-close when out of descriptors
  std::atomic<bool> stopping{false};

  // The loop's own (only the loop touches these).
  std::unordered_map<int, std::unique_ptr<Conn>> conns;
  std::unordered_map<std::string, int> per_peer;

  // Shared with the workers.
  mutable Mutex mu;
  CondVar cv;
  std::deque<Conn*> ordinary GUARDED_BY(mu);
  std::deque<Conn*> long_q GUARDED_BY(mu);
  int long_running GUARDED_BY(mu) = 0;
  std::vector<Conn*> done GUARDED_BY(mu);
  std::vector<Conn*> working GUARDED_BY(mu);  // taken by a worker, not done
  bool pool_stop GUARDED_BY(mu) = false;
  int idle GUARDED_BY(mu) = 0;  // workers waiting for a request
  // Started as requests need them, up to limits.workers; grown only by the
  // loop's thread, joined after it has ended.
  std::vector<std::thread> threads;
  std::vector<std::string> stuck GUARDED_BY(mu);

  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof one);
  }

  // "counted": whoever started this worker already counted it idle.
  void WorkerLoop(bool counted) EXCLUDES(mu) {
    const int long_limit = std::max(1, limits.workers - limits.reserve);
    for (;;) {
      Conn* c = nullptr;
      {
        MutexLock lock(&mu);
        if (!counted) ++idle;
        counted = false;
        while (!pool_stop && ordinary.empty() && (long_q.empty() || long_running >= long_limit)) {
          cv.Wait(&mu);
        }
        --idle;
        if (!ordinary.empty()) {
          c = ordinary.front();
          ordinary.pop_front();
        } else if (!long_q.empty() && long_running < long_limit) {
          c = long_q.front();
          long_q.pop_front();
          ++long_running;
        } else {
          return;  // pool_stop with nothing this worker may take
        }
        c->started = NowMs();
        working.push_back(c);
      }
      RunOne(*c);
      const bool was_long = c->is_long;  // c is the loop's again once done
      {
        MutexLock lock(&mu);
        if (was_long) --long_running;
        working.erase(std::find(working.begin(), working.end(), c));
        done.push_back(c);
      }
      // A long request's end lets one waiting long request start; an
      // ordinary one's changes nothing a waiting worker waits for.
      if (was_long) cv.Signal();
      Wake();
    }
  }

  // One request (the first of c.buf) through httplib; consumes its bytes.
  void RunOne(Conn& c) {
    const Framing f = ReadFraming(c.buf, limits);
    BufferedStream strm(std::string_view(c.buf).substr(0, f.length), c.fd, nullptr,
                        limits.write_timeout_ms, c.continue_sent, c.peer, c.peer_port);
    bool closed = false;
    const bool processed = process(strm, stopping.load(), closed);
    const bool ok = strm.Flush() && processed;
    c.keep = ok && !closed && !stopping.load();
    c.buf.erase(0, f.length);
    c.continue_sent = false;
  }

  // ---- the loop ----

  void Close(int fd) {
    auto it = conns.find(fd);
    if (it == conns.end()) return;
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    auto peer = per_peer.find(it->second->peer);
    if (peer != per_peer.end() && --peer->second <= 0) per_peer.erase(peer);
    conns.erase(it);
  }

  // Answers from the loop, then reads what the client still sends for a
  // moment (closing with unread bytes would reset the connection and lose
  // the answer).
  void Refuse(Conn& c, int status, const std::string& message) {
    SendBestEffort(c.fd, CannedResponse(status, message));
    ::shutdown(c.fd, SHUT_WR);
    c.state = ConnState::kDraining;
    c.buf.clear();
    c.deadline = NowMs() + 2000;
  }

  // At a bound, room is made by closing the connection (of "peer", unless
  // "peer" is empty) that has waited longest without a whole request: idle,
  // half a head, or draining. Such a connection has nothing in hand, so a
  // flood of them from anyone on the machine (all of loopback is one peer)
  // cannot lock a real client out. False when every connection has a
  // request in hand.
  bool MakeRoom(const std::string& peer) {
    int victim = -1;
    int64_t oldest = std::numeric_limits<int64_t>::max();
    for (const auto& [fd, c] : conns) {
      const bool empty_handed = c->state == ConnState::kHead || c->state == ConnState::kIdle ||
                                c->state == ConnState::kDraining;
      if (!empty_handed || (!peer.empty() && c->peer != peer)) continue;
      if (c->waiting_since < oldest) {
        oldest = c->waiting_since;
        victim = fd;
      }
    }
    if (victim < 0) return false;
    Close(victim);
    return true;
  }

  void Accept() {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && spare_fd >= 0) {
          // Out of descriptors: take the connection with the spare and
          // close it, so it does not sit in the backlog waking us forever.
          ::close(spare_fd);
          const int victim = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
          if (victim >= 0) {
            SendBestEffort(victim, CannedResponse(503, "the server is out of file descriptors"));
            ::close(victim);
          }
          spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
          continue;
        }
        return;  // EAGAIN, or an error the next round retries
      }
      int port = 0;
      const std::string peer = PeerOf(addr, len, &port);
      std::string refusal;
      if (static_cast<int>(conns.size()) >= limits.max_connections && !MakeRoom("")) {
        refusal = "the server holds its limit of " + std::to_string(limits.max_connections) +
                  " connections (--max-connections); retry later";
      } else if (per_peer[peer] >= limits.max_per_peer && !MakeRoom(peer)) {
        refusal = "the server holds its limit of " + std::to_string(limits.max_per_peer) +
                  " connections from " + peer + " (--max-connections-per-peer); retry later";
      }
      if (!refusal.empty()) {
        if (per_peer[peer] == 0) per_peer.erase(peer);
        SendBestEffort(fd, CannedResponse(503, refusal));
        ::close(fd);
        continue;
      }
      int yes = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      c->peer = peer;
      c->peer_port = port;
      c->state = ConnState::kHead;
      c->waiting_since = NowMs();
      c->deadline = NowMs() + limits.header_timeout_ms;
      ++per_peer[peer];
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
      conns[fd] = std::move(c);
    }
  }

  // Reads what is there; hands a complete request to the workers.
  void OnReadable(Conn& c) {
    char chunk[16384];
    bool eof = false;
    for (;;) {
      const ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
      if (n > 0) {
        if (c.state == ConnState::kDraining) {
          c.buf.clear();
        } else {
          c.buf.append(chunk, static_cast<size_t>(n));
        }
        if (c.buf.size() > limits.max_body + 2 * limits.max_header_bytes) break;
        continue;
      }
      if (n == 0) eof = true;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) eof = true;
      break;
    }
    if (c.state == ConnState::kDraining) {
      if (eof) Close(c.fd);
      return;
    }
    if (!c.buf.empty() && c.state == ConnState::kIdle) {
      c.state = ConnState::kHead;
      c.deadline = NowMs() + limits.header_timeout_ms;
    }
    if (Advance(c)) return;
    if (eof) Close(c.fd);
  }

  // Moves c on by what its buffer holds; true when it left the loop's
  // reading states (queued, refused or closed).
  bool Advance(Conn& c) EXCLUDES(mu) {
    if (c.buf.empty()) return false;
    const Framing f = ReadFraming(c.buf, limits);
    if (f.kind == Framing::kError) {
      Refuse(c, f.http_status, f.message);
      return true;
    }
    if (f.kind == Framing::kNeedMore) {
      if (f.head_length > 0 && c.state == ConnState::kHead) {
        c.state = ConnState::kBody;
        c.deadline = NowMs() + limits.body_timeout_ms;
        if (f.expect_continue && !c.continue_sent) {
          SendBestEffort(c.fd, std::string(kContinue));
          c.continue_sent = true;
        }
      }
      return false;
    }
    // Complete: the worker owns the socket until it hands it back.
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
    c.state = ConnState::kQueued;
    c.is_long = is_long && is_long(f.method, f.path);
    c.what = f.method.substr(0, 16) + " " + f.path.substr(0, 200) + " from " + c.peer;
    {
      MutexLock lock(&mu);
      (c.is_long ? long_q : ordinary).push_back(&c);
      // A worker per request waiting, so streams holding theirs cost a
      // thread each only while they are open.
      if (static_cast<size_t>(idle) < ordinary.size() + long_q.size() &&
          threads.size() < static_cast<size_t>(limits.workers)) {
        try {
          threads.emplace_back([this] { WorkerLoop(/*counted=*/true); });
          ++idle;  // counted now, so the next request does not start another
        } catch (const std::system_error&) {
          // Out of threads (a container's task limit): the request waits
          // for a running worker, as it would at --threads.
        }
      }
    }
    // One request, one worker: waking every idle worker for it cost more
    // than the request (a herd of up to --threads at every call).
    cv.Signal();
    return true;
  }

  void Returned(Conn* c) {
    if (!c->keep || stopping.load()) {
      Close(c->fd);
      return;
    }
    c->state = c->buf.empty() ? ConnState::kIdle : ConnState::kHead;
    c->waiting_since = NowMs();
    c->deadline = NowMs() + (c->buf.empty() ? limits.idle_timeout_ms : limits.header_timeout_ms);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = c->fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c->fd, &ev);
    Advance(*c);  // a pipelined request already read
  }

  void Sweep(int64_t now) {
    std::vector<int> expired;
    for (auto& [fd, c] : conns) {
      if (c->deadline > now) continue;
      switch (c->state) {
        case ConnState::kHead:
          Refuse(*c, 408, "the request head did not arrive within " +
                              std::to_string(limits.header_timeout_ms) +
                              " ms (--header-timeout-ms)");
          break;
        case ConnState::kBody:
          Refuse(*c, 408, "the request body did not arrive within " +
                              std::to_string(limits.body_timeout_ms) + " ms (--body-timeout-ms)");
          break;
        case ConnState::kIdle:
        case ConnState::kDraining:
          expired.push_back(fd);
          break;
        default:
          break;
      }
    }
    for (int fd : expired) Close(fd);
  }

  // Connections a worker has or will have.
  size_t Busy() {
    size_t n = 0;
    for (auto& [fd, c] : conns) {
      n += c->state == ConnState::kQueued || c->state == ConnState::kWorking;
    }
    return n;
  }

  void Loop() EXCLUDES(mu) {
    epoll_event events[256];
    bool stop_seen = false;
    int64_t grace_end = 0;
    for (;;) {
      const int n = epoll_wait(epoll_fd, events, 256, 100);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listen_fd) {
          if (!stopping.load()) Accept();
        } else if (fd == wake_fd) {
          uint64_t v;
          [[maybe_unused]] ssize_t r = ::read(wake_fd, &v, sizeof v);
        } else {
          auto it = conns.find(fd);
          if (it != conns.end()) OnReadable(*it->second);
        }
      }
      std::vector<Conn*> back;
      {
        MutexLock lock(&mu);
        back.swap(done);
        for (Conn* c : working) c->state = ConnState::kWorking;
      }
      for (Conn* c : back) Returned(c);
      const int64_t now = NowMs();
      Sweep(now);
      if (!stopping.load()) continue;
      if (!stop_seen) {
        // Stop: no new connections; nobody still sending a request (or
        // idle) is waited for.
        stop_seen = true;
        grace_end = now + limits.stop_grace_ms;
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
        ::close(listen_fd);
        listen_fd = -1;
        std::vector<int> idle;
        for (auto& [fd, c] : conns) {
          if (c->state != ConnState::kQueued && c->state != ConnState::kWorking) idle.push_back(fd);
        }
        for (int fd : idle) Close(fd);
      }
      if (Busy() == 0) break;
      if (now >= grace_end) {
        MutexLock lock(&mu);
        // Queued requests nobody started are dropped; running ones are
        // reported and abandoned.
        ordinary.clear();
        long_q.clear();
        for (Conn* c : working) {
          stuck.push_back(c->what + ", running " + std::to_string((now - c->started) / 1000) + " s");
        }
        break;
      }
    }
  }
};

Front::Front(FrontLimits limits, ProcessFn process, IsLongFn is_long)
    : limits_(limits), state_(std::make_shared<State>()) {
  state_->limits = limits;
  state_->process = std::move(process);
  state_->is_long = std::move(is_long);
}

Front::~Front() {
  Stop();
  std::shared_ptr<State> s = state_;
  bool abandoned;
  {
    MutexLock lock(&s->mu);
    s->pool_stop = true;
    abandoned = !s->working.empty();
  }
  s->cv.SignalAll();
  for (std::thread& t : s->threads) {
    // A stuck worker keeps the state alive (it holds no reference to us),
    // and the process exits around it.
    if (abandoned) {
      t.detach();
    } else {
      t.join();
    }
  }
  if (abandoned) {
    new std::shared_ptr<State>(s);  // deliberately leaked: stuck workers use it
    return;
  }
  for (auto& [fd, c] : s->conns) ::close(fd);
  for (int fd : {s->listen_fd, s->epoll_fd, s->wake_fd, s->spare_fd}) {
    if (fd >= 0) ::close(fd);
  }
}

Result<int> Front::Listen(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* result = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &result) != 0 || result == nullptr) {
    return InvalidArgumentError("--listen " + host + ": not an address or a name that resolves");
  }
  int fd = -1;
  for (addrinfo* ai = result; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(result);
  if (fd < 0) {
    return UnavailableError("cannot listen on " + host + ":" + service +
                            " (in use?); pick another with --listen");
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int bound = 0;
  PeerOf(addr, len, &bound);
  State& s = *state_;
  s.listen_fd = fd;
  s.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  s.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  s.spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  for (int watched : {s.listen_fd, s.wake_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = watched;
    epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, watched, &ev);
  }
  return bound;
}

void Front::Run() {
  State& s = *state_;
  if (s.epoll_fd < 0) return;
  {
    MutexLock lock(&s.mu);
    // A few to start with; more start as requests wait for one.
    for (int i = static_cast<int>(s.threads.size()); i < std::min(limits_.workers, 4); ++i) {
      s.threads.emplace_back([st = state_.get()] { st->WorkerLoop(/*counted=*/false); });
    }
  }
  s.Loop();
}

void Front::Stop() {
  if (!state_->stopping.exchange(true) && state_->wake_fd >= 0) state_->Wake();
}

int Front::listen_fd() const { return state_->listen_fd; }

std::vector<std::string> Front::Stuck() const {
  MutexLock lock(&state_->mu);
  return state_->stuck;
}

std::string Front::ServeBytes(std::string_view raw, const IsLongFn& skip) {
  std::string out;
  std::string buf(raw);
  for (int requests = 0; !buf.empty() && requests < 64; ++requests) {
    const Framing f = ReadFraming(buf, limits_);
    if (f.kind == Framing::kError) {
      out += CannedResponse(f.http_status, f.message);
      break;
    }
    if (f.kind == Framing::kNeedMore) {
      if (f.head_length == 0) {
        out += CannedResponse(408, "the request head did not arrive within " +
                                       std::to_string(limits_.header_timeout_ms) +
                                       " ms (--header-timeout-ms)");
      } else {
        out += CannedResponse(408, "the request body did not arrive within " +
                                       std::to_string(limits_.body_timeout_ms) +
                                       " ms (--body-timeout-ms)");
      }
      break;
    }
    if (skip && skip(f.method, f.path)) {
      out += CannedResponse(503, f.method.substr(0, 16) + " " + f.path.substr(0, 200) +
                                     ": not run here");
      buf.erase(0, f.length);
      continue;
    }
    BufferedStream strm(std::string_view(buf).substr(0, f.length), -1, &out, 0, false,
                        "127.0.0.1", 40000);
    bool closed = false;
    const bool ok = state_->process(strm, false, closed);
    buf.erase(0, f.length);
    if (!ok || closed) break;
  }
  return out;
}

}  // namespace baton::http
