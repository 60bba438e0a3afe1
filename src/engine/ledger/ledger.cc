#include "engine/ledger/ledger.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "engine/ledger/archive.h"
#include "store/tables/event_table.h"
#include "store/tables/ledger_head_table.h"
#include "util/json_or_null.h"
#include "util/sha256.h"

namespace baton {
namespace {

constexpr int64_t kVerifyPage = 2000;

// {seq, time, run_id, actor{id, role}, kind, summary}: what a list shows.
Json EventSummaryToJson(const EventRow& r) {
  return Json{{"seq", r.seq},
              {"time", r.time},
              {"run_id", OrNull(r.run_id)},
              {"actor", {{"id", r.actor_id}, {"role", r.actor_role}}},
              {"kind", r.kind},
              {"summary", r.summary}};
}

Json EventRowToJson(const EventRow& r) {
  Json e = EventSummaryToJson(r);
  e["prev_hash"] = r.prev_hash;
  e["hash"] = r.hash;
  // Stored texts were written by us as JSON; a row edited by hand into
  // something unparsable is still shown, as a string, for verify to flag.
  for (auto [text, key] :
       {std::pair{&r.payload, "payload"}, {&r.files, "files"}, {&r.refs, "refs"}}) {
    Json parsed = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
    e[key] = parsed.is_discarded() ? Json(*text) : parsed;
  }
  return e;
}

}  // namespace

std::string EventHash(int64_t seq, const std::string& time,
                      const std::string& run_id, const std::string& actor_id,
                      const std::string& actor_role, const std::string& kind,
                      const std::string& summary, const std::string& payload,
                      const std::string& files, const std::string& refs,
                      const std::string& prev_hash) {
  // A fixed-order array: canonical without sorting, and every field that a
  // tamperer could change is inside it, including seq and prev_hash. Built by
  // hand (same bytes as nlohmann's dump) because it runs on every write.
  std::string doc;
  doc.reserve(256 + payload.size() + summary.size());
  doc += '[';
  doc += std::to_string(seq);
  for (const std::string* field : {&time, &run_id, &actor_id, &actor_role, &kind, &summary,
                                   &payload, &files, &refs, &prev_hash}) {
    doc += ',';
    AppendJsonString(*field, &doc);
  }
  doc += ']';
  return Sha256Hex(doc);
}

std::string EventRowHash(const EventRow& r) {
  return EventHash(r.seq, r.time, r.run_id.value_or(""), r.actor_id, r.actor_role, r.kind,
                   r.summary, r.payload, r.files, r.refs, r.prev_hash);
}

std::string EventLinkProblem(const EventRow& r, int64_t expected, const std::string& prev) {
  if (r.seq != expected) {
    return "event seq " + std::to_string(expected) + " is missing (next present is " +
           std::to_string(r.seq) + ")";
  }
  if (r.prev_hash != prev) {
    return "prev_hash does not match the hash of seq " + std::to_string(r.seq - 1) +
           " (rows removed or reordered)";
  }
  if (EventRowHash(r) != r.hash) return "content does not match its hash (row altered)";
  return "";
}

namespace {

thread_local LedgerHeadScope* current_head_scope = nullptr;

}  // namespace

LedgerHeadScope::LedgerHeadScope() : outer_(current_head_scope) { current_head_scope = this; }

LedgerHeadScope::~LedgerHeadScope() { current_head_scope = outer_; }

Result<int64_t> AppendEvent(OpContext& ctx, const EventInput& event) {
  // A mirror's own report does not make the mirror due again.
  if (!event.run_id.empty() && event.kind != "mirror.failed" && event.kind != "mirror.recovered") {
    ctx.touched_runs.insert(event.run_id);
  }
  LedgerHeadScope* scope = current_head_scope;
  LedgerHeadScope::Head head;
  if (scope != nullptr && scope->head_) {
    head = *scope->head_;
  } else {
    ASSIGN_OR_RETURN(std::optional<LedgerHeadRow> stored, LoadLedgerHeadRow(ctx.txn));
    head = stored ? LedgerHeadScope::Head{stored->seq, stored->hash}
                  : LedgerHeadScope::Head{0, kGenesisHash};
  }
  EventRow row{
      .seq = head.seq + 1,
      .time = ctx.now,
      .run_id = event.run_id.empty() ? std::nullopt : std::optional<std::string>(event.run_id),
      .actor_id = ctx.actor.id,
      .actor_role = ctx.actor.role,
      .kind = event.kind,
      .summary = event.summary,
      .payload = CanonicalJson(event.payload),
      .files = CanonicalJson(event.files),
      .refs = CanonicalJson(event.refs),
      .prev_hash = std::move(head.hash)};
  row.hash = EventHash(row.seq, row.time, event.run_id, row.actor_id, row.actor_role, row.kind,
                       row.summary, row.payload, row.files, row.refs, row.prev_hash);
  const int64_t seq = row.seq;
  RETURN_IF_ERROR(SaveLedgerHeadRow(ctx.txn, seq, row.hash));
  LedgerHeadScope::Head next{seq, row.hash};
  RETURN_IF_ERROR(InsertEventRow(ctx.txn, std::move(row)));
  if (scope != nullptr) scope->head_ = std::move(next);
  return seq;
}

Result<Json> ListEvents(Txn& txn, const EventFilter& f) {
  ASSIGN_OR_RETURN(std::vector<EventRow> rows,
                   ListEventRows(txn, {.since_seq = f.since_seq,
                                       .run_id = f.run_id,
                                       .kind = f.kind,
                                       .actor_id = f.actor_id,
                                       .before_seq = f.before_seq,
                                       .limit = f.limit,
                                       .with_payload = f.with_payload}));
  Json out = Json::array();
  for (const EventRow& r : rows) {
    out.push_back(f.with_payload ? EventRowToJson(r) : EventSummaryToJson(r));
  }
  return out;
}

namespace {

VerifyReport Broken(int64_t seq, std::string reason, int64_t count) {
  VerifyReport r;
  r.ok = false;
  r.first_broken_seq = seq;
  r.reason = std::move(reason);
  r.events = count;
  return r;
}

}  // namespace

namespace {

// Walks the chain from seq "first", whose prev_hash must be "prev", to the
// end, then checks the ledger head against the last event.
Result<VerifyReport> WalkChain(Txn& txn, int64_t first, std::string prev) {
  int64_t expected = first;
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<EventRow> rows, LoadEventRowsFrom(txn, expected, kVerifyPage));
    for (const EventRow& r : rows) {
      std::string problem = EventLinkProblem(r, expected, prev);
      if (!problem.empty()) return Broken(expected, std::move(problem), expected - 1);
      prev = r.hash;
      ++expected;
    }
    if (static_cast<int64_t>(rows.size()) < kVerifyPage) break;
  }
  const int64_t count = expected - 1;
  ASSIGN_OR_RETURN(std::optional<LedgerHeadRow> head, LoadLedgerHeadRow(txn));
  const int64_t head_seq = head ? head->seq : 0;
  if (head_seq != count) {
    return Broken(count + 1,
                  "the chain ends at seq " + std::to_string(count) +
                      " but the ledger head records seq " + std::to_string(head_seq) +
                      " (newest rows removed)",
                  count);
  }
  if (head && head->hash != prev) {
    return Broken(count, "the ledger head's hash does not match seq " +
                             std::to_string(count), count);
  }
  VerifyReport report;
  report.events = count;
  report.head_hash = prev;
  return report;
}

// "report" unless the walk began at an anchor the chain does not record.
Result<VerifyReport> WithAnchorChecked(Txn& txn, const ChainStart& start, VerifyReport report) {
  if (!report.ok || !start.archived) return report;
  ASSIGN_OR_RETURN(std::string problem, CheckAnchor(txn));
  if (!problem.empty()) return Broken(start.seq - 1, problem, start.seq - 1);
  return report;
}

}  // namespace

Result<VerifyReport> VerifyLedger(Txn& txn) {
  ASSIGN_OR_RETURN(ChainStart start, LoadChainStart(txn));
  ASSIGN_OR_RETURN(VerifyReport report, WalkChain(txn, start.seq, start.prev_hash));
  return WithAnchorChecked(txn, start, std::move(report));
}

Result<VerifyReport> VerifyLedgerSince(Txn& txn, int64_t since, std::string* anchor) {
  *anchor = kGenesisHash;
  if (since == 0) return VerifyLedger(txn);
  ASSIGN_OR_RETURN(ChainStart start, LoadChainStart(txn));
  if (since < start.seq - 1) {
    return FailedPreconditionError("since: events through seq " + std::to_string(start.seq - 1) +
                                   " are archived; verify without since walks from there, and "
                                   "verify --archive proves the archived part");
  }
  if (since == start.seq - 1) {
    *anchor = start.prev_hash;
    return VerifyLedger(txn);
  }
  ASSIGN_OR_RETURN(std::vector<EventRow> rows, LoadEventRowsFrom(txn, since, 1));
  if (rows.empty() || rows[0].seq != since) {
    // Past the chain's end is a wrong question; inside it, a loss.
    ASSIGN_OR_RETURN(std::optional<LedgerHeadRow> head, LoadLedgerHeadRow(txn));
    ASSIGN_OR_RETURN(const int64_t last_seq, MaxEventSeq(txn));
    if (since > std::max(head ? head->seq : 0, last_seq)) {
      return NotFoundError("since: the ledger holds no event " + std::to_string(since));
    }
    return Broken(since, "event seq " + std::to_string(since) + " is missing", since - 1);
  }
  // The checkpoint's own row is checked too: its stored hash is what the
  // rest of the walk links to.
  const EventRow& r = rows[0];
  *anchor = r.hash;
  if (EventRowHash(r) != r.hash) {
    return Broken(since, "content does not match its hash (row altered)", since - 1);
  }
  return WalkChain(txn, since + 1, r.hash);
}

Result<VerifyReport> VerifyLedgerTail(Txn& txn, int64_t count) {
  ASSIGN_OR_RETURN(std::optional<LedgerHeadRow> head, LoadLedgerHeadRow(txn));
  const int64_t head_seq = head ? head->seq : 0;
  // The newest row may have been removed with the head left in place: start
  // from whichever end is higher so that the walk reaches it.
  ASSIGN_OR_RETURN(const int64_t last_seq, MaxEventSeq(txn));
  ASSIGN_OR_RETURN(ChainStart start, LoadChainStart(txn));
  const int64_t first = std::max<int64_t>(start.seq, std::max(head_seq, last_seq) - count + 1);
  std::string before = start.prev_hash;
  if (first > start.seq) {
    // The link into the window is checked against the stored hash of the
    // row before it; that row's own content is the full walk's business.
    ASSIGN_OR_RETURN(std::optional<std::string> stored, FindEventHash(txn, first - 1));
    if (!stored) {
      return Broken(first - 1, "event seq " + std::to_string(first - 1) + " is missing", 0);
    }
    before = std::move(*stored);
  }
  ASSIGN_OR_RETURN(VerifyReport report, WalkChain(txn, first, before));
  // An anchor moved by hand is met before anything is appended after it.
  return WithAnchorChecked(txn, start, std::move(report));
}

}  // namespace baton
