// The mirror thread (ops/mirror_queue.h): commits that arrive while a mirror
// waits out its delay are written once, as the newest commit named it; an
// idle mirror is written at once; no mirror starves another; a flush writes
// what is due without waiting.

#include "ops/mirror_queue.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "util/mutex.h"

namespace baton {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// What the queue's thread was asked to write, in order.
class Written {
 public:
  void Add(const MirrorTarget& m) {
    MutexLock lock(&mu_);
    writes_.push_back(m.path + "@" + m.run_id);
  }
  std::vector<std::string> all() const {
    MutexLock lock(&mu_);
    return writes_;
  }

 private:
  mutable Mutex mu_;
  std::vector<std::string> writes_ GUARDED_BY(mu_);
};

// A commit of version "v" of the run mirrored at "path" (the test passes
// the version as the run id, to see which commit a write followed).
MirrorTarget Commit(const std::string& path, int v) {
  return MirrorTarget{.run_id = "v" + std::to_string(v), .path = path, .format = "graph"};
}

bool WaitFor(const MirrorQueue& q, int64_t written) {
  const auto deadline = Clock::now() + std::chrono::minutes(1);
  while (q.stats().written < written) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

TEST(MirrorQueueTest, CommitsWithinTheDelayAreWrittenOnceAsTheNewestNamedThem) {
  Written written;
  MirrorQueue q(milliseconds(600000), [&](const MirrorTarget& m) { written.Add(m); });
  q.Add({Commit("/a", 1)});
  ASSERT_TRUE(WaitFor(q, 1));  // idle: at once
  for (int v = 2; v <= 9; ++v) q.Add({Commit("/a", v)});
  EXPECT_EQ(q.stats().due, 9);
  EXPECT_EQ(q.stats().written, 1);  // the rest wait out the delay
  q.Flush();
  EXPECT_EQ(written.all(), (std::vector<std::string>{"/a@v1", "/a@v9"}));
  q.Flush();  // nothing due: returns
  EXPECT_EQ(q.stats().written, 2);
}

TEST(MirrorQueueTest, TheNextWriteWaitsTheDelayFromTheLastStart) {
  std::vector<Clock::time_point> starts;
  Mutex mu;
  MirrorQueue q(milliseconds(100), [&](const MirrorTarget&) {
    MutexLock lock(&mu);
    starts.push_back(Clock::now());
  });
  q.Add({Commit("/a", 1)});
  ASSERT_TRUE(WaitFor(q, 1));
  q.Add({Commit("/a", 2)});
  ASSERT_TRUE(WaitFor(q, 2));
  MutexLock lock(&mu);
  ASSERT_EQ(starts.size(), 2u);
  // The queue's clock is read a moment before the test's: a little slack.
  EXPECT_GE(starts[1] - starts[0], milliseconds(95));
}

TEST(MirrorQueueTest, AMirrorWhoseRenderOutlastsTheDelayDoesNotStarveAnother) {
  Written written;
  MirrorQueue q(milliseconds(1), [&](const MirrorTarget& m) {
    written.Add(m);
    std::this_thread::sleep_for(milliseconds(20));  // a long run's render
  });
  q.Add({Commit("/a", 1)});
  ASSERT_TRUE(WaitFor(q, 1));
  // Both fall due at once; /b, never written, has waited longer: first,
  // though /a comes first in path order and is past its delay too.
  std::this_thread::sleep_for(milliseconds(50));
  q.Add({Commit("/a", 2), Commit("/b", 1)});
  q.Flush();
  const std::vector<std::string> all = written.all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], "/a@v1");
  EXPECT_EQ(all[1], "/b@v1");
  EXPECT_EQ(all[2], "/a@v2");
}

TEST(MirrorQueueTest, AFlushWaitsOnlyForWhatWasDueWhenItWasCalled) {
  std::atomic<bool> again{true};
  std::atomic<int> writes{0};
  MirrorQueue* queue = nullptr;
  MirrorQueue q(milliseconds(600000), [&](const MirrorTarget&) {
    // Every rewrite is followed by another commit, as under a steady stream.
    const int n = ++writes;
    if (again) queue->Add({Commit("/a", n + 1)});
  });
  queue = &q;
  q.Add({Commit("/a", 1)});
  q.Flush();  // returns, though /a is due again after each write
  EXPECT_GE(writes.load(), 1);
  again = false;
}

TEST(MirrorQueueTest, ClosingWritesWhatIsDue) {
  Written written;
  {
    MirrorQueue q(milliseconds(600000), [&](const MirrorTarget& m) { written.Add(m); });
    q.Add({Commit("/a", 1)});
    ASSERT_TRUE(WaitFor(q, 1));
    q.Add({Commit("/a", 2), Commit("/b", 1)});
  }
  const std::vector<std::string> all = written.all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], "/a@v1");
  EXPECT_EQ(all[2], "/a@v2");  // /b has waited longer: it goes first
}

}  // namespace
}  // namespace baton
