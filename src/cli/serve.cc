// `baton serve`: opens the store, starts group commit and the HTTP server,
// prints where it listens, and on SIGINT/SIGTERM stops accepting requests,
// finishes the batch in flight and exits 0.

#include <csignal>
#include <iostream>
#include <thread>

#include "cli/cli.h"
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

}  // namespace

int RunServe(const GlobalOptions& g, const std::string& listen) {
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
  std::cout << "baton serve: listening on " << url << "\n"
            << "  store:      " << (status.ok() ? (*status)["store"]["location"].get<std::string>() : "?")
            << " (durability " << (status.ok() ? (*status)["store"]["durability"].get<std::string>() : "?")
            << ")\n"
            << "  operations: POST " << url << "/v1/ops/{name}   (list: GET " << url << "/v1/ops)\n"
            << "  stop:       Ctrl-C\n";
  std::cout.flush();
  server.Serve();
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
