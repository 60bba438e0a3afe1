#include "mcp/change_feed.h"

#include "util/clock.h"

namespace baton::mcp {
namespace {

constexpr int64_t kPollMillis = 250;
constexpr int kBatch = 500;

}  // namespace

ChangeFeed::~ChangeFeed() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

int ChangeFeed::Add(Listener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  if (last_seq_ < 0) {
    // Start from the head: listeners hear of what is committed from now on.
    Result<Json> status = api_.Call("store.status", Json::object(), SystemActor());
    last_seq_ = status.ok() ? (*status)["ledger"]["head_seq"].get<int64_t>() : 0;
    thread_ = std::thread([this] { Loop(); });
  }
  const int id = next_id_++;
  listeners_[id] = std::move(listener);
  return id;
}

void ChangeFeed::Remove(int id) {
  std::lock_guard<std::mutex> dispatch(dispatch_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.erase(id);
}

void ChangeFeed::Loop() {
  uint64_t seen = 0;
  for (;;) {
    api_.WaitForChange(&seen, NowMillis() + kPollMillis);
    int64_t since = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      if (listeners_.empty()) continue;
      since = last_seq_;
    }
    Result<Json> got = api_.Call("ledger.events", {{"since", since}, {"limit", kBatch}}, SystemActor());
    if (!got.ok() || (*got)["events"].empty()) continue;
    std::lock_guard<std::mutex> dispatch(dispatch_mu_);
    std::map<int, Listener> listeners;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_seq_ = (*got)["events"].back()["seq"].get<int64_t>();
      listeners = listeners_;
    }
    for (const Json& event : (*got)["events"]) {
      for (auto& [id, listener] : listeners) listener(event);
    }
  }
}

}  // namespace baton::mcp
