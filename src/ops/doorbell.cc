#include "ops/doorbell.h"

#include <chrono>
#include <iostream>
#include <utility>

namespace baton {
namespace {

// Rings are at least this far apart; commits in between share the next.
constexpr int kCoalesceMillis = 50;
// How long one Listen waits when nothing is pending.
constexpr int kIdleMillis = 1000;
// How long after a lost connection the bell is opened again.
constexpr int kReconnectMillis = 1000;

int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Doorbell::Doorbell(std::shared_ptr<Store> store, std::function<void(int64_t)> heard)
    : store_(std::move(store)), heard_(std::move(heard)) {
  thread_ = std::thread([this] { Loop(); });
}

Doorbell::~Doorbell() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    if (bell_) bell_->Interrupt();
    cv_.SignalAll();
  }
  thread_.join();
}

void Doorbell::Committed() {
  MutexLock lock(&mu_);
  if (pending_) return;  // the ring due already covers this commit
  pending_ = true;
  if (bell_) bell_->Interrupt();
}

DoorbellStats Doorbell::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

bool Doorbell::SleepUnlessStopped(int ms) {
  MutexLock lock(&mu_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!stop_ && cv_.WaitUntil(&mu_, until)) {
  }
  return !stop_;
}

void Doorbell::Loop() {
  int64_t last_ring = 0;
  bool warned = false;
  bool first = true;  // the first bell is opened at once
  for (;;) {
    std::shared_ptr<ChangeBell> bell;
    bool stopping = false;
    bool ring = false;
    int wait = kIdleMillis;
    {
      MutexLock lock(&mu_);
      bell = bell_;
      stopping = stop_;
      if (pending_) {
        const int64_t due = last_ring + kCoalesceMillis;
        const int64_t now = SteadyMillis();
        ring = stopping || now >= due;
        wait = ring ? 0 : static_cast<int>(due - now);
        if (ring) pending_ = false;
      }
    }
    if (stopping) {
      // The last commits are told of before the process goes, on a bell
      // opened for it if need be (a command that commits and exits at once).
      if (ring && !bell) {
        Result<std::unique_ptr<ChangeBell>> opened = store_->OpenChangeBell();
        if (opened.ok() && *opened != nullptr) bell = std::move(*opened);
      }
      if (bell && ring) (void)bell->Ring();
      return;
    }
    if (!bell) {
      if (!first && !SleepUnlessStopped(kReconnectMillis)) continue;
      first = false;
      Result<std::unique_ptr<ChangeBell>> opened = store_->OpenChangeBell();
      if (!opened.ok() || *opened == nullptr) {
        if (!warned) {
          warned = true;
          std::cerr << "baton: other servers' commits are read every quarter second until the "
                       "change bell connects: "
                    << (opened.ok() ? "no bell" : opened.status().message()) << "\n";
        }
        continue;
      }
      {
        MutexLock lock(&mu_);
        bell_ = std::move(*opened);
        ++stats_.connects;
      }
      listening_.store(true, std::memory_order_release);
      warned = false;
      heard_(0);  // rings sent while it was down are lost
      continue;
    }
    Status status;
    if (ring) {
      last_ring = SteadyMillis();
      status = bell->Ring();
      MutexLock lock(&mu_);
      if (status.ok()) {
        ++stats_.rings;
      } else {
        pending_ = true;  // rung once the bell is back
      }
    }
    if (status.ok()) {
      Result<std::vector<int64_t>> heard = bell->Listen(wait);
      if (heard.ok()) {
        // Rings heard together wake the waiters once: they read the store.
        if (!heard->empty()) {
          {
            MutexLock lock(&mu_);
            stats_.heard += static_cast<int64_t>(heard->size());
            stats_.last_heard_seq = heard->back();
          }
          heard_(heard->back());
        }
        continue;
      }
      status = heard.status();
    }
    if (!warned) {
      warned = true;
      std::cerr << "baton: other servers' commits are read every quarter second until the "
                   "change bell reconnects: "
                << status.message() << "\n";
    }
    listening_.store(false, std::memory_order_release);
    MutexLock lock(&mu_);
    bell_.reset();
  }
}

}  // namespace baton
