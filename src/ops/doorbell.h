// File: doorbell.h
//
// A server's side of the store's ChangeBell (store/store.h), for the
// servers that share one PostgreSQL database: after this process commits,
// it rings the others — at most once per 50 ms however many commits there
// were, never inside a write transaction — and when another rings, it wakes
// this process's waiters (Api::WaitForChange: SSE streams, MCP
// subscriptions, question and mailbox waits, idle-push delivery).
//
// One thread and one connection per Api, made with the first commit or wait
// (a command that only reads opens none). The thread opens the bell; a lost
// one is opened again a second later. While it is down, waiters fall back
// to reading the store every quarter second, and when it is back they are
// woken once, since rings sent meanwhile were lost.

#ifndef BATON_SRC_OPS_DOORBELL_H_
#define BATON_SRC_OPS_DOORBELL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "store/store.h"
#include "util/mutex.h"

namespace baton {

struct DoorbellStats {
  int64_t rings = 0;           // rings this process sent
  int64_t heard = 0;           // other processes' rings it heard
  int64_t last_heard_seq = 0;  // the ledger head the last of them carried
  int64_t connects = 0;        // bells opened (1 + reconnections)
};

class Doorbell {
 public:
  // Heard is called on the doorbell's thread with the ledger head another
  // process rang with, or 0 once the bell (re)connects ("anything may have
  // changed"). REQUIRES: "store" has a change bell.
  Doorbell(std::shared_ptr<Store> store, std::function<void(int64_t seq)> heard);
  // Stops the thread; a ring still pending is sent first (on a bell opened
  // for it, if none was yet).
  ~Doorbell();

  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;

  // This process committed: ring the others soon.
  void Committed();
  // Whether the bell is connected, so other processes' commits wake
  // waiters without their reading the store.
  bool listening() const { return listening_.load(std::memory_order_acquire); }
  DoorbellStats stats() const;

 private:
  void Loop();
  // Sleeps up to "ms" unless stopped; false once stopped.
  bool SleepUnlessStopped(int ms);

  const std::shared_ptr<Store> store_;
  const std::function<void(int64_t)> heard_;
  std::atomic<bool> listening_{false};

  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  bool pending_ GUARDED_BY(mu_) = false;  // a commit not rung yet
  // The bell the thread uses, for Committed and the destructor to
  // interrupt its Listen.
  std::shared_ptr<ChangeBell> bell_ GUARDED_BY(mu_);
  DoorbellStats stats_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace baton

#endif  // BATON_SRC_OPS_DOORBELL_H_
