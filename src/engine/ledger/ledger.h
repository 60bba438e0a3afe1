// File: ledger.h
//
// The ledger (DESIGN.md §5): one append-only, hash-chained list of events per
// store. Every mutation appends its events in the same transaction as the
// change, so an event exists exactly when its change does. seq is gap-free
// (1, 2, 3, ...); hash = SHA-256 over the canonical JSON of the event, which
// includes prev_hash. A one-row table, ledger_head, holds the last seq and
// hash so that removing the newest rows is detected too. The hashed form is
// described in docs/impl.md "Ledger".

#ifndef BATON_SRC_ENGINE_LEDGER_LEDGER_H_
#define BATON_SRC_ENGINE_LEDGER_LEDGER_H_

#ifndef BATON_ENGINE_ROOM_LEDGER
#error "engine/ledger/ is above this target: link baton_engine_ledger (src/engine/README.md)"
#endif

#include <cstdint>
#include <optional>
#include <string>

#include "engine/ledger/op_context.h"
#include "store/tables/event_table.h"

namespace baton {

inline constexpr char kGenesisHash[] =
    "0000000000000000000000000000000000000000000000000000000000000000";

struct EventInput {
  std::string run_id;  // empty when the event is not about a run
  std::string kind;    // "run.status", "task.created", ...
  std::string summary;
  Json payload = Json::object();
  Json files = Json::array();
  Json refs = Json::array();
};

// Appends one event as ctx.actor at ctx.now. Returns its seq.
Result<int64_t> AppendEvent(OpContext& ctx, const EventInput& event);

// The ledger's head through one write transaction: the first AppendEvent
// reads it from the store, the ones after it take it from here, so that a
// group-commit batch reads the head once, not once per operation (on
// PostgreSQL each read is a round trip under the write lock). The writer
// opens one per batch on the thread that runs it; every AppendEvent on that
// thread while it lives uses it. Nothing else may write ledger_head then.
//
//   LedgerHeadScope head;       // batch begins
//   head.Mark();                // before each operation, after its savepoint
//   head.Restore();             // after rolling that operation back
class LedgerHeadScope {
 public:
  LedgerHeadScope();
  ~LedgerHeadScope();
  LedgerHeadScope(const LedgerHeadScope&) = delete;
  LedgerHeadScope& operator=(const LedgerHeadScope&) = delete;

  void Mark() { marked_ = head_; }
  void Restore() { head_ = marked_; }

 private:
  friend Result<int64_t> AppendEvent(OpContext& ctx, const EventInput& event);
  struct Head {
    int64_t seq = 0;  // 0: the ledger is empty
    std::string hash;
  };
  std::optional<Head> head_;    // unset: not read in this transaction yet
  std::optional<Head> marked_;
  LedgerHeadScope* outer_;
};

struct EventFilter {
  std::string run_id;
  std::string kind;      // exact kind, or a prefix ending in "." ("task.")
  int64_t since_seq = 0; // events with seq > since_seq
  int64_t limit = 1000;
  std::string actor_id;  // only this actor's
  // > 0: the newest "limit" events below this seq (still returned in seq
  // order), for paging back from the head.
  int64_t before_seq = 0;
  // false: {seq, time, run_id, actor, kind, summary} only — what a list or
  // a live view shows, without payloads an agent may have made large.
  bool with_payload = true;
};

// Events in seq order as JSON objects {seq, time, run_id, actor{id, role},
// kind, summary, payload, files, refs, prev_hash, hash}.
Result<Json> ListEvents(Txn& txn, const EventFilter& filter);

struct VerifyReport {
  bool ok = true;
  int64_t events = 0;
  int64_t first_broken_seq = 0;  // 0 when ok
  std::string reason;            // why that seq is broken
  std::string head_hash;
};

// Walks the whole chain in seq order, recomputing every hash. Names the first
// seq that was altered, removed or moved. Reads in pages; memory stays flat.
// On an archived ledger (engine/ledger/archive.h) the walk begins at the
// anchor, which must be the one the chain after it records.
Result<VerifyReport> VerifyLedger(Txn& txn);

// The same walk over the newest "count" events only (and the link into them):
// cheap enough for every process that opens the store for writing. Its
// "events" is the seq of the last event; a link or row broken before the
// window is not seen (that is VerifyLedger's job).
Result<VerifyReport> VerifyLedgerTail(Txn& txn, int64_t count);

// The walk from the event after "since" to the end, linked to the stored
// hash of seq "since" (which "anchor" receives), that event's own content
// checked against it: what a verify from a checkpoint checks. A "since" of
// 0 is the whole walk. A seq "since" beyond the chain is NotFound; one
// missing inside it is a broken report; one archived FailedPrecondition
// (the anchor itself is the whole walk).
Result<VerifyReport> VerifyLedgerSince(Txn& txn, int64_t since, std::string* anchor);

// The hash of an event row as stored (exposed for tests and tools).
std::string EventHash(int64_t seq, const std::string& time,
                      const std::string& run_id, const std::string& actor_id,
                      const std::string& actor_role, const std::string& kind,
                      const std::string& summary, const std::string& payload,
                      const std::string& files, const std::string& refs,
                      const std::string& prev_hash);

// The same of a row as read back.
std::string EventRowHash(const EventRow& row);

// Why "row" cannot follow, at seq "expected", the event whose hash is
// "prev" — a seq missing, a broken link, content altered — or "" when it
// follows: the one check of every walk over the chain (the store's and an
// archive's).
std::string EventLinkProblem(const EventRow& row, int64_t expected, const std::string& prev);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_LEDGER_LEDGER_H_
