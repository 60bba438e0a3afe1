// File: event_table.h
//
// The events table: the ledger's append-only, hash-chained rows
// (engine/ledger/ledger.h, DESIGN.md §5). The ledger appends one row per
// event on every write (a hot path: each statement here is one fixed text,
// so the backend's cache of prepared statements keeps it), lists them for
// event.list, and reads them back by seq or range to verify the chain, to
// replay it against the state tables, and to check a witness. The last
// event's seq and hash also live in ledger_head (ledger_head_table.h).
// Portable SQL (? placeholders), so a second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_EVENT_TABLE_H_
#define BATON_SRC_STORE_TABLES_EVENT_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// One events row as stored: the JSON columns (payload, files, refs) are the
// texts the ledger hashed, not parsed. "run_id" is nullopt for NULL.
struct EventRow {
  int64_t seq = 0;
  std::string time;
  std::optional<std::string> run_id;
  std::string actor_id;
  std::string actor_role;
  std::string kind;
  std::string summary;
  std::string payload;
  std::string files;
  std::string refs;
  std::string prev_hash;
  std::string hash;
};

// Inserts "event" as a new row (seq is the caller's: the head's plus one).
Status InsertEventRow(Txn& txn, EventRow event);

// event.list's filter: every field that is set narrows the list.
struct EventRowFilter {
  int64_t since_seq = 0;   // seq > since_seq
  std::string run_id;      // "" = any run
  std::string kind;        // "" = any; an exact kind, or a prefix ending in "."
  std::string actor_id;    // "" = any actor
  int64_t before_seq = 0;  // > 0: the newest "limit" rows below this seq
  int64_t limit = 1000;
  // false: only seq, time, run_id, actor_id, actor_role, kind and summary are
  // read; the other fields of each row are left empty.
  bool with_payload = true;
};

// The rows matching "filter", in seq order (with before_seq too).
Result<std::vector<EventRow>> ListEventRows(Txn& txn, const EventRowFilter& filter);

// Every column of the rows with seq >= "first", in seq order, at most
// "limit": one page of the chain walk.
Result<std::vector<EventRow>> LoadEventRowsFrom(Txn& txn, int64_t first, int64_t limit);

// What the replay reads of an event: seq, run_id (nullopt for NULL), kind
// and the payload text.
struct EventBrief {
  int64_t seq = 0;
  std::optional<std::string> run_id;
  std::string kind;
  std::string payload;
};

// The rows with seq > "after", in seq order, at most "limit".
Result<std::vector<EventBrief>> LoadEventBriefsAfter(Txn& txn, int64_t after, int64_t limit);

// The stored hash of event "seq"; nullopt when there is no such row.
Result<std::optional<std::string>> FindEventHash(Txn& txn, int64_t seq);

// The highest seq stored; 0 when there is none.
Result<int64_t> MaxEventSeq(Txn& txn);

// The seq of run "run_id"'s newest event that makes its mirrors due (any
// kind but mirror.failed and mirror.recovered); 0 when it has none.
Result<int64_t> LastMirroredEventSeq(Txn& txn, const std::string& run_id);

// The payload texts of every event of "kind", in seq order.
Result<std::vector<std::string>> ListEventPayloadsOfKind(Txn& txn, const std::string& kind);

// How many events follow seq "after", and how many of them are of "kind".
struct EventCount {
  int64_t total = 0;
  int64_t of_kind = 0;
};
Result<EventCount> CountEventsAfter(Txn& txn, int64_t after, const std::string& kind);

// ---- What `baton ledger archive` asks (engine/ledger/archive.h) ----

// The seq of run "run_id"'s first event still stored; 0 when it has none.
Result<int64_t> FirstEventSeqOfRun(Txn& txn, const std::string& run_id);

// The seq of the first event at or after "time" (RFC 3339 UTC, as stored),
// walking from the oldest; 0 when none is.
Result<int64_t> FirstEventSeqAtOrAfter(Txn& txn, const std::string& time);

// The newest event of "kind"; nullopt when there is none.
Result<std::optional<EventRow>> NewestEventOfKind(Txn& txn, const std::string& kind);

// Removes every event with seq <= "through"; how many went.
Result<int64_t> DeleteEventsThrough(Txn& txn, int64_t through);

// ---- What engine/core asks for runs, questions, approvals and projects ----

// How many progress notes (events of kind run.progress) run "run_id" has.
Result<int64_t> CountRunProgressEvents(Txn& txn, const std::string& run_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_EVENT_TABLE_H_
