// `baton serve`: opens the store, starts group commit and the HTTP server,
// prints where it listens, and on SIGINT/SIGTERM stops accepting requests,
// finishes the batch in flight and exits 0.

#include <condition_variable>
#include <csignal>
#include <iostream>
#include <mutex>
#include <thread>

#include "cli/cli.h"
#include "engine/tokens.h"
#include "http/server.h"

namespace baton {
namespace {

Result<std::pair<std::string, int>> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgumentError("--listen: expected host:port (got \"" + listen + "\")");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  char* end = nullptr;
  long port = std::strtol(listen.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 0 || port > 65535 || colon + 1 == listen.size()) {
    return InvalidArgumentError("--listen: port must be 0..65535 (got \"" + listen + "\")");
  }
  return std::make_pair(host, static_cast<int>(port));
}

// The server's own chores, as operations called by baton itself: push
// pending mail into idle agents (every second) and mark silent agents lost
// (every few seconds). A failed chore is reported and retried next round;
// it never stops the server.
class Housekeeper {
 public:
  Housekeeper(Api& api, const ServeOptions& options) : api_(api), options_(options) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Housekeeper() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void Loop() {
    constexpr int kReconcileEvery = 5;  // rounds of one second
    for (int round = 0;; ++round) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) return;
      }
      Chore("mail.deliver", Json::object());
      if (options_.agent_timeout_ms > 0 && round % kReconcileEvery == 0) {
        Chore("agent.reconcile", {{"lost_after_ms", options_.agent_timeout_ms}});
      }
    }
  }

  void Chore(const char* op, const Json& input) {
    if (api_.registry().Find(op) == nullptr) return;
    Result<Json> r = api_.Call(op, input, SystemActor());
    if (!r.ok() && r.status().code() != StatusCode::kUnavailable) {
      std::cerr << "baton serve: " << op << ": " << r.status().ToString() << "\n";
    }
  }

  Api& api_;
  const ServeOptions& options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace

int RunServe(const GlobalOptions& g, const ServeOptions& serve_options) {
  const std::string& listen = serve_options.listen;
  // Signals are taken by a watcher thread with sigwait, so shutdown runs as
  // ordinary code rather than inside a signal handler. They are blocked
  // before any thread starts, so every thread inherits the mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Result<std::pair<std::string, int>> addr = ParseListen(listen);
  if (!addr.ok()) return ReportError(addr.status(), g.output);
  Result<ApiOptions> options = ResolveApiOptions(g, /*group_commit=*/true);
  if (!options.ok()) return ReportError(options.status(), g.output);
  Result<std::unique_ptr<Api>> api = Api::Open(*options);
  if (!api.ok()) return ReportError(api.status(), g.output);
  Status opened = (*api)->EnsureStore();
  if (!opened.ok()) return ReportError(opened, g.output);

  HttpOptions http;
  http.host = addr->first;
  http.port = addr->second;
  http.auth = serve_options.auth;
  if (http.auth == kAuthToken) {
    Result<std::string> secret = LoadOrCreateHumanSecret(HumanSecretPath(options->store.location));
    if (!secret.ok()) return ReportError(secret.status(), g.output);
    http.human_secret = *secret;
  }
  http.mcp_tools = serve_options.mcp_tools;
  http.allowed_origins = serve_options.allowed_origins;
  HttpServer server(**api, http);
  Result<int> port = server.Bind();
  if (!port.ok()) return ReportError(port.status(), g.output);

  std::thread watcher([&] {
    int sig = 0;
    sigwait(&set, &sig);
    std::cerr << "baton serve: " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
              << ", finishing the batch in flight and stopping\n";
    server.Stop();
  });

  Result<Json> status = (*api)->Call("store.status", Json::object(), SystemActor());
  const std::string url = "http://" + http.host + ":" + std::to_string(*port);
  if (http.auth == kAuthNone) std::cerr << AuthNoneWarning(url);
  // The one place the human's secret is printed: the link is the credential.
  std::cout << "baton serve: listening on " << url << "\n"
            << "  dashboard:  " << DashboardLink(http.host, *port, http.human_secret)
            << (http.auth == kAuthToken ? "   (your link: it speaks as you, keep it private)" : "")
            << "\n"
            << "  store:      " << (status.ok() ? (*status)["store"]["location"].get<std::string>() : "?")
            << " (durability " << (status.ok() ? (*status)["store"]["durability"].get<std::string>() : "?")
            << ")\n"
            << "  operations: POST " << url << "/v1/ops/{name}   (list: GET " << url << "/v1/ops)\n"
            << "  MCP:        " << url << "/mcp   (Streamable HTTP; auth " << http.auth
            << (http.auth == kAuthToken ? ": Authorization: Bearer <token from baton token create>" : "")
            << ")\n"
            << "  stop:       Ctrl-C\n";
  std::cout.flush();
  {
    Housekeeper housekeeper(**api, serve_options);
    server.Serve();
  }
  (*api)->Shutdown();
  if (watcher.joinable()) {
    // Serve() can also end without a signal (socket error): wake the watcher.
    pthread_kill(watcher.native_handle(), SIGTERM);
    watcher.join();
  }
  std::cerr << "baton serve: stopped cleanly\n";
  return 0;
}

}  // namespace baton
