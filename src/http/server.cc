#include "http/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include "baton/error_table.h"

namespace baton {
namespace {

void SendJson(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(DumpJson(body) + "\n", "application/json");
}

void SendError(httplib::Response& res, const Status& s) {
  SendJson(res, MappingFor(s.code()).http_status, Json{{"error", s.ToJson()}});
}

Result<Actor> CallerOf(const httplib::Request& req) {
  Actor actor = LocalHumanActor();
  if (req.has_header("X-Baton-Agent")) actor.id = req.get_header_value("X-Baton-Agent");
  if (req.has_header("X-Baton-Role")) actor.role = req.get_header_value("X-Baton-Role");
  if (actor.id.empty()) return InvalidArgumentError("X-Baton-Agent: must not be empty");
  RETURN_IF_ERROR(CheckRole(actor.role).WithPrefix("X-Baton-Role"));
  return actor;
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

struct HttpServer::Impl {
  Api& api;
  HttpOptions options;
  httplib::Server server;
  int listen_fd = -1;

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
    // next request fail to read.
    server.set_keep_alive_max_count(100000);
    server.set_keep_alive_timeout(60);
    server.new_task_queue = [n = options.threads] { return new httplib::ThreadPool(n); };
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
    server.set_error_handler([](const httplib::Request& req, httplib::Response& r) {
      if (!r.body.empty()) return;
      SendError(r, r.status == 404
                       ? NotFoundError("no route " + req.method + " " + req.path +
                                       "; operations are POST /v1/ops/{name}")
                       : InvalidArgumentError("HTTP " + std::to_string(r.status)));
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
  if (!IsLoopbackHost(impl_->options.host)) {
    return InvalidArgumentError(
        "--listen " + impl_->options.host +
        ": binding to a non-loopback address needs bearer tokens, which this "
        "build does not have yet; use 127.0.0.1");
  }
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
  if (impl_ && impl_->server.is_running()) impl_->server.stop();
}

}  // namespace baton
