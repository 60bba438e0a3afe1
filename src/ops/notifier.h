// File: notifier.h
//
// `baton serve --notify-command CMD`: tells the human, outside the browser,
// when something starts needing them. After each change to the store (at
// most every quarter second) the notifier lists the inbox (inbox.list) and
// runs CMD through /bin/sh for every item it has not seen before: the item
// as JSON on stdin, and BATON_ITEM_ID, BATON_ITEM_KIND, BATON_ITEM_TITLE,
// BATON_ITEM_FROM, BATON_RUN_ID and BATON_DASHBOARD_URL in the environment
// (beside the server's own). A command that fails (non-zero exit, or
// running past its timeout) is retried with doubling waits; each item's
// outcome is recorded in the ledger by inbox.notified ("inbox.notified"
// events). Items already waiting when the server starts are not announced.
//
// Everything runs on the notifier's own thread: a slow or hanging command
// delays later notifications, never a write.

#ifndef BATON_SRC_OPS_NOTIFIER_H_
#define BATON_SRC_OPS_NOTIFIER_H_

#include <cstdint>
#include <set>
#include <string>
#include <thread>

#include "ops/api.h"
#include "util/mutex.h"

namespace baton {

struct InboxItem;  // engine/inbox/inbox.h

struct NotifierOptions {
  std::string command;        // run with /bin/sh -c
  std::string dashboard_url;  // for BATON_DASHBOARD_URL (no secret in it)
  int max_attempts = 3;
  int64_t first_retry_ms = 1000;  // doubled after each failed attempt
  int64_t timeout_ms = 30000;     // per attempt
};

class Notifier {
 public:
  // Starts the notifier's thread.
  Notifier(Api& api, NotifierOptions options);
  // Stops it: an attempt in progress is waited for (up to its timeout).
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

 private:
  void Loop();
  // Runs the command for "item" until it succeeds or the attempts run out,
  // then records the outcome.
  void Announce(const InboxItem& item);
  // Sleeps "ms" unless stopped first; false once stopped.
  bool Sleep(int64_t ms);

  Api& api_;
  NotifierOptions options_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::set<std::string> seen_;  // items announced, or waiting at start
  std::thread thread_;
};

}  // namespace baton

#endif  // BATON_SRC_OPS_NOTIFIER_H_
