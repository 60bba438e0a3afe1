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
// API, in seq order), in ms. Last, every run is finished and the oldest 90%
// of the largest store archived (`baton ledger archive`): the archive's
// time and size, verify of what stays beside a raw scan of it, verify
// --archive, and verify --archive of a copy with one row altered, which
// must name that row's seq.

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
#include "util/atomic_file.h"
#include "util/gzip.h"

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

// The archive (issue 21 item 7) on the largest store: figures in ms.
struct ArchiveFigures {
  int64_t events = 0;
  double archive_ms = 0, file_mb = 0, verify_ms = 0, raw_ms = 0, verify_archive_ms = 0;
  std::string tampered;  // what verify --archive said of an altered row
};

// A copy of archive "from" at "to" with one line — event "seq"'s — altered
// the way an editor would: "filler" made "forged" in its summary.
void WriteTamperedCopy(const std::string& from, const std::string& to, int64_t seq) {
  const std::string prefix = "[" + std::to_string(seq) + ",";
  Status done = WriteFileAtomicallyBy(to, [&](const FileWrite& write) -> Status {
    GzipWriter gz(write, 1);
    RETURN_IF_ERROR(ReadGzipLines(from, 64 << 20, [&](std::string_view line) -> Status {
      std::string copy(line);
      if (copy.rfind(prefix, 0) == 0) {
        const size_t at = copy.find("\"filler");
        if (at != std::string::npos) copy.replace(at + 1, 6, "forged");
      }
      return gz.Add(copy + "\n");
    }, nullptr));
    return gz.Finish().status();
  });
  if (!done.ok()) Die("tampered copy: " + done.ToString());
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
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 == argc) Die(flag + " needs a value (--events, --calls, --dir, --keep)");
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

  // Every run finished, then the oldest 90% of the largest store archived.
  std::fprintf(stderr, "archiving...\n");
  ArchiveFigures archived;
  {
    std::vector<std::string> all = fillers;
    all.push_back(run);
    all.push_back(written);
    for (const std::string& id : all) {
      MustCall(api, "run.set_status", {{"id", id}, {"status", "cancelled"}});
    }
    const int64_t largest = args.events.back();
    const std::string file = dir + "/archive.jsonl.gz";
    auto start = Clock::now();
    const Json made = MustCall(api, "ledger.archive",
                               {{"before", std::to_string(largest / 10 * 9 + 1)}, {"file", file}});
    archived.archive_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    archived.events = made["events"];
    archived.file_mb = made["bytes"].get<double>() / 1e6;
    archived.verify_ms = Millis(api, "ledger.verify", Json::object());
    archived.raw_ms = RawScanMillis(options.store.location);
    archived.verify_archive_ms = Millis(api, "ledger.verify", {{"archive", file}});
    const std::string tampered = dir + "/tampered.jsonl.gz";
    WriteTamperedCopy(file, tampered, archived.events / 2);
    Result<Json> caught = api.Call("ledger.verify", {{"archive", tampered}}, kHuman);
    if (caught.ok()) Die("verify --archive passed an altered archive");
    archived.tampered = caught.status().message();
    if (archived.tampered.find("at seq " + std::to_string(archived.events / 2) + ":") ==
        std::string::npos) {
      Die("verify --archive did not name the altered seq: " + archived.tampered);
    }
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
  std::printf(
      "\n\nThe oldest %lld of %lld events archived (every run finished first)\n\n"
      "| archive (ms) | file (MB) | verify after (ms) | raw scan of what stays (ms) | verify ÷ raw "
      "| verify --archive (ms) |\n|---:|---:|---:|---:|---:|---:|\n"
      "| %.0f | %.1f | %.0f | %.0f | %.1f | %.0f |\n\nAn altered archived row: %s\n",
      static_cast<long long>(archived.events), static_cast<long long>(args.events.back()),
      archived.archive_ms, archived.file_mb, archived.verify_ms, archived.raw_ms,
      archived.verify_ms / archived.raw_ms, archived.verify_archive_ms, archived.tampered.c_str());
  if (args.keep) {
    std::fprintf(stderr, "the store: %s\n", options.store.location.c_str());
  } else {
    std::filesystem::remove_all(dir);
  }
  return 0;
}
