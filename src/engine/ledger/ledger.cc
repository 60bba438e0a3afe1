#include "engine/ledger/ledger.h"

#include <algorithm>

#include "util/sha256.h"

namespace baton {
namespace {

constexpr int64_t kVerifyPage = 2000;

Json EventRowToJson(const Row& r) {
  Json actor = {{"id", r.Str(3)}, {"role", r.Str(4)}};
  Json e = {{"seq", r.Int(0)},     {"time", r.Str(1)},
            {"run_id", r.IsNull(2) ? Json() : Json(r.Str(2))},
            {"actor", actor},      {"kind", r.Str(5)},
            {"summary", r.Str(6)}, {"prev_hash", r.Str(10)},
            {"hash", r.Str(11)}};
  // Stored texts were written by us as JSON; a row edited by hand into
  // something unparsable is still shown, as a string, for verify to flag.
  for (auto [col, key] : {std::pair{7, "payload"}, {8, "files"}, {9, "refs"}}) {
    Json parsed = Json::parse(r.Str(col), nullptr, /*allow_exceptions=*/false);
    e[key] = parsed.is_discarded() ? Json(r.Str(col)) : parsed;
  }
  return e;
}

constexpr char kEventColumns[] =
    "seq, time, run_id, actor_id, actor_role, kind, summary, payload, files, "
    "refs, prev_hash, hash";

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

Result<int64_t> AppendEvent(OpContext& ctx, const EventInput& event) {
  // A mirror's own report does not make the mirror due again.
  if (!event.run_id.empty() && event.kind != "mirror.failed" && event.kind != "mirror.recovered") {
    ctx.touched_runs.insert(event.run_id);
  }
  ASSIGN_OR_RETURN(std::vector<Row> head,
                   ctx.txn.Query("SELECT seq, hash FROM ledger_head WHERE id = 1", {}));
  const int64_t seq = head.empty() ? 1 : head[0].Int(0) + 1;
  const std::string prev = head.empty() ? kGenesisHash : head[0].Str(1);
  const std::string payload = CanonicalJson(event.payload);
  const std::string files = CanonicalJson(event.files);
  const std::string refs = CanonicalJson(event.refs);
  const std::string hash =
      EventHash(seq, ctx.now, event.run_id, ctx.actor.id, ctx.actor.role,
                event.kind, event.summary, payload, files, refs, prev);
  RETURN_IF_ERROR(
      ctx.txn
          .Exec("INSERT INTO events (seq, time, run_id, actor_id, actor_role, "
                "kind, summary, payload, files, refs, prev_hash, hash) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                {SqlInt(seq), SqlText(ctx.now), SqlTextOrNull(event.run_id),
                 SqlText(ctx.actor.id), SqlText(ctx.actor.role),
                 SqlText(event.kind), SqlText(event.summary), SqlText(payload),
                 SqlText(files), SqlText(refs), SqlText(prev), SqlText(hash)})
          .status());
  RETURN_IF_ERROR(ctx.txn
                      .Exec("INSERT INTO ledger_head (id, seq, hash) VALUES (1, ?, ?) "
                            "ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, "
                            "hash = excluded.hash",
                            {SqlInt(seq), SqlText(hash)})
                      .status());
  return seq;
}

Result<Json> ListEvents(Txn& txn, const EventFilter& f) {
  std::string sql = std::string("SELECT ") +
                    (f.with_payload ? kEventColumns : "seq, time, run_id, actor_id, actor_role, kind, summary") +
                    " FROM events WHERE seq > ?";
  std::vector<SqlValue> params = {SqlInt(f.since_seq)};
  if (!f.run_id.empty()) {
    sql += " AND run_id = ?";
    params.push_back(SqlText(f.run_id));
  }
  if (!f.kind.empty() && f.kind.back() == '.') {
    sql += " AND kind >= ? AND kind < ?";
    params.push_back(SqlText(f.kind));
    // The smallest string greater than every string with this prefix.
    std::string upper = f.kind;
    upper.back() = '.' + 1;
    params.push_back(SqlText(upper));
  } else if (!f.kind.empty()) {
    sql += " AND kind = ?";
    params.push_back(SqlText(f.kind));
  }
  if (!f.actor_id.empty()) {
    sql += " AND actor_id = ?";
    params.push_back(SqlText(f.actor_id));
  }
  if (f.before_seq > 0) {
    sql += " AND seq < ?";
    params.push_back(SqlInt(f.before_seq));
  }
  sql += f.before_seq > 0 ? " ORDER BY seq DESC LIMIT ?" : " ORDER BY seq LIMIT ?";
  params.push_back(SqlInt(f.limit));
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  if (f.before_seq > 0) std::reverse(rows.begin(), rows.end());
  Json out = Json::array();
  for (const Row& r : rows) {
    if (f.with_payload) {
      out.push_back(EventRowToJson(r));
      continue;
    }
    out.push_back({{"seq", r.Int(0)},
                   {"time", r.Str(1)},
                   {"run_id", r.IsNull(2) ? Json() : Json(r.Str(2))},
                   {"actor", {{"id", r.Str(3)}, {"role", r.Str(4)}}},
                   {"kind", r.Str(5)},
                   {"summary", r.Str(6)}});
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
  const std::string sql = std::string("SELECT ") + kEventColumns +
                          " FROM events WHERE seq >= ? ORDER BY seq LIMIT ?";
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<Row> rows,
                     txn.Query(sql, {SqlInt(expected), SqlInt(kVerifyPage)}));
    for (const Row& r : rows) {
      const int64_t seq = r.Int(0);
      if (seq != expected) {
        return Broken(expected, "event seq " + std::to_string(expected) +
                                    " is missing (next present is " +
                                    std::to_string(seq) + ")", expected - 1);
      }
      if (r.Str(10) != prev) {
        return Broken(seq, "prev_hash does not match the hash of seq " +
                               std::to_string(seq - 1) + " (rows removed or reordered)",
                      seq - 1);
      }
      const std::string hash =
          EventHash(seq, r.Str(1), r.Str(2), r.Str(3), r.Str(4), r.Str(5),
                    r.Str(6), r.Str(7), r.Str(8), r.Str(9), r.Str(10));
      if (hash != r.Str(11)) {
        return Broken(seq, "content does not match its hash (row altered)", seq - 1);
      }
      prev = hash;
      ++expected;
    }
    if (static_cast<int64_t>(rows.size()) < kVerifyPage) break;
  }
  const int64_t count = expected - 1;
  ASSIGN_OR_RETURN(std::vector<Row> head,
                   txn.Query("SELECT seq, hash FROM ledger_head WHERE id = 1", {}));
  const int64_t head_seq = head.empty() ? 0 : head[0].Int(0);
  if (head_seq != count) {
    return Broken(count + 1,
                  "the chain ends at seq " + std::to_string(count) +
                      " but the ledger head records seq " + std::to_string(head_seq) +
                      " (newest rows removed)",
                  count);
  }
  if (!head.empty() && head[0].Str(1) != prev) {
    return Broken(count, "the ledger head's hash does not match seq " +
                             std::to_string(count), count);
  }
  VerifyReport report;
  report.events = count;
  report.head_hash = prev;
  return report;
}

}  // namespace

Result<VerifyReport> VerifyLedger(Txn& txn) { return WalkChain(txn, 1, kGenesisHash); }

Result<VerifyReport> VerifyLedgerTail(Txn& txn, int64_t count) {
  ASSIGN_OR_RETURN(std::vector<Row> head,
                   txn.Query("SELECT seq FROM ledger_head WHERE id = 1", {}));
  const int64_t head_seq = head.empty() ? 0 : head[0].Int(0);
  // The newest row may have been removed with the head left in place: start
  // from whichever end is higher so that the walk reaches it.
  ASSIGN_OR_RETURN(std::vector<Row> last, txn.Query("SELECT MAX(seq) FROM events", {}));
  const int64_t last_seq = last.empty() ? 0 : last[0].Int(0);
  const int64_t first = std::max<int64_t>(1, std::max(head_seq, last_seq) - count + 1);
  if (first == 1) return WalkChain(txn, 1, kGenesisHash);
  // The link into the window is checked against the stored hash of the row
  // before it; that row's own content is the full walk's business.
  ASSIGN_OR_RETURN(std::vector<Row> before,
                   txn.Query("SELECT hash FROM events WHERE seq = ?", {SqlInt(first - 1)}));
  if (before.empty()) {
    return Broken(first - 1, "event seq " + std::to_string(first - 1) + " is missing", 0);
  }
  return WalkChain(txn, first, before[0].Str(0));
}

}  // namespace baton
