#include "mcp/http_endpoint.h"

#include <httplib.h>
#include <openssl/rand.h>

#include <atomic>
#include <deque>
#include <set>

#include "mcp/protocol.h"
#include "util/clock.h"
#include "util/mutex.h"
#include "util/sha256.h"

namespace baton::mcp {
namespace {

constexpr size_t kMaxQueued = 1000;        // notifications kept for a GET stream
constexpr int64_t kKeepaliveMillis = 15000;
// How often an idle notification stream checks that its client is there.
constexpr int64_t kLivenessMillis = 1000;

struct HttpSession {
  std::string id;
  Actor actor;
  Mutex mu;
  CondVar cv;
  std::deque<Json> queue GUARDED_BY(mu);  // for the GET stream
  bool stream_open GUARDED_BY(mu) = false;
  bool closed GUARDED_BY(mu) = false;
  int64_t last_used GUARDED_BY(mu) = 0;  // NowMillis, for idle expiry
  uint64_t use_seq GUARDED_BY(mu) = 0;   // order of use, for LRU (ms tie)
  // Last: destroyed first, so its feed listener stops before the queue goes.
  std::unique_ptr<McpSession> mcp;
};

void SendRpc(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(DumpJson(body), "application/json");
}

bool WriteEvent(httplib::DataSink& sink, const Json& message) {
  const std::string event = "event: message\ndata: " + DumpJson(message) + "\n\n";
  return sink.write(event.data(), event.size());
}

std::string Header(const httplib::Request& req, const char* name) {
  return req.has_header(name) ? req.get_header_value(name) : "";
}

bool Accepts(const httplib::Request& req, const char* type) {
  return Header(req, "Accept").find(type) != std::string::npos;
}

// The HTTP status of a JSON-RPC error response in the 2026 transport.
int ModernStatus(const Json& response) {
  if (!response.contains("error")) return 200;
  const int code = response["error"]["code"].get<int>();
  if (code == kMethodNotFound) return 404;
  if (code == kHeaderMismatch || code == kUnsupportedVersion || code == kParseError ||
      code == kInvalidRequest) {
    return 400;
  }
  return 200;
}

}  // namespace

// "bytes" random bytes from the system's secure source, as hex.
std::string RandomHex(int bytes) {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), bytes) != 1) {
    // No secure randomness: still unique, and still bound to its caller.
    return Sha256Hex(NewId("mcp") + std::to_string(NowMillis())).substr(0, 2 * bytes);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : raw) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

bool OriginAllowed(const std::string& origin, const std::vector<std::string>& allowed) {
  return origin.empty() || IsLoopbackOrigin(origin) ||
         std::find(allowed.begin(), allowed.end(), origin) != allowed.end();
}

bool IsLoopbackHostName(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  // An IPv4 literal in 127.0.0.0/8: four decimal parts, nothing else
  // ("127.0.0.1.evil.example" is a name anyone may own).
  if (host.rfind("127.", 0) != 0) return false;
  int parts = 0;
  size_t start = 0;
  while (start <= host.size()) {
    size_t dot = host.find('.', start);
    if (dot == std::string::npos) dot = host.size();
    const std::string part = host.substr(start, dot - start);
    if (part.empty() || part.size() > 3 ||
        part.find_first_not_of("0123456789") != std::string::npos || std::stoi(part) > 255) {
      return false;
    }
    ++parts;
    start = dot + 1;
  }
  return parts == 4;
}

bool IsLoopbackOrigin(const std::string& origin) {
  for (const char* scheme : {"http://", "https://"}) {
    if (origin.rfind(scheme, 0) != 0) continue;
    std::string host = origin.substr(std::string(scheme).size());
    if (host.rfind("[::1]", 0) == 0) {
      const std::string rest = host.substr(5);
      return rest.empty() || rest[0] == ':';
    }
    const size_t end = host.find_first_of(":/");
    if (end != std::string::npos && host[end] == '/') return false;  // an Origin has no path
    return IsLoopbackHostName(host.substr(0, end));
  }
  return false;
}

struct HttpEndpoint::Impl {
  McpServer& server;
  Identify identify;
  HttpEndpointOptions options;

  Mutex mu;
  std::map<std::string, std::shared_ptr<HttpSession>> sessions GUARDED_BY(mu);
  std::set<RequestIo*> active GUARDED_BY(mu);  // requests answering on an SSE stream
  // Stateless (2026) requests on SSE by caller and id, for the client's
  // notifications/cancelled, which arrives on a request of its own.
  std::map<std::string, RequestIo*> stateless GUARDED_BY(mu);
  bool stopping GUARDED_BY(mu) = false;

  size_t open_streams GUARDED_BY(mu) = 0;  // SSE responses holding a worker
  std::atomic<uint64_t> use_counter{0};  // stamps HttpSession::use_seq

  // Adds (or removes) a request CloseAll must cancel; false while stopping.
  bool Track(RequestIo* io, bool add) EXCLUDES(mu) {
    MutexLock lock(&mu);
    if (!add) {
      active.erase(io);
      return true;
    }
    active.insert(io);
    return !stopping;
  }

  bool MayWait(const Json& message) const {
    const Json& params = message.value("params", Json());
    if (!params.is_object() || !params.value("name", Json()).is_string()) return false;
    const Tool* tool = server.tools().Find(params["name"].get<std::string>());
    return tool != nullptr && tool->may_wait;
  }

  // Each stream holds one of the server's workers for its life: they are
  // rationed so ordinary requests always find one.
  bool TakeStream() EXCLUDES(mu) {
    MutexLock lock(&mu);
    if (open_streams >= options.max_streams) return false;
    ++open_streams;
    return true;
  }
  void GiveStream() EXCLUDES(mu) {
    MutexLock lock(&mu);
    --open_streams;
  }

  static std::string StatelessKey(const Actor& actor, const Json& id) {
    return actor.id + "\n" + actor.role + "\n" + id.dump();
  }

  // A 2026 cancellation: ends the caller's request it names, if running.
  void CancelStateless(const Actor& actor, const Json& params) EXCLUDES(mu) {
    MutexLock lock(&mu);
    auto it = stateless.find(StatelessKey(actor, params.value("requestId", Json())));
    if (it == stateless.end()) return;
    it->second->withdrawn = true;
    it->second->cancelled = true;
  }

  // false (and the response set) when the request is refused before any
  // JSON-RPC is read: a foreign Origin or an unknown caller.
  bool Admit(const httplib::Request& req, httplib::Response& res, Actor* actor) {
    const std::string origin = Header(req, "Origin");
    if (!OriginAllowed(origin, options.allowed_origins)) {
      SendRpc(res, 403, ErrorResponse(nullptr, kInvalidRequest,
                                      "Forbidden: Origin " + origin +
                                          " is not allowed (DNS rebinding protection); only "
                                          "loopback origins may call this server"));
      return false;
    }
    Result<Actor> who = identify(req);
    if (!who.ok()) {
      const bool unauthenticated = who.status().code() == StatusCode::kUnauthenticated;
      if (unauthenticated) res.set_header("WWW-Authenticate", "Bearer");
      // A header that contradicts the credential is 403, like the operations API.
      const bool denied = who.status().code() == StatusCode::kPermissionDenied;
      SendRpc(res, unauthenticated ? 401 : denied ? 403 : 400,
              ErrorResponse(nullptr, kInvalidRequest, who.status().message()));
      return false;
    }
    *actor = *who;
    return true;
  }

  std::shared_ptr<HttpSession> NewSession(const Actor& actor, const std::string& run,
                                          std::string* refused) EXCLUDES(mu) {
    auto s = std::make_shared<HttpSession>();
    s->id = RandomHex(16);
    s->actor = actor;
    {
      MutexLock lock(&s->mu);  // not shared yet; taken for the analysis
      s->last_used = NowMillis();
      s->use_seq = ++use_counter;
    }
    HttpSession* raw = s.get();
    s->mcp = std::make_unique<McpSession>(server, actor, run, [raw](const Json& n) {
      MutexLock lock(&raw->mu);
      if (raw->queue.size() >= kMaxQueued) raw->queue.pop_front();
      raw->queue.push_back(n);
      raw->cv.SignalAll();
    });
    // Expired sessions are released after the locks: the last reference
    // destroys a session, whose destructor waits for the change feed.
    std::vector<std::shared_ptr<HttpSession>> expired;
    MutexLock lock(&mu);
    const int64_t now = NowMillis();
    for (auto it = sessions.begin(); it != sessions.end();) {
      bool idle = false;
      {
        MutexLock session_lock(&it->second->mu);
        idle = !it->second->stream_open && now - it->second->last_used > options.session_idle_ms;
      }
      if (!idle) {
        ++it;
        continue;
      }
      expired.push_back(std::move(it->second));
      it = sessions.erase(it);
    }
    if (sessions.size() >= options.max_sessions) {
      // Hosts seldom say goodbye (DELETE): the least recently used session
      // without a stream makes room.
      auto lru = sessions.end();
      uint64_t oldest = 0;
      for (auto it = sessions.begin(); it != sessions.end(); ++it) {
        MutexLock session_lock(&it->second->mu);
        if (it->second->stream_open) continue;
        if (lru == sessions.end() || it->second->use_seq < oldest) {
          lru = it;
          oldest = it->second->use_seq;
        }
      }
      if (lru != sessions.end()) {
        expired.push_back(std::move(lru->second));
        sessions.erase(lru);
      }
    }
    if (stopping || sessions.size() >= options.max_sessions) {
      *refused = stopping ? "the server is stopping" : "too many sessions with open streams";
      return nullptr;
    }
    sessions[s->id] = s;
    return s;
  }

  // The session a legacy request names, or the response refusing it.
  std::shared_ptr<HttpSession> FindSession(const httplib::Request& req, httplib::Response& res,
                                           const Actor& actor) EXCLUDES(mu) {
    const std::string id = Header(req, "Mcp-Session-Id");
    if (id.empty()) {
      SendRpc(res, 400, ErrorResponse(nullptr, kInvalidRequest,
                                      "Bad Request: Mcp-Session-Id header is required (send "
                                      "initialize first, or use protocol version 2026-07-28)"));
      return nullptr;
    }
    std::shared_ptr<HttpSession> s;
    {
      MutexLock lock(&mu);
      auto it = sessions.find(id);
      if (it != sessions.end()) s = it->second;
    }
    if (!s) {
      SendRpc(res, 404, ErrorResponse(nullptr, -32001, "Session not found: initialize again"));
      return nullptr;
    }
    // The grants too: a session opened with one token must not lend its
    // grants to a request carrying another token of the same agent.
    if (s->actor.id != actor.id || s->actor.role != actor.role || s->actor.grants != actor.grants) {
      SendRpc(res, 403, ErrorResponse(nullptr, kInvalidRequest,
                                      "Forbidden: this session belongs to another caller"));
      return nullptr;
    }
    MutexLock lock(&s->mu);
    s->last_used = NowMillis();
    s->use_seq = ++use_counter;
    return s;
  }

  // Answers "message" on "session": JSON, or SSE for requests that may
  // send notifications before their response.
  void Answer(const httplib::Request& req, httplib::Response& res,
              std::shared_ptr<McpSession> session, Json message, bool modern) {
    if (modern && message.is_object() && message.value("method", Json()) == "notifications/cancelled" &&
        message.value("params", Json()).is_object()) {
      CancelStateless(session->actor(), message["params"]);
    }
    const bool request = message.is_object() && message.contains("method") && message.contains("id");
    const std::string method = request && message["method"].is_string() ? message["method"].get<std::string>() : "";
    if (!request) {
      RequestIo io;
      Json response = session->Handle(message, io);
      if (response.is_null()) {
        res.status = 202;
      } else if (response.is_array()) {  // a 2025-03-26 batch's responses
        SendRpc(res, 200, response);
      } else {
        SendRpc(res, 400, response);
      }
      return;
    }
    // Only what may wait is streamed: a stream holds a worker for its life,
    // and an ordinary call answered as JSON takes none of the stream slots
    // that hosts' notification streams hold.
    const bool stream = Accepts(req, "text/event-stream") &&
                        (method == "subscriptions/listen" ||
                         (method == "tools/call" && MayWait(message)));
    if (!stream) {
      RequestIo io;
      if (!Track(&io, true)) io.cancelled = true;
      Json response = session->Handle(message, io);
      Track(&io, false);
      SendRpc(res, modern ? ModernStatus(response) : 200, response);
      return;
    }
    if (!TakeStream()) {
      return SendRpc(res, 503, ErrorResponse(message["id"], kInternalError,
                                             "too many open streams; retry later"));
    }
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, session, message, modern](size_t, httplib::DataSink& sink) {
          const std::string key = modern ? StatelessKey(session->actor(), message["id"]) : "";
          RequestIo io;
          Mutex write_mu;
          io.send = [&](const Json& n) {
            MutexLock lock(&write_mu);
            if (!io.cancelled && !WriteEvent(sink, n)) io.cancelled = true;
          };
          io.keepalive = [&] {
            MutexLock lock(&write_mu);
            static constexpr char kComment[] = ": waiting\n\n";
            if (!io.cancelled && !sink.write(kComment, sizeof kComment - 1)) io.cancelled = true;
          };
          if (!Track(&io, true)) io.cancelled = true;
          if (modern) {
            MutexLock lock(&mu);
            stateless[key] = &io;
          }
          Json response = session->Handle(message, io);
          Track(&io, false);
          if (modern) {
            MutexLock lock(&mu);
            auto it = stateless.find(key);
            if (it != stateless.end() && it->second == &io) stateless.erase(it);
          }
          MutexLock lock(&write_mu);
          if (!response.is_null() && !io.cancelled) WriteEvent(sink, response);
          sink.done();
          return true;
        },
        [this](bool) { GiveStream(); });
  }

  void Post(const httplib::Request& req, httplib::Response& res) {
    Actor actor;
    if (!Admit(req, res, &actor)) return;
    Result<Json> parsed = ParseJson(req.body, "request body");
    if (!parsed.ok()) {
      return SendRpc(res, 400, ErrorResponse(nullptr, kParseError, "Parse error: " + parsed.status().message()));
    }
    Json message = std::move(parsed).value();
    const bool object = message.is_object();
    const std::string method = object && message.value("method", Json()).is_string() ? message["method"].get<std::string>() : "";
    const Json params = object && message.value("params", Json()).is_object() ? message["params"] : Json::object();
    const Json meta = params.value("_meta", Json::object());
    const Json id = object ? message.value("id", Json()) : Json();
    const std::string header_version = Header(req, "MCP-Protocol-Version");
    const std::string run = Header(req, "X-Baton-Run");
    const bool modern = (meta.is_object() && meta.contains(kMetaProtocolVersion)) ||
                        header_version == kVersion20260728 ||
                        (method == "server/discover" && Header(req, "Mcp-Session-Id").empty());
    if (modern) {
      if (Status s = CheckModernHeaders(req, method, params, meta, header_version); !s.ok()) {
        const int code = s.details().value("rpc_code", kHeaderMismatch);
        return SendRpc(res, 400, ErrorResponse(id, code,
                                               s.message(), s.details().value("rpc_data", Json())));
      }
      auto session = std::make_shared<McpSession>(server, actor, run, nullptr);
      return Answer(req, res, session, std::move(message), true);
    }
    if (method == "initialize") {
      std::string refused;
      std::shared_ptr<HttpSession> s = NewSession(actor, run, &refused);
      if (!s) return SendRpc(res, 503, ErrorResponse(id, kInternalError, refused));
      RequestIo io;
      Json response = s->mcp->Handle(message, io);
      res.set_header("Mcp-Session-Id", s->id);
      return SendRpc(res, 200, response);
    }
    std::shared_ptr<HttpSession> s = FindSession(req, res, actor);
    if (!s) return;
    const std::string version = s->mcp->legacy_version();
    // Any version this server speaks is accepted on a session (clients send
    // their own default before and after negotiating); others are refused.
    if (!header_version.empty() && !IsLegacyVersion(header_version)) {
      return SendRpc(res, 400, ErrorResponse(id, kInvalidRequest,
                                             "Bad Request: MCP-Protocol-Version " + header_version +
                                                 " is not one this server speaks on a session "
                                                 "(2025-03-26, 2025-06-18, 2025-11-25; this "
                                                 "session negotiated " + version + ")"));
    }
    // The session outlives this request through the aliasing pointer.
    std::shared_ptr<McpSession> mcp(s, s->mcp.get());
    Answer(req, res, mcp, std::move(message), false);
  }

  static Status HeaderMismatch(std::string message) {
    return Status(StatusCode::kInvalidArgument, "Header mismatch: " + message,
                  Json{{"rpc_code", kHeaderMismatch}, {"rpc_data", nullptr}});
  }

  Status CheckModernHeaders(const httplib::Request& req, const std::string& method,
                            const Json& params, const Json& meta, const std::string& header_version) {
    const Json body_version = meta.is_object() ? meta.value(kMetaProtocolVersion, Json()) : Json();
    if (header_version.empty() && method != "server/discover") {
      return HeaderMismatch("the MCP-Protocol-Version header is required");
    }
    if (!header_version.empty() && body_version.is_string() && body_version != header_version) {
      return HeaderMismatch("MCP-Protocol-Version header " + header_version +
                            " does not match params._meta version " + body_version.get<std::string>());
    }
    const std::string version = !header_version.empty() ? header_version
                                : body_version.is_string() ? body_version.get<std::string>() : "";
    if (!version.empty() && version != kVersion20260728) {
      return Status(StatusCode::kInvalidArgument, "Unsupported protocol version",
                    Json{{"rpc_code", kUnsupportedVersion}, {"rpc_data", UnsupportedVersionData(version)}});
    }
    const std::string header_method = Header(req, "Mcp-Method");
    if (!header_method.empty() && header_method != method) {
      return HeaderMismatch("Mcp-Method header " + header_method + " does not match method " + method);
    }
    const std::string name = Header(req, "Mcp-Name");
    if (!name.empty()) {
      const Json body_name = params.contains("name") ? params["name"] : params.value("uri", Json());
      if (!body_name.is_string() || body_name != name) {
        return HeaderMismatch("Mcp-Name header " + name + " does not match the request's name");
      }
    }
    return Status();
  }

  void Get(const httplib::Request& req, httplib::Response& res) {
    Actor actor;
    if (!Admit(req, res, &actor)) return;
    if (Header(req, "Mcp-Session-Id").empty()) {
      res.set_header("Allow", "POST");
      return SendRpc(res, 405, ErrorResponse(nullptr, kInvalidRequest,
                                             "Method Not Allowed: the GET stream belongs to a 2025 "
                                             "session (send Mcp-Session-Id)"));
    }
    if (!Accepts(req, "text/event-stream")) {
      return SendRpc(res, 406, ErrorResponse(nullptr, kInvalidRequest,
                                             "Not Acceptable: the stream is text/event-stream"));
    }
    std::shared_ptr<HttpSession> s = FindSession(req, res, actor);
    if (!s) return;
    {
      MutexLock lock(&s->mu);
      if (s->stream_open) {
        return SendRpc(res, 409, ErrorResponse(nullptr, kInvalidRequest,
                                               "Conflict: this session already has a stream open"));
      }
      s->stream_open = true;
    }
    if (!TakeStream()) {
      MutexLock lock(&s->mu);
      s->stream_open = false;
      return SendRpc(res, 503, ErrorResponse(nullptr, kInternalError, "too many open streams; retry later"));
    }
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider("text/event-stream", [s](size_t, httplib::DataSink& sink) {
      // Writes happen without the session's lock: a stalled client must
      // not hold up the change feed, which queues under it.
      bool ok = sink.write(": stream open\n\n", 15);
      int64_t last_write = NowMillis();
      while (ok) {
        std::deque<Json> batch;
        {
          MutexLock lock(&s->mu);
          if (s->closed) break;
          // Short slices: a client that left frees its slot within one.
          const auto deadline =
              std::chrono::steady_clock::now() + std::chrono::milliseconds(kLivenessMillis);
          while (!s->closed && s->queue.empty()) {
            if (!s->cv.WaitUntil(&s->mu, deadline)) break;
          }
          if (s->closed) break;
          batch.swap(s->queue);
        }
        if (!batch.empty()) {
          for (const Json& n : batch) ok = ok && WriteEvent(sink, n);
          last_write = NowMillis();
        } else if (!sink.is_writable()) {
          ok = false;  // the client went away
        } else if (NowMillis() - last_write >= kKeepaliveMillis) {
          ok = sink.write(": keepalive\n\n", 13);
          last_write = NowMillis();
        }
      }
      sink.done();
      return true;
    },
    // Runs whether or not the provider ever did (a client gone first).
    [this, s](bool) {
      {
        MutexLock lock(&s->mu);
        s->stream_open = false;
      }
      GiveStream();
    });
  }

  void Delete(const httplib::Request& req, httplib::Response& res) {
    Actor actor;
    if (!Admit(req, res, &actor)) return;
    if (Header(req, "Mcp-Session-Id").empty()) {
      res.set_header("Allow", "POST");
      return SendRpc(res, 405, ErrorResponse(nullptr, kInvalidRequest,
                                             "Method Not Allowed: DELETE ends a 2025 session "
                                             "(send Mcp-Session-Id)"));
    }
    std::shared_ptr<HttpSession> s = FindSession(req, res, actor);
    if (!s) return;
    {
      MutexLock lock(&mu);
      sessions.erase(s->id);
    }
    End(*s);
    res.status = 204;
  }

  static void End(HttpSession& s) {
    s.mcp->CancelAll();
    MutexLock lock(&s.mu);
    s.closed = true;
    s.cv.SignalAll();
  }
};

HttpEndpoint::HttpEndpoint(McpServer& server, Identify identify, HttpEndpointOptions options)
    : impl_(new Impl{server, std::move(identify), std::move(options), {}, {}, {}, {}, false}) {}

HttpEndpoint::~HttpEndpoint() { CloseAll(); }

void HttpEndpoint::Handle(const httplib::Request& req, httplib::Response& res) {
  if (req.method == "POST") return impl_->Post(req, res);
  if (req.method == "GET") return impl_->Get(req, res);
  if (req.method == "DELETE") return impl_->Delete(req, res);
  res.set_header("Allow", "GET, POST, DELETE");
  SendRpc(res, 405, ErrorResponse(nullptr, kInvalidRequest, "Method Not Allowed"));
}

void HttpEndpoint::CloseAll() {
  std::map<std::string, std::shared_ptr<HttpSession>> sessions;
  {
    MutexLock lock(&impl_->mu);
    impl_->stopping = true;
    sessions.swap(impl_->sessions);
    for (RequestIo* io : impl_->active) io->cancelled = true;
  }
  for (auto& [id, s] : sessions) Impl::End(*s);
}

}  // namespace baton::mcp
