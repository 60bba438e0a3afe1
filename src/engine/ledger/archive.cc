#include "engine/ledger/archive.h"

#include <filesystem>
#include <optional>
#include <set>
#include <vector>

#include "engine/ledger/ledger.h"
#include "engine/ledger/witness.h"
#include "store/tables/ledger_head_table.h"
#include "store/tables/question_table.h"
#include "store/tables/run_table.h"
#include "util/atomic_file.h"
#include "util/gzip.h"

namespace baton {
namespace {

constexpr int64_t kPage = 2000;
constexpr int kGzipLevel = 1;  // the fastest: ~4× smaller than the rows already
// A line holds one event; the largest payload an operation accepts is far
// below this.
constexpr size_t kMaxLine = 64 << 20;
constexpr int kFormat = 1;

// One event as its archive line: the stored row, as a JSON array.
void AppendEventLine(const EventRow& e, std::string* out) {
  *out += '[';
  *out += std::to_string(e.seq);
  *out += ',';
  AppendJsonString(e.time, out);
  *out += ',';
  if (e.run_id) {
    AppendJsonString(*e.run_id, out);
  } else {
    *out += "null";
  }
  for (const std::string* field : {&e.actor_id, &e.actor_role, &e.kind, &e.summary, &e.payload,
                                   &e.files, &e.refs, &e.prev_hash, &e.hash}) {
    *out += ',';
    AppendJsonString(*field, out);
  }
  *out += "]\n";
}

// Reads an archive line back byte for byte: JSON, but the strings are the
// stored texts, which need not be valid UTF-8 (an actor id is whatever the
// caller sent), so a JSON library that insists on UTF-8 cannot read them.
class LineReader {
 public:
  explicit LineReader(std::string_view line) : s_(line) {}

  bool Eat(char c) {
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  bool AtEnd() const { return i_ == s_.size(); }

  bool Int(int64_t* out) {
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    const size_t digits = i_ - start - (s_[start] == '-' ? 1 : 0);
    if (digits == 0 || digits > 18) return false;
    *out = std::stoll(std::string(s_.substr(start, i_ - start)));
    return true;
  }

  bool Null() {
    if (s_.substr(i_, 4) != "null") return false;
    i_ += 4;
    return true;
  }

  bool Str(std::string* out) {
    if (!Eat('"')) return false;
    out->clear();
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return false;
      switch (const char e = s_[i_++]) {
        case '"': case '\\': case '/': out->push_back(e); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          if (i_ + 4 > s_.size()) return false;
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k) {
            const char h = s_[i_++];
            cp <<= 4;
            if (h >= '0' && h <= '9') cp |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') cp |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') cp |= static_cast<unsigned>(h - 'A' + 10);
            else return false;
          }
          // What AppendJsonString writes is below 0x20; anything else is an
          // edit, which the hash judges once it is read as UTF-8.
          if (cp >= 0xd800 && cp <= 0xdfff) return false;
          if (cp < 0x80) {
            out->push_back(static_cast<char>(cp));
          } else if (cp < 0x800) {
            out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
          } else {
            out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
            out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
          }
          break;
        }
        default: return false;
      }
    }
    return false;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

// The event an archive line holds; nullopt when the line is not one.
std::optional<EventRow> EventOfLine(std::string_view line) {
  LineReader in(line);
  EventRow r;
  if (!in.Eat('[') || !in.Int(&r.seq) || !in.Eat(',') || !in.Str(&r.time) || !in.Eat(',')) {
    return std::nullopt;
  }
  if (!in.Null()) {
    std::string run_id;
    if (!in.Str(&run_id)) return std::nullopt;
    r.run_id = std::move(run_id);
  }
  for (std::string* field : {&r.actor_id, &r.actor_role, &r.kind, &r.summary, &r.payload,
                             &r.files, &r.refs, &r.prev_hash, &r.hash}) {
    if (!in.Eat(',') || !in.Str(field)) return std::nullopt;
  }
  if (!in.Eat(']') || !in.AtEnd()) return std::nullopt;
  return r;
}

bool SameRow(const EventRow& a, const EventRow& b) {
  return a.seq == b.seq && a.time == b.time && a.run_id == b.run_id && a.actor_id == b.actor_id &&
         a.actor_role == b.actor_role && a.kind == b.kind && a.summary == b.summary &&
         a.payload == b.payload && a.files == b.files && a.refs == b.refs &&
         a.prev_hash == b.prev_hash && a.hash == b.hash;
}

// An integer member of "j", or nullopt when it is missing or not one.
std::optional<int64_t> IntMember(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::optional<std::string> TextMember(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// The last seq the request may archive, before the runs that must stay.
Result<int64_t> RequestedThrough(Txn& txn, const ArchiveRequest& request, int64_t head_seq) {
  if (request.before_seq > 0) return std::min(request.before_seq - 1, head_seq);
  ASSIGN_OR_RETURN(const int64_t first_after, FirstEventSeqAtOrAfter(txn, request.before_time));
  return first_after == 0 ? head_seq : first_after - 1;
}

// Lowers "through" below the first stored event of every run an open run,
// resume or question still needs; "held_by" says which held it lowest.
Status KeepWhatIsNeeded(OpContext& ctx, int64_t* through, std::string* held_by) {
  std::set<std::string> keep;
  std::map<std::string, std::string> why;
  ASSIGN_OR_RETURN(std::vector<RunMachineStatus> runs, ListRunMachineStatuses(ctx.txn));
  for (const RunMachineStatus& r : runs) {
    const Machine* m = ctx.machines.Find(r.machine);
    if (m != nullptr && m->IsTerminal(r.status)) continue;
    keep.insert(r.id);
    why[r.id] = "is " + r.status + ", not finished";
  }
  ASSIGN_OR_RETURN(std::vector<std::string> asking, ListRunsAwaitingQuestions(ctx.txn));
  for (const std::string& id : asking) {
    if (keep.insert(id).second) why[id] = "has an open question";
  }
  for (const std::string& id : keep) {
    ASSIGN_OR_RETURN(const int64_t first, FirstEventSeqOfRun(ctx.txn, id));
    if (first == 0 || first > *through) continue;
    *through = first - 1;
    *held_by = "run " + id + " " + why[id] + ": its events from seq " + std::to_string(first) +
               " stay in the store";
  }
  // An accepted loss is what lets a witness inside its range pass
  // (witness.h); it stays while that range reaches past the cut.
  ASSIGN_OR_RETURN(std::vector<EventRow> losses,
                   ListEventRows(ctx.txn, {.kind = kLossAcceptedKind, .limit = int64_t{1} << 40}));
  for (const EventRow& e : losses) {
    const Json p = Json::parse(e.payload, nullptr, /*allow_exceptions=*/false);
    if (e.seq > *through || IntMember(p, "to").value_or(0) <= *through) continue;
    *through = e.seq - 1;
    *held_by = "the accepted loss at seq " + std::to_string(e.seq) +
               " covers events past the cut: it stays in the store";
  }
  return Status();
}

// Writes the archive file: verifies each event on the way.
Result<std::string> WriteArchive(Txn& txn, const std::string& file, const LedgerArchiveRow& a,
                                 const std::string& now, int64_t* bytes) {
  std::string sha256;
  Status written = WriteFileAtomicallyBy(file, [&](const FileWrite& write) -> Status {
    GzipWriter gz(write, kGzipLevel);
    const Json header = {{"baton_ledger_archive", kFormat},  {"first_seq", a.first_seq},
                         {"through_seq", a.through_seq},     {"prev_hash", a.prev_hash},
                         {"through_hash", a.through_hash},   {"events", a.through_seq - a.first_seq + 1},
                         {"created_at", now}};
    RETURN_IF_ERROR(gz.Add(header.dump() + "\n"));
    int64_t expected = a.first_seq;
    std::string prev = a.prev_hash;
    std::string lines;
    while (expected <= a.through_seq) {
      ASSIGN_OR_RETURN(std::vector<EventRow> rows,
                       LoadEventRowsFrom(txn, expected,
                                         std::min(kPage, a.through_seq - expected + 1)));
      if (rows.empty()) rows.push_back(EventRow{.seq = a.through_seq + 1});
      lines.clear();
      for (const EventRow& r : rows) {
        const std::string problem = EventLinkProblem(r, expected, prev);
        if (!problem.empty()) {
          return DataLossError("ledger verification failed at seq " + std::to_string(expected) +
                               ": " + problem + "; nothing was archived (`baton verify` says more)");
        }
        const size_t at = lines.size();
        AppendEventLine(r, &lines);
        // Read back as verify will, before anything is deleted.
        const std::optional<EventRow> back =
            EventOfLine(std::string_view(lines).substr(at, lines.size() - at - 1));
        if (!back || !SameRow(*back, r)) {
          return InternalError("event seq " + std::to_string(r.seq) +
                               " does not read back from its archive line; nothing was "
                               "archived");
        }
        prev = r.hash;
        ++expected;
      }
      RETURN_IF_ERROR(gz.Add(lines));
    }
    RETURN_IF_ERROR(gz.Add(Json{{"end", true}, {"events", a.through_seq - a.first_seq + 1}}.dump() +
                           "\n"));
    ASSIGN_OR_RETURN(sha256, gz.Finish());
    *bytes = gz.bytes_out();
    return Status();
  });
  if (!written.ok()) return written.WithPrefix("file");
  return sha256;
}

// Refuses to write the archive over a file — unless that file is an
// archive of this very chain from its current anchor: what an earlier
// attempt left when its commit failed (nothing records it, and it holds
// exactly what this one will).
Status CheckTarget(const std::string& file, const ChainStart& start) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path folder = fs::path(file).parent_path();
  if (!fs::is_directory(folder, ec)) {
    return InvalidArgumentError("file: the folder " + folder.string() + " does not exist");
  }
  if (fs::symlink_status(file, ec).type() == fs::file_type::not_found) return Status();
  std::optional<Json> header;
  if (fs::is_regular_file(fs::symlink_status(file, ec))) {
    (void)ReadGzipLines(file, kMaxLine, [&](std::string_view line) -> Status {
      header = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      return AbortedError("the header is enough");
    }, nullptr);
  }
  if (header && IntMember(*header, "first_seq") == start.seq &&
      TextMember(*header, "prev_hash") == start.prev_hash) {
    return Status();
  }
  return AlreadyExistsError("file: " + file +
                            " exists; an archive is never written over (name another file)");
}

}  // namespace

Result<ChainStart> LoadChainStart(Txn& txn) {
  ASSIGN_OR_RETURN(std::optional<LedgerArchiveRow> anchor, LoadNewestLedgerArchiveRow(txn));
  if (!anchor) return ChainStart{1, kGenesisHash, false};
  return ChainStart{anchor->through_seq + 1, anchor->through_hash, true};
}

Result<std::string> CheckAnchor(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<LedgerArchiveRow> rows, ListLedgerArchiveRows(txn));
  if (rows.empty()) return std::string();
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t first = i == 0 ? 1 : rows[i - 1].through_seq + 1;
    const std::string& prev = i == 0 ? std::string(kGenesisHash) : rows[i - 1].through_hash;
    if (rows[i].first_seq != first || rows[i].prev_hash != prev) {
      return "the archive through seq " + std::to_string(rows[i].through_seq) +
             " does not continue the one before it (ledger_archives altered)";
    }
  }
  const LedgerArchiveRow& anchor = rows.back();
  ASSIGN_OR_RETURN(std::optional<EventRow> signed_by, NewestEventOfKind(txn, kArchivedKind));
  const Json p = signed_by ? Json::parse(signed_by->payload, nullptr, false) : Json();
  if (!signed_by || signed_by->seq <= anchor.through_seq || signed_by->seq != anchor.event_seq ||
      !p.is_object() || IntMember(p, "first_seq") != anchor.first_seq ||
      IntMember(p, "through_seq") != anchor.through_seq ||
      TextMember(p, "prev_hash") != anchor.prev_hash ||
      TextMember(p, "through_hash") != anchor.through_hash ||
      TextMember(p, "file") != anchor.file || TextMember(p, "file_sha256") != anchor.file_sha256) {
    return "the anchor (the archive through seq " + std::to_string(anchor.through_seq) +
           ") is not the one the newest " + kArchivedKind +
           " event records (ledger_archives altered)";
  }
  return std::string();
}

Result<ArchiveResult> ArchiveLedger(OpContext& ctx, const ArchiveRequest& request) {
  ASSIGN_OR_RETURN(ChainStart start, LoadChainStart(ctx.txn));
  ASSIGN_OR_RETURN(std::optional<LedgerHeadRow> head, LoadLedgerHeadRow(ctx.txn));
  const int64_t head_seq = head ? head->seq : 0;
  ASSIGN_OR_RETURN(int64_t through, RequestedThrough(ctx.txn, request, head_seq));
  const std::string asked = request.before_seq > 0
                                ? "before seq " + std::to_string(request.before_seq)
                                : "before " + request.before_time;
  if (through < start.seq) {
    return FailedPreconditionError(
        "before: no event " + asked + " is left to archive" +
        (start.archived ? " (events through seq " + std::to_string(start.seq - 1) +
                              " are archived already)"
                        : ""));
  }
  ArchiveResult result;
  RETURN_IF_ERROR(KeepWhatIsNeeded(ctx, &through, &result.held_by));
  if (through < start.seq) {
    return FailedPreconditionError("before: nothing " + asked + " may be archived: " +
                                   result.held_by);
  }
  ASSIGN_OR_RETURN(std::optional<std::string> through_hash, FindEventHash(ctx.txn, through));
  if (!through_hash) {
    return DataLossError("ledger verification failed at seq " + std::to_string(through) +
                         ": event seq " + std::to_string(through) +
                         " is missing; nothing was archived");
  }
  LedgerArchiveRow& a = result.archive;
  a = {.first_seq = start.seq,
       .through_seq = through,
       .prev_hash = start.prev_hash,
       .through_hash = *through_hash,
       .file = request.file.empty() ? request.beside + ".archive-" + std::to_string(start.seq) +
                                          "-" + std::to_string(through) + ".jsonl.gz"
                                    : request.file,
       .created_at = ctx.now};
  RETURN_IF_ERROR(CheckTarget(a.file, start));
  {
    // What a killed archive of this file left half written (it can be as
    // large as the archive) goes first; the lock keeps another writer's.
    ASSIGN_OR_RETURN(FolderLock lock,
                     FolderLock::Acquire(std::filesystem::path(a.file).parent_path().string()));
    RemoveStaleTemporaries(a.file);
  }
  ASSIGN_OR_RETURN(a.file_sha256, WriteArchive(ctx.txn, a.file, a, ctx.now, &result.bytes));
  // From here a failure leaves the events in place: the file goes too. (A
  // commit that fails after this returns leaves it; CheckTarget lets the
  // next attempt replace it.)
  Status recorded = [&]() -> Status {
    ASSIGN_OR_RETURN(result.events, DeleteEventsThrough(ctx.txn, through));
    ASSIGN_OR_RETURN(
        a.event_seq,
        AppendEvent(ctx, {.kind = kArchivedKind,
                          .summary = "archived events " + std::to_string(a.first_seq) + ".." +
                                     std::to_string(through) + " to " + a.file,
                          .payload = {{"first_seq", a.first_seq},
                                      {"through_seq", through},
                                      {"prev_hash", a.prev_hash},
                                      {"through_hash", a.through_hash},
                                      {"file", a.file},
                                      {"file_sha256", a.file_sha256},
                                      {"events", result.events}}}));
    return InsertLedgerArchiveRow(ctx.txn, a);
  }();
  if (!recorded.ok()) {
    std::error_code ec;
    std::filesystem::remove(a.file, ec);
    return recorded;
  }
  return result;
}

Result<ArchiveReport> VerifyArchiveFile(Txn& txn, const std::string& file,
                                        const std::function<void(const EventRow&)>& each) {
  ArchiveReport report;
  report.file = file;
  std::optional<Json> header;
  bool ended = false;
  int64_t expected = 0;
  std::string prev;
  auto broken = [&report](int64_t seq, std::string reason) {
    report.ok = false;
    report.first_broken_seq = seq;
    report.reason = std::move(reason);
    return AbortedError("stop");
  };
  std::string sha256;
  Status read = ReadGzipLines(file, kMaxLine, [&](std::string_view line) -> Status {
    if (!header) {
      Json h = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      const std::optional<int64_t> format = IntMember(h, "baton_ledger_archive");
      const std::optional<int64_t> first = IntMember(h, "first_seq");
      const std::optional<int64_t> through = IntMember(h, "through_seq");
      const std::optional<std::string> prev_hash = TextMember(h, "prev_hash");
      if (!h.is_object() || format != kFormat || !first || !through || !prev_hash ||
          !TextMember(h, "through_hash")) {
        return InvalidArgumentError("archive: " + file +
                                    " is not a baton ledger archive (its first line is not "
                                    "the header `baton ledger archive` writes)");
      }
      header = std::move(h);
      report.first_seq = *first;
      report.through_seq = *through;
      expected = report.first_seq;
      prev = *prev_hash;
      return Status();
    }
    if (ended) return broken(expected, "lines follow the archive's end line");
    if (!line.empty() && line[0] == '{') {
      Json end = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (end.is_object() && end.contains("end")) {
        ended = true;
        const std::optional<int64_t> counted = IntMember(end, "events");
        if (end["end"] != true || counted != report.events) {
          return broken(expected, "the end line (" + end.dump() + ") does not count the " +
                                      std::to_string(report.events) + " events the file holds");
        }
        return Status();
      }
    }
    std::optional<EventRow> r = EventOfLine(line);
    if (!r) return broken(expected, "the line for seq " + std::to_string(expected) +
                                        " is not an event row (line altered)");
    const std::string problem = EventLinkProblem(*r, expected, prev);
    if (!problem.empty()) return broken(expected, problem);
    if (r->seq > report.through_seq) {
      return broken(r->seq, "the file goes past its header's through_seq " +
                                std::to_string(report.through_seq));
    }
    if (each) each(*r);
    prev = r->hash;
    ++expected;
    ++report.events;
    return Status();
  }, &sha256);
  if (!read.ok() && !(read.code() == StatusCode::kAborted && !report.ok)) {
    if (read.code() == StatusCode::kDataLoss && header) {
      // Cut short or corrupt after a whole header: a broken archive.
      report.ok = false;
      report.first_broken_seq = expected;
      report.reason = read.message();
      return report;
    }
    return read.code() == StatusCode::kInvalidArgument ? read : read.WithPrefix("archive");
  }
  if (!header) {
    return InvalidArgumentError("archive: " + file + " is empty, not a baton ledger archive");
  }
  if (!report.ok) return report;
  report.through_hash = prev;
  if (!ended) {
    report.ok = false;
    report.first_broken_seq = expected;
    report.reason = "the file ends without its end line (cut short)";
    return report;
  }
  if (expected - 1 != report.through_seq || prev != (*header)["through_hash"]) {
    report.ok = false;
    report.first_broken_seq = expected;
    report.reason = "the events end at seq " + std::to_string(expected - 1) +
                    ", not at the header's through_seq " + std::to_string(report.through_seq);
    return report;
  }
  // The store's record of this archive: the same range, ending on the same
  // hash (which the chain after it links to).
  ASSIGN_OR_RETURN(std::vector<LedgerArchiveRow> rows, ListLedgerArchiveRows(txn));
  const LedgerArchiveRow* recorded = nullptr;
  for (const LedgerArchiveRow& row : rows) {
    if (row.through_seq == report.through_seq) recorded = &row;
  }
  if (recorded == nullptr) {
    report.ok = false;
    report.first_broken_seq = report.through_seq;
    report.reason = "the store records no archive through seq " +
                    std::to_string(report.through_seq) + " (an archive of another store?)";
    return report;
  }
  if (recorded->first_seq != report.first_seq || recorded->through_hash != prev ||
      recorded->prev_hash != (*header)["prev_hash"]) {
    report.ok = false;
    report.first_broken_seq = report.through_seq;
    report.reason = "its events hash to " + prev + " at seq " +
                    std::to_string(report.through_seq) + " but the store recorded " +
                    recorded->through_hash + " (the archive was rewritten)";
    return report;
  }
  report.sha256_matches = recorded->file_sha256 == sha256;
  return report;
}

Result<std::optional<std::string>> ArchivedEventHash(Txn& txn, int64_t seq) {
  ASSIGN_OR_RETURN(std::vector<LedgerArchiveRow> archives, ListLedgerArchiveRows(txn));
  for (const LedgerArchiveRow& a : archives) {
    if (seq < a.first_seq || seq > a.through_seq) continue;
    if (seq == a.through_seq) return std::optional<std::string>(a.through_hash);
    std::optional<std::string> hash;
    Result<ArchiveReport> read = VerifyArchiveFile(txn, a.file, [&](const EventRow& e) {
      if (e.seq == seq) hash = e.hash;
    });
    if (!read.ok() || !read->ok) return std::optional<std::string>();
    return hash;
  }
  return std::optional<std::string>();
}

}  // namespace baton
