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

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace {

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

struct Child {
  double cpu_us = 0;
  std::string out;  // its first line of standard output
};

// Runs "argv" with standard input and error on /dev/null; its CPU and the
// first line it printed. Dies when it fails.
Child Run(const std::vector<std::string>& argv) {
  std::vector<char*> c_argv;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) Die("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) Die("cannot start " + argv[0]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof(buf))) > 0;) out.append(buf, n);
  close(pipe_fds[0]);
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) Die("wait4 failed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line;
    for (const std::string& a : argv) line += a + " ";
    Die("failed: " + line);
  }
  auto micros = [](const timeval& t) { return t.tv_sec * 1e6 + static_cast<double>(t.tv_usec); };
  return Child{micros(usage.ru_utime) + micros(usage.ru_stime), out.substr(0, out.find('\n'))};
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
    ours.push_back(Run(baton).cpu_us);
    theirs.push_back(Run(base).cpu_us);
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

  Run({bin, "--store", store, "init"});
  const std::string run =
      Run({bin, "--store", store, "run", "create", "--profile", "baton", "--output", "id"}).out;
  if (run.empty()) Die("run create printed no id");
  Run({"sqlite3", file,
       "PRAGMA journal_mode=WAL; CREATE TABLE progress (seq INTEGER PRIMARY KEY, run TEXT NOT "
       "NULL, at TEXT NOT NULL, description TEXT NOT NULL); CREATE INDEX progress_run ON "
       "progress (run, seq);"});
  for (int i = 0; i < args.events; ++i) {
    Run({bin, "--store", store, "--agent", "coder", "run", "add-progress", run, "an earlier note"});
  }
  Run({"sqlite3", file,
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
