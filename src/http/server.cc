#include "http/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <map>
#include <mutex>

#include "baton/error_table.h"
#include "mcp/http_endpoint.h"
#include "mcp/protocol.h"

namespace baton {
namespace {

void SendJson(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(DumpJson(body) + "\n", "application/json");
}

void SendError(httplib::Response& res, const Status& s) {
  SendJson(res, HttpStatusFor(s), Json{{"error", s.ToJson()}});
}

}  // namespace

bool IsLoopbackHost(const std::string& host) { return mcp::IsLoopbackHostName(host); }

struct HttpServer::Impl {
  Api& api;
  HttpOptions options;
  httplib::Server server;
  int listen_fd = -1;
  // The MCP endpoints, one per combination of tool sets asked for.
  std::mutex mcp_mu;
  std::map<std::string, std::unique_ptr<mcp::McpServer>> mcp_servers;  // GUARDED_BY(mcp_mu)
  std::map<std::string, std::unique_ptr<mcp::HttpEndpoint>> mcp_endpoints;  // GUARDED_BY(mcp_mu)

  // "default_role" is for a caller that names nobody under auth "none": the
  // human at the terminal for the operations API, an agent for MCP (an agent
  // host that forgot its header must not answer its own questions).
  Result<Actor> CallerOf(const httplib::Request& req, const std::string& default_role = "human") {
    return IdentifyCaller(api, {options.auth, options.human_secret}, req, default_role);
  }

  bool OriginAllowed(const httplib::Request& req) {
    return mcp::OriginAllowed(req.has_header("Origin") ? req.get_header_value("Origin") : "",
                              options.allowed_origins);
  }

  // The endpoint serving "tools" (comma-separated sets), made on first use.
  // Keyed by the sets named, each once, so clients can make at most one
  // endpoint per ordering of the known sets.
  Result<mcp::HttpEndpoint*> Endpoint(const std::string& tools) {
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
    std::lock_guard<std::mutex> lock(mcp_mu);
    auto it = mcp_endpoints.find(key);
    if (it != mcp_endpoints.end()) return it->second.get();
    mcp::McpOptions mcp_options;
    mcp_options.tool_sets = sets;
    mcp_options.max_message_bytes = options.max_body;
    // Refuses unknown sets before anything is kept.
    ASSIGN_OR_RETURN(std::unique_ptr<mcp::McpServer> server, mcp::McpServer::Create(api, mcp_options));
    auto endpoint = std::make_unique<mcp::HttpEndpoint>(
        *server, [this](const httplib::Request& r) { return CallerOf(r, "agent"); },
        mcp::HttpEndpointOptions{.allowed_origins = options.allowed_origins});
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

  void HandleOp(const httplib::Request& req, httplib::Response& res) {
    Result<Actor> actor = CallerOf(req);
    if (!actor.ok()) return SendError(res, actor.status());
    Json input = Json::object();
    if (!req.body.empty()) {
      Result<Json> parsed = ParseJson(req.body, "request body");
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

  void Routes() {
    server.set_payload_max_length(options.max_body);
    // Debian's cpp-httplib is built with a listen backlog of 5: when many
    // agents connect at once the kernel drops connections it has already
    // accepted and their first request fails to read. Remember the socket so
    // Bind() can raise the backlog (the default options are kept).
    server.set_socket_options([this](socket_t fd) {
      int yes = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listen_fd = fd;
    });
    // Without it small responses wait for delayed ACKs (~40 ms each).
    server.set_tcp_nodelay(true);
    // Agents keep connections open; closing every few requests makes their
    // next request fail to read. An idle connection closes after 5 s (as
    // node's HTTP server does): a stopping server waits that long at most
    // for the workers that hold one.
    server.set_keep_alive_max_count(100000);
    server.set_keep_alive_timeout(5);
    server.new_task_queue = [n = options.threads] { return new httplib::ThreadPool(n); };
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (OriginAllowed(req)) return httplib::Server::HandlerResponse::Unhandled;
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
                [this](const httplib::Request& q, httplib::Response& r) { HandleOp(q, r); });
    server.Get("/v1/ops", [this](const httplib::Request&, httplib::Response& r) {
      Json list = Json::array();
      for (const Operation* op : api.registry().All()) list.push_back(Registry::Describe(*op));
      SendJson(r, 200, Json{{"operations", list}});
    });
    server.Get("/v1/health", [](const httplib::Request&, httplib::Response& r) {
      SendJson(r, 200, Json{{"ok", true}});
    });
    server.set_error_handler([this](const httplib::Request& req, httplib::Response& r) {
      if (!r.body.empty()) return;
      const int status = r.status;
      const std::string what = status == 413 ? "the request body is larger than " +
                                                   std::to_string(options.max_body) + " bytes"
                                             : "HTTP " + std::to_string(status);
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
  impl_->Routes();
}

HttpServer::~HttpServer() { Stop(); }

Result<int> HttpServer::Bind() {
  RETURN_IF_ERROR(CheckAuthMode(impl_->options.auth, impl_->options.host));
  std::string tools;
  for (const std::string& set : impl_->options.mcp_tools) tools += (tools.empty() ? "" : ",") + set;
  RETURN_IF_ERROR(impl_->Endpoint(tools).status());
  int port = impl_->options.port;
  if (port == 0) {
    port = impl_->server.bind_to_any_port(impl_->options.host);
  } else if (!impl_->server.bind_to_port(impl_->options.host, port)) {
    port = -1;
  }
  if (port >= 0 && impl_->listen_fd >= 0) {
    // listen() again on a listening socket only changes its backlog.
    ::listen(impl_->listen_fd, 1024);
  }
  if (port < 0) {
    return UnavailableError("cannot listen on " + impl_->options.host + ":" +
                            std::to_string(impl_->options.port) +
                            " (in use?); pick another with --listen");
  }
  return port;
}

void HttpServer::Serve() { impl_->server.listen_after_bind(); }

void HttpServer::Stop() {
  if (!impl_) return;
  {
    // Streams end first: a worker held by one would keep stop() waiting.
    std::lock_guard<std::mutex> lock(impl_->mcp_mu);
    for (auto& [tools, endpoint] : impl_->mcp_endpoints) endpoint->CloseAll();
  }
  if (impl_->server.is_running()) impl_->server.stop();
}

}  // namespace baton
