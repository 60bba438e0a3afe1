// File: archive.h
//
// Bounded growth of the ledger (issue 21, docs/impl.md "Ledger archives"):
// `baton ledger archive --before SEQ|DATE` moves the oldest events out of
// the store into a gzip file of JSON lines, and `baton verify --archive
// FILE` proves that file on its own.
//
// The file (readable with zcat):
//
//   {"baton_ledger_archive":1,"first_seq":1,"through_seq":900000,
//    "prev_hash":"000…","through_hash":"…","events":900000,"created_at":"…"}
//   [1,"2026-11-27T…","run-…","ann","agent","run.created","…","{…}","[]","[]","000…","…"]
//   …                                   one array per event: the stored row
//   {"end":true,"events":900000}
//
// Each event line is the row as the events table held it (payload, files
// and refs as the texts that were hashed), so its hash is recomputed
// exactly, and the lines link by prev_hash from the header's prev_hash to
// its through_hash. A line changed, dropped, added or moved breaks that
// walk at its seq; a file cut short lacks the trailer (and zlib's CRC).
//
// What stays in the store: a ledger_archives row per archive (range, the
// hashes at both ends, the file and its SHA-256) and a "ledger.archived"
// event appended after the cut that records the same. The newest row is the
// anchor: the chain in the store is walked from it, and it must match the
// newest ledger.archived event, which the walk itself proves. The chain has
// no key, so an anchor and its event can be forged together by whoever can
// write the database; the witness file beside the store (witness.h),
// rewritten by every commit, catches that: a witness older than the anchor
// must be found in the archive (ArchivedEventHash). Consecutive archives
// link (one's through_hash is the next's prev_hash).
//
// What never moves: the events of a run that is not in a terminal state of
// its machine, or that has an open question — whatever it may resume, be
// asked or answered from — so the cut stops before the first of them.
// Graph checkpoints stay in their table (any of them may be forked), as do
// all state rows; the archive takes events only.

#ifndef BATON_SRC_ENGINE_LEDGER_ARCHIVE_H_
#define BATON_SRC_ENGINE_LEDGER_ARCHIVE_H_

#ifndef BATON_ENGINE_ROOM_LEDGER
#error "engine/ledger/ is above this target: link baton_engine_ledger (src/engine/README.md)"
#endif

#include <cstdint>
#include <functional>
#include <string>

#include "engine/ledger/op_context.h"
#include "store/tables/event_table.h"
#include "store/tables/ledger_archive_table.h"

namespace baton {

inline constexpr char kArchivedKind[] = "ledger.archived";

struct ArchiveRequest {
  int64_t before_seq = 0;   // > 0: the events below this seq
  std::string before_time;  // or the events before this time (as stored)
  std::string file;         // absolute, checked by the caller; or "":
  std::string beside;       // "<beside>.archive-<first>-<through>.jsonl.gz"
};

struct ArchiveResult {
  LedgerArchiveRow archive;
  int64_t events = 0;
  int64_t bytes = 0;
  // Set when less was archived than asked: which run holds the cut, and why.
  std::string held_by;
};

// Writes events from the anchor on up to the cut to "file" (durably: the
// file is whole and named before the events are deleted, in ctx.txn), then
// deletes them, records the archive and appends the ledger.archived event.
// The part archived is verified on the way (DataLoss naming the seq:
// nothing archived). FailedPrecondition when nothing may be archived,
// naming why; AlreadyExists when "file" exists and is not what a failed
// attempt of this same archive left; InvalidArgument when its folder does
// not exist.
Result<ArchiveResult> ArchiveLedger(OpContext& ctx, const ArchiveRequest& request);

// Where the chain in the store begins: after the anchor, or at seq 1.
struct ChainStart {
  int64_t seq = 1;
  std::string prev_hash;  // the hash event "seq" links to
  bool archived = false;  // an anchor exists
};
Result<ChainStart> LoadChainStart(Txn& txn);

// The anchor's signature: "" when the archives' rows link one to the next
// and the newest matches the newest ledger.archived event; else why not.
Result<std::string> CheckAnchor(Txn& txn);

// The hash of archived event "seq", read from the archive the store records
// for it and proved with it; nullopt when no archive holds it or the file
// is missing or broken.
Result<std::optional<std::string>> ArchivedEventHash(Txn& txn, int64_t seq);

struct ArchiveReport {
  bool ok = true;
  std::string file;
  int64_t first_seq = 0;
  int64_t through_seq = 0;
  int64_t events = 0;      // events verified
  std::string through_hash;
  bool sha256_matches = false;  // the file's bytes are the ones archived
  int64_t first_broken_seq = 0;
  std::string reason;
};

// Proves the archive "file": every line's hash, the links from its
// prev_hash to its through_hash, the trailer, and that the store records
// an archive of that range ending on that hash. "each" (may be empty) sees
// every event that passed, in order. An unreadable or foreign file is an
// error (naming it); a broken one a report with ok false.
Result<ArchiveReport> VerifyArchiveFile(Txn& txn, const std::string& file,
                                        const std::function<void(const EventRow&)>& each = {});

}  // namespace baton

#endif  // BATON_SRC_ENGINE_LEDGER_ARCHIVE_H_
