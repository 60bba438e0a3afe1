// A mirrored write as the run grows (issue 21 item 2): run.add_progress on a
// run with --events progress notes and a bound mirror, beside the same write
// on a fresh run with the same mirror, in one process and one run.
//
//   build/bench/baton_mirror [--events 100000] [--calls 100] [--format sgai]
//                            [--delay-ms 200] [--dir DIR] [--baton PATH]
//
// One SQLite file at durability normal, group commit on (as `baton serve`).
// Each case makes --calls writes one after another, then waits until the
// mirror file holds the last of them. Reported per write: the median latency
// a caller waits (µs), and the process's CPU from the first write until the
// mirror caught up (µs: the renders and file writes included), and how many
// times the file was written. Two modes:
//   as serve  ApiOptions::mirror_delay_ms = --delay-ms: the mirror thread
//             rewrites each mirror at most once per delay
//   as CLI    each write is one `baton run add-progress` command (--baton,
//             by default the build's, beside bench/), timed from its start
//             to its exit, its CPU from wait4: it renders the mirrors
//             smaller than kHandOffMirrorsFromBytes before it exits and
//             starts `baton flush-mirrors --background` for larger ones,
//             whose CPU and renders are not in the figures (the time until
//             the file holds the last note is)
//   in process, all here  mirror_delay_ms = 0 without the hand-off: every
//             write renders its mirrors before it returns (what one command
//             did before issue 21 item 2)

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "ops/api.h"
#include "util/atomic_file.h"

namespace baton {
namespace {

using bench::Clock;

struct Args {
  int64_t events = 100000;
  int calls = 100;
  std::string format = "sgai";
  int delay_ms = 200;
  std::string dir = "/tmp";
  std::string baton;  // the binary a hand-off starts
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "baton_mirror: %s\n", what.c_str());
  std::exit(1);
}

const Actor kHuman{"bench", "human"};

Json MustCall(Api& api, const std::string& op, const Json& in, const Actor& actor = kHuman) {
  Result<Json> out = api.Call(op, in, actor);
  if (!out.ok()) Die(op + ": " + out.status().ToString());
  return *out;
}

double CpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Adds "events" progress notes to "run" from 16 threads.
void Grow(Api& api, const std::string& run, int64_t events) {
  std::atomic<int64_t> left{events};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      while (left.fetch_sub(1) > 0) {
        MustCall(api, "run.add_progress", {{"id", run}, {"description", "an earlier note"}});
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

// A bound mirror's first file.
void WaitForFile(const std::string& path) {
  const auto start = Clock::now();
  while (!std::filesystem::exists(path)) {
    if (Clock::now() - start > std::chrono::minutes(5)) Die("no mirror at " + path);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

struct Measured {
  double median_us = 0;
  double cpu_us = 0;    // per write, until the mirror caught up
  double catch_up_ms = 0;  // from the last write's answer to the file holding it
  int64_t renders = 0;
};

// Milliseconds from now until the file at "path" holds "last".
double CatchUpMs(const std::string& path, const std::string& last) {
  const auto answered = Clock::now();
  for (;;) {
    Result<std::string> text = ReadFile(path);
    if (text.ok() && text->find(last) != std::string::npos) break;
    if (Clock::now() - answered > std::chrono::minutes(5)) Die("the mirror never caught up");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - answered).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Measured WriteAndWait(Api& api, const std::string& run, const std::string& path, int calls,
                      int delay_ms) {
  const int64_t renders_before = api.mirror_stats().written;
  std::vector<double> us;
  const double cpu_start = CpuMicros();
  std::string last;
  for (int i = 0; i < calls; ++i) {
    last = "measured note " + std::to_string(i) + " of " + path;
    const auto start = Clock::now();
    MustCall(api, "run.add_progress", {{"id", run}, {"description", last}});
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  Measured m;
  m.catch_up_ms = CatchUpMs(path, last);
  m.cpu_us = (CpuMicros() - cpu_start) / calls;
  m.median_us = Median(std::move(us));
  // The count moves once the rewrite that was seen has returned.
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms + 100));
  m.renders = api.mirror_stats().written - renders_before;
  return m;
}

// The same through `baton` commands, one per write.
Measured WriteAndWaitByCommands(const Args& args, const std::string& store, const std::string& dir,
                                const std::string& run, const std::string& path) {
  std::vector<double> us;
  double cpu = 0;
  std::string last;
  for (int i = 0; i < args.calls; ++i) {
    last = "measured note " + std::to_string(i) + " of " + path;
    bench::Child c = bench::RunChild({args.baton, "--store", store, "--root", dir, "--durability",
                                      "normal", "run", "add-progress", "--id", run,
                                      "--description", last});
    us.push_back(c.wall_us);
    cpu += c.cpu_us;
  }
  Measured m;
  m.catch_up_ms = CatchUpMs(path, last);
  m.cpu_us = cpu / args.calls;
  m.median_us = Median(std::move(us));
  m.renders = -1;  // in the background process, not counted here
  return m;
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--events") {
      a.events = std::max<int64_t>(1, std::atoll(value.c_str()));
    } else if (flag == "--calls") {
      a.calls = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--format") {
      a.format = value;
    } else if (flag == "--delay-ms") {
      a.delay_ms = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--dir") {
      a.dir = value;
    } else if (flag == "--baton") {
      a.baton = value;
    } else {
      Die("unknown flag " + flag + " (--events, --calls, --format, --delay-ms, --dir, --baton)");
    }
  }
  if (a.baton.empty()) {
    a.baton = (std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "baton")
                  .string();
  }
  return a;
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) {
  using namespace baton;
  const Args args = ParseArgs(argc, argv);
  const std::string dir = args.dir + "/baton-bench-mirror-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  ApiOptions options;
  options.store.location = dir + "/baton.db";
  options.store.durability = Durability::kNormal;
  options.group_commit = true;
  options.roots = {dir};
  std::string big;
  {
    Result<std::unique_ptr<Api>> opened = Api::Open(options);
    if (!opened.ok()) Die(opened.status().ToString());
    big = MustCall(**opened, "run.create", {{"title", "long"}})["id"];
    std::fprintf(stderr, "adding %lld notes...\n", static_cast<long long>(args.events));
    Grow(**opened, big, args.events);
  }
  struct Row {
    const char* mode;
    Measured fresh, grown;
  };
  std::vector<Row> rows;
  enum class Mode { kServe, kCli, kAllHere };
  for (Mode mode : {Mode::kServe, Mode::kCli, Mode::kAllHere}) {
    const int delay = mode == Mode::kServe ? args.delay_ms : 0;
    options.mirror_delay_ms = delay;
    Result<std::unique_ptr<Api>> opened = Api::Open(options);
    if (!opened.ok()) Die(opened.status().ToString());
    Api& api = **opened;
    const std::string fresh = MustCall(api, "run.create", {{"title", "fresh"}})["id"];
    const std::string tag = std::to_string(static_cast<int>(mode));
    const std::string fresh_path = dir + "/fresh-" + tag + "/state.json";
    const std::string big_path = dir + "/long-" + tag + "/state.json";
    std::filesystem::create_directories(dir + "/fresh-" + tag);
    std::filesystem::create_directories(dir + "/long-" + tag);
    Row row{mode == Mode::kServe ? "as serve" : mode == Mode::kCli ? "as CLI" : "in process, all here",
            {}, {}};
    auto measure = [&](const std::string& run, const std::string& path) {
      return mode == Mode::kCli
                 ? WriteAndWaitByCommands(args, options.store.location, dir, run, path)
                 : WriteAndWait(api, run, path, args.calls, delay);
    };
    MustCall(api, "mirror.bind", {{"run", fresh}, {"format", args.format}, {"path", fresh_path}});
    WaitForFile(fresh_path);
    row.fresh = measure(fresh, fresh_path);
    MustCall(api, "mirror.bind", {{"run", big}, {"format", args.format}, {"path", big_path}});
    WaitForFile(big_path);
    row.grown = measure(big, big_path);
    MustCall(api, "mirror.unbind", {{"run", fresh}, {"path", fresh_path}});
    MustCall(api, "mirror.unbind", {{"run", big}, {"path", big_path}});
    rows.push_back(row);
  }
  std::printf("\nrun.add_progress with a bound %s mirror, %d writes each; the long run holds "
              "%lld notes\n\n"
              "| mode | run | median µs a caller waits | CPU µs per write | files written | "
              "last write to file (ms) |\n|---|---|---:|---:|---:|---:|",
              args.format.c_str(), args.calls, static_cast<long long>(args.events));
  for (const Row& r : rows) {
    for (const auto& [name, m] : {std::pair{"fresh", r.fresh}, std::pair{"long", r.grown}}) {
      const std::string renders = m.renders < 0 ? "" : std::to_string(m.renders);
      std::printf("\n| %s | %s | %.0f | %.0f | %s | %.0f |", r.mode, name, m.median_us, m.cpu_us,
                  renders.c_str(), m.catch_up_ms);
    }
    std::printf("\n| %s | long ÷ fresh | %.2f | %.2f | | |", r.mode,
                r.grown.median_us / r.fresh.median_us, r.grown.cpu_us / r.fresh.cpu_us);
  }
  std::printf("\n");
  std::filesystem::remove_all(dir);
  return 0;
}
