// `baton serve`: opens the store, starts group commit and the HTTP server,
// prints where it listens, and on SIGINT/SIGTERM stops within a bounded
// time: stops accepting, closes idle and unfinished connections, lets
// requests in flight finish for --stop-grace-ms, finishes the batch in
// flight and exits 0 (naming on stderr any request it had to abandon). A
// second signal, or a stop that takes far longer, exits at once.

#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/cli.h"
#include "engine/core/tokens.h"
#include "http/server.h"
#include "ops/notifier.h"
#include "util/mutex.h"

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
// (every few seconds). They run in one server at a time, the one that holds
// the store's lead (store/store.h Lead): several servers on one database
// never deliver a message twice, and when the leader dies another takes
// the lead within a round or two. A failed chore is reported and retried
// next round; it never stops the server.
class Housekeeper {
 public:
  Housekeeper(Api& api, const ServeOptions& options) : api_(api), options_(options) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Housekeeper() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.SignalAll();
    thread_.join();
  }

 private:
  void Loop() {
    constexpr int kReconcileEvery = 5;  // rounds of one second
    for (int round = 0;; ++round) {
      {
        MutexLock lock(&mu_);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (!stop_ && cv_.WaitUntil(&mu_, until)) {
        }
        if (stop_) return;
      }
      if (!Leads()) continue;
      Chore("mail.deliver", Json::object());
      if (options_.agent_timeout_ms > 0 && round % kReconcileEvery == 0) {
        Chore("agent.reconcile", {{"lost_after_ms", options_.agent_timeout_ms}});
      }
    }
  }

  // Whether this server holds the lead now; says so when that changes (a
  // lone server that leads from the start says nothing).
  bool Leads() {
    Result<bool> held = api_.HoldLead();
    const bool leads = held.ok() && *held;
    if (leading_ ? *leading_ != leads : !leads) {
      if (leads) {
        std::cerr << "baton serve: this server now runs the agent reconciler and mail delivery\n";
      } else if (held.ok()) {
        std::cerr << "baton serve: another server runs the agent reconciler and mail delivery\n";
      } else {
        std::cerr << "baton serve: the agent reconciler and mail delivery wait: "
                  << held.status().ToString() << "\n";
      }
    }
    leading_ = leads;
    return leads;
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
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::optional<bool> leading_;  // the Loop's thread only; unset until the first round
  std::thread thread_;
};

// Connections cost a descriptor each: take the hard limit (the soft one is
// often 1024). Returns the soft limit now in force.
rlim_t RaiseDescriptorLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1024;
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
  }
  return lim.rlim_cur;
}

}  // namespace

void AddServeLimitFlags(CLI::App& serve, ServeOptions& o) {
  serve.add_option("--threads", o.threads, "request workers at most, started as requests need them (only a complete "
                   "request takes one; each open stream holds one)")
      ->capture_default_str()
      ->check(CLI::Range(2, 4096));
  serve.add_option("--reserve", o.reserve,
                   "workers that streams and waits (/mcp, mail.wait, ...) may not take")
      ->capture_default_str()
      ->check(CLI::Range(1, 4095));
  serve.add_option("--max-connections", o.max_connections,
                   "open connections in total; past it a new one gets 503")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  serve.add_option("--max-connections-per-peer", o.max_per_peer,
                   "open connections from one address; past it a new one gets 503")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  serve.add_option("--header-timeout-ms", o.header_timeout_ms,
                   "time for a request's line and headers, from its first byte (408 after)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{100}, int64_t{3600000}));
  serve.add_option("--body-timeout-ms", o.body_timeout_ms,
                   "time for a request's body, from the end of its headers (408 after)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{100}, int64_t{3600000}));
  serve.add_option("--idle-timeout-ms", o.idle_timeout_ms,
                   "close a kept-alive connection with no request for this long")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{100}, int64_t{3600000}));
  serve.add_option("--stop-grace-ms", o.stop_grace_ms,
                   "on SIGTERM/SIGINT, how long requests in flight may finish")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{600000}));
  serve.add_option("--max-body", o.max_body, "largest request body in bytes (413 past it)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1024}, int64_t{1} << 30));
  serve.add_option("--max-event-streams", o.max_event_streams,
                   "GET /v1/events streams (dashboard tabs, scripts) open at once (503 past it)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  serve.add_option("--event-heartbeat-ms", o.event_heartbeat_ms,
                   "a comment on an event stream after this much silence")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{50}, int64_t{3600000}));
  serve.add_option("--mirror-delay-ms", o.mirror_delay_ms,
                   "rewrite each seed-file mirror at most once per this long: commits in "
                   "between land in one write (docs/formats.md \"Mirrors\")")
      ->capture_default_str()
      ->check(CLI::Range(1, 600000));
  serve.add_option("--notify-command", o.notify_command,
                   "run this shell command for each item that starts needing the human (the "
                   "item as JSON on stdin, BATON_ITEM_* variables; retried; recorded in the "
                   "ledger)");
  serve.add_option("--ui-dir", o.ui_dir,
                   "serve the dashboard's files from this folder (development; default: the "
                   "files compiled in)");
  serve.add_option("--max-header-bytes", o.max_header_bytes,
                   "largest request line and headers in bytes (431 past it)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{4096}, int64_t{16} << 20));
}

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
  Result<ApiOptions> options =
      ResolveApiOptions(g, /*group_commit=*/true, StoreUse::kCreateIfNone);
  if (!options.ok()) return ReportError(options.status(), g.output);
  options->mirror_delay_ms = serve_options.mirror_delay_ms;
  Result<std::unique_ptr<Api>> api = Api::Open(*options);
  if (!api.ok()) return ReportError(api.status(), g.output);
  Status opened = (*api)->EnsureStore();
  if (!opened.ok()) return ReportError(opened, g.output);
  // On a shared database: hear the other servers' commits from the start.
  (void)(*api)->HearOtherServers();

  HttpOptions http;
  http.host = addr->first;
  http.port = addr->second;
  http.auth = serve_options.auth;
  const std::string secret_file = HumanSecretFile(options->store.location, serve_options.secret_file);
  if (http.auth == kAuthToken) {
    Result<std::string> secret = LoadOrCreateHumanSecret(secret_file);
    if (!secret.ok()) return ReportError(secret.status(), g.output);
    http.human_secret = *secret;
  }
  http.mcp_tools = serve_options.mcp_tools;
  http.allowed_origins = serve_options.allowed_origins;
  http.threads = serve_options.threads;
  http.reserve = serve_options.reserve;
  http.header_timeout_ms = serve_options.header_timeout_ms;
  http.body_timeout_ms = serve_options.body_timeout_ms;
  http.idle_timeout_ms = serve_options.idle_timeout_ms;
  http.stop_grace_ms = serve_options.stop_grace_ms;
  http.max_body = static_cast<size_t>(serve_options.max_body);
  http.max_header_bytes = static_cast<size_t>(serve_options.max_header_bytes);
  http.max_per_peer = serve_options.max_per_peer;
  http.ui_dir = serve_options.ui_dir;
  http.max_event_streams = static_cast<size_t>(serve_options.max_event_streams);
  http.event_heartbeat_ms = serve_options.event_heartbeat_ms;
  // Room for the store, the workers' own files and the listener.
  const rlim_t descriptors = RaiseDescriptorLimit();
  const int64_t room = static_cast<int64_t>(descriptors) - 256;
  http.max_connections = static_cast<int>(
      std::min<int64_t>(serve_options.max_connections, std::max<int64_t>(16, room)));
  if (http.max_connections < serve_options.max_connections) {
    std::cerr << "baton serve: --max-connections " << serve_options.max_connections
              << " lowered to " << http.max_connections << " (the descriptor limit is "
              << descriptors << ")\n";
  }
  HttpServer server(**api, http);
  Result<int> port = server.Bind();
  if (!port.ok()) return ReportError(port.status(), g.output);

  std::atomic<bool> stopped{false};
  const int64_t hard_stop_ms = http.stop_grace_ms + 15000;
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (stopped.load()) return;
    std::cerr << "baton serve: " << (sig == SIGINT ? "SIGINT" : "SIGTERM")
              << ", stopping: no new connections, requests in flight get "
              << http.stop_grace_ms << " ms, then the batch in flight is finished\n";
    server.Stop();
    // Whatever happens next (a writer that does not finish, a second
    // signal), the process ends within a bound.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(hard_stop_ms);
    while (!stopped.load() && std::chrono::steady_clock::now() < until) {
      timespec tick{0, 100 * 1000 * 1000};
      if (sigtimedwait(&set, nullptr, &tick) > 0) {
        if (stopped.load()) return;  // the wake-up below, not a signal
        std::cerr << "baton serve: second signal, exiting now\n";
        _exit(1);
      }
    }
    if (!stopped.load()) {
      std::cerr << "baton serve: still stopping after " << hard_stop_ms << " ms, exiting now\n";
      _exit(1);
    }
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
            << (http.auth == kAuthToken && secret_file.empty()
                    ? "  note:       the link lasts until this server stops (--secret-file FILE "
                      "keeps it, and shares it between servers)\n"
                    : "")
            << "  stop:       Ctrl-C\n";
  std::cout.flush();
  {
    Housekeeper housekeeper(**api, serve_options);
    std::unique_ptr<Notifier> notifier;
    if (!serve_options.notify_command.empty()) {
      notifier = std::make_unique<Notifier>(
          **api, NotifierOptions{.command = serve_options.notify_command,
                                 .dashboard_url = url + "/"});
    }
    server.Serve();
  }
  const std::vector<std::string> stuck = server.Stuck();
  for (const std::string& request : stuck) {
    std::cerr << "baton serve: abandoning a request that did not finish within --stop-grace-ms: "
              << request << "\n";
  }
  (*api)->Shutdown();
  stopped = true;
  if (watcher.joinable()) {
    // Serve() can also end without a signal (socket error): wake the watcher.
    pthread_kill(watcher.native_handle(), SIGTERM);
    watcher.join();
  }
  if (!stuck.empty()) {
    // The abandoned workers still run inside the engine: do not wait for
    // them in destructors. The batch in flight was finished above.
    std::cerr << "baton serve: stopped (" << stuck.size() << " request(s) abandoned)\n";
    std::cout.flush();
    _exit(0);
  }
  std::cerr << "baton serve: stopped cleanly\n";
  return 0;
}

}  // namespace baton
