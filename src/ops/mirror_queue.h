// File: mirror_queue.h
//
// MirrorQueue rewrites seed-file mirrors after commits on one thread of its
// own, for processes that live longer than a call (`baton serve`, `baton
// mcp`). A mirror renders its whole run, so rewriting it after every commit
// costs O(run) per write; the queue coalesces instead: commits mark a mirror
// due, and the thread rewrites each due mirror at most once per delay,
// rendering the run as it stands then — every commit before the render is in
// the file. A mirror idle for a delay is rewritten as soon as a commit makes
// it due. So a commit is in its mirror within the delay plus one render. A
// mirror whose render took longer than the delay waits that long before the
// next (the thread renders one run at most half the time): its commits land
// within three renders. Mirrors due at once are rewritten one after another,
// the one that has waited longest first:
//
//   MirrorQueue queue(std::chrono::milliseconds(200),
//                     [&](const MirrorTarget& m) { WriteMirror(m); });
//   queue.Add(MirrorsOf(txn, touched));   // after the commit; returns at once
//   queue.Flush();                        // shutting down: writes what is due
//
// Thread-safe. The writing function is called on the queue's thread only.

#ifndef BATON_SRC_OPS_MIRROR_QUEUE_H_
#define BATON_SRC_OPS_MIRROR_QUEUE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine/interchange/imports.h"
#include "util/mutex.h"

namespace baton {

struct MirrorStats {
  int64_t due = 0;      // commits that made a mirror due (one per mirror)
  int64_t written = 0;  // renders done (each a file write, or its failure)
};

class MirrorQueue {
 public:
  using WriteFn = std::function<void(const MirrorTarget&)>;

  MirrorQueue(std::chrono::milliseconds delay, WriteFn write);
  // Writes what is due (Flush), then stops the thread.
  ~MirrorQueue();

  MirrorQueue(const MirrorQueue&) = delete;
  MirrorQueue& operator=(const MirrorQueue&) = delete;

  // Marks "due" for rewriting; returns without waiting.
  void Add(const std::vector<MirrorTarget>& due);
  // Returns once every mirror due when it was called has been written (no
  // delay waited for); commits added meanwhile do not hold it up.
  void Flush();
  MirrorStats stats() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    MirrorTarget target;       // as the latest commit named it
    bool due = false;
    uint64_t added = 0;  // the Add that made it due last
    // No render starts before: the last start plus the delay, or, after a
    // render longer than the delay, its end plus its duration.
    Clock::time_point next;
  };

  void Loop();
  // The path of a due mirror whose time has come (or any due one while
  // flushing); empty if none, with "*wake" the earliest time one will be.
  std::string NextDue(Clock::time_point now, Clock::time_point* wake) REQUIRES(mu_);

  const std::chrono::milliseconds delay_;
  const WriteFn write_;

  mutable Mutex mu_;
  CondVar cv_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);  // by path
  int flushing_ GUARDED_BY(mu_) = 0;  // callers in Flush
  uint64_t added_ GUARDED_BY(mu_) = 0;  // Add calls so far
  bool writing_ GUARDED_BY(mu_) = false;
  uint64_t writing_added_ GUARDED_BY(mu_) = 0;  // the Add of the mirror being written
  bool stopping_ GUARDED_BY(mu_) = false;
  MirrorStats stats_ GUARDED_BY(mu_);
  std::thread thread_;  // last: starts once the members it uses exist
};

}  // namespace baton

#endif  // BATON_SRC_OPS_MIRROR_QUEUE_H_
