// baton on PostgreSQL beside raw PostgreSQL on the same server and baton on
// a SQLite file, all measured in one run (issue 20; the figures and how to
// read them: docs/benchmarks.md). The machines are shared and noisy: only
// the ratios within a run mean anything.
//
//   build/bench/baton_postgres [--seconds S] [--clients 1,8,32,128]
//                              [--pg "host=... user=..."] [--dir DIR]
//
// Without --pg it starts a PostgreSQL server of its own, with PostgreSQL's
// default durability (scripts/pg_test_cluster.sh start DIR --durable), and
// stops it at the end. --pg names a server (a libpq keyword string with no
// dbname) where it may make and drop databases named bench_*.
//
// Tables, each at every client count:
//   durable writes/s  raw: one-row INSERT transactions (pgbench); baton:
//                     run.add_progress over HTTP (a run's version and one
//                     hash-chained ledger event, answered after the commit),
//                     each client on its own run
//   claims/s          raw: a FOR UPDATE SKIP LOCKED claim and a ledger row in
//                     one statement (pgbench); baton: task.claim over HTTP by
//                     agents with tokens (the next ready task, its lease and
//                     fencing epoch, a ledger event)
//   baton runs with one `baton serve` and with three on one database (the
//   clients spread over them), and with one on a SQLite file.
//   wake latency      from a change posted to a server until an SSE stream
//                     on server 0 delivers it: posted to server 0 itself,
//                     then to server 1 (its doorbell: NOTIFY after commit).

#include <libpq-fe.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <unistd.h>

#include "bench_util.h"
#include "store/store.h"
#include "test_env.h"

namespace baton {
namespace {

using bench::Clock;
using bench::RunThreads;

struct Args {
  double seconds = 3;
  std::vector<int> clients = {1, 8, 32, 128};
  std::string pg;  // "": start one
  std::string dir = "/tmp";
  int wake_samples = 120;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "baton_postgres: %s\n", what.c_str());
  std::exit(1);
}

std::string Database(const std::string& server, const std::string& name) {
  return server + " dbname=" + name;
}

void PgExec(const std::string& conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) Die(conninfo + ": " + PQerrorMessage(conn));
  PGresult* res = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(res);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    Die(sql.substr(0, 80) + ": " + PQresultErrorMessage(res));
  }
  PQclear(res);
  PQfinish(conn);
}

void FreshDatabase(const std::string& server, const std::string& name) {
  PgExec(Database(server, "postgres"), "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
  PgExec(Database(server, "postgres"), "CREATE DATABASE " + name);
}

// ---- CPU: where each operation's time goes ----

// CPU seconds so far of the processes that serve a benchmark: PostgreSQL's
// (every process named postgres; an ended backend's time is in the
// postmaster's children's), baton's (`baton serve`), and the clients' (this
// process: its HTTP clients, and pgbench, a child that has ended).
struct Cpu {
  double postgres = 0;
  double baton = 0;
  double client = 0;
  Cpu operator-(const Cpu& o) const {
    return {postgres - o.postgres, baton - o.baton, client - o.client};
  }
  Cpu operator/(double n) const { return {postgres / n, baton / n, client / n}; }
  double total() const { return postgres + baton + client; }
};

// From /proc/PID/stat: the command name and utime+stime+cutime+cstime.
bool ProcessCpu(const std::string& stat_path, std::string* comm, double* seconds) {
  std::ifstream in(stat_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return false;
  *comm = text.substr(open + 1, close - open - 1);
  std::vector<std::string> fields;  // from field 3 (state) on
  for (size_t at = close + 2; at < text.size();) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    fields.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (fields.size() < 15) return false;
  double ticks = 0;
  for (int i = 11; i <= 14; ++i) ticks += std::atof(fields[i].c_str());  // fields 14-17
  *seconds = ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  return true;
}

Cpu CpuNow() {
  Cpu cpu;
  std::string comm;
  double seconds = 0;
  if (ProcessCpu("/proc/self/stat", &comm, &seconds)) cpu.client = seconds;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!ProcessCpu(entry.path() / "stat", &comm, &seconds)) continue;  // ended meanwhile
    if (comm == "postgres") cpu.postgres += seconds;
    if (comm == "baton") cpu.baton += seconds;
  }
  return cpu;
}

// A rate with the CPU each of its operations took.
struct Measured {
  double rate = 0;  // operations per second
  Cpu per_op;       // CPU seconds per operation
};

// Runs "run", which answers the operations per second it kept up for
// "seconds", between two readings of the CPU. Its set-up (connecting,
// pgbench's start) counts too: a little more per operation than the
// operation alone, on every row alike.
template <typename Run>
Measured MeasureCpu(double seconds, Run run) {
  const Cpu before = CpuNow();
  Measured m;
  m.rate = run();
  const double ops = m.rate * seconds;
  if (ops > 0) m.per_op = (CpuNow() - before) / ops;
  return m;
}

// ---- Raw PostgreSQL: pgbench on the same server ----

constexpr const char* kRawSchema =
    "CREATE TABLE bench_insert (id bigserial PRIMARY KEY, body text NOT NULL);"
    "CREATE TABLE bench_tasks (id bigint PRIMARY KEY, status text NOT NULL, position bigint NOT "
    "NULL, epoch bigint NOT NULL DEFAULT 0, holder text);"
    "CREATE INDEX bench_tasks_ready ON bench_tasks (position) WHERE status = 'ready';"
    "CREATE TABLE bench_ledger (seq bigserial PRIMARY KEY, task bigint NOT NULL, body text NOT "
    "NULL);";

constexpr const char* kRawInsert = "INSERT INTO bench_insert (body) VALUES (repeat('x', 120));\n";

// The claim the issue names: the next ready row, skipping the ones other
// transactions hold, marked claimed with a new epoch, and a ledger row; one
// statement, so one transaction and one round trip.
constexpr const char* kRawClaim =
    "WITH next AS (SELECT id FROM bench_tasks WHERE status = 'ready' ORDER BY position LIMIT 1 "
    "FOR UPDATE SKIP LOCKED), claimed AS (UPDATE bench_tasks t SET status = 'claimed', epoch = "
    "t.epoch + 1, holder = 'client-' || :client_id FROM next WHERE t.id = next.id RETURNING t.id, "
    "t.epoch) INSERT INTO bench_ledger (task, body) SELECT id, 'task.claimed ' || epoch || ' ' || "
    "repeat('x', 120) FROM claimed;\n";

// pgbench's transactions per second (after connecting) for "script".
double Pgbench(const std::string& conninfo, const std::string& script, int clients, double seconds) {
  const std::string command =
      "pgbench -n -M prepared -c " + std::to_string(clients) + " -j " +
      std::to_string(std::min(clients, 2)) + " -T " +
      std::to_string(std::max(1, static_cast<int>(seconds + 0.5))) + " -f " + script + " '" +
      conninfo + "' 2>&1";
  FILE* out = popen(command.c_str(), "r");
  if (out == nullptr) Die("cannot run pgbench");
  std::string text;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, out)) > 0;) text.append(buf, n);
  const int rc = pclose(out);
  const size_t at = text.find("tps = ");
  if (rc != 0 || at == std::string::npos) Die(command + ":\n" + text);
  return std::atof(text.c_str() + at + 6);
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

struct Rates {
  std::vector<Measured> writes;  // per client count
  std::vector<Measured> claims;
};

Rates RawPostgres(const std::string& server, const std::string& dir, const Args& args) {
  const std::string db = Database(server, "bench_raw");
  FreshDatabase(server, "bench_raw");
  PgExec(db, kRawSchema);
  WriteFile(dir + "/insert.sql", kRawInsert);
  WriteFile(dir + "/claim.sql", kRawClaim);
  Rates rates;
  for (int n : args.clients) {
    rates.writes.push_back(MeasureCpu(
        args.seconds, [&] { return Pgbench(db, dir + "/insert.sql", n, args.seconds); }));
    PgExec(db, "TRUNCATE bench_tasks, bench_ledger");
    PgExec(db, "INSERT INTO bench_tasks (id, status, position) SELECT g, 'ready', g FROM "
               "generate_series(1, 200000) g");
    PgExec(db, "VACUUM ANALYZE bench_tasks");
    rates.claims.push_back(MeasureCpu(
        args.seconds, [&] { return Pgbench(db, dir + "/claim.sql", n, args.seconds); }));
  }
  return rates;
}

// ---- baton: `baton serve` processes over one store ----

// "n" ready tasks written with plain SQL (no ledger events: set-up only),
// through the store's own interface so that one text serves both backends.
void AddReadyTasks(const std::string& location, int n) {
  StoreOptions options;
  options.location = location;
  Result<std::unique_ptr<Store>> store = Store::Open(options);
  if (!store.ok()) Die(store.status().ToString());
  Result<std::unique_ptr<Connection>> conn = (*store)->Connect();
  if (!conn.ok()) Die(conn.status().ToString());
  Result<std::unique_ptr<Txn>> txn = (*conn)->Begin(TxnMode::kWrite);
  if (!txn.ok()) Die(txn.status().ToString());
  Result<int64_t> made = (*txn)->Exec(
      "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < " +
          std::to_string(n) +
          ") INSERT INTO tasks (id, kind, title, machine, status, position, created_at, "
          "updated_at) SELECT 'b' || n, 'task', 'bench ' || n, 'baton.task', 'ready', n, "
          "'2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' FROM g",
      {});
  if (!made.ok()) Die(made.status().ToString());
  Status committed = (*txn)->Commit();
  if (!committed.ok()) Die(committed.ToString());
}

std::unique_ptr<httplib::Client> Client(int port, const std::string& token) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
  client->set_bearer_token_auth(token);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  client->set_read_timeout(60, 0);
  return client;
}

// POSTs op; the answer's body when it is 200, else null (reported, at most
// a few times).
Json Post(httplib::Client& client, const std::string& op, const Json& input) {
  auto res = client.Post("/v1/ops/" + op, input.dump(), "application/json");
  if (res && res->status == 200) return Json::parse(res->body);
  static std::atomic<int> reported{0};
  if (reported++ < 3) {
    std::fprintf(stderr, "%s: %s\n", op.c_str(),
                 res ? (std::to_string(res->status) + " " + res->body).c_str()
                     : httplib::to_string(res.error()).c_str());
  }
  return nullptr;
}

class Servers {
 public:
  Servers(const std::string& location, int n, const std::string& dir) {
    std::filesystem::create_directories(dir);
    testing::InitStore(location);
    for (int i = 0; i < n; ++i) {
      // One secret for all, as behind a load balancer; no reconciler, which
      // would write events of its own during the wake measurement.
      procs_.push_back(std::make_unique<testing::ServeProcess>(
          location,
          std::vector<std::string>{"--secret-file", dir + "/human.secret", "--agent-timeout-ms",
                                   "0"},
          dir + "/serve-" + std::to_string(i) + ".err"));
      if (procs_.back()->port() <= 0) Die("baton serve did not start: see " + dir);
    }
  }
  int size() const { return static_cast<int>(procs_.size()); }
  int port(int i) const { return procs_[i % procs_.size()]->port(); }
  const std::string& human() const { return procs_[0]->secret(); }

 private:
  std::vector<std::unique_ptr<testing::ServeProcess>> procs_;
};

double WriteRate(const Servers& servers, int clients, double seconds) {
  auto human = Client(servers.port(0), servers.human());
  std::vector<std::string> runs;
  std::vector<std::unique_ptr<httplib::Client>> conns;
  for (int c = 0; c < clients; ++c) {
    Json run = Post(*human, "run.create", {{"title", "bench " + std::to_string(c)}});
    if (run.is_null()) Die("run.create failed");
    runs.push_back(run["id"]);
    conns.push_back(Client(servers.port(c), servers.human()));
  }
  return RunThreads(clients, seconds, [&](int t) {
    static thread_local int64_t i = 0;
    return !Post(*conns[t], "run.add_progress",
                 {{"id", runs[t]}, {"description", "step " + std::to_string(++i)}})
                .is_null();
  });
}

double ClaimRate(const Servers& servers, const std::vector<std::string>& tokens, int clients,
                 double seconds) {
  std::vector<std::unique_ptr<httplib::Client>> conns;
  for (int c = 0; c < clients; ++c) conns.push_back(Client(servers.port(c), tokens[c]));
  return RunThreads(clients, seconds, [&](int t) {
    Json claim = Post(*conns[t], "task.claim", Json::object());
    return !claim.is_null() && claim["claimed"].get<bool>();
  });
}

Rates Baton(const std::string& location, int servers_n, const std::string& dir, const Args& args) {
  Servers servers(location, servers_n, dir);
  AddReadyTasks(location, 200000);
  auto human = Client(servers.port(0), servers.human());
  std::vector<std::string> tokens;
  for (int i = 0; i < *std::max_element(args.clients.begin(), args.clients.end()); ++i) {
    Json made = Post(*human, "token.create",
                     {{"holder", "agent-" + std::to_string(i)}, {"holder_role", "agent"}});
    if (made.is_null()) Die("token.create failed");
    tokens.push_back(made["token"]);
  }
  Rates rates;
  for (int n : args.clients) {
    rates.writes.push_back(
        MeasureCpu(args.seconds, [&] { return WriteRate(servers, n, args.seconds); }));
    rates.claims.push_back(
        MeasureCpu(args.seconds, [&] { return ClaimRate(servers, tokens, n, args.seconds); }));
  }
  return rates;
}

// ---- Wake latency: a stream on server 0, changes through "writer" ----

struct Latency {
  double p50_ms = 0;
  double p99_ms = 0;
  int lost = 0;  // samples no frame answered within 5 s
};

Latency WakeLatency(const Servers& servers, int writer, int samples) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Clock::time_point> frames;  // arrival of each ledger frame
  std::atomic<bool> stop{false};
  httplib::Client stream("127.0.0.1", servers.port(0));
  stream.set_read_timeout(60, 0);
  std::thread reader([&] {
    std::string pending;
    stream.Get(
        "/v1/events", {{"Authorization", "Bearer " + servers.human()}},
        [](const httplib::Response&) { return true; },
        [&](const char* data, size_t n) {
          const auto now = Clock::now();
          pending.append(data, n);
          for (size_t at; (at = pending.find("event: ledger")) != std::string::npos;) {
            pending.erase(0, at + 13);
            std::lock_guard<std::mutex> lock(mu);
            frames.push_back(now);
            cv.notify_all();
          }
          return !stop.load();
        });
  });
  auto conn = Client(servers.port(writer), servers.human());
  Json run = Post(*conn, "run.create", {{"title", "wake"}});
  std::mt19937 random(7);
  std::vector<double> millis;
  Latency latency;
  for (int i = -5; i < samples; ++i) {  // the first five warm the stream up
    // A quiet gap (50-150 ms) so that each sample's frame is its own.
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + random() % 100));
    size_t before;
    {
      std::lock_guard<std::mutex> lock(mu);
      before = frames.size();
    }
    const auto sent = Clock::now();
    Post(*conn, "run.add_progress", {{"id", run["id"]}, {"description", "wake " + std::to_string(i)}});
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(5), [&] { return frames.size() > before; })) {
      if (i >= 0) ++latency.lost;
      continue;
    }
    if (i >= 0) millis.push_back(std::chrono::duration<double, std::milli>(frames[before] - sent).count());
  }
  stop = true;
  Post(*conn, "run.add_progress", {{"id", run["id"]}, {"description", "end"}});  // ends the Get
  stream.stop();
  reader.join();
  std::sort(millis.begin(), millis.end());
  if (!millis.empty()) {
    latency.p50_ms = millis[millis.size() / 2];
    latency.p99_ms = millis[std::min(millis.size() - 1, millis.size() * 99 / 100)];
  }
  return latency;
}

// ---- Report ----

void PrintTable(const char* title, const char* raw_what, const std::vector<double>& raw,
                const std::vector<std::pair<std::string, std::vector<double>>>& rows,
                const Args& args) {
  std::printf("\n%s (ops/s, and × raw PostgreSQL at the same clients)\n\n| what |", title);
  for (int n : args.clients) std::printf(" %d client%s |", n, n == 1 ? "" : "s");
  std::printf("\n|---|");
  for (size_t i = 0; i < args.clients.size(); ++i) std::printf("---:|");
  std::printf("\n| %s |", raw_what);
  for (double r : raw) std::printf(" %.0f |", r);
  for (const auto& [what, rates] : rows) {
    std::printf("\n| %s |", what.c_str());
    for (size_t i = 0; i < rates.size(); ++i) std::printf(" %.0f (%.2f) |", rates[i], rates[i] / raw[i]);
  }
  std::printf("\n");
  std::fflush(stdout);
}

std::vector<double> RatesOf(const std::vector<Measured>& measured) {
  std::vector<double> rates;
  for (const Measured& m : measured) rates.push_back(m.rate);
  return rates;
}

// Microseconds of CPU per operation, PostgreSQL's + baton's + the clients',
// and what that total allows on this machine's cores if nothing waited.
void PrintCpu(const char* title, const std::vector<Measured>& raw,
              const std::vector<std::pair<std::string, std::vector<Measured>>>& rows,
              const Args& args) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  std::printf("\n%s: CPU µs per operation, postgres + baton + client = total (→ the most ops/s "
              "%ld cores allow)\n\n| what |",
              title, cores);
  for (int n : args.clients) std::printf(" %d client%s |", n, n == 1 ? "" : "s");
  std::printf("\n|---|");
  for (size_t i = 0; i < args.clients.size(); ++i) std::printf("---:|");
  auto row = [&](const std::string& what, const std::vector<Measured>& measured) {
    std::printf("\n| %s |", what.c_str());
    for (const Measured& m : measured) {
      const Cpu us = m.per_op / 1e-6;
      std::printf(" %.0f + %.0f + %.0f = %.0f (→ %.0f) |", us.postgres, us.baton, us.client,
                  us.total(), us.total() > 0 ? cores * 1e6 / us.total() : 0.0);
    }
  };
  row("raw PostgreSQL (pgbench)", raw);
  for (const auto& [what, measured] : rows) row(what, measured);
  std::printf("\n");
  std::fflush(stdout);
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--seconds") {
      a.seconds = std::atof(value.c_str());
    } else if (flag == "--pg") {
      a.pg = value;
    } else if (flag == "--dir") {
      a.dir = value;
    } else if (flag == "--clients") {
      a.clients.clear();
      for (size_t at = 0; at < value.size();) {
        a.clients.push_back(std::max(1, std::atoi(value.c_str() + at)));
        at = value.find(',', at);
        at = at == std::string::npos ? value.size() : at + 1;
      }
    } else {
      Die("unknown flag " + flag + " (--seconds, --clients, --pg, --dir)");
    }
  }
  return a;
}

std::string g_cluster;  // the server this run started, stopped at exit

void StopCluster() {
  if (g_cluster.empty()) return;
  const std::string command =
      std::string(BATON_SOURCE_DIR) + "/scripts/pg_test_cluster.sh stop " + g_cluster;
  (void)std::system(command.c_str());
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) {
  using namespace baton;
  const Args args = ParseArgs(argc, argv);
  const std::string dir = args.dir + "/baton-bench-pg-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::string server = args.pg;
  if (server.empty()) {
    // A short path: the server's Unix socket lives in it.
    g_cluster = "/tmp/baton-bench-pgdata-" + std::to_string(getpid());
    const std::string command = std::string(BATON_SOURCE_DIR) +
                                "/scripts/pg_test_cluster.sh start " + g_cluster + " --durable";
    if (std::system(command.c_str()) != 0) Die("could not start PostgreSQL: " + command);
    std::atexit(StopCluster);
    server = "host=" + g_cluster + " user=baton";
  }
  std::fprintf(stderr, "raw PostgreSQL (pgbench)...\n");
  const Rates raw = RawPostgres(server, dir, args);
  std::vector<std::pair<std::string, Rates>> baton;
  for (int n : {1, 3}) {
    std::fprintf(stderr, "baton on PostgreSQL, %d server(s)...\n", n);
    const std::string name = "bench_baton_" + std::to_string(n);
    FreshDatabase(server, name);
    baton.emplace_back("baton on PostgreSQL, " + std::to_string(n) + " server" + (n > 1 ? "s" : ""),
                       Baton(Database(server, name), n, dir + "/" + name, args));
  }
  std::fprintf(stderr, "baton on SQLite, 1 server...\n");
  baton.emplace_back("baton on SQLite, 1 server",
                     Baton(dir + "/sqlite/baton.db", 1, dir + "/sqlite", args));

  std::vector<std::pair<std::string, std::vector<double>>> writes;
  std::vector<std::pair<std::string, std::vector<double>>> claims;
  std::vector<std::pair<std::string, std::vector<Measured>>> write_cpu;
  std::vector<std::pair<std::string, std::vector<Measured>>> claim_cpu;
  for (const auto& [what, rates] : baton) {
    writes.emplace_back(what, RatesOf(rates.writes));
    claims.emplace_back(what, RatesOf(rates.claims));
    write_cpu.emplace_back(what, rates.writes);
    claim_cpu.emplace_back(what, rates.claims);
  }
  PrintTable("Durable writes: run.add_progress over HTTP", "raw PostgreSQL: one-row INSERT per transaction (pgbench)",
             RatesOf(raw.writes), writes, args);
  PrintTable("Claims: task.claim over HTTP", "raw PostgreSQL: SKIP LOCKED claim + ledger row (pgbench)",
             RatesOf(raw.claims), claims, args);
  PrintCpu("Durable writes", raw.writes, write_cpu, args);
  PrintCpu("Claims", raw.claims, claim_cpu, args);

  std::fprintf(stderr, "wake latency...\n");
  const std::string name = "bench_baton_wake";
  FreshDatabase(server, name);
  Servers servers(Database(server, name), 2, dir + "/" + name);
  const Latency same = WakeLatency(servers, 0, args.wake_samples);
  const Latency other = WakeLatency(servers, 1, args.wake_samples);
  std::printf("\nWake latency: a change posted until an SSE stream on server 0 delivers it (%d samples)\n\n",
              args.wake_samples);
  std::printf("| change posted to | p50 ms | p99 ms | lost |\n|---|---:|---:|---:|\n");
  std::printf("| server 0 (the stream's own) | %.1f | %.1f | %d |\n", same.p50_ms, same.p99_ms, same.lost);
  std::printf("| server 1 (another, on the same database) | %.1f | %.1f | %d |\n", other.p50_ms,
              other.p99_ms, other.lost);
  std::filesystem::remove_all(dir);
  return 0;
}
