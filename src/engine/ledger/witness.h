// File: witness.h
//
// Witnesses of the ledger's head outside the database (docs/security-integrity.md).
// A store whose newest commits vanished — a truncated or deleted -wal file, a
// restored older copy — still verifies: the chain it keeps is whole, only
// shorter. A witness remembers how far the ledger had come when a write was
// acknowledged:
//
//   * the writer rewrites "<store>.head" (baton.db.head beside baton.db)
//     after every committed batch, before it answers the batch's callers;
//   * seed-file mirrors may carry the head too (LedgerHeadNow gives it;
//     CheckWitnesses takes their heads).
//
// A store behind a witness refuses writes with DataLoss "the store is missing
// events N..M that were acknowledged" until `baton store accept-loss` records
// the loss in the ledger (event kind "store.loss_accepted", payload {from,
// to, witness_seq, witness_hash, source}). Reads keep working.

#ifndef BATON_SRC_ENGINE_LEDGER_WITNESS_H_
#define BATON_SRC_ENGINE_LEDGER_WITNESS_H_

#ifndef BATON_ENGINE_ROOM_LEDGER
#error "engine/ledger/ is above this target: link baton_engine_ledger (src/engine/README.md)"
#endif

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/ledger/op_context.h"
#include "store/store.h"
#include "util/json_util.h"

namespace baton {

inline constexpr char kLossAcceptedKind[] = "store.loss_accepted";

struct LedgerHead {
  int64_t seq = 0;  // 0: no events yet
  std::string hash;
};

// A head recorded somewhere outside the database; "source" names where (a
// file path) for the messages.
struct Witness {
  std::string source;
  LedgerHead head;
  // The file beside the store, rewritten after every commit: never older
  // than an archive made in this store, so one that is older is proved from
  // the archive (a mirror's, older than the anchor, is left to the archive).
  bool beside_store = false;
};

// The ledger's head as the store records it (ledger_head), in "txn".
Result<LedgerHead> LedgerHeadNow(Txn& txn);

// "<store_file>.head", or "" when "store_file" is "" (a store in memory has
// no witness file).
std::string WitnessPath(const std::string& store_file);

// The witness file at "path": nullopt when there is none; DataLoss naming the
// path when it exists but holds no whole record (read three times).
Result<std::optional<Witness>> ReadWitnessFile(const std::string& path);

// The witness file a writer keeps: Write rewrites it in place, one
// fixed-size record {seq, hash, check} (check: a digest of seq and hash, so
// that a record read while it is rewritten is known torn), without rename
// or fsync. A killed process leaves it whole (the page cache survives);
// after a power cut it may name an older head or be unreadable, which
// weakens the check but never accuses a store that kept its commits (see
// docs/security-integrity.md). The file stays open between writes, so a
// commit costs a pwrite and two stats; it is opened again when the file
// held is no longer the one at its path (removed, moved away, or another
// renamed over it), and a symbolic link at the path is refused, not
// followed.
class WitnessFile {
 public:
  explicit WitnessFile(std::string path) : path_(std::move(path)) {}
  ~WitnessFile();
  WitnessFile(const WitnessFile&) = delete;
  WitnessFile& operator=(const WitnessFile&) = delete;

  const std::string& path() const { return path_; }
  Status Write(const LedgerHead& head);

 private:
  const std::string path_;
  int fd_ = -1;
};

// Seed-file mirrors carry the head they were rendered at in the extended
// attribute "user.baton.head" ("<seq> <hash>"), so their text stays exactly
// what the seed system writes. WriteMirrorHead sets it on the open file
// "fd"; ReadMirrorHead reads it from "path" without following a symlink:
// nullopt when the file, the attribute or xattr support is missing, or the
// value is not a head. Neither is an error: a mirror is a second witness.
inline constexpr char kMirrorHeadAttribute[] = "user.baton.head";
void WriteMirrorHead(int fd, const LedgerHead& head);
std::optional<Witness> ReadMirrorHead(const std::string& path);

// OK when the store holds every event each witness saw: the event at the
// witness's seq exists with the witness's hash, or an accepted loss covers
// that seq. Otherwise DataLoss: "the store is missing events N..M that were
// acknowledged" (details: from, to, witness_seq, witness_hash, source), or
// "... event N differs from the one acknowledged" when the seq is present
// with another hash. Read the witnesses BEFORE beginning "txn": a witness
// is written after its commit, so one read first is never ahead of the store
// unless events were lost.
Status CheckWitnesses(Txn& txn, const std::vector<Witness>& witnesses);

// The event an admin's `baton store accept-loss` appends: records the loss
// the witnesses show (up to at least seq "through", when given) and returns
// {from, to, witness_seq, witness_hash, source, seq}. FailedPrecondition
// when no witness is ahead of the store and "through" does not reach past
// its head. The caller's writer rewrites the witness file after the commit.
Result<Json> AcceptLoss(OpContext& ctx, const std::vector<Witness>& witnesses, int64_t through);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_LEDGER_WITNESS_H_
