// What the benchmarks share: callers on threads for a fixed time.

#ifndef BATON_BENCH_BENCH_UTIL_H_
#define BATON_BENCH_BENCH_UTIL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace baton::bench {

using Clock = std::chrono::steady_clock;

// Runs "work(thread_index)" over and over on "threads" threads for
// "seconds"; returns the calls per second that answered true. The calls that
// answered false are counted and reported on stderr, never in the rate.
template <typename Work>
double RunThreads(int threads, double seconds, Work work) {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> failed{0};
  std::vector<std::thread> pool;
  const auto start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
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
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  if (failed > 0) std::fprintf(stderr, "warning: %lld failed calls\n", (long long)failed.load());
  return done / elapsed;
}

}  // namespace baton::bench

#endif  // BATON_BENCH_BENCH_UTIL_H_
