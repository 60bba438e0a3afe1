#include "mcp/change_feed.h"

#include <algorithm>
#include <cstdio>

#include "util/clock.h"

namespace baton::mcp {
namespace {

constexpr int kBatch = 500;

}  // namespace

ChangeFeed::~ChangeFeed() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

int64_t ChangeFeed::Head() {
  // Not store.status: it counts every table, a cost that grows with history,
  // paid by every stream and subscription that joins.
  Result<Json> got = api_.Call(
      "ledger.events", {{"before", int64_t{1} << 53}, {"limit", 1}, {"summary_only", true}},
      SystemActor());
  if (!got.ok() || (*got)["events"].empty()) return 0;
  return (*got)["events"][0]["seq"].get<int64_t>();
}

int ChangeFeed::Add(Listener listener, int64_t* head_out) {
  // A listener hears of what is committed after the head it joined at, not
  // of what the loop may still be reading for the others.
  const int64_t head = Head();
  if (head_out != nullptr) *head_out = head;
  MutexLock lock(&mu_);
  if (listeners_.empty()) last_seq_ = std::max(last_seq_, head);
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  const int id = next_id_++;
  listeners_[id] = Entry{head, std::move(listener)};
  return id;
}

void ChangeFeed::Remove(int id) {
  MutexLock dispatch(&dispatch_mu_);
  MutexLock lock(&mu_);
  listeners_.erase(id);
}

void ChangeFeed::Loop() {
  uint64_t seen = 0;
  for (;;) {
    api_.WaitForChange(&seen, NowMillis() + api_.change_poll_millis());
    int64_t since = 0;
    {
      MutexLock lock(&mu_);
      if (stop_) return;
      if (listeners_.empty()) continue;
      since = last_seq_;
    }
    Json query = {{"since", since}, {"limit", kBatch}};
    if (!with_payload_) query["summary_only"] = true;
    Result<Json> got = api_.Call("ledger.events", query, SystemActor());
    if (!got.ok() || (*got)["events"].empty()) continue;
    MutexLock dispatch(&dispatch_mu_);
    std::map<int, Entry> listeners;
    {
      MutexLock lock(&mu_);
      last_seq_ = std::max(last_seq_, (*got)["events"].back()["seq"].get<int64_t>());
      listeners = listeners_;
    }
    for (const Json& event : (*got)["events"]) {
      const int64_t seq = event["seq"].get<int64_t>();
      for (auto& [id, entry] : listeners) {
        if (seq <= entry.after_seq) continue;
        // One listener's surprise (odd stored data) must not end the feed,
        // nor the process it runs in.
        try {
          entry.listener(event);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "baton: change feed listener: %s\n", e.what());
        }
      }
    }
  }
}

}  // namespace baton::mcp
