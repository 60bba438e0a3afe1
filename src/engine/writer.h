// File: writer.h
//
// The write path (DESIGN.md §6). Every mutating operation is a WriteFn run
// inside a write transaction by the Writer:
//
//   * In group-commit mode (baton serve) one background thread takes work
//     from a queue and runs up to "max_batch" items in one transaction, each
//     inside its own SAVEPOINT: an item that fails is rolled back alone and
//     the others commit. Each caller is answered only after the commit is
//     durable, so one fsync is shared by the whole batch.
//   * In direct mode (the CLI without a server) Submit runs a batch of one in
//     the calling thread: the same code path, one commit per call.
//
// A WriteFn must do all its work through the Txn it is given and must not
// block on anything but the database. Submit is thread-safe.

#ifndef BATON_SRC_ENGINE_WRITER_H_
#define BATON_SRC_ENGINE_WRITER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

using WriteFn = std::function<Result<Json>(Txn&)>;

struct WriterStats {
  int64_t batches = 0;
  int64_t items = 0;
  int64_t largest_batch = 0;
};

class Writer {
 public:
  // "conn" is used by this writer only.
  Writer(std::unique_ptr<Connection> conn, int max_batch);
  ~Writer();

  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Switches to group-commit mode with a background thread.
  void StartGroupCommit();

  // Runs "fn" in a write transaction and returns its result once the
  // transaction is durable. If "fn" fails, nothing it did is kept.
  // Unavailable when the writer is stopping.
  Result<Json> Submit(WriteFn fn);

  // Runs all of "fns" as one batch (in direct mode; in group-commit mode they
  // are queued together and share a batch when it has room). Results are in
  // the order of "fns"; a failed item is rolled back alone.
  std::vector<Result<Json>> SubmitAll(std::vector<WriteFn> fns);

  // Finishes the batch in flight, answers work still queued with
  // Unavailable, and joins the thread. Idempotent.
  void Stop();

  WriterStats stats() const;

 private:
  struct Item {
    WriteFn fn;
    std::promise<Result<Json>> done;
  };

  void Loop();
  // Runs "batch" in one transaction and fulfils every promise.
  void RunBatch(std::vector<Item*>& batch);

  std::unique_ptr<Connection> conn_;
  const int max_batch_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item*> queue_;   // GUARDED_BY(mu_)
  bool stopping_ = false;     // GUARDED_BY(mu_)
  bool threaded_ = false;     // GUARDED_BY(mu_)
  WriterStats stats_;         // GUARDED_BY(mu_)
  std::mutex direct_mu_;      // serialises direct-mode batches on conn_
  std::thread thread_;
};

}  // namespace baton

#endif  // BATON_SRC_ENGINE_WRITER_H_
