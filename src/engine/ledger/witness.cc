#include "engine/ledger/witness.h"

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/ledger/archive.h"
#include "engine/ledger/ledger.h"
#include "store/tables/event_table.h"
#include "store/tables/ledger_head_table.h"
#include "util/atomic_file.h"
#include "util/sha256.h"

namespace baton {
namespace {

std::string Range(int64_t from, int64_t to) {
  return from == to ? std::to_string(from) : std::to_string(from) + ".." + std::to_string(to);
}

struct Loss {
  int64_t from = 0;
  int64_t to = 0;
};

// The ranges earlier `baton store accept-loss` calls gave up on.
Result<std::vector<Loss>> AcceptedLosses(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<std::string> payloads,
                   ListEventPayloadsOfKind(txn, kLossAcceptedKind));
  std::vector<Loss> out;
  for (const std::string& payload : payloads) {
    Json p = Json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (!p.is_object()) continue;
    out.push_back({p.value("from", int64_t{0}), p.value("to", int64_t{0})});
  }
  return out;
}

bool Covered(const std::vector<Loss>& losses, int64_t seq) {
  for (const Loss& l : losses) {
    if (seq >= l.from && seq <= l.to) return true;
  }
  return false;
}

// What a witness says is missing: nullopt when the store holds what it saw.
struct Gap {
  int64_t from = 0;
  int64_t to = 0;
  bool diverged = false;  // the seq is present with another hash
  std::string found_hash;
};

// What the store holds that a witness is checked against, read once for
// all of them.
struct Held {
  LedgerHead head;
  std::vector<Loss> losses;
  ChainStart start;  // events before start.seq are archived
};

Result<Held> LoadHeld(Txn& txn) {
  Held held;
  ASSIGN_OR_RETURN(held.head, LedgerHeadNow(txn));
  ASSIGN_OR_RETURN(held.losses, AcceptedLosses(txn));
  ASSIGN_OR_RETURN(held.start, LoadChainStart(txn));
  return held;
}

Result<std::optional<Gap>> GapOf(Txn& txn, const Held& held, const Witness& w) {
  const LedgerHead& head = held.head;
  const ChainStart& start = held.start;
  if (w.head.seq <= 0 || Covered(held.losses, w.head.seq)) return std::optional<Gap>();
  if (w.head.seq > head.seq) return std::optional<Gap>(Gap{head.seq + 1, w.head.seq});
  std::optional<std::string> hash;
  if (w.head.seq < start.seq) {
    // Archived. A mirror's witness (a run finished long ago) is left to
    // `verify --archive`; the store's own witness file is rewritten by every
    // commit, the archive's included, so one this old means another store
    // (or a forged anchor): its event must be in the archive as witnessed.
    if (!w.beside_store) return std::optional<Gap>();
    ASSIGN_OR_RETURN(hash, ArchivedEventHash(txn, w.head.seq));
  } else {
    ASSIGN_OR_RETURN(hash, FindEventHash(txn, w.head.seq));
  }
  if (!hash) {
    // Removed from the middle: the chain check names it; here it is a gap.
    return std::optional<Gap>(Gap{w.head.seq, w.head.seq});
  }
  if (*hash == w.head.hash) return std::optional<Gap>();
  return std::optional<Gap>(Gap{w.head.seq, w.head.seq, true, *hash});
}

Status GapError(const Gap& g, const Witness& w, const LedgerHead& head) {
  Json details = {{"from", g.from},
                  {"to", g.to},
                  {"witness_seq", w.head.seq},
                  {"witness_hash", w.head.hash},
                  {"source", w.source},
                  {"head_seq", head.seq}};
  std::string msg;
  if (g.diverged) {
    details["found_hash"] = g.found_hash;
    msg = "the store's event " + std::to_string(g.from) + " differs from the one acknowledged (" +
          w.source + " records hash " + w.head.hash + ", the ledger holds " + g.found_hash + ")";
  } else {
    msg = "the store is missing events " + Range(g.from, g.to) + " that were acknowledged (" +
          w.source + " records seq " + std::to_string(w.head.seq) + "; the ledger ends at seq " +
          std::to_string(head.seq) + ")";
  }
  msg +=
      "; writes are refused until an admin runs `baton store accept-loss`, which records "
      "the loss in the ledger (reads keep working)";
  return Status(StatusCode::kDataLoss, msg, details);
}

}  // namespace

Result<LedgerHead> LedgerHeadNow(Txn& txn) {
  ASSIGN_OR_RETURN(std::optional<LedgerHeadRow> head, LoadLedgerHeadRow(txn));
  if (!head) return LedgerHead{0, kGenesisHash};
  return LedgerHead{head->seq, head->hash};
}

void WriteMirrorHead(int fd, const LedgerHead& head) {
  if (head.seq <= 0) return;
  const std::string value = std::to_string(head.seq) + " " + head.hash;
  // ENOTSUP (a filesystem without user attributes) leaves the mirror without
  // it: the witness file beside the store still stands.
  (void)::fsetxattr(fd, kMirrorHeadAttribute, value.data(), value.size(), 0);
}

std::optional<Witness> ReadMirrorHead(const std::string& path) {
  char value[160];
  const ssize_t n = ::lgetxattr(path.c_str(), kMirrorHeadAttribute, value, sizeof value);
  if (n <= 0) return std::nullopt;
  std::istringstream in(std::string(value, static_cast<size_t>(n)));
  Witness w{path, {}};
  if (!(in >> w.head.seq >> w.head.hash) || w.head.seq <= 0 || w.head.hash.size() != 64) {
    return std::nullopt;
  }
  return w;
}

std::string WitnessPath(const std::string& store_file) {
  return store_file.empty() ? "" : store_file + ".head";
}

namespace {

constexpr size_t kRecordBytes = 160;

// Guards against a record read while another process rewrites it in place.
std::string RecordCheck(int64_t seq, const std::string& hash) {
  return Sha256Hex(std::to_string(seq) + ":" + hash).substr(0, 16);
}

// Why a symbolic link at a witness's path is neither read nor written.
constexpr char kWitnessSymlink[] =
    ": is a symbolic link; a witness is never read or written through one (remove it)";

}  // namespace

Result<std::optional<Witness>> ReadWitnessFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) {
    return DataLossError("ledger witness " + path + kWitnessSymlink);
  }
  if (!std::filesystem::exists(path, ec) && !ec) return std::optional<Witness>();
  std::string why = "cannot be read";
  // A read racing a rewrite may see a torn record: the check says so, and a
  // second read sees the whole one.
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      why = std::string("cannot be read: ") + std::strerror(errno);
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    Json j = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("seq") && j["seq"].is_number_integer() && j.contains("hash") &&
        j["hash"].is_string() && j.contains("check") &&
        j["check"] == RecordCheck(j["seq"].get<int64_t>(), j["hash"].get<std::string>())) {
      return std::optional<Witness>(
          Witness{path, LedgerHead{j["seq"].get<int64_t>(), j["hash"].get<std::string>()},
                  /*beside_store=*/true});
    }
    why = "is not a witness record {\"check\", \"hash\", \"seq\"}";
  }
  return DataLossError("ledger witness " + path + ": " + why);
}

WitnessFile::~WitnessFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status WitnessFile::Write(const LedgerHead& head) {
  std::string text = CanonicalJson(
      Json{{"seq", head.seq}, {"hash", head.hash}, {"check", RecordCheck(head.seq, head.hash)}});
  if (text.size() + 1 > kRecordBytes) return InternalError("ledger witness: record too long");
  text.resize(kRecordBytes - 1, ' ');
  text += '\n';
  // Rewritten in place, no fsync: a rename per batch costs a journal flush
  // (about a millisecond on ext4), a pwrite a microsecond. It is written
  // after the commit, so it is never ahead of a store that kept its commits.
  if (fd_ >= 0 && !SameFileAtPath(fd_, path_)) {
    ::close(fd_);
    fd_ = -1;
  }
  const bool opened = fd_ < 0;
  if (opened) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) {
      const std::string why =
          errno == ELOOP ? kWitnessSymlink : std::string(": open: ") + std::strerror(errno);
      return InternalError("ledger witness " + path_ + why);
    }
  }
  const ssize_t n = ::pwrite(fd_, text.data(), text.size(), 0);
  const int saved = errno;
  // A file found longer (written by hand, another version) loses its tail.
  const bool ok = n == static_cast<ssize_t>(text.size()) &&
                  (!opened || ::ftruncate(fd_, kRecordBytes) == 0);
  if (!ok) {
    ::close(fd_);
    fd_ = -1;
    return InternalError("ledger witness " + path_ + ": write: " + std::strerror(saved));
  }
  return Status();
}

Status CheckWitnesses(Txn& txn, const std::vector<Witness>& witnesses) {
  if (witnesses.empty()) return Status();
  ASSIGN_OR_RETURN(Held held, LoadHeld(txn));
  for (const Witness& w : witnesses) {
    ASSIGN_OR_RETURN(std::optional<Gap> gap, GapOf(txn, held, w));
    if (gap) return GapError(*gap, w, held.head);
  }
  return Status();
}

Result<Json> AcceptLoss(OpContext& ctx, const std::vector<Witness>& witnesses, int64_t through) {
  ASSIGN_OR_RETURN(Held held, LoadHeld(ctx.txn));
  const LedgerHead& head = held.head;
  Gap total;
  const Witness* source = nullptr;
  for (const Witness& w : witnesses) {
    ASSIGN_OR_RETURN(std::optional<Gap> gap, GapOf(ctx.txn, held, w));
    if (!gap) continue;
    if (source == nullptr || gap->from < total.from) total.from = gap->from;
    if (source == nullptr || gap->to > total.to) {
      total.to = gap->to;
      source = &w;
    }
  }
  if (through > head.seq && (source == nullptr || through > total.to)) {
    if (source == nullptr) total.from = head.seq + 1;
    total.to = through;
  }
  if (source == nullptr && through <= head.seq) {
    return FailedPreconditionError(
        "nothing to accept: no witness is ahead of the store (the ledger ends at seq " +
        std::to_string(head.seq) + ")");
  }
  Json payload = {{"from", total.from},
                  {"to", total.to},
                  {"head_seq", head.seq},
                  {"witness_seq", source != nullptr ? source->head.seq : through},
                  {"witness_hash", source != nullptr ? source->head.hash : ""},
                  {"source", source != nullptr ? source->source : "through"}};
  ASSIGN_OR_RETURN(int64_t seq, AppendEvent(ctx, {.kind = kLossAcceptedKind,
                                                  .summary = "loss of acknowledged events " +
                                                             Range(total.from, total.to) +
                                                             " accepted by " + ctx.actor.id,
                                                  .payload = payload}));
  payload["seq"] = seq;
  return payload;
}

}  // namespace baton
