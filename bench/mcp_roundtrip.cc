// Round-trip latency of an MCP tools/call over stdio, against the same
// operation called in-process through Api::Call on an identical store,
// measured in the same run (the machines are shared and noisy: only the
// ratio is meaningful).
//
//   build/bench/baton_mcp_roundtrip [--calls N] [--dir DIR] [--baton PATH]
//
// Rows, each the p50 and p99 of N sequential calls (--calls; default 2000
// for the read, 300 for the write):
//   in-process        Api::Call on a store opened as `baton mcp` opens it
//                     (durability full, group commit)
//   MCP over stdio    tools/call to a `baton mcp` child (fork/exec, pipes),
//                     timed from writing the request line to reading the
//                     response line
// for run.show (a read) and run.add_progress (a durable write). Both stores
// are fresh and get the same calls; the two paths run in alternating blocks,
// so that noise from other work on the machine falls on both alike. The
// server is argv[0]'s folder "../baton" (build/baton) unless --baton names it.
//
// Prints a Markdown table for docs/benchmarks.md.

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ops/api.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  int calls = 0;  // 0: the defaults below
  std::string dir = "/tmp";
  std::string baton;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "baton_mcp_roundtrip: %s\n", what.c_str());
  std::exit(1);
}

// A `baton mcp` child speaking newline-delimited JSON-RPC on two pipes.
class McpClient {
 public:
  McpClient(const std::string& baton, const std::string& store) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) Die("pipe failed");
    pid_ = fork();
    if (pid_ < 0) Die("fork failed");
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
      execl(baton.c_str(), baton.c_str(), "--store", store.c_str(), "--agent", "bench", "--role",
            "coordinator", "--durability", "full", "mcp", static_cast<char*>(nullptr));
      std::fprintf(stderr, "cannot run %s: %s\n", baton.c_str(), std::strerror(errno));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
  }
  ~McpClient() {
    close(in_);  // end of input: the server cancels what is in flight and exits
    close(out_);
    waitpid(pid_, nullptr, 0);
  }

  // Sends one request and returns its result (exits on an error response).
  Json Request(const std::string& method, Json params) {
    const int64_t id = ++next_id_;
    std::string line = DumpJson(
        Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    line += '\n';
    const auto start = Clock::now();
    WriteAll(line);
    for (;;) {
      std::string text = ReadLine();
      const auto end = Clock::now();
      Result<Json> message = ParseJson(text, "response");
      if (!message.ok()) Die(message.status().message());
      if (!message->contains("id") || (*message)["id"] != id) continue;  // a notification
      last_micros_ = std::chrono::duration<double, std::micro>(end - start).count();
      if (message->contains("error")) Die(method + ": " + text);
      return (*message)["result"];
    }
  }

  void Notify(const std::string& method) {
    WriteAll(DumpJson({{"jsonrpc", "2.0"}, {"method", method}}) + "\n");
  }

  // tools/call "name"; the structured result, or exit on a refusal.
  Json Call(const std::string& name, Json arguments) {
    Json result = Request("tools/call", {{"name", name}, {"arguments", std::move(arguments)}});
    if (result.value("isError", true)) Die(name + ": " + DumpJson(result));
    return result["structuredContent"];
  }

  // Microseconds of the last request, from its first byte written to its
  // response line read.
  double last_micros() const { return last_micros_; }

 private:
  void WriteAll(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = write(in_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Die("the server stopped reading");
      done += static_cast<size_t>(n);
    }
  }

  std::string ReadLine() {
    for (;;) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      char chunk[65536];
      ssize_t n = read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Die("the server closed its output");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  int64_t next_id_ = 0;
  double last_micros_ = 0;
  std::string buffer_;
};

std::string FreshStore(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", ".head"}) std::filesystem::remove(path + suffix);
  return path;
}

// Opened as `baton mcp` opens its store: durability full, group commit.
std::unique_ptr<Api> OpenApi(const std::string& path) {
  ApiOptions options;
  options.store.location = FreshStore(path);
  options.store.durability = Durability::kFull;
  options.group_commit = true;
  auto api = Api::Open(options);
  if (!api.ok() || !(*api)->EnsureStore().ok()) Die("cannot open " + path);
  return std::move(*api);
}

double Micros(Api& api, const std::string& op, const Json& input, const Actor& actor) {
  const auto start = Clock::now();
  Result<Json> r = api.Call(op, input, actor);
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  if (!r.ok()) Die(op + ": " + r.status().ToString());
  return us;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

struct Timings {
  std::vector<double> direct, mcp;
};

// "calls" of each path, in alternating blocks of a twentieth; "input(i)" is
// the i-th call's input, the same on both paths. A few untimed calls first.
template <typename Input>
Timings Measure(Api& api, McpClient& client, const std::string& op, int calls, Input input) {
  const Actor actor{"bench", "coordinator"};
  std::string tool = op;
  std::replace(tool.begin(), tool.end(), '.', '_');
  for (int i = 0; i < 10; ++i) {
    Micros(api, op, input(-1 - i), actor);
    client.Call(tool, input(-1 - i));
  }
  Timings t;
  const int block = std::max(1, calls / 20);
  for (int done = 0; done < calls; done += block) {
    const int n = std::min(block, calls - done);
    for (int i = done; i < done + n; ++i) t.direct.push_back(Micros(api, op, input(i), actor));
    for (int i = done; i < done + n; ++i) {
      client.Call(tool, input(i));
      t.mcp.push_back(client.last_micros());
    }
  }
  return t;
}

void PrintRows(const std::string& what, const Timings& t) {
  const double base = Percentile(t.direct, 0.5);
  std::printf("| %s | in-process Api::Call (baseline) | %.0f | %.0f | 1.00 |\n", what.c_str(), base,
              Percentile(t.direct, 0.99));
  std::printf("| %s | MCP tools/call over stdio | %.0f | %.0f | %.2f |\n", what.c_str(),
              Percentile(t.mcp, 0.5), Percentile(t.mcp, 0.99), Percentile(t.mcp, 0.5) / base);
  std::fflush(stdout);
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--calls") == 0) a.calls = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--dir") == 0) a.dir = argv[i + 1];
    if (std::strcmp(argv[i], "--baton") == 0) a.baton = argv[i + 1];
  }
  if (a.baton.empty()) {
    a.baton = (std::filesystem::path(argv[0]).parent_path() / ".." / "baton").string();
  }
  return a;
}

int Main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  if (access(args.baton.c_str(), X_OK) != 0) Die("no baton binary at " + args.baton + " (--baton)");
  signal(SIGPIPE, SIG_IGN);  // a server that died is reported, not a signal
  const std::string dir = args.dir + "/baton-bench-mcp-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  {
    std::unique_ptr<Api> api = OpenApi(dir + "/direct.db");
    McpClient client(args.baton, FreshStore(dir + "/x.db"));
    client.Request("initialize",
                   {{"protocolVersion", "2025-11-25"},
                    {"capabilities", Json::object()},
                    {"clientInfo", {{"name", "baton_mcp_roundtrip"}, {"version", "1"}}}});
    client.Notify("notifications/initialized");

    const Actor actor{"bench", "coordinator"};
    const Json create = {{"profile", "baton"}, {"id", "run-bench"}};
    if (!api->Call("run.create", create, actor).ok()) Die("run.create failed");
    client.Call("run_create", create);

    const int reads = args.calls > 0 ? args.calls : 2000;
    const int writes = args.calls > 0 ? args.calls : 300;
    Timings show = Measure(*api, client, "run.show", reads, [](int) {
      return Json{{"id", "run-bench"}};
    });
    Timings progress = Measure(*api, client, "run.add_progress", writes, [](int i) {
      return Json{{"id", "run-bench"}, {"description", "step " + std::to_string(i)}};
    });
    std::printf("| operation | path | p50 µs | p99 µs | ratio p50 vs in-process |\n");
    std::printf("|---|---|---:|---:|---:|\n");
    PrintRows("run.show (read)", show);
    PrintRows("run.add_progress (durable write)", progress);
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) { return baton::Main(argc, argv); }
