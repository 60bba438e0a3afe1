// Costs of the work graph, each reported against a baseline measured in the
// same run (the machines are shared and noisy: only ratios are meaningful).
//
//   build/bench/baton_coordination [--seconds S] [--dir DIR]
//
// Rows:
//   completion, 1k / 100k graph   median time of one task.complete in a 4-ary
//                                 tree of 1,000 and of 100,000 tasks (every
//                                 completed task has 4 dependents, which become
//                                 ready), measured alternately. Durability off:
//                                 fsync would hide the CPU cost that grows with
//                                 the graph, if any.
//   claims/s, 1 / 16 claimers     task.claim (next ready) from 1 thread, then
//                                 16, on one Api with group commit at
//                                 durability full.
//
// The graphs are written with plain SQL (no ledger events) to keep set-up
// short; every measured call goes through Api::Call.

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ops/api.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  double seconds = 3;
  std::string dir = "/tmp";
};

std::unique_ptr<Api> FreshApi(const std::string& path, Durability durability, bool group) {
  for (const char* suffix : {"", "-wal", "-shm", ".head"}) std::filesystem::remove(path + suffix);
  ApiOptions options;
  options.store.location = path;
  options.store.durability = durability;
  options.group_commit = group;
  auto api = Api::Open(options);
  if (!api.ok() || !(*api)->EnsureStore().ok()) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    std::exit(1);
  }
  return std::move(*api);
}

void Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "%s: %s\n", sql, err);
    std::exit(1);
  }
}

std::string TaskId(int i) { return "t" + std::to_string(i); }

// n tasks; with "tree", task i > 0 depends on task (i - 1) / 4 and starts
// blocked, else every task is ready.
void WriteTasks(const std::string& path, int n, bool tree) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_busy_timeout(db, 10000);
  Exec(db, "BEGIN IMMEDIATE");
  sqlite3_stmt* task = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO tasks (id, kind, title, machine, status, position, "
                     "blocked_reason, created_at, updated_at) VALUES (?, 'task', ?, "
                     "'baton.task', ?, ?, ?, '2026-01-01T00:00:00.000Z', "
                     "'2026-01-01T00:00:00.000Z')",
                     -1, &task, nullptr);
  sqlite3_stmt* dep = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO task_deps (task_id, depends_on_id) VALUES (?, ?)", -1, &dep,
                     nullptr);
  for (int i = 0; i < n; ++i) {
    const std::string id = TaskId(i);
    const bool blocked = tree && i > 0;
    sqlite3_bind_text(task, 1, id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(task, 2, id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(task, 3, blocked ? "blocked" : "ready", -1, SQLITE_STATIC);
    sqlite3_bind_int(task, 4, i);
    if (blocked) {
      sqlite3_bind_text(task, 5, "waiting: for parent", -1, SQLITE_STATIC);
    } else {
      sqlite3_bind_null(task, 5);
    }
    sqlite3_step(task);
    sqlite3_reset(task);
    if (blocked) {
      const std::string parent = TaskId((i - 1) / 4);
      sqlite3_bind_text(dep, 1, id.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(dep, 2, parent.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_step(dep);
      sqlite3_reset(dep);
    }
  }
  sqlite3_finalize(task);
  sqlite3_finalize(dep);
  Exec(db, "COMMIT");
  sqlite3_close(db);
}

void MustOk(const Result<Json>& r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.status().ToString().c_str());
    std::exit(1);
  }
}

// One graph under measurement: an n-task tree and the next task to complete
// in breadth-first order (each of the first n/4 has 4 dependents).
struct Graph {
  std::unique_ptr<Api> api;
  int next = 0;
};

Graph OpenGraph(const std::string& path, int n) {
  Graph g{FreshApi(path, Durability::kOff, /*group=*/false)};
  WriteTasks(path, n, /*tree=*/true);
  MustOk(g.api->Call("agent.register", Json::object(), {"bench", "agent"}), "register");
  return g;
}

// Microseconds of one task.complete (the claim before it is not timed).
double TimeOneCompletion(Graph& g) {
  const Actor agent{"bench", "agent"};
  const std::string id = TaskId(g.next++);
  Result<Json> claim = g.api->Call("task.claim", {{"task", id}}, agent);
  MustOk(claim, "claim");
  const Json input{{"task", id}, {"epoch", (*claim)["lease"]["epoch"]}};
  const auto start = Clock::now();
  MustOk(g.api->Call("task.complete", input, agent), "complete");
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median microseconds per completion in a 1,000- and a 100,000-task tree.
// The two are measured alternately, so that noise from other work on the
// machine falls on both alike.
std::pair<double, double> CompletionMicros(const std::string& dir, int count) {
  Graph small = OpenGraph(dir + "/baton-bench-small.db", 1000);
  Graph large = OpenGraph(dir + "/baton-bench-large.db", 100000);
  std::vector<double> small_times, large_times;
  for (int i = 0; i < count; ++i) {
    small_times.push_back(TimeOneCompletion(small));
    large_times.push_back(TimeOneCompletion(large));
  }
  for (const char* name : {"small", "large"}) {
    for (const char* suffix : {"", "-wal", "-shm", ".head"}) {
      std::filesystem::remove(dir + "/baton-bench-" + name + ".db" + suffix);
    }
  }
  return {Median(small_times), Median(large_times)};
}

double ClaimRate(const std::string& path, int claimers, double seconds) {
  std::unique_ptr<Api> api = FreshApi(path, Durability::kFull, /*group=*/true);
  WriteTasks(path, 200000, /*tree=*/false);
  for (int c = 0; c < claimers; ++c) {
    const Actor agent{"claimer-" + std::to_string(c), "agent"};
    MustOk(api->Call("agent.register", Json::object(), agent), "register");
  }
  std::atomic<int64_t> claimed{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int c = 0; c < claimers; ++c) {
    threads.emplace_back([&, c] {
      const Actor agent{"claimer-" + std::to_string(c), "agent"};
      while (!stop.load()) {
        Result<Json> r = api->Call("task.claim", Json::object(), agent);
        MustOk(r, "claim");
        if ((*r)["claimed"].get<bool>()) claimed.fetch_add(1);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  return claimed.load() / std::chrono::duration<double>(Clock::now() - start).count();
}

int Main(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) args.seconds = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--dir") == 0) args.dir = argv[i + 1];
  }
  const std::string path = args.dir + "/baton-bench-coordination.db";
  constexpr int kCompletions = 200;
  const auto [small, large] = CompletionMicros(args.dir, kCompletions);
  const double one = ClaimRate(path, 1, args.seconds);
  const double sixteen = ClaimRate(path, 16, args.seconds);
  for (const char* suffix : {"", "-wal", "-shm", ".head"}) std::filesystem::remove(path + suffix);

  std::printf("| measurement | value | ratio |\n|---|---:|---:|\n");
  std::printf("| task.complete, 1,000-task graph (baseline) | %.0f µs | 1.00 |\n", small);
  std::printf("| task.complete, 100,000-task graph | %.0f µs | %.2f |\n", large, large / small);
  std::printf("| task.claim, 1 claimer (baseline) | %.0f /s | 1.00 |\n", one);
  std::printf("| task.claim, 16 claimers | %.0f /s | %.2f |\n", sixteen, sixteen / one);
  return 0;
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) { return baton::Main(argc, argv); }
