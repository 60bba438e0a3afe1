// File: mutex.h
//
// A mutex, its scoped lock and a condition variable that clang's
// thread-safety analysis understands. libstdc++'s std::mutex carries no
// annotations, so a member written GUARDED_BY(mu_) next to a std::mutex is a
// comment; next to a baton::Mutex it is checked: the ASan build compiles
// with clang and -Werror=thread-safety (CMakeLists.txt), so reading such a
// member without holding the mutex, or calling a REQUIRES(mu_) function
// without it, does not build. The same shape as abseil's absl::Mutex and
// leveldb's port::Mutex, over std::mutex and std::condition_variable, with
// no cost beyond them.
//
//   class Queue {
//    public:
//     void Push(int v) EXCLUDES(mu_) {
//       MutexLock lock(&mu_);
//       items_.push_back(v);
//       ready_.Signal();
//     }
//     int Pop() EXCLUDES(mu_) {
//       MutexLock lock(&mu_);
//       while (items_.empty()) ready_.Wait(&mu_);
//       ...
//     }
//    private:
//     Mutex mu_;
//     CondVar ready_;
//     std::deque<int> items_ GUARDED_BY(mu_);
//   };
//
// Waits are loops in the function that holds the lock rather than predicate
// lambdas: the analysis checks a lambda as a function of its own, which does
// not hold the lock.

#ifndef BATON_SRC_UTIL_MUTEX_H_
#define BATON_SRC_UTIL_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define BATON_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define BATON_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) BATON_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY BATON_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) BATON_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) BATON_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) BATON_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) BATON_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) BATON_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define EXCLUDES(...) BATON_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) BATON_THREAD_ANNOTATION(assert_capability(x))
#define NO_THREAD_SAFETY_ANALYSIS BATON_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace baton {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Tells the analysis what a caller's contract already guarantees.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds "mu" for its scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Each wait releases "mu" while it sleeps and holds it again when it
// returns; wake-ups may be spurious, so callers wait in a loop.
class CondVar {
 public:
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // False once "deadline" has passed.
  template <class Clock, class Duration>
  bool WaitUntil(Mutex* mu, const std::chrono::time_point<Clock, Duration>& deadline)
      REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  template <class Rep, class Period>
  bool WaitFor(Mutex* mu, const std::chrono::duration<Rep, Period>& timeout) REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + timeout);
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace baton

#endif  // BATON_SRC_UTIL_MUTEX_H_
