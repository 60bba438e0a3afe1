#include "engine/writer.h"

#include <chrono>
#include <random>

namespace baton {

Writer::Writer(std::unique_ptr<Connection> conn, int max_batch)
    : conn_(std::move(conn)), max_batch_(max_batch < 1 ? 1 : max_batch) {}

Writer::~Writer() { Stop(); }

void Writer::StartGroupCommit() {
  std::lock_guard<std::mutex> lock(mu_);
  if (threaded_ || stopping_) return;
  threaded_ = true;
  thread_ = std::thread([this] { Loop(); });
}

Result<Json> Writer::Submit(WriteFn fn) {
  std::vector<WriteFn> one;
  one.push_back(std::move(fn));
  return std::move(SubmitAll(std::move(one)).front());
}

std::vector<Result<Json>> Writer::SubmitAll(std::vector<WriteFn> fns) {
  std::vector<Item> items(fns.size());
  std::vector<Item*> batch;
  std::vector<std::future<Result<Json>>> futures;
  for (size_t i = 0; i < fns.size(); ++i) {
    items[i].fn = std::move(fns[i]);
    futures.push_back(items[i].done.get_future());
    batch.push_back(&items[i]);
  }
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      return std::vector<Result<Json>>(
          fns.size(), Result<Json>(UnavailableError("baton is shutting down; retry the call")));
    }
    if (threaded_) {
      queue_.insert(queue_.end(), batch.begin(), batch.end());
      cv_.notify_one();
      queued = true;
    }
  }
  if (!queued) {
    std::lock_guard<std::mutex> direct(direct_mu_);
    RunBatch(batch);
  }
  std::vector<Result<Json>> results;
  for (auto& f : futures) results.push_back(f.get());
  return results;
}

void Writer::Loop() {
  std::vector<Item*> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left in flight
      if (stopping_) {
        // Work that was queued but not started is refused, not half-done.
        for (Item* item : queue_) {
          item->done.set_value(UnavailableError("baton is shutting down; retry the call"));
        }
        queue_.clear();
        return;
      }
      while (!queue_.empty() && static_cast<int>(batch.size()) < max_batch_) {
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    RunBatch(batch);
    batch.clear();
  }
}

namespace {

// A transaction-level failure (cannot begin or commit) fails every item.
void FailAll(std::vector<Result<Json>>& results, const Status& s) {
  for (Result<Json>& r : results) r = s;
}

}  // namespace

void Writer::RunBatch(std::vector<Item*>& batch) {
  std::vector<Result<Json>> results(batch.size(), Result<Json>(InternalError("not run")));
  Result<std::unique_ptr<Txn>> txn = conn_->Begin(TxnMode::kWrite);
  if (!txn.ok()) {
    FailAll(results, txn.status());
  } else {
    bool broken = false;
    for (size_t i = 0; i < batch.size() && !broken; ++i) {
      Status sp = (*txn)->Savepoint("op");
      if (!sp.ok()) {
        FailAll(results, sp);
        broken = true;
        break;
      }
      results[i] = batch[i]->fn(**txn);
      Status end = results[i].ok() ? Status() : (*txn)->RollbackTo("op");
      if (end.ok()) end = (*txn)->Release("op");
      if (!end.ok()) {
        // The transaction itself is unusable (I/O error, disk full): nothing
        // in this batch may claim success.
        FailAll(results, end);
        broken = true;
      }
    }
    if (!broken) {
      Status commit = (*txn)->Commit();
      if (!commit.ok()) {
        for (Result<Json>& r : results) {
          if (r.ok()) r = commit;
        }
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.batches;
    stats_.items += static_cast<int64_t>(batch.size());
    stats_.largest_batch =
        std::max<int64_t>(stats_.largest_batch, static_cast<int64_t>(batch.size()));
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i]->done.set_value(std::move(results[i]));
  }
}

void Writer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

WriterStats Writer::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace baton
