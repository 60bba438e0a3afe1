// Reads and a write on one store as its history grows (issue 21): the same
// run, task and agent measured when the ledger holds 10k, 100k and 1M events
// written by other runs. A read of one object should cost what that object
// holds, so each row should stay flat; the last column is the largest store
// against the smallest (the machines are shared and noisy: only the ratio
// within a run means anything).
//
//   build/bench/baton_history [--events 10000,100000,1000000] [--calls N]
//                             [--dir DIR] [--keep 1]
//
// One SQLite file at durability normal (a commit does not wait for the disk:
// what is measured is the work, and 1M events are written in about a
// minute rather than ten), grown between the measurements by 64
// threads adding progress notes to 64 other runs (run.progress events: the
// kind the run being read has too). Each figure is the median of --calls
// in-process Api::Call latencies, in µs:
//   run.show       the measured run (20 notes) with its newest 20 notes
//   task.show      a claimed task of that run
//   ledger.events  that run's events
//   store.status   what `baton status` shows (counts, head, active runs)
//   run.add_progress  a write, on a run of its own
// Then, once per size: `baton verify` (ledger.verify: SQLite's integrity
// check and the whole chain), verify --since the previous size, and a raw
// scan of the events table (every column of every row through the SQLite C
// API, in seq order), in ms.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>
#include <unistd.h>

#include "bench_util.h"
#include "ops/api.h"

namespace baton {
namespace {

using bench::Clock;

struct Args {
  std::vector<int64_t> events = {10000, 100000, 1000000};
  int calls = 300;
  std::string dir = "/tmp";
  bool keep = false;  // leave the store behind (its path on stderr), to profile
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "baton_history: %s\n", what.c_str());
  std::exit(1);
}

const Actor kHuman{"bench", "human"};

Json MustCall(Api& api, const std::string& op, const Json& in, const Actor& actor = kHuman) {
  Result<Json> out = api.Call(op, in, actor);
  if (!out.ok()) Die(op + ": " + out.status().ToString());
  return *out;
}

// Adds progress notes to "runs" from as many threads until the ledger's
// head reaches "events".
void GrowTo(Api& api, const std::vector<std::string>& runs, int64_t events) {
  std::atomic<int64_t> head{MustCall(api, "store.status", Json::object())["ledger"]["head_seq"]};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < runs.size(); ++t) {
    threads.emplace_back([&, t] {
      const Actor agent{"filler-" + std::to_string(t), "agent"};
      for (int64_t i = 0; head.load() < events; ++i) {
        Result<Json> done = api.Call(
            "run.add_progress", {{"id", runs[t]}, {"description", "filler " + std::to_string(i)}},
            agent);
        if (!done.ok()) Die("run.add_progress: " + done.status().ToString());
        ++head;
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

// The median latency of "calls" calls of "op", in µs.
double MedianMicros(Api& api, const std::string& op, const Json& in, int calls) {
  std::vector<double> us;
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    MustCall(api, op, in);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// Milliseconds of one call of "op".
double Millis(Api& api, const std::string& op, const Json& in) {
  const auto start = Clock::now();
  MustCall(api, op, in);
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Milliseconds to read every column of every event in seq order.
double RawScanMillis(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    Die("cannot open " + path);
  }
  const auto start = Clock::now();
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT seq, time, run_id, actor_id, actor_role, kind, summary, payload, "
                     "files, refs, prev_hash, hash FROM events ORDER BY seq",
                     -1, &stmt, nullptr);
  size_t bytes = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    for (int c = 0; c < 12; ++c) {
      sqlite3_column_text(stmt, c);
      bytes += static_cast<size_t>(sqlite3_column_bytes(stmt, c));
    }
  }
  sqlite3_finalize(stmt);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  sqlite3_close(db);
  if (bytes == 0) Die("the raw scan read nothing");
  return ms;
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--events") {
      a.events.clear();
      for (size_t at = 0; at < value.size();) {
        a.events.push_back(std::max<int64_t>(1, std::atoll(value.c_str() + at)));
        at = value.find(',', at);
        at = at == std::string::npos ? value.size() : at + 1;
      }
    } else if (flag == "--calls") {
      a.calls = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--dir") {
      a.dir = value;
    } else if (flag == "--keep") {
      a.keep = value == "1";
    } else {
      Die("unknown flag " + flag + " (--events, --calls, --dir, --keep)");
    }
  }
  return a;
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) {
  using namespace baton;
  const Args args = ParseArgs(argc, argv);
  const std::string dir = args.dir + "/baton-bench-history-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  ApiOptions options;
  options.store.location = dir + "/baton.db";
  options.store.durability = Durability::kNormal;
  options.group_commit = true;
  Result<std::unique_ptr<Api>> opened = Api::Open(options);
  if (!opened.ok()) Die(opened.status().ToString());
  Api& api = **opened;

  const std::string run = MustCall(api, "run.create", {{"title", "measured"}})["id"];
  for (int i = 0; i < 20; ++i) {
    MustCall(api, "run.add_progress", {{"id", run}, {"description", "note " + std::to_string(i)}});
  }
  const std::string task = MustCall(api, "task.create", {{"run", run}, {"title", "t"}})["id"];
  MustCall(api, "agent.register", {{"id", "ann"}}, Actor{"coord", "coordinator"});
  MustCall(api, "task.claim", {{"task", task}}, Actor{"ann", "agent"});
  const std::string written = MustCall(api, "run.create", {{"title", "written"}})["id"];
  std::vector<std::string> fillers;
  for (int i = 0; i < 64; ++i) {
    const Json made = MustCall(api, "run.create", {{"title", "filler " + std::to_string(i)}});
    fillers.push_back(made["id"]);
  }

  struct Row {
    const char* what;
    std::string op;
    Json in;
    std::vector<double> us;
  };
  std::vector<Row> rows = {
      {"run.show (20 notes)", "run.show", {{"id", run}, {"progress_limit", 20}}, {}},
      {"task.show", "task.show", {{"id", task}}, {}},
      {"ledger.events of the run", "ledger.events", {{"run", run}}, {}},
      {"store.status", "store.status", Json::object(), {}},
      {"run.add_progress (a write)",
       "run.add_progress",
       {{"id", written}, {"description", "w"}},
       {}},
  };
  struct Verify {
    double whole_ms, since_ms, raw_ms;
  };
  std::vector<Verify> verifies;
  int64_t verified = 0;
  std::string verified_hash;
  for (int64_t events : args.events) {
    std::fprintf(stderr, "growing to %lld events...\n", static_cast<long long>(events));
    GrowTo(api, fillers, events);
    for (Row& r : rows) r.us.push_back(MedianMicros(api, r.op, r.in, args.calls));
    // From the checkpoint the last size's verify answered (the first size:
    // from the start).
    const Json since_in = verified == 0 ? Json::object()
                                        : Json{{"since", verified}, {"since_hash", verified_hash}};
    const double since_ms = Millis(api, "ledger.verify", since_in);
    const auto start = Clock::now();
    const Json whole = MustCall(api, "ledger.verify", Json::object());
    const double whole_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!whole.value("ok", false)) Die("ledger.verify: " + whole.dump());
    verified = whole["events"];
    verified_hash = whole["head_hash"];
    verifies.push_back({whole_ms, since_ms, RawScanMillis(options.store.location)});
  }

  std::printf("\nMedian µs per call, in process, as the ledger grows\n\n| call |");
  for (int64_t e : args.events) std::printf(" %lld events |", static_cast<long long>(e));
  std::printf(" largest ÷ smallest |\n|---|");
  for (size_t i = 0; i <= args.events.size(); ++i) std::printf("---:|");
  for (const Row& r : rows) {
    std::printf("\n| %s |", r.what);
    for (double us : r.us) std::printf(" %.0f |", us);
    std::printf(" %.2f |", r.us.back() / r.us.front());
  }
  std::printf("\n\nVerify beside a raw scan of the events (ms)\n\n"
              "| events | verify | verify --since the size before | raw scan | verify ÷ raw |\n"
              "|---:|---:|---:|---:|---:|");
  for (size_t i = 0; i < verifies.size(); ++i) {
    const Verify& v = verifies[i];
    std::printf("\n| %lld | %.0f | %.0f | %.0f | %.1f |", static_cast<long long>(args.events[i]),
                v.whole_ms, v.since_ms, v.raw_ms, v.whole_ms / v.raw_ms);
  }
  std::printf("\n");
  if (args.keep) {
    std::fprintf(stderr, "the store: %s\n", options.store.location.c_str());
  } else {
    std::filesystem::remove_all(dir);
  }
  return 0;
}
