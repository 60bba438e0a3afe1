// File: api.h
//
// Api is what every transport holds: the opened store, its machines, the
// writer and the registry, behind one call:
//
//   Result<Json> Call(op, input, actor)
//
// Call looks the operation up, checks the caller's role, validates the input
// against the operation's schema (naming the JSON path and rule on failure),
// then runs the handler: mutating operations through the Writer (durable
// before Call returns; idempotency keys honoured in the same transaction),
// reads on a pooled read connection. Results are checked against the output
// schema. Call is thread-safe.

#ifndef BATON_SRC_OPS_API_H_
#define BATON_SRC_OPS_API_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/interchange/imports.h"
#include "engine/ledger/writer.h"
#include "ops/doorbell.h"
#include "ops/mirror_queue.h"
#include "ops/registry.h"
#include "util/mutex.h"

namespace baton {

// A mirror renders its whole run (an sgai state.json lists every progress
// note: about 40 µs of CPU per note, 0.3 µs per byte of the file): a call
// rewrites the mirrors whose file is smaller than this itself, and with
// ApiOptions::start_background_flush leaves larger ones to a background
// flush, which coalesces the writes that come meanwhile (docs/formats.md
// "Mirrors"). 32 KiB is an sgai run of about 280 notes, a 10 ms render.
inline constexpr int64_t kHandOffMirrorsFromBytes = 32 << 10;

struct ApiOptions {
  StoreOptions store;
  // User machines: "*.json" here. Empty: the "machines" folder beside a file
  // store (".baton/machines" for the default store).
  std::string machines_dir;
  // false: each mutating call commits alone in the caller's thread (CLI).
  // true: one writer thread batches concurrent calls (baton serve).
  bool group_commit = false;
  int max_batch = 256;
  // The folders callers may name paths under (mirrors, graph workdirs and
  // state dirs, team folders...; util/scoped_path.h). Empty: the project
  // folder, the parent of the store's ".baton" folder (else the store's
  // folder). Callers with the grant "paths" may name others; no caller may
  // name the store's own files.
  std::vector<std::string> roots;
  // Check every result against its operation's output schema (a defect
  // detector: a mismatch is Internal). On in tests and Debug builds, or with
  // BATON_CHECK_OUTPUT=1; it costs a validation per call.
  bool validate_output = DefaultValidateOutput();
  // What operations see as "now" (ledger times, lease expiries, how long an
  // agent has been silent). Null: the system clock. Waits (mail.wait,
  // question.wait) keep the system clock: they sleep on it.
  const TimeSource* time = nullptr;
  // Wraps the store when it is opened (tests: tests/testing/fault_store.h makes
  // commits fail on purpose). Unset: the store as opened.
  std::function<std::unique_ptr<Store>(std::unique_ptr<Store>)> wrap_store;
  // How long a waiter sleeps before reading the store again when nothing
  // woke it. 0: a quarter second, or a second while the store's change bell
  // listens (ops/doorbell.h). Tests set it high to show what wakes them.
  int change_poll_ms = 0;
  // 0: a write rewrites the mirrors it made due before Call returns (one CLI
  // command). Above 0: a thread rewrites them, each at most once per this
  // many milliseconds, and at open those a stopped process left behind
  // (ops/mirror_queue.h; `baton serve` and `baton mcp`).
  int mirror_delay_ms = 0;
  // With mirror_delay_ms 0: starts a background `baton flush-mirrors`
  // (FlushMirrors below) that rewrites the large mirrors a write made due
  // (kHandOffMirrorsFromBytes), instead of rendering them before the write
  // returns. Unset, or an error (it could not be started), and they are
  // rendered here. The CLI's starts its own binary (SpawnDetached).
  std::function<Status()> start_background_flush;
  // The operations, when the caller has them already (made by
  // RegisterCoreOps; the CLI built them to parse its verb); null: made here.
  std::shared_ptr<const Registry> registry;

  static bool DefaultValidateOutput();
};

class Api {
 public:
  static Result<std::unique_ptr<Api>> Open(const ApiOptions& options);
  ~Api();

  Result<Json> Call(std::string_view op, const Json& input, const Actor& actor);
  // The same; a procedure reports its progress lines to "progress".
  using ProgressFn = std::function<void(const std::string&)>;
  Result<Json> Call(std::string_view op, const Json& input, const Actor& actor,
                    const ProgressFn& progress);

  const Registry& registry() const { return *registry_; }
  const MachineSet& machines() const { return *machines_; }
  // The roots and store callers' paths are checked against.
  const PathScope& paths() const { return paths_; }
  const TimeSource& time() const { return options_.time ? *options_.time : SystemTime(); }
  // Opens the store now if no call has yet (Call opens it on first use, and
  // again after a failed commit: engine/ledger/writer.h).
  Status EnsureStore();
  WriterStats writer_stats() const;
  // How many times commits made a mirror due, and how many rewrites ran.
  MirrorStats mirror_stats() const;

  // Writes the mirrors that are due, finishes the batch in flight and
  // refuses further writes (Unavailable).
  void Shutdown();

  // Rewrites every bound mirror whose file is behind its run (MirrorsBehind)
  // and answers {"written": [paths], "failed": [{"path", "error"}]} (each
  // failure also reported as mirror.failed). Callers on one SQLite store take
  // turns (a lock beside it), so a call that returns has seen every commit
  // made before it started. "background": a hand-off's (see
  // start_background_flush): it answers at once, writing nothing, when another is
  // already waiting for its turn — that one's turn starts later, so it
  // will see what this one would have.
  Result<Json> FlushMirrors(bool background);

  // Sleeps until a write may have committed — at once for writes made
  // through this Api or rung by another server on the same database, else
  // at most change_poll_millis() later — or until "deadline_ms" (NowMillis
  // time). "*seen" is the change count the caller last saw and is updated.
  // False once the deadline has passed.
  bool WaitForChange(uint64_t* seen, int64_t deadline_ms);
  // How long WaitForChange sleeps at most (ApiOptions::change_poll_ms).
  int64_t change_poll_millis();
  // The change bell's counts; all zero for a store without one.
  DoorbellStats doorbell_stats() const;
  // Starts listening for other servers' commits now (`baton serve` does at
  // start), rather than with the first commit or wait; opens the store.
  Status HearOtherServers();

  // Whether this process leads the work that must run in one process at a
  // time on this store (store.h Lead): taken when free, kept until the Api
  // closes or its connection is lost. For `baton serve`'s chores.
  Result<bool> HoldLead();
  // How many threads are asleep in WaitForChange now: a test acts once a
  // waiter is waiting instead of sleeping and hoping.
  int waiters() const;

 private:
  Api() = default;
  struct OpenStore;
  Result<Json> RunWrite(const OpenStore& open, const Operation& op, const Json& input,
                        const Actor& actor);
  Result<Json> RunRead(const OpenStore& open, const Operation& op, const Json& input,
                       const Actor& actor);
  Result<Json> RunWithoutStore(const Operation& op, const Json& input, const Actor& actor);
  Result<Json> RunProcedure(const Operation& op, const Json& input, const Actor& actor,
                            const ProgressFn& progress);
  // An agent or coordinator whose id agent.register would take.
  bool MayRegisterOnFirstCall(const Actor& actor) const;
  // Rewrites the seed-file mirrors a commit made due; a failure is reported
  // (mirror.report), never returned: the commit stands.
  void WriteMirrors(Store& store, const std::vector<MirrorTarget>& mirrors);
  // Of the mirrors a write made due, those a background flush will find
  // behind and may be left to (ApiOptions::start_background_flush).
  static std::set<std::string> LargeMirrorsToHandOff(
      Txn& txn, const std::vector<MirrorTarget>& mirrors,
      const std::set<std::string>& runs_without_event);
  // One of them; answers its write's error (OK too when it was unbound or
  // bound elsewhere meanwhile), which has been reported already.
  Status WriteReportedMirror(Store& store, const MirrorTarget& mirror);
  // The mirror thread's work: "mirror" rewritten from the open store.
  void WriteQueuedMirror(const MirrorTarget& mirror);
  // false: the path no longer mirrors that run in that format. Sets
  // "*last_error" to the binding's stored error when it reads it.
  Result<bool> WriteMirror(Store& store, const MirrorTarget& mirror, std::string* last_error);
  // After a commit through this Api: wakes its waiters and rings the other
  // servers'.
  void NoteChange();
  // Wakes this Api's waiters.
  void Wake();
  // The doorbell, made with the first commit or wait once the store is open
  // and has a change bell; null otherwise.
  Doorbell* Bell();
  // The ledger heads the bound mirrors carry (engine/ledger/witness.h),
  // read on "conn".
  static std::vector<Witness> MirrorWitnesses(Connection& conn);
  // The bound mirrors a stopped process left behind their runs (MirrorsBehind).
  Result<std::vector<MirrorTarget>> MirrorsBehindIn(Store& store);
  class Runner;
  // The store and writer calls use: taken under open_mu_, opening them when
  // none is open. A call in flight keeps its pair alive across a reopen.
  struct OpenStore {
    std::shared_ptr<Store> store;
    std::shared_ptr<Writer> writer;  // null: writes are refused with writer_error
    const StoreInfo* info;  // info_: written with store_, once
    Status writer_error;
  };
  // The store, opened on first use, and its writer ("with_writer": made on
  // first use too; a read leaves it unmade, so a one-shot read opens one
  // connection and runs no writer check).
  Result<OpenStore> Opened(bool with_writer = true);
  // After "failed" latched (engine/ledger/writer.h): drops it, so that the
  // next call opens a writer on a new connection, which checks the store as
  // at start-up. Does nothing when another call already did.
  void DropFailedWriter(const Writer* failed);
  Result<std::unique_ptr<Connection>> AcquireReader(Store& store);
  // Puts "conn" back in the pool, unless it is broken() or the pool is full.
  void ReleaseReader(std::unique_ptr<Connection> conn);
  // Closes every idle reader: after one was found dropped by its server,
  // the others opened before are suspect too.
  void DropIdleReaders();

  ApiOptions options_;
  PathScope paths_;  // set by Open, then read-only
  std::shared_ptr<const MachineSet> machines_;
  std::shared_ptr<const Registry> registry_;

  mutable Mutex open_mu_;
  bool shut_down_ GUARDED_BY(open_mu_) = false;
  // Null until the first call; the writer again after a failed commit
  // latched it (DropFailedWriter). Calls take copies through Opened().
  std::shared_ptr<Store> store_ GUARDED_BY(open_mu_);
  std::shared_ptr<Writer> writer_ GUARDED_BY(open_mu_);
  StoreInfo info_;  // written once, with store_ and under open_mu_; then read-only

  // Bumped after every committed write, to wake procedures that wait.
  mutable Mutex change_mu_;
  CondVar change_cv_;
  uint64_t change_seq_ GUARDED_BY(change_mu_) = 0;
  int waiters_ GUARDED_BY(change_mu_) = 0;

  Mutex pool_mu_;
  std::vector<std::unique_ptr<Connection>> readers_ GUARDED_BY(pool_mu_);

  Mutex lead_mu_;
  std::unique_ptr<Lead> lead_ GUARDED_BY(lead_mu_);  // opened by the first HoldLead

  // Counts for mirror_stats() when there is no queue (mirror_delay_ms 0).
  std::atomic<int64_t> mirrors_due_{0};
  std::atomic<int64_t> mirrors_written_{0};

  // Made with the store when its backend has a change bell; declared last,
  // so its thread, which calls Wake, stops before the members Wake uses go.
  std::unique_ptr<Doorbell> doorbell_owner_ GUARDED_BY(open_mu_);
  std::atomic<Doorbell*> doorbell_{nullptr};  // doorbell_owner_, for any thread
  std::atomic<bool> no_bell_{false};          // the store has none
  // With mirror_delay_ms above 0; stopped first when the Api closes, as its
  // thread writes through the members above.
  std::unique_ptr<MirrorQueue> mirror_queue_;
};

// Registers every operation in "registry": the engine's hooks at once, and
// each family of operations (CoreFamilies) to be added when first asked for.
Status RegisterCoreOps(Registry& registry);
const std::vector<OpFamily>& CoreFamilies();

}  // namespace baton

#endif  // BATON_SRC_OPS_API_H_
