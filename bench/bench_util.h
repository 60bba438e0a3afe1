// What the benchmarks share: callers on threads for a fixed time.

#ifndef BATON_BENCH_BENCH_UTIL_H_
#define BATON_BENCH_BENCH_UTIL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace baton::bench {

using Clock = std::chrono::steady_clock;

// CPU seconds (user + system) of the whole process, or of the calling thread.
inline double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
inline double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

// What one timed run of callers measured.
struct Calls {
  double per_second = 0;    // calls that answered true, per second of wall time
  int64_t ok = 0;           // calls that answered true
  double process_cpu = 0;   // CPU seconds of the whole process over the run
  double callers_cpu = 0;   // of which the callers' own threads spent

  // CPU microseconds per call of everything but the callers (a server's
  // share when the callers are its clients), and of the whole process.
  double ServedCpuMicros() const { return ok > 0 ? (process_cpu - callers_cpu) * 1e6 / ok : 0; }
  double ProcessCpuMicros() const { return ok > 0 ? process_cpu * 1e6 / ok : 0; }
};

// Runs "work(thread_index)" over and over on "threads" threads for
// "seconds"; the calls that answered false are counted and reported on
// stderr, never in the rate.
template <typename Work>
Calls TimeThreads(int threads, double seconds, Work work) {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int64_t> callers_cpu_ns{0};
  std::vector<std::thread> pool;
  const double cpu_before = ProcessCpuSeconds();
  const auto start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const double cpu_start = ThreadCpuSeconds();
      int64_t ok = 0;
      int64_t bad = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if (work(t)) {
          ++ok;
        } else {
          ++bad;
        }
      }
      done += ok;
      failed += bad;
      callers_cpu_ns += int64_t((ThreadCpuSeconds() - cpu_start) * 1e9);
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  if (failed > 0) std::fprintf(stderr, "warning: %lld failed calls\n", (long long)failed.load());
  Calls c;
  c.ok = done.load();
  c.per_second = double(c.ok) / elapsed;
  c.process_cpu = ProcessCpuSeconds() - cpu_before;
  c.callers_cpu = double(callers_cpu_ns.load()) / 1e9;
  return c;
}

// The same, answering only the rate.
template <typename Work>
double RunThreads(int threads, double seconds, Work work) {
  return TimeThreads(threads, seconds, work).per_second;
}

// One finished child process.
struct Child {
  double cpu_us = 0;   // its user + system CPU (wait4)
  double wall_us = 0;  // from its start until it exited
  std::string out;     // its first line of standard output
};

// Runs "argv" (argv[0] looked up on PATH) with standard input and error on
// /dev/null; exits this process, naming the command, when it fails.
inline Child RunChild(const std::vector<std::string>& argv) {
  std::vector<char*> c_argv;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  std::string line;
  for (const std::string& a : argv) line += a + " ";
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    std::fprintf(stderr, "pipe failed\n");
    std::exit(1);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  const auto start = Clock::now();
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    std::fprintf(stderr, "cannot start %s\n", line.c_str());
    std::exit(1);
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof(buf))) > 0;) out.append(buf, n);
  close(pipe_fds[0]);
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "failed: %s\n", line.c_str());
    std::exit(1);
  }
  auto micros = [](const timeval& t) { return t.tv_sec * 1e6 + static_cast<double>(t.tv_usec); };
  return Child{micros(usage.ru_utime) + micros(usage.ru_stime),
               std::chrono::duration<double, std::micro>(Clock::now() - start).count(),
               out.substr(0, out.find('\n'))};
}

}  // namespace baton::bench

#endif  // BATON_BENCH_BENCH_UTIL_H_
