#include "engine/ledger/writer.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <iostream>
#include <random>

#include "engine/ledger/ledger.h"
#include "store/tables/event_table.h"

namespace baton {
namespace {

// glibc gives an arena back to the kernel whenever more than 128 KB at its
// top is free, and a writer frees about that much after every batch (or
// graph node with a large state): the next faults the same pages in again
// (a sixth of a write's CPU at 64 submitters, bench/throughput.cc; a third
// of a graph node's with a 100 KB state). A process that writes keeps up to
// 4 MB free per arena for reuse instead; blocks of 1 MB and up are mapped
// and unmapped on their own as before. Process-wide: baton's binaries are
// the processes that make writers.
void KeepFreedMemoryForReuse() {
  static const bool once = [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_TRIM_THRESHOLD, 4 << 20);
    return true;
  }();
  (void)once;
}

}  // namespace

Writer::Writer(std::unique_ptr<Connection> conn, int max_batch)
    : conn_(std::move(conn)),
      max_batch_(max_batch < 1 ? 1 : max_batch),
      witness_file_(WitnessPath(conn_->file_path())) {
  KeepFreedMemoryForReuse();
  // At start-up, before any write: a server refuses from its first request.
  CheckIntegrity();
}

namespace {

// A COMMIT that failed for any reason but a busy store may have reached the
// disk all the same (an fsync that failed after the WAL write): its callers
// are told so, and that a blind retry could do the change twice.
Status InDoubt(const Status& cause) {
  Json details = cause.details().is_object() ? cause.details() : Json::object();
  details["in_doubt"] = true;
  details["cause"] = StatusCodeName(cause.code());
  return Status(StatusCode::kUnknown,
                cause.message() + "; the change may have been made all the same: read it back "
                                  "before retrying",
                std::move(details));
}

}  // namespace

Status Writer::refusal() const {
  MutexLock lock(&mu_);
  return latched_.ok() ? refusal_ : latched_;
}

bool Writer::failed() const {
  MutexLock lock(&mu_);
  return !latched_.ok();
}

void Writer::Latch(const Status& cause) {
  // A busy store answered before changing anything; the next batch may try.
  if (cause.ok() || IsStoreBusy(cause)) return;
  const StatusCode code =
      cause.code() == StatusCode::kDataLoss ? StatusCode::kDataLoss : StatusCode::kUnavailable;
  Status latched(code,
                 "the store failed a write (" + cause.message() +
                     "); writes are refused until baton reopens it (reads keep working)",
                 Json{{"reason", kStoreFailedReason}, {"cause", cause.ToJson()}});
  {
    MutexLock lock(&mu_);
    if (!latched_.ok()) return;  // the first failure is the cause
    latched_ = latched;
  }
  std::cerr << "baton: error: " << latched.message() << "\n";
}

void Writer::AddWitnesses(std::vector<Witness> witnesses) {
  MutexLock lock(&mu_);
  for (Witness& w : witnesses) extra_witnesses_.push_back(std::move(w));
  checked_ = false;  // the next batch checks again, on the writer's connection
}

void Writer::CheckIntegrity() {
  std::vector<Witness> witnesses;
  {
    MutexLock lock(&mu_);
    witnesses = extra_witnesses_;
  }
  // The witness first, the store second: a witness is written after its
  // commit, so read in this order it is never ahead of a whole store.
  if (!witness_file_.path().empty()) {
    Result<std::optional<Witness>> file = ReadWitnessFile(witness_file_.path());
    if (!file.ok()) {
      // No evidence either way; the next commit rewrites it.
      std::cerr << "baton: warning: " << file.status().message() << "\n";
    } else if (file->has_value()) {
      witnessed_ = (*file)->head;
      witnesses.push_back(**file);
    }
  }
  Status refusal;
  bool acceptable = false;
  bool done = true;
  Result<std::unique_ptr<Txn>> txn = conn_->Begin(TxnMode::kRead);
  if (!txn.ok()) {
    done = false;  // try again before the next batch
  } else {
    Result<VerifyReport> tail = VerifyLedgerTail(**txn, kTailEvents);
    if (!tail.ok()) {
      if (tail.status().code() == StatusCode::kDataLoss) {
        refusal = tail.status().WithPrefix("the ledger cannot be read; writes are refused");
      } else {
        done = false;
      }
    } else if (!tail->ok) {
      refusal = Status(StatusCode::kDataLoss,
                       "the ledger is broken at seq " + std::to_string(tail->first_broken_seq) +
                           ": " + tail->reason +
                           "; writes are refused so that nothing is appended onto an altered "
                           "chain (reads keep working; `baton verify` reports the store)",
                       Json{{"first_broken_seq", tail->first_broken_seq},
                            {"reason", tail->reason}});
    } else {
      refusal = CheckWitnesses(**txn, witnesses);
      if (!refusal.ok() && refusal.code() != StatusCode::kDataLoss) {
        refusal = Status();
        done = false;
      }
      acceptable = !refusal.ok();
    }
  }
  MutexLock lock(&mu_);
  refusal_ = refusal;
  refusal_acceptable_ = acceptable;
  checked_ = done;
}

void Writer::WriteWitness(const LedgerHead& head) {
  if (witness_file_.path().empty()) return;
  if (witnessed_ && witnessed_->seq == head.seq && witnessed_->hash == head.hash) return;
  Status s = witness_file_.Write(head);
  if (s.ok()) {
    witnessed_ = head;
    MutexLock lock(&mu_);
    ++stats_.witness_writes;
  } else if (!witness_warned_) {
    // The commit stands; a missing witness only weakens the loss check.
    witness_warned_ = true;
    std::cerr << "baton: warning: " << s.message() << "\n";
  }
}

Writer::~Writer() { Stop(); }

void Writer::StartGroupCommit() {
  MutexLock lock(&mu_);
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
    MutexLock lock(&mu_);
    // A latched writer is also stopped once its owner drops it: the latch
    // is the reason a caller should hear.
    if (!latched_.ok()) return std::vector<Result<Json>>(fns.size(), Result<Json>(latched_));
    if (stopping_) {
      return std::vector<Result<Json>>(
          fns.size(), Result<Json>(UnavailableError("baton is shutting down; retry the call")));
    }
    if (threaded_) {
      queue_.insert(queue_.end(), batch.begin(), batch.end());
      cv_.Signal();
      queued = true;
    }
  }
  if (!queued) {
    MutexLock direct(&direct_mu_);
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
      MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(&mu_);
      if (queue_.empty()) return;  // stopping, nothing left in flight
      if (stopping_) {
        // Work that was queued but not started is refused, not half-done.
        const Status refused =
            latched_.ok() ? UnavailableError("baton is shutting down; retry the call") : latched_;
        for (Item* item : queue_) item->done.set_value(refused);
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

bool Writer::RunItems(Txn& txn, std::vector<Item*>& batch, std::vector<Result<Json>>& results,
                      const Status& refused, bool* accepted) {
  LedgerHeadScope head_scope;  // the head is read once for the whole batch
  for (size_t i = 0; i < batch.size(); ++i) {
    Status sp = txn.Savepoint("op");
    if (!sp.ok()) {
      FailAll(results, sp);
      Latch(sp);
      return false;
    }
    head_scope.Mark();
    int64_t before = 0;
    if (!refused.ok()) {
      Result<LedgerHead> head = LedgerHeadNow(txn);
      if (!head.ok()) {
        FailAll(results, head.status());
        return false;
      }
      before = head->seq;
    }
    results[i] = batch[i]->fn(txn);
    if (!refused.ok() && results[i].ok()) {
      // Only an item whose every event records an accepted loss may pass.
      Result<EventCount> kinds = CountEventsAfter(txn, before, kLossAcceptedKind);
      const bool only_accept = kinds.ok() && kinds->total > 0 && kinds->total == kinds->of_kind;
      if (only_accept) {
        *accepted = true;
      } else {
        results[i] = refused;
      }
    }
    Status end = results[i].ok() ? Status() : txn.RollbackTo("op");
    if (!results[i].ok() && end.ok()) head_scope.Restore();
    if (end.ok()) end = txn.Release("op");
    if (!end.ok() && results[i].ok() && txn.holds_writes_back() && txn.RollbackTo("op").ok()) {
      // A write the backend held back until the release (Txn::ExecLater)
      // failed there: it was this item's, which fails alone.
      head_scope.Restore();
      results[i] = end;
      end = txn.Release("op");
    }
    if (!end.ok()) {
      // The transaction itself is unusable (I/O error, disk full): nothing
      // in this batch may claim success, and nothing after it until a reopen.
      FailAll(results, end);
      Latch(end);
      return false;
    }
  }
  return true;
}

void Writer::RunBatch(std::vector<Item*>& batch) {
  std::vector<Result<Json>> results(batch.size(), Result<Json>(InternalError("not run")));
  bool checked = false;
  Status latched;
  {
    MutexLock lock(&mu_);
    checked = checked_;
    latched = latched_;
  }
  if (!checked && latched.ok()) CheckIntegrity();
  Status refused;
  bool acceptable = false;
  {
    MutexLock lock(&mu_);
    refused = refusal_;
    acceptable = refusal_acceptable_;
  }
  bool accepted = false;
  std::optional<LedgerHead> head;
  if (!latched.ok()) {
    // Queued before an earlier batch failed: refused, never run.
    FailAll(results, latched);
  } else if (!refused.ok() && !acceptable) {
    // A broken chain: nothing is appended onto it, not even an acceptance.
    FailAll(results, refused);
  } else if (Result<std::unique_ptr<Txn>> txn = conn_->Begin(TxnMode::kWrite); !txn.ok()) {
    FailAll(results, txn.status());
    // A server that dropped the connection: nothing ran, and nothing will
    // on this one; the owner opens a writer on a new connection.
    if (conn_->broken()) Latch(txn.status());
  } else if (RunItems(**txn, batch, results, refused, &accepted)) {
    const bool any_ok =
        std::any_of(results.begin(), results.end(), [](const Result<Json>& r) { return r.ok(); });
    if (any_ok && !witness_file_.path().empty()) {
      Result<LedgerHead> h = LedgerHeadNow(**txn);
      if (h.ok()) head = *h;
    }
    Status commit = (*txn)->Commit();
    if (!commit.ok()) {
      head.reset();
      // Busy or full, SQLite wrote no commit record: nothing can be there.
      const bool nothing_written =
          IsStoreBusy(commit) || commit.code() == StatusCode::kResourceExhausted;
      const Status answer = nothing_written ? commit : InDoubt(commit);
      for (Result<Json>& r : results) {
        if (r.ok()) r = answer;
      }
      // Maybe durable after all (an fsync that failed after the WAL write):
      // nothing more is written on this connection.
      Latch(commit);
    }
  }
  // Before anyone is answered: an acknowledged write is always witnessed.
  if (head && (refused.ok() || accepted)) WriteWitness(*head);
  if (accepted) CheckIntegrity();
  {
    MutexLock lock(&mu_);
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
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

WriterStats Writer::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace baton
