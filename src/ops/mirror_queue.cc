#include "ops/mirror_queue.h"

#include <utility>

namespace baton {

MirrorQueue::MirrorQueue(std::chrono::milliseconds delay, WriteFn write)
    : delay_(delay), write_(std::move(write)), thread_([this] { Loop(); }) {}

MirrorQueue::~MirrorQueue() {
  Flush();
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  thread_.join();
}

void MirrorQueue::Add(const std::vector<MirrorTarget>& due) {
  if (due.empty()) return;
  MutexLock lock(&mu_);
  ++added_;
  for (const MirrorTarget& m : due) {
    Entry& e = entries_[m.path];
    e.target = m;
    e.due = true;
    e.added = added_;
    ++stats_.due;
  }
  cv_.SignalAll();
}

void MirrorQueue::Flush() {
  MutexLock lock(&mu_);
  // Only what is due now: commits that keep arriving do not hold it up.
  const uint64_t upto = added_;
  ++flushing_;
  cv_.SignalAll();
  for (;;) {
    bool waiting = writing_ && writing_added_ <= upto;
    for (const auto& [path, e] : entries_) waiting = waiting || (e.due && e.added <= upto);
    if (!waiting) break;
    cv_.Wait(&mu_);
  }
  --flushing_;
}

MirrorStats MirrorQueue::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

std::string MirrorQueue::NextDue(Clock::time_point now, Clock::time_point* wake) {
  // Of the mirrors whose time has come, the one that has waited longest: a
  // mirror whose render outlasts the delay does not starve the others.
  auto best = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& e = it->second;
    if (!e.due) {
      // Idle past its delay: forgotten, so the map holds only recent paths.
      it = e.next <= now ? entries_.erase(it) : std::next(it);
      continue;
    }
    if (flushing_ > 0 || stopping_ || e.next <= now) {
      if (best == entries_.end() || e.next < best->second.next) best = it;
    } else if (e.next < *wake) {
      *wake = e.next;
    }
    ++it;
  }
  return best == entries_.end() ? std::string() : best->first;
}

void MirrorQueue::Loop() {
  for (;;) {
    MirrorTarget target;
    {
      MutexLock lock(&mu_);
      for (;;) {
        const Clock::time_point now = Clock::now();
        Clock::time_point wake = Clock::time_point::max();
        const std::string path = NextDue(now, &wake);
        if (!path.empty()) {
          Entry& e = entries_.at(path);
          e.due = false;
          target = e.target;
          writing_ = true;
          writing_added_ = e.added;
          break;
        }
        if (stopping_) return;
        if (wake == Clock::time_point::max()) {
          cv_.Wait(&mu_);
        } else {
          cv_.WaitUntil(&mu_, wake);
        }
      }
    }
    const Clock::time_point start = Clock::now();
    write_(target);
    const Clock::time_point end = Clock::now();
    MutexLock lock(&mu_);
    // A render longer than the delay waits as long as it took before the
    // next: the thread spends at most half its time on one mirror.
    if (auto it = entries_.find(target.path); it != entries_.end()) {
      it->second.next = end - start > delay_ ? end + (end - start) : start + delay_;
    }
    writing_ = false;
    ++stats_.written;
    cv_.SignalAll();
  }
}

}  // namespace baton
