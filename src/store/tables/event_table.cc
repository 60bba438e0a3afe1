#include "store/tables/event_table.h"

#include <algorithm>
#include <utility>

#include "store/tables/row_values.h"

namespace baton {
namespace {

constexpr char kEventColumns[] =
    "seq, time, run_id, actor_id, actor_role, kind, summary, payload, files, "
    "refs, prev_hash, hash";
constexpr char kEventSummaryColumns[] = "seq, time, run_id, actor_id, actor_role, kind, summary";

// Reads the first seven columns (kEventSummaryColumns), and the other five
// when the row has them (kEventColumns); the text moves out of "r".
EventRow EventFromRow(Row& r) {
  EventRow e{.seq = r.Int(0),
             .time = r.Take(1),
             .run_id = TextOrNone(r, 2),
             .actor_id = r.Take(3),
             .actor_role = r.Take(4),
             .kind = r.Take(5),
             .summary = r.Take(6)};
  if (r.size() < 12) return e;
  e.payload = r.Take(7);
  e.files = r.Take(8);
  e.refs = r.Take(9);
  e.prev_hash = r.Take(10);
  e.hash = r.Take(11);
  return e;
}

std::vector<EventRow> EventsFromRows(std::vector<Row> rows) {
  std::vector<EventRow> out;
  out.reserve(rows.size());
  for (Row& r : rows) out.push_back(EventFromRow(r));
  return out;
}

// " AND ..." for the kind filter: an exact kind, or every kind with the
// prefix (a range, so the kind index serves it).
void AddKindFilter(const std::string& kind, std::string& sql, std::vector<SqlValue>& params) {
  if (kind.empty()) return;
  if (kind.back() != '.') {
    sql += " AND kind = ?";
    params.push_back(SqlText(kind));
    return;
  }
  sql += " AND kind >= ? AND kind < ?";
  params.push_back(SqlText(kind));
  // The smallest string greater than every string with this prefix.
  std::string upper = kind;
  upper.back() = '.' + 1;
  params.push_back(SqlText(upper));
}

}  // namespace

Status InsertEventRow(Txn& txn, EventRow e) {
  // The row's text moves into the statement's values: the hottest write
  // copies none of it again.
  // Nothing reads its count: a backend may send it with the next statement.
  return txn.ExecLater(
      "INSERT INTO events (seq, time, run_id, actor_id, actor_role, "
      "kind, summary, payload, files, refs, prev_hash, hash) VALUES "
      "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {SqlInt(e.seq), SqlValue(std::move(e.time)),
       e.run_id ? SqlValue(std::move(*e.run_id)) : SqlNull(), SqlValue(std::move(e.actor_id)),
       SqlValue(std::move(e.actor_role)), SqlValue(std::move(e.kind)),
       SqlValue(std::move(e.summary)), SqlValue(std::move(e.payload)),
       SqlValue(std::move(e.files)), SqlValue(std::move(e.refs)),
       SqlValue(std::move(e.prev_hash)), SqlValue(std::move(e.hash))});
}

Result<std::vector<EventRow>> ListEventRows(Txn& txn, const EventRowFilter& f) {
  std::string sql = std::string("SELECT ") +
                    (f.with_payload ? kEventColumns : kEventSummaryColumns) +
                    " FROM events WHERE seq > ?";
  std::vector<SqlValue> params = {SqlInt(f.since_seq)};
  if (!f.run_id.empty()) {
    sql += " AND run_id = ?";
    params.push_back(SqlText(f.run_id));
  }
  AddKindFilter(f.kind, sql, params);
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
  return EventsFromRows(std::move(rows));
}

Result<std::vector<EventRow>> LoadEventRowsFrom(Txn& txn, int64_t first, int64_t limit) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT seq, time, run_id, actor_id, actor_role, kind, summary, "
                             "payload, files, refs, prev_hash, hash "
                             "FROM events WHERE seq >= ? ORDER BY seq LIMIT ?",
                             {SqlInt(first), SqlInt(limit)}));
  return EventsFromRows(std::move(rows));
}

Result<int64_t> FirstEventSeqOfRun(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT seq FROM events WHERE run_id = ? ORDER BY seq LIMIT 1",
                             {SqlText(run_id)}));
  return rows.empty() ? int64_t{0} : rows[0].Int(0);
}

Result<int64_t> FirstEventSeqAtOrAfter(Txn& txn, const std::string& time) {
  // In seq order from the oldest: archiving old events stops early.
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT seq FROM events WHERE time >= ? ORDER BY seq LIMIT 1",
                             {SqlText(time)}));
  return rows.empty() ? int64_t{0} : rows[0].Int(0);
}

Result<std::optional<EventRow>> NewestEventOfKind(Txn& txn, const std::string& kind) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT seq, time, run_id, actor_id, actor_role, kind, summary, "
                             "payload, files, refs, prev_hash, hash "
                             "FROM events WHERE kind = ? ORDER BY seq DESC LIMIT 1",
                             {SqlText(kind)}));
  if (rows.empty()) return std::optional<EventRow>();
  return std::optional<EventRow>(EventFromRow(rows[0]));
}

Result<int64_t> DeleteEventsThrough(Txn& txn, int64_t through) {
  return txn.Exec("DELETE FROM events WHERE seq <= ?", {SqlInt(through)});
}

Result<std::vector<EventBrief>> LoadEventBriefsAfter(Txn& txn, int64_t after, int64_t limit) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT seq, run_id, kind, payload FROM events WHERE seq > ? "
                             "ORDER BY seq LIMIT ?",
                             {SqlInt(after), SqlInt(limit)}));
  std::vector<EventBrief> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back(
        {.seq = r.Int(0), .run_id = TextOrNone(r, 1), .kind = r.Str(2), .payload = r.Str(3)});
  }
  return out;
}

Result<std::optional<std::string>> FindEventHash(Txn& txn, int64_t seq) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT hash FROM events WHERE seq = ?", {SqlInt(seq)}));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].Str(0));
}

Result<int64_t> MaxEventSeq(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT MAX(seq) FROM events", {}));
  return rows.empty() ? int64_t{0} : rows[0].Int(0);
}

Result<int64_t> LastMirroredEventSeq(Txn& txn, const std::string& run_id) {
  // Backwards along events_run: stops at the first event that is not a
  // mirror's own report.
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT seq FROM events WHERE run_id = ? AND kind NOT IN "
                             "('mirror.failed', 'mirror.recovered') ORDER BY seq DESC LIMIT 1",
                             {SqlText(run_id)}));
  return rows.empty() ? int64_t{0} : rows[0].Int(0);
}

Result<std::vector<std::string>> ListEventPayloadsOfKind(Txn& txn, const std::string& kind) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT payload FROM events WHERE kind = ? ORDER BY seq", {SqlText(kind)}));
  return FirstColumn(rows);
}

Result<EventCount> CountEventsAfter(Txn& txn, int64_t after, const std::string& kind) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT COUNT(*), SUM(CASE WHEN kind = ? THEN 1 ELSE 0 END) FROM events "
                "WHERE seq > ?",
                {SqlText(kind), SqlInt(after)}));
  return EventCount{.total = rows.at(0).Int(0), .of_kind = rows.at(0).Int(1)};
}

// ---- What engine/core asks for runs, questions, approvals and projects ----

Result<int64_t> CountRunProgressEvents(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(Row count, txn.QueryOne("SELECT COUNT(*) FROM events WHERE run_id = ? AND "
                                           "kind = 'run.progress'",
                                           {SqlText(run_id)}, "progress count"));
  return count.Int(0);
}

}  // namespace baton
