#include "store/tables/graph_checkpoint_table.h"

#include <utility>
#include <variant>

namespace baton {
namespace {

SqlValue JsonOrNull(const Json& j) { return j.is_null() ? SqlNull() : SqlText(CanonicalJson(j)); }

size_t TextBytes(const SqlValue& v) {
  const std::string* text = std::get_if<std::string>(&v);
  return text != nullptr ? text->size() : 0;
}

Result<Json> ParseColumn(const Row& r, size_t i, const std::string& what) {
  if (r.IsNull(i)) return Json();
  return ParseJson(r.Str(i), what);
}

}  // namespace

Status InsertGraphCheckpoint(Txn& txn, const std::string& run_id, const GraphCheckpoint& c,
                             const std::string& created_at) {
  return txn
      .Exec("INSERT INTO graph_checkpoints (run_id, seq, node, outcome, attempt, next_node, base, "
            "delta, folded, duration_ms, event_seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?)",
            {SqlText(run_id), SqlInt(c.seq), SqlText(c.node), SqlText(c.outcome),
             SqlInt(c.attempt), SqlText(c.next), JsonOrNull(c.base), JsonOrNull(c.delta),
             SqlInt(c.folded), SqlInt(c.duration_ms),
             SqlNullable(c.event_seq), SqlText(created_at)})
      .status();
}

Result<std::vector<GraphCheckpoint>> LoadGraphCheckpoints(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT seq, node, outcome, attempt, next_node, base, delta, folded, "
                             "duration_ms, event_seq, created_at FROM graph_checkpoints WHERE "
                             "run_id = ? ORDER BY seq",
                             {SqlText(run_id)}));
  std::vector<GraphCheckpoint> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    GraphCheckpoint c;
    c.seq = r.Int(0);
    c.node = r.Str(1);
    c.outcome = r.Str(2);
    c.attempt = r.Int(3);
    c.next = r.Str(4);
    const std::string where = "graph checkpoint " + run_id + "#" + std::to_string(c.seq);
    ASSIGN_OR_RETURN(c.base, ParseColumn(r, 5, where + " base"));
    ASSIGN_OR_RETURN(c.delta, ParseColumn(r, 6, where + " delta"));
    c.bytes = (r.IsNull(5) ? 0 : r.Str(5).size()) + (r.IsNull(6) ? 0 : r.Str(6).size());
    c.folded = r.Int(7);
    c.duration_ms = r.Int(8);
    if (!r.IsNull(9)) c.event_seq = r.Int(9);
    c.created_at = r.Str(10);
    out.push_back(std::move(c));
  }
  return out;
}

Result<bool> HasGraphCheckpoints(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT 1 FROM graph_checkpoints WHERE run_id = ? LIMIT 1",
                             {SqlText(run_id)}));
  return !rows.empty();
}

Status DeleteGraphCheckpoint(Txn& txn, const std::string& run_id, int64_t seq) {
  return txn
      .Exec("DELETE FROM graph_checkpoints WHERE run_id = ? AND seq = ?",
            {SqlText(run_id), SqlInt(seq)})
      .status();
}

Result<size_t> RewriteGraphCheckpointState(Txn& txn, const std::string& run_id, int64_t seq,
                                           const Json& base, const Json& delta, int64_t folded) {
  const SqlValue base_value = JsonOrNull(base);
  const SqlValue delta_value = JsonOrNull(delta);
  RETURN_IF_ERROR(txn.Exec("UPDATE graph_checkpoints SET base = ?, delta = ?, folded = ? "
                           "WHERE run_id = ? AND seq = ?",
                           {base_value, delta_value, SqlInt(folded), SqlText(run_id), SqlInt(seq)})
                      .status());
  return TextBytes(base_value) + TextBytes(delta_value);
}

}  // namespace baton
