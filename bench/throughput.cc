// Durable mutating operations per second, against two raw SQLite rates
// measured in the same run (the machines are shared and noisy: only the
// ratios are meaningful): one-row inserts with one fsync'd commit each, and
// inserts batched 100 rows per fsync'd commit (what the storage engine
// itself can do; issue 21 asks the write path for 30% of it).
//
//   build/bench/baton_throughput [--seconds S] [--dir DIR] [--store LOCATION]
//                                [--only engine|http] [--submitters N]
//
// --store runs the engine and HTTP rows on that store instead of a file in
// DIR (a PostgreSQL database: bench/postgres.cc compares it with pgbench).
//
// Rows:
//   raw sqlite            1 thread: BEGIN IMMEDIATE; INSERT one row; COMMIT
//                         (WAL, synchronous=FULL) — the one-commit-per-change rate
//   raw sqlite, batched   the same with 100 INSERTs per commit
//   raw sqlite, same rows the rows 100 run.add_progress write (the run's
//                         version, the event, the ledger head) per commit,
//                         in baton's schema, on N runs: the storage engine's
//                         own cost of the work of the rows with N submitters
//   engine, N submitters  N threads calling Api::Call("run.add_progress") with
//                         group commit at durability full
//   http, N clients       N keep-alive HTTP clients POSTing the same operation
//                         to an in-process `baton serve` HTTP server
//
// Prints a Markdown table for docs/benchmarks.md. "CPU µs/op" is the
// process's CPU per operation less what the submitting threads spent
// themselves: for HTTP, the server's share (the clients run in this process);
// in process, what the writer and the engine spent beyond the caller's own
// thread, so the column "all" is the whole process's CPU per operation.

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "bench_util.h"
#include "http/server.h"
#include "ops/api.h"
#include "util/store_location.h"

namespace baton {
namespace {

using bench::Clock;
using bench::Calls;
using bench::TimeThreads;

struct Args {
  double seconds = 3;
  std::string dir = "/tmp";
  std::string store;  // "": files in dir
  std::string only;   // "engine" or "http": that group of rows alone (profiling)
  int submitters = 0; // > 0: that number of submitters alone
};

// Runs "one" (an operation's statements; its argument counts operations
// from 0) "per_commit" times per fsync'd commit on "db" for "seconds":
// operations per second, "cpu_micros" the CPU per operation.
template <typename Fn>
double TimedCommits(sqlite3* db, double seconds, int per_commit, double* cpu_micros, Fn one) {
  int64_t n = 0;
  const double cpu_before = bench::ProcessCpuSeconds();
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    for (int i = 0; i < per_commit; ++i) one(n++);
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  *cpu_micros = (bench::ProcessCpuSeconds() - cpu_before) * 1e6 / double(n);
  return n / elapsed;
}

// Rows per second inserted "rows_per_commit" at a time, each commit fsync'd;
// "cpu_micros" the CPU per row.
double RawSqliteRate(const std::string& path, double seconds, int rows_per_commit,
                     double* cpu_micros) {
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", nullptr, nullptr, nullptr);
  sqlite3_exec(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)", nullptr, nullptr, nullptr);
  sqlite3_stmt* insert = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO t (v) VALUES (?)", -1, &insert, nullptr);
  const std::string payload(120, 'x');
  const double rate = TimedCommits(db, seconds, rows_per_commit, cpu_micros, [&](int64_t) {
    sqlite3_bind_text(insert, 1, payload.c_str(), -1, SQLITE_STATIC);
    sqlite3_step(insert);
    sqlite3_reset(insert);
  });
  sqlite3_finalize(insert);
  sqlite3_close(db);
  return rate;
}

std::unique_ptr<Api> OpenBenchApi(const std::string& path) {
  if (!IsPostgresLocation(path)) {
    // A store of its own for each row (a PostgreSQL database is reused).
    for (const char* suffix : {"", "-wal", "-shm", ".head"}) std::filesystem::remove(path + suffix);
  }
  ApiOptions options;
  options.store.location = path;
  // BATON_BENCH_DURABILITY=off isolates CPU cost from fsync cost.
  const char* d = std::getenv("BATON_BENCH_DURABILITY");
  options.store.durability = *ParseDurability(d != nullptr ? d : "full");
  options.group_commit = true;
  auto api = Api::Open(options);
  if (!api.ok() || !(*api)->EnsureStore().ok()) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    std::exit(1);
  }
  return std::move(api).value();
}

std::vector<std::string> MakeRuns(Api& api, int n) {
  std::vector<std::string> runs;
  for (int i = 0; i < n; ++i) {
    auto r = api.Call("run.create", Json{{"profile", "baton"}}, Actor{"bench", "human"});
    runs.push_back((*r)["id"].get<std::string>());
  }
  return runs;
}

// Runs "stmt" to its end and resets it; a statement that fails ends the
// bench (a baseline that counted failed writes would flatter nothing).
void Step(sqlite3_stmt* stmt) {
  int rc = sqlite3_step(stmt);
  while (rc == SQLITE_ROW) rc = sqlite3_step(stmt);
  if (rc != SQLITE_DONE) {
    std::fprintf(stderr, "baton_throughput: %s\n", sqlite3_errmsg(sqlite3_db_handle(stmt)));
    std::exit(1);
  }
  sqlite3_reset(stmt);
}

// Operations per second when SQLite itself writes the rows one
// run.add_progress writes — the run's version bumped (runs and its
// updated_at index), its event (events and three indexes), the ledger
// head — 100 operations per fsync'd commit, in baton's own schema, with
// nothing of the engine (no JSON, no SHA-256, no savepoint, no thread):
// what the storage engine itself costs for the same work. "cpu_micros":
// the CPU per operation.
double RawSameRowsRate(const std::string& path, double seconds, int runs_to_use,
                       double* cpu_micros) {
  std::vector<std::string> runs;
  {
    auto api = OpenBenchApi(path);  // the schema, and runs to write to
    runs = MakeRuns(*api, runs_to_use);
  }
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", nullptr, nullptr, nullptr);
  sqlite3_stmt* bump = nullptr;
  sqlite3_stmt* event = nullptr;
  sqlite3_stmt* head = nullptr;
  sqlite3_prepare_v2(db,
                     "UPDATE runs SET version = version + 1, updated_at = ? WHERE id = ? "
                     "RETURNING version",
                     -1, &bump, nullptr);
  sqlite3_prepare_v2(db,
                     "INSERT INTO events (seq, time, run_id, actor_id, actor_role, kind, summary, "
                     "payload, files, refs, prev_hash, hash) VALUES "
                     "(?, ?, ?, ?, 'agent', 'run.progress', ?, ?, '[]', '[]', ?, ?)",
                     -1, &event, nullptr);
  sqlite3_prepare_v2(db,
                     "INSERT INTO ledger_head (id, seq, hash) VALUES (1, ?, ?) ON CONFLICT (id) "
                     "DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
                     -1, &head, nullptr);
  if (bump == nullptr || event == nullptr || head == nullptr) {
    std::fprintf(stderr, "baton_throughput: %s\n", sqlite3_errmsg(db));
    std::exit(1);
  }
  sqlite3_stmt* last = nullptr;
  sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(seq), 0) FROM events", -1, &last, nullptr);
  sqlite3_step(last);
  int64_t seq = sqlite3_column_int64(last, 0);
  sqlite3_finalize(last);
  const std::string hash(64, 'a');
  const std::string time = "2026-11-28T08:00:00.000Z";
  const double rate = TimedCommits(db, seconds, 100, cpu_micros, [&](int64_t n) {
    const std::string& run = runs[n % runs.size()];
    const std::string actor = "w" + std::to_string(n % runs.size());
    const std::string summary = "step " + std::to_string(n);
    const std::string payload = "{\"agent\":\"" + actor + "\",\"description\":\"" + summary + "\"}";
    sqlite3_bind_text(bump, 1, time.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(bump, 2, run.c_str(), -1, SQLITE_STATIC);
    Step(bump);
    sqlite3_bind_int64(event, 1, ++seq);
    sqlite3_bind_text(event, 2, time.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(event, 3, run.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(event, 4, actor.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(event, 5, summary.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(event, 6, payload.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(event, 7, hash.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(event, 8, hash.c_str(), -1, SQLITE_STATIC);
    Step(event);
    sqlite3_bind_int64(head, 1, seq);
    sqlite3_bind_text(head, 2, hash.c_str(), -1, SQLITE_STATIC);
    Step(head);
  });
  for (sqlite3_stmt* stmt : {bump, event, head}) sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rate;
}

Calls EngineRate(const std::string& path, int threads, double seconds, double* batch) {
  auto api = OpenBenchApi(path);
  std::vector<std::string> runs = MakeRuns(*api, threads);
  const WriterStats before = api->writer_stats();
  Calls calls = TimeThreads(threads, seconds, [&](int t) {
    static thread_local int64_t i = 0;
    Json in = {{"id", runs[t]}, {"description", "step " + std::to_string(++i)}};
    return api->Call("run.add_progress", in, Actor{"w" + std::to_string(t), "agent"}).ok();
  });
  const WriterStats after = api->writer_stats();
  *batch = double(after.items - before.items) / std::max<int64_t>(1, after.batches - before.batches);
  return calls;
}

Calls HttpRate(const std::string& path, int clients, double seconds) {
  auto api = OpenBenchApi(path);
  std::vector<std::string> runs = MakeRuns(*api, clients);
  HttpOptions options;
  options.port = 0;
  options.human_secret = "bench-human-secret-0123456789abcdef";  // the default auth: token
  HttpServer server(*api, options);
  Result<int> port = server.Bind();
  if (!port.ok()) return Calls{};
  std::thread serving([&] { server.Serve(); });
  std::vector<std::unique_ptr<httplib::Client>> conns;
  for (int c = 0; c < clients; ++c) {
    conns.push_back(std::make_unique<httplib::Client>("127.0.0.1", *port));
    conns.back()->set_bearer_token_auth(options.human_secret);
    conns.back()->set_keep_alive(true);
    conns.back()->set_tcp_nodelay(true);
    conns.back()->set_read_timeout(30, 0);
  }
  Calls calls = TimeThreads(clients, seconds, [&](int t) {
    static thread_local int64_t i = 0;
    std::string body = Json{{"id", runs[t]}, {"description", "step " + std::to_string(++i)}}.dump();
    auto res = conns[t]->Post("/v1/ops/run.add_progress", body, "application/json");
    if (res && res->status == 200) return true;
    static std::atomic<int> reported{0};
    if (reported++ < 3) {
      std::fprintf(stderr, "http failure: %s\n",
                   res ? (std::to_string(res->status) + " " + res->body).c_str()
                       : httplib::to_string(res.error()).c_str());
    }
    return false;
  });
  server.Stop();
  serving.join();
  return calls;
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) a.seconds = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--dir") == 0) a.dir = argv[i + 1];
    if (std::strcmp(argv[i], "--store") == 0) a.store = argv[i + 1];
    if (std::strcmp(argv[i], "--only") == 0) a.only = argv[i + 1];
    if (std::strcmp(argv[i], "--submitters") == 0) a.submitters = std::atoi(argv[i + 1]);
  }
  return a;
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) {
  using namespace baton;
  Args args = ParseArgs(argc, argv);
  const std::string dir = args.dir + "/baton-bench-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  double raw_cpu = 0;
  double batched_cpu = 0;
  // --only (profiling one group) skips the baselines: its ratios read "inf".
  const bool baselines = args.only.empty();
  const double raw = baselines ? RawSqliteRate(dir + "/raw.db", args.seconds, 1, &raw_cpu) : 0;
  const double batched =
      baselines ? RawSqliteRate(dir + "/batched.db", args.seconds, 100, &batched_cpu) : 0;
  std::vector<int> counts = {1, 4, 16, 64};
  if (args.submitters > 0) counts = {args.submitters};
  // SQLite writing the same rows on as many runs as each row's submitters
  // (each writes its own run; more runs, more index pages a commit).
  std::map<int, double> same;
  std::map<int, double> same_cpu;
  for (int n : counts) {
    if (baselines) same[n] = RawSameRowsRate(dir + "/same.db", args.seconds, n, &same_cpu[n]);
  }
  std::printf("| what | submitters | durable ops/s | × raw | × batched | × same rows | mean batch "
              "| CPU µs/op | all |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  if (baselines) {
    std::printf("| raw SQLite, one fsync'd commit per insert | 1 | %.0f | 1.0 | %.3f | | 1 "
                "| %.1f | |\n",
                raw, raw / batched, raw_cpu);
    std::printf("| raw SQLite, 100 inserts per fsync'd commit | 1 | %.0f | %.1f | 1.000 | "
                "| 100 | %.1f | |\n",
                batched, batched / raw, batched_cpu);
    for (int n : counts) {
      std::printf("| raw SQLite, the rows of 100 run.add_progress on %d run(s) per fsync'd commit "
                  "| %d | %.0f | %.1f | %.3f | 1.000 | 100 | %.1f | |\n",
                  n, n, same[n], same[n] / raw, same[n] / batched, same_cpu[n]);
    }
  }
  std::fflush(stdout);
  for (int n : counts) {
    if (args.only == "http") break;
    double batch = 0;
    Calls c = EngineRate(args.store.empty() ? dir + "/engine.db" : args.store, n, args.seconds,
                         &batch);
    std::printf("| engine (Api::Call, group commit) | %d | %.0f | %.1f | %.3f | %.3f | %.1f | %.1f "
                "| %.1f |\n",
                n, c.per_second, c.per_second / raw, c.per_second / batched,
                c.per_second / same[n], batch, c.ServedCpuMicros(), c.ProcessCpuMicros());
    std::fflush(stdout);
  }
  for (int n : counts) {
    if (args.only == "engine") break;
    Calls c = HttpRate(args.store.empty() ? dir + "/http.db" : args.store, n, args.seconds);
    std::printf("| HTTP POST /v1/ops (baton serve) | %d | %.0f | %.1f | %.3f | %.3f | | %.1f | %.1f "
                "|\n",
                n, c.per_second, c.per_second / raw, c.per_second / batched,
                c.per_second / same[n], c.ServedCpuMicros(), c.ProcessCpuMicros());
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
