// What one `baton` command costs (issue 21 item 4), beside the sqlite3 CLI
// doing the nearest thing to it on the same machine in the same run.
//
//   build/bench/baton_cli_calls [--calls 50] [--events 500] [--dir DIR]
//
// The store first holds --events progress notes (added by as many
// commands), so that a write's start-up check of the chain's newest 256
// events (engine/ledger/writer.h) costs what it costs on a store in use;
// the sqlite3 file gets as many rows.
// Each pair runs --calls times, the two commands interleaved so that both
// see the same noise; the figure is the child's CPU (user + system, from
// wait4) per call, median and mean, and the ratio of the medians:
//   add-progress  `baton run add-progress RUN TEXT` on a store at durability
//                 full, beside `sqlite3 FILE "INSERT ..."` of one row into a
//                 WAL file at synchronous=FULL
//   run show      `baton run show RUN` beside `sqlite3 FILE "SELECT ..."`
//   --help        `baton --help` beside `sqlite3 :memory: .quit`
// The store and the file are made fresh in DIR and removed after.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

using baton::bench::RunChild;

struct Args {
  int calls = 50;
  int events = 500;
  std::string dir = "/tmp";
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "baton_cli_calls: %s\n", what.c_str());
  std::exit(1);
}

Args ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Die(flag + " needs a value");
    const std::string value = argv[i + 1];
    if (flag == "--calls") {
      args.calls = std::atoi(value.c_str());
    } else if (flag == "--events") {
      args.events = std::atoi(value.c_str());
    } else if (flag == "--dir") {
      args.dir = value;
    } else {
      Die("unknown flag " + flag + " (--calls, --events, --dir)");
    }
  }
  if (args.calls < 1) Die("--calls must be at least 1");
  if (args.events < 0) Die("--events must be 0 or more");
  return args;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// Runs the pair "calls" times, interleaved, and prints one row.
void Compare(const char* what, int calls, const std::vector<std::string>& baton,
             const std::vector<std::string>& base) {
  std::vector<double> ours;
  std::vector<double> theirs;
  for (int i = 0; i < calls; ++i) {
    ours.push_back(RunChild(baton).cpu_us);
    theirs.push_back(RunChild(base).cpu_us);
  }
  std::printf("%-13s %10.0f %10.0f %10.0f %10.0f %7.2fx\n", what, Median(ours), Mean(ours),
              Median(theirs), Mean(theirs), Median(ours) / Median(theirs));
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(args.dir) / ("baton_cli_calls." + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string store = (dir / "baton.db").string();
  const std::string file = (dir / "raw.db").string();
  const std::string bin = BATON_BIN;

  RunChild({bin, "--store", store, "init"});
  const std::string run =
      RunChild({bin, "--store", store, "run", "create", "--profile", "baton", "--output", "id"}).out;
  if (run.empty()) Die("run create printed no id");
  RunChild({"sqlite3", file,
       "PRAGMA journal_mode=WAL; CREATE TABLE progress (seq INTEGER PRIMARY KEY, run TEXT NOT "
       "NULL, at TEXT NOT NULL, description TEXT NOT NULL); CREATE INDEX progress_run ON "
       "progress (run, seq);"});
  for (int i = 0; i < args.events; ++i) {
    RunChild({bin, "--store", store, "--agent", "coder", "run", "add-progress", run, "an earlier note"});
  }
  RunChild({"sqlite3", file,
       "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
           std::to_string(args.events) +
           ") INSERT INTO progress (run, at, description) SELECT '" + run +
           "', strftime('%Y-%m-%dT%H:%M:%fZ','now'), 'an earlier note' FROM n;"});

  std::printf("baton CLI against the sqlite3 CLI: CPU per call (µs), %d calls each, "
              "%d notes before\n",
              args.calls, args.events);
  std::printf("%-13s %10s %10s %10s %10s %8s\n", "command", "baton med", "baton mean",
              "sqlite3 med", "sqlite3 mean", "ratio");
  Compare("add-progress", args.calls,
          {bin, "--store", store, "--agent", "coder", "run", "add-progress", run, "a note"},
          {"sqlite3", file,
           "PRAGMA synchronous=FULL; INSERT INTO progress (run, at, description) VALUES ('" + run +
               "', strftime('%Y-%m-%dT%H:%M:%fZ','now'), 'a note');"});
  Compare("run show", args.calls, {bin, "--store", store, "run", "show", run},
          {"sqlite3", file,
           "SELECT * FROM progress WHERE run = '" + run + "' ORDER BY seq DESC LIMIT 20;"});
  Compare("--help", args.calls, {bin, "--help"}, {"sqlite3", ":memory:", ".quit"});
  fs::remove_all(dir);
  return 0;
}
