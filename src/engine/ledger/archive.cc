#include "engine/ledger/archive.h"

#include <filesystem>
#include <optional>
#include <set>
#include <vector>

#include "engine/ledger/ledger.h"
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

// The event an archive line holds; nullopt when the line is not one.
std::optional<EventRow> EventOfLine(std::string_view line) {
  Json a = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!a.is_array() || a.size() != 12 || !a[0].is_number_integer()) return std::nullopt;
  for (size_t i = 1; i < 12; ++i) {
    if (!a[i].is_string() && !(i == 2 && a[i].is_null())) return std::nullopt;
  }
  auto text = [&a](size_t i) { return a[i].get<std::string>(); };
  return EventRow{.seq = a[0].get<int64_t>(),
                  .time = text(1),
                  .run_id = a[2].is_null() ? std::nullopt : std::optional<std::string>(text(2)),
                  .actor_id = text(3),
                  .actor_role = text(4),
                  .kind = text(5),
                  .summary = text(6),
                  .payload = text(7),
                  .files = text(8),
                  .refs = text(9),
                  .prev_hash = text(10),
                  .hash = text(11)};
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
        AppendEventLine(r, &lines);
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
      !p.is_object() || p.value("through_seq", int64_t{0}) != anchor.through_seq ||
      p.value("through_hash", "") != anchor.through_hash ||
      p.value("file_sha256", "") != anchor.file_sha256) {
    return "the anchor (the archive through seq " + std::to_string(anchor.through_seq) +
           ") is not the one the newest " + kArchivedKind +
           " event records (ledger_archives altered)";
  }
  return std::string();
}

Result<ArchiveResult> ArchiveLedger(OpContext& ctx, const ArchiveRequest& request) {
  std::error_code ec;
  if (std::filesystem::symlink_status(request.file, ec).type() !=
      std::filesystem::file_type::not_found) {
    return AlreadyExistsError("file: " + request.file +
                              " exists; an archive is never written over (name another file)");
  }
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
       .file = request.file,
       .created_at = ctx.now};
  ASSIGN_OR_RETURN(a.file_sha256, WriteArchive(ctx.txn, a.file, a, ctx.now, &result.bytes));
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
  RETURN_IF_ERROR(InsertLedgerArchiveRow(ctx.txn, a));
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
      if (!h.is_object() || h.value("baton_ledger_archive", 0) != kFormat ||
          !h.contains("first_seq") || !h["first_seq"].is_number_integer() ||
          !h.contains("through_seq") || !h["through_seq"].is_number_integer() ||
          !h.contains("prev_hash") || !h["prev_hash"].is_string() ||
          !h.contains("through_hash") || !h["through_hash"].is_string()) {
        return InvalidArgumentError("archive: " + file +
                                    " is not a baton ledger archive (its first line is not "
                                    "the header `baton ledger archive` writes)");
      }
      header = std::move(h);
      report.first_seq = (*header)["first_seq"].get<int64_t>();
      report.through_seq = (*header)["through_seq"].get<int64_t>();
      expected = report.first_seq;
      prev = (*header)["prev_hash"].get<std::string>();
      return Status();
    }
    if (ended) return broken(expected, "lines follow the archive's end line");
    if (!line.empty() && line[0] == '{') {
      Json end = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (end.is_object() && end.value("end", false)) {
        ended = true;
        if (end.value("events", int64_t{-1}) != report.events) {
          return broken(expected, "the end line counts " + end.value("events", Json()).dump() +
                                      " events, the file holds " + std::to_string(report.events));
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

}  // namespace baton
