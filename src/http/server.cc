#include "http/server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "baton/error_table.h"
#include "http/dashboard.h"
#include "http/event_stream.h"
#include "http/front.h"
#include "mcp/http_endpoint.h"
#include "mcp/protocol.h"
#include "util/mutex.h"

namespace baton {
namespace {

void SendJson(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(DumpJson(body) + "\n", "application/json");
}

void SendError(httplib::Response& res, const Status& s) {
  SendJson(res, HttpStatusFor(s), Json{{"error", s.ToJson()}});
}

// The routes, with httplib's request processing open to the front.
class Router : public httplib::Server {
 public:
  bool Process(httplib::Stream& strm, bool close_connection, bool& closed) {
    return process_request(strm, close_connection, closed, nullptr);
  }
  // httplib ends a streamed (content provider) response once its listening
  // socket is INVALID_SOCKET, which it is here (the front listens): give it
  // the front's while serving.
  void SetListening(int fd) { svr_sock_ = fd; }
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "host" of "host", "host:port", "[v6]" or "[v6]:port", lower case.
std::string HostOnly(const std::string& value) {
  if (!value.empty() && value.front() == '[') {
    const size_t close = value.find(']');
    return Lower(close == std::string::npos ? value : value.substr(0, close + 1));
  }
  const size_t colon = value.find(':');
  if (colon != std::string::npos && value.find(':', colon + 1) != std::string::npos) {
    return Lower("[" + value + "]");  // a bare IPv6 address
  }
  return Lower(value.substr(0, colon));
}

// The host of an origin ("scheme://host[:port]").
std::string OriginHost(const std::string& origin) {
  const size_t scheme = origin.find("://");
  std::string rest = scheme == std::string::npos ? origin : origin.substr(scheme + 3);
  rest = rest.substr(0, rest.find('/'));
  return HostOnly(rest);
}

}  // namespace

bool HostAllowed(const std::string& host_header, const std::string& bound_host,
                 const std::string& local_addr, const std::vector<std::string>& allowed_origins) {
  const std::string host = HostOnly(host_header);
  if (host.empty()) return false;
  if (mcp::IsLoopbackHostName(host)) return true;
  for (const std::string& own : {bound_host, local_addr}) {
    if (!own.empty() && host == HostOnly(own.find(':') != std::string::npos && own.front() != '['
                                             ? "[" + own + "]"
                                             : own)) {
      return true;
    }
  }
  for (const std::string& origin : allowed_origins) {
    if (host == OriginHost(origin)) return true;
  }
  return false;
}

bool IsLoopbackHost(const std::string& host) { return mcp::IsLoopbackHostName(host); }

struct HttpServer::Impl {
  Api& api;
  HttpOptions options;
  Router server;
  std::unique_ptr<http::Front> front;
  std::unique_ptr<EventStreams> events;
  // The dashboard's session cookie, named after the port: browsers share
  // cookies between the ports of one host, so two servers must not.
  std::string cookie_name = "baton_session";
  // The MCP endpoints, one per combination of tool sets asked for.
  Mutex mcp_mu;
  std::map<std::string, std::unique_ptr<mcp::McpServer>> mcp_servers GUARDED_BY(mcp_mu);
  std::map<std::string, std::unique_ptr<mcp::HttpEndpoint>> mcp_endpoints GUARDED_BY(mcp_mu);

  // "default_role" is for a caller that names nobody under auth "none": the
  // human at the terminal for the operations API, an agent for MCP (an agent
  // host that forgot its header must not answer its own questions).
  Result<Actor> CallerOf(const httplib::Request& req, const std::string& default_role = "human") {
    return IdentifyCaller(api, {options.auth, options.human_secret, cookie_name}, req,
                          default_role);
  }

  // Under --auth none a browser page on another loopback port would act as
  // the human: a change from a browser (it sends Origin) must be this
  // server's own page's, or an allowed origin's.
  bool ForeignChangeUnderAuthNone(const httplib::Request& req) {
    if (options.auth != kAuthNone || req.method == "GET" || req.method == "HEAD" ||
        !req.has_header("Origin")) {
      return false;
    }
    const std::string origin = Lower(req.get_header_value("Origin"));
    if (origin == Lower("http://" + req.get_header_value("Host"))) return false;
    for (const std::string& allowed : options.allowed_origins) {
      if (origin == Lower(allowed)) return false;
    }
    return true;
  }

  bool OriginAllowed(const httplib::Request& req) {
    return mcp::OriginAllowed(req.has_header("Origin") ? req.get_header_value("Origin") : "",
                              options.allowed_origins);
  }

  // The endpoint serving "tools" (comma-separated sets), made on first use.
  // Keyed by the sets named, each once, so clients can make at most one
  // endpoint per ordering of the known sets.
  Result<mcp::HttpEndpoint*> Endpoint(const std::string& tools) EXCLUDES(mcp_mu) {
    std::vector<std::string> sets;
    for (size_t start = 0; start <= tools.size();) {
      size_t comma = tools.find(',', start);
      if (comma == std::string::npos) comma = tools.size();
      const std::string set = tools.substr(start, comma - start);
      if (std::find(sets.begin(), sets.end(), set) == sets.end()) sets.push_back(set);
      start = comma + 1;
    }
    std::string key;
    for (const std::string& set : sets) key += (key.empty() ? "" : ",") + set;
    MutexLock lock(&mcp_mu);
    auto it = mcp_endpoints.find(key);
    if (it != mcp_endpoints.end()) return it->second.get();
    mcp::McpOptions mcp_options;
    mcp_options.tool_sets = sets;
    mcp_options.max_message_bytes = options.max_body;
    // Refuses unknown sets before anything is kept.
    ASSIGN_OR_RETURN(std::unique_ptr<mcp::McpServer> server, mcp::McpServer::Create(api, mcp_options));
    auto endpoint = std::make_unique<mcp::HttpEndpoint>(
        *server, [this](const httplib::Request& r) { return CallerOf(r, "agent"); },
        mcp::HttpEndpointOptions{.allowed_origins = options.allowed_origins,
                                 .max_streams = McpStreamCap()});
    mcp::HttpEndpoint* raw = endpoint.get();
    mcp_servers[key] = std::move(server);
    mcp_endpoints[key] = std::move(endpoint);
    return raw;
  }

  void HandleMcp(const httplib::Request& req, httplib::Response& res) {
    std::string tools;
    for (const std::string& set : options.mcp_tools) tools += (tools.empty() ? "" : ",") + set;
    if (req.has_param("tools")) tools = req.get_param_value("tools");
    Result<mcp::HttpEndpoint*> endpoint = Endpoint(tools);
    if (!endpoint.ok()) {
      res.status = 400;
      res.set_content(DumpJson(mcp::ErrorResponse(nullptr, mcp::kInvalidRequest,
                                                  endpoint.status().message())),
                      "application/json");
      return;
    }
    (*endpoint)->Handle(req, res);
  }

  // The body is read here (not by httplib, whose form-urlencoded reader
  // would refuse 8 KiB): it is JSON whatever the Content-Type says.
  void HandleOp(const httplib::Request& req, httplib::Response& res,
                const httplib::ContentReader& reader) {
    const std::string type = req.get_header_value("Content-Type");
    if (Lower(type).rfind("multipart/", 0) == 0) {
      SendJson(res, 415,
               Json{{"error", InvalidArgumentError(
                                  "Content-Type " + type.substr(0, 100) +
                                  ": operations take a JSON object as the body (send "
                                  "Content-Type: application/json)")
                                  .ToJson()}});
      return;
    }
    std::string body;
    bool too_large = false;
    reader([&](const char* data, size_t n) {
      if (body.size() + n > options.max_body) {
        too_large = true;
        return false;
      }
      body.append(data, n);
      return true;
    });
    if (too_large) {
      SendJson(res, 413,
               Json{{"error", ResourceExhaustedError(
                                  "the request body is larger than the limit of " +
                                  std::to_string(options.max_body) + " bytes (--max-body)")
                                  .ToJson()}});
      return;
    }
    Result<Actor> actor = CallerOf(req);
    if (!actor.ok()) return SendError(res, actor.status());
    Json input = Json::object();
    if (!body.empty()) {
      Result<Json> parsed = ParseJson(body, "request body");
      if (!parsed.ok()) return SendError(res, parsed.status());
      input = std::move(parsed).value();
    }
    if (!input.is_object()) {
      return SendError(res, InvalidArgumentError("request body: must be a JSON object"));
    }
    Result<Json> out = api.Call(req.matches[1].str(), input, *actor);
    if (!out.ok()) return SendError(res, out.status());
    SendJson(res, 200, *out);
  }

  // Requests that may hold a worker long: every /mcp request (a stream, or
  // a tool call that waits for a human) and the operations that compose
  // others (waits, graph runs).
  bool IsLong(const std::string& method, const std::string& path) {
    if (path == "/mcp" || path == "/v1/events") return true;
    const std::string prefix = "/v1/ops/";
    if (method != "POST" || path.rfind(prefix, 0) != 0) return false;
    const Operation* op = api.registry().Find(path.substr(prefix.size()));
    return op != nullptr && static_cast<bool>(op->procedure);
  }

  // The SSE streams of an MCP endpoint (hosts' notification streams, calls
  // that wait): three quarters of what long requests may take once the
  // dashboard's event streams have theirs, so tool calls always find workers.
  size_t McpStreamCap() const {
    const http::FrontLimits l = Limits();
    const int rest = l.workers - l.reserve - options.max_event_streams;
    return static_cast<size_t>(std::max(1, rest * 3 / 4));
  }

  http::FrontLimits Limits() const {
    http::FrontLimits l;
    l.workers = std::max(2, options.threads);
    l.reserve = std::clamp(options.reserve, 1, l.workers - 1);
    l.max_connections = options.max_connections;
    l.max_per_peer = options.max_per_peer;
    l.header_timeout_ms = options.header_timeout_ms;
    l.body_timeout_ms = options.body_timeout_ms;
    l.idle_timeout_ms = options.idle_timeout_ms;
    l.stop_grace_ms = options.stop_grace_ms;
    l.max_header_bytes = options.max_header_bytes;
    l.max_body = options.max_body;
    return l;
  }

  void RefuseHost(const httplib::Request& req, httplib::Response& res) {
    const std::string host = req.get_header_value("Host").substr(0, 200);
    const std::string rule =
        "Host " + host +
        ": not a name of this server (DNS rebinding protection); the Host must be a loopback "
        "name or address, the address the server listens on, or the host of an --allow-origin";
    if (req.path == "/mcp") {
      res.status = 403;
      res.set_content(DumpJson(mcp::ErrorResponse(nullptr, mcp::kInvalidRequest, "Forbidden: " + rule)),
                      "application/json");
      return;
    }
    SendJson(res, 403, Json{{"error", PermissionDeniedError(rule).ToJson()}});
  }

  void ServeAsset(const httplib::Request& req, httplib::Response& res, const std::string& name) {
    std::optional<DashboardAsset> asset = FindDashboardAsset(options.ui_dir, name);
    if (!asset) {
      return SendError(res, NotFoundError("no dashboard file \"" + name.substr(0, 100) + "\""));
    }
    res.set_header("ETag", asset->etag);
    res.set_header("Cache-Control", "no-cache");
    if (req.get_header_value("If-None-Match") == asset->etag) {
      res.status = 304;
      return;
    }
    res.status = 200;
    res.set_content(std::move(asset->body), asset->content_type);
  }

  static Json ActorJson(const Actor& a) {
    return {{"id", a.id}, {"role", a.role}, {"grants", a.grants}};
  }

  void SessionGet(const httplib::Request& req, httplib::Response& res) {
    Result<Actor> actor = CallerOf(req);
    if (!actor.ok()) return SendError(res, actor.status());
    SendJson(res, 200, {{"actor", ActorJson(*actor)}, {"auth", options.auth}});
  }

  // POST /v1/session {token}: the page's sign-in. The cookie holds the
  // secret itself, so a restarted server still knows the page.
  void SessionPost(const httplib::Request& req, httplib::Response& res) {
    const std::string origin = req.get_header_value("Origin");
    if (!origin.empty() && Lower(origin) != Lower("http://" + req.get_header_value("Host"))) {
      return SendError(res, PermissionDeniedError("Origin " + origin.substr(0, 200) +
                                                  ": only the dashboard's own page signs in"));
    }
    if (options.auth == kAuthNone) {
      return SendJson(res, 200, {{"actor", ActorJson(LocalHumanActor())}, {"auth", options.auth}});
    }
    Result<Json> body = ParseJson(req.body, "request body");
    if (!body.ok()) return SendError(res, body.status());
    if (!body->is_object() || !(*body)["token"].is_string()) {
      return SendError(res, InvalidArgumentError("token: required, a string (the secret of the "
                                                 "human's link, or an agent's token)"));
    }
    const std::string token = (*body)["token"].get<std::string>();
    Result<Actor> actor =
        ActorForSecret(api, {options.auth, options.human_secret, cookie_name}, token);
    if (!actor.ok()) return SendError(res, actor.status());
    // {check: true}: who the token is, without signing in (the page asks
    // before a link replaces the session it has).
    if ((*body).value("check", false) == true) {
      return SendJson(res, 200, {{"actor", ActorJson(*actor)}, {"auth", options.auth}});
    }
    const bool human = IsHumanSecret({options.auth, options.human_secret, cookie_name}, token);
    Json create = {{"credential", human ? "human" : "token"},
                   {"agent", actor->id},
                   {"role", actor->role}};
    if (!human) create["token"] = token;
    Result<Json> session = api.Call("session.create", create, SystemActor());
    if (!session.ok()) return SendError(res, session.status());
    // The cookie holds the session's own secret (hex), never the credential
    // signed in with; the proof goes to the page alone.
    res.set_header("Set-Cookie", cookie_name + "=" + (*session)["session"].get<std::string>() +
                                     "; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000");
    SendJson(res, 200, {{"actor", ActorJson(*actor)},
                        {"auth", options.auth},
                        {"proof", (*session)["proof"]},
                        {"expires_at", (*session)["expires_at"]}});
  }

  void SessionDelete(const httplib::Request& req, httplib::Response& res) {
    const std::string session = CookieValue(req, cookie_name);
    if (!session.empty() && session.size() <= 200) {
      (void)api.Call("session.end", {{"session", session}}, SystemActor());
    }
    res.set_header("Set-Cookie",
                   cookie_name + "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    res.status = 204;
  }

  void Routes() {
    server.set_payload_max_length(options.max_body);
    // Agents keep connections open; the front closes idle ones
    // (idle_timeout_ms) without holding a worker.
    server.set_keep_alive_max_count(100000);
    // Only for the Keep-Alive header's "timeout=": the front closes them.
    server.set_keep_alive_timeout(std::max<int64_t>(1, options.idle_timeout_ms / 1000));
    front = std::make_unique<http::Front>(
        Limits(),
        [this](httplib::Stream& strm, bool close, bool& closed) {
          return server.Process(strm, close, closed);
        },
        [this](const std::string& method, const std::string& path) { return IsLong(method, path); });
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      // Browsers always send Host; a request without one is no page's.
      if (req.has_header("Host") &&
          !HostAllowed(req.get_header_value("Host"), options.host, req.local_addr,
                       options.allowed_origins)) {
        RefuseHost(req, res);
        return httplib::Server::HandlerResponse::Handled;
      }
      if (OriginAllowed(req) && !ForeignChangeUnderAuthNone(req)) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      if (OriginAllowed(req)) {
        SendError(res, PermissionDeniedError(
                           "Origin " + req.get_header_value("Origin").substr(0, 200) +
                           ": under --auth none every caller is believed, so only this server's "
                           "own page (or an --allow-origin) may change anything from a browser"));
        return httplib::Server::HandlerResponse::Handled;
      }
      res.status = 403;
      res.set_content(DumpJson(Json{{"error", PermissionDeniedError(
                                                  "Origin " + req.get_header_value("Origin") +
                                                  " is not allowed (DNS rebinding protection)")
                                                  .ToJson()}}),
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    });
    auto mcp = [this](const httplib::Request& q, httplib::Response& r) { HandleMcp(q, r); };
    server.Post("/mcp", mcp);
    server.Get("/mcp", mcp);
    server.Delete("/mcp", mcp);
    server.Post(R"(/v1/ops/([A-Za-z0-9_.]+))",
                [this](const httplib::Request& q, httplib::Response& r,
                       const httplib::ContentReader& reader) { HandleOp(q, r, reader); });
    server.Get("/v1/ops", [this](const httplib::Request&, httplib::Response& r) {
      Json list = Json::array();
      for (const Operation* op : api.registry().All()) list.push_back(Registry::Describe(*op));
      SendJson(r, 200, Json{{"operations", list}});
    });
    server.Get("/v1/health", [](const httplib::Request&, httplib::Response& r) {
      SendJson(r, 200, Json{{"ok", true}});
    });
    server.Get("/v1/events", [this](const httplib::Request& q, httplib::Response& r) {
      Result<Actor> actor = CallerOf(q);
      if (!actor.ok()) return SendError(r, actor.status());
      events->Handle(q, r, actor->role);
    });
    server.Get("/v1/session", [this](const httplib::Request& q, httplib::Response& r) {
      SessionGet(q, r);
    });
    server.Post("/v1/session", [this](const httplib::Request& q, httplib::Response& r) {
      SessionPost(q, r);
    });
    server.Delete("/v1/session", [this](const httplib::Request& q, httplib::Response& r) {
      SessionDelete(q, r);
    });
    server.Get("/", [this](const httplib::Request& q, httplib::Response& r) {
      ServeAsset(q, r, "index.html");
    });
    server.Get(R"(/assets/([A-Za-z0-9_.-]+))", [this](const httplib::Request& q,
                                                      httplib::Response& r) {
      ServeAsset(q, r, q.matches[1].str());
    });
    // Every answer: no sniffing, no framing, and the dashboard's policy
    // (no inline script, only this server's files and API).
    server.set_post_routing_handler([](const httplib::Request&, httplib::Response& r) {
      r.set_header("Content-Security-Policy", std::string(kDashboardCsp));
      r.set_header("X-Content-Type-Options", "nosniff");
      r.set_header("X-Frame-Options", "DENY");
      r.set_header("Referrer-Policy", "no-referrer");
    });
    server.set_error_handler([this](const httplib::Request& req, httplib::Response& r) {
      if (!r.body.empty()) return;
      const int status = r.status;
      // httplib reads an application/x-www-form-urlencoded body (on routes
      // other than /v1/ops) into memory only up to 8192 bytes.
      const bool form = Lower(req.get_header_value("Content-Type"))
                            .rfind("application/x-www-form-urlencoded", 0) == 0;
      const std::string what =
          status != 413 ? "HTTP " + std::to_string(status)
          : form        ? "an application/x-www-form-urlencoded body is limited to " +
                       std::to_string(CPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH) +
                       " bytes; send the JSON with Content-Type: application/json"
                        : "the request body is larger than the limit of " +
                       std::to_string(options.max_body) + " bytes (--max-body)";
      if (req.path == "/mcp") {
        r.set_content(DumpJson(mcp::ErrorResponse(nullptr, mcp::kInvalidRequest, "Invalid Request: " + what)),
                      "application/json");
      } else if (status == 404) {
        SendError(r, NotFoundError("no route " + req.method + " " + req.path +
                                   "; operations are POST /v1/ops/{name}"));
      } else {
        SendError(r, status == 413 ? ResourceExhaustedError(what) : InvalidArgumentError(what));
      }
      r.status = status;  // the status httplib chose (404, 413, ...) stands
    });
    server.set_exception_handler(
        [](const httplib::Request&, httplib::Response& r, std::exception_ptr) {
          SendError(r, InternalError("unexpected exception while serving the request"));
        });
  }
};

HttpServer::HttpServer(Api& api, HttpOptions options)
    : impl_(new Impl{api, std::move(options), {}}) {
  impl_->events = std::make_unique<EventStreams>(
      api, EventStreamOptions{.max_streams = impl_->options.max_event_streams,
                              .heartbeat_ms = impl_->options.event_heartbeat_ms});
  impl_->Routes();
}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Bind() {
  RETURN_IF_ERROR(CheckAuthMode(impl_->options.auth, impl_->options.host));
  // Streams hold workers; half of those long requests may take is theirs at
  // most, the rest stays for MCP sessions and waits.
  const http::FrontLimits limits = impl_->Limits();
  const size_t long_workers = static_cast<size_t>(limits.workers - limits.reserve);
  if (impl_->options.max_event_streams > long_workers / 2) {
    return InvalidArgumentError(
        "--max-event-streams " + std::to_string(impl_->options.max_event_streams) +
        ": at most half of the workers long requests may take (--threads " +
        std::to_string(limits.workers) + " minus --reserve " + std::to_string(limits.reserve) +
        ", halved: " + std::to_string(long_workers / 2) +
        "), so MCP sessions and waits keep theirs; raise --threads or lower it");
  }
  std::string tools;
  for (const std::string& set : impl_->options.mcp_tools) tools += (tools.empty() ? "" : ",") + set;
  RETURN_IF_ERROR(impl_->Endpoint(tools).status());
  ASSIGN_OR_RETURN(int port, impl_->front->Listen(impl_->options.host, impl_->options.port));
  impl_->cookie_name = "baton_session_" + std::to_string(port);
  return port;
}

void HttpServer::Serve() {
  impl_->server.SetListening(impl_->front->listen_fd());
  impl_->front->Run();
  impl_->server.SetListening(INVALID_SOCKET);
}

std::vector<std::string> HttpServer::Stuck() const { return impl_->front->Stuck(); }

std::string HttpServer::ServeBytes(std::string_view raw, bool run_long) {
  if (run_long) return impl_->front->ServeBytes(raw);
  return impl_->front->ServeBytes(raw, [this](const std::string& method, const std::string& path) {
    return path != "/mcp" && impl_->IsLong(method, path);  // /mcp streams are not run here
  });
}

void HttpServer::Stop() {
  if (!impl_) return;
  {
    // Streams end first: a worker held by one would keep the stop waiting.
    MutexLock lock(&impl_->mcp_mu);
    for (auto& [tools, endpoint] : impl_->mcp_endpoints) endpoint->CloseAll();
  }
  impl_->events->CloseAll();
  impl_->server.SetListening(INVALID_SOCKET);  // streams end after their current write
  impl_->front->Stop();
}

}  // namespace baton
