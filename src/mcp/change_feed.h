// File: change_feed.h
//
// Tells listeners about every ledger event committed to the store — this
// process's writes at once, other servers' on a shared database as soon as
// their ring is heard (ops/doorbell.h), else within Api::change_poll_millis()
// — so MCP sessions and SSE streams can notify subscribers. One thread per feed, started with
// the first listener and stopped with the feed. Listeners are called on that
// thread, one event at a time, in seq order; they must not add or remove
// listeners. After Remove returns, the listener is not running and will not
// run again.

#ifndef BATON_SRC_MCP_CHANGE_FEED_H_
#define BATON_SRC_MCP_CHANGE_FEED_H_

#include <functional>
#include <map>
#include <thread>

#include "ops/api.h"
#include "util/mutex.h"

namespace baton::mcp {

class ChangeFeed {
 public:
  using Listener = std::function<void(const Json& event)>;

  // "with_payload" false: listeners get events without payload, files,
  // refs and hashes (ledger.events summary_only).
  explicit ChangeFeed(Api& api, bool with_payload = true)
      : api_(api), with_payload_(with_payload) {}
  ~ChangeFeed();
  ChangeFeed(const ChangeFeed&) = delete;
  ChangeFeed& operator=(const ChangeFeed&) = delete;

  // The newest seq in the ledger (0 for an empty or unreadable one): one
  // indexed row, whatever the ledger's length.
  int64_t Head();

  // Events committed after this call reach "listener". Returns its id;
  // "*head", when given, is the ledger head it joined at (the last event it
  // will not hear of).
  int Add(Listener listener, int64_t* head = nullptr) EXCLUDES(mu_);
  void Remove(int id) EXCLUDES(mu_, dispatch_mu_);

 private:
  void Loop() EXCLUDES(mu_, dispatch_mu_);

  Api& api_;
  const bool with_payload_;
  Mutex mu_;                           // guards the fields below
  struct Entry {
    int64_t after_seq;  // the ledger head when it was added
    Listener listener;
  };
  std::map<int, Entry> listeners_ GUARDED_BY(mu_);
  int next_id_ GUARDED_BY(mu_) = 1;
  bool stop_ GUARDED_BY(mu_) = false;
  int64_t last_seq_ GUARDED_BY(mu_) = 0;  // events up to it were read
  std::thread thread_;                 // started by the first Add
  // Held while listeners run, so Remove can wait for a call in progress.
  Mutex dispatch_mu_;
};

}  // namespace baton::mcp

#endif  // BATON_SRC_MCP_CHANGE_FEED_H_
