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
//
// Integrity (docs/security-integrity.md): when it is made, the writer walks
// the newest kTailEvents events of the chain and compares the ledger with
// the witness file beside the store (witness.h). A broken tail refuses every
// write with DataLoss naming the seq; a ledger behind a witness refuses every
// write but an admin's `store.accept_loss` (an item whose only events are
// "store.loss_accepted"; any other item is rolled back and answered with the
// DataLoss). After each committed batch, before its callers are answered,
// the writer rewrites the witness file with the new head.
//
// A failed batch latches, as leveldb's DBImpl keeps bg_error_: when Commit,
// Savepoint, RollbackTo or Release fails for any reason but a busy store
// (IsStoreBusy), the connection's state is unknown — a COMMIT whose fsync
// failed may be durable all the same, a savepoint half undone. The batch's
// callers get that failure (a failed COMMIT's as Unknown, details.in_doubt:
// its change may be on disk all the same); every later write, queued or new, is refused
// without running, with Unavailable "the store failed a write (CAUSE);
// writes are refused until baton reopens it" (DataLoss when CAUSE was
// DataLoss), details {"reason": "store_failed", "cause": {...}}. Nothing
// clears it: a new Writer on a new connection (a reopen, which runs the
// start-up check again) writes again. Reads never go through the writer.

#ifndef BATON_SRC_ENGINE_LEDGER_WRITER_H_
#define BATON_SRC_ENGINE_LEDGER_WRITER_H_

#ifndef BATON_ENGINE_ROOM_LEDGER
#error "engine/ledger/ is above this target: link baton_engine_ledger (src/engine/README.md)"
#endif

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>

#include "engine/ledger/witness.h"
#include "store/store.h"
#include "util/json_util.h"
#include "util/mutex.h"

namespace baton {

using WriteFn = std::function<Result<Json>(Txn&)>;

struct WriterStats {
  int64_t batches = 0;
  int64_t items = 0;
  int64_t largest_batch = 0;
  int64_t witness_writes = 0;
};

// How many of the newest events the writer's start-up check walks.
inline constexpr int64_t kTailEvents = 256;

// details.reason of the refusal after a failed batch.
inline constexpr char kStoreFailedReason[] = "store_failed";

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

  // Why writes are refused — the failed batch's latch (above), else the
  // integrity check's DataLoss — or OK. Reads are never refused.
  Status refusal() const;
  // True once a batch failed and writes are latched: the owner should drop
  // this writer and its store and open them anew (ops/api.h).
  bool failed() const;

  // Adds heads recorded elsewhere (the seed-file mirrors) to the witness
  // file's, and checks the store against all of them now: a store behind
  // one refuses writes as above. Read the heads before calling.
  void AddWitnesses(std::vector<Witness> witnesses);

 private:
  struct Item {
    WriteFn fn;
    std::promise<Result<Json>> done;
  };

  void Loop();
  // Runs "batch" in one transaction and fulfils every promise.
  void RunBatch(std::vector<Item*>& batch);
  // Runs "batch" in "txn": each item alone in a savepoint; while writes are
  // refused, only items that accept a loss are kept.
  bool RunItems(Txn& txn, std::vector<Item*>& batch, std::vector<Result<Json>>& results,
                const Status& refused, bool* accepted);
  // The start-up check (tail of the chain, witnesses); sets refusal_.
  // Runs on conn_: in the constructor or the thread that runs batches.
  void CheckIntegrity();
  // Rewrites the witness file after a commit that moved the head.
  void WriteWitness(const LedgerHead& head);
  // Refuses every later write because of "cause", a failed Commit,
  // Savepoint, RollbackTo or Release; a busy store is not latched.
  void Latch(const Status& cause);

  std::unique_ptr<Connection> conn_;
  const int max_batch_;

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Item*> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  bool threaded_ GUARDED_BY(mu_) = false;
  WriterStats stats_ GUARDED_BY(mu_);
  Mutex direct_mu_;  // serialises direct-mode batches on conn_
  std::thread thread_;

  // "<store>.head" (a path of "" for a store in memory: none is written).
  WitnessFile witness_file_;
  std::vector<Witness> extra_witnesses_ GUARDED_BY(mu_);
  Status refusal_ GUARDED_BY(mu_);
  bool refusal_acceptable_ GUARDED_BY(mu_) = false;  // accept-loss may pass
  bool checked_ GUARDED_BY(mu_) = false;             // the check has run
  Status latched_ GUARDED_BY(mu_);                   // set once, never cleared
  // The head last written to the witness file; used by the batch thread only.
  std::optional<LedgerHead> witnessed_;
  bool witness_warned_ = false;
};

}  // namespace baton

#endif  // BATON_SRC_ENGINE_LEDGER_WRITER_H_
