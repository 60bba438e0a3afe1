#include "store/tables/usage_table.h"

#include <vector>

namespace baton {

Result<std::vector<UsageSum>> SumRunUsage(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT agent, model, COUNT(*), SUM(cost), SUM(input_tokens), "
                "SUM(output_tokens), SUM(reasoning_tokens), SUM(cache_read_tokens), "
                "SUM(cache_write_tokens) FROM usage WHERE run_id = ? GROUP BY agent, model "
                "ORDER BY agent, model",
                {SqlText(run_id)}));
  std::vector<UsageSum> sums;
  sums.reserve(rows.size());
  for (const Row& r : rows) {
    sums.push_back(UsageSum{.agent = r.Str(0),
                            .model = r.Str(1),
                            .steps = r.Int(2),
                            .cost = r.Real(3),
                            .input_tokens = r.Int(4),
                            .output_tokens = r.Int(5),
                            .reasoning_tokens = r.Int(6),
                            .cache_read_tokens = r.Int(7),
                            .cache_write_tokens = r.Int(8)});
  }
  return sums;
}

Result<int64_t> InsertUsageRow(Txn& txn, const UsageRow& u) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query(
          "INSERT INTO usage (run_id, agent, model, step_id, session_id, cost, input_tokens, "
          "output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
          {SqlText(u.run_id), SqlText(u.agent), SqlText(u.model), SqlText(u.step_id),
           SqlText(u.session_id), SqlValue(u.cost), SqlInt(u.input_tokens), SqlInt(u.output_tokens),
           SqlInt(u.reasoning_tokens), SqlInt(u.cache_read_tokens), SqlInt(u.cache_write_tokens),
           SqlText(u.created_at)}));
  if (rows.empty()) return InternalError("usage: the insert returned no seq");
  return rows[0].Int(0);
}

Result<std::vector<UsageRow>> ExportRunUsageRows(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT seq, agent, model, step_id, session_id, cost, input_tokens, "
                "output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, "
                "created_at FROM usage WHERE run_id = ? ORDER BY seq",
                {SqlText(run_id)}));
  std::vector<UsageRow> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.seq = r.Int(0),
                   .run_id = run_id,
                   .agent = r.Str(1),
                   .model = r.Str(2),
                   .step_id = r.Str(3),
                   .session_id = r.Str(4),
                   .cost = r.Real(5),
                   .input_tokens = r.Int(6),
                   .output_tokens = r.Int(7),
                   .reasoning_tokens = r.Int(8),
                   .cache_read_tokens = r.Int(9),
                   .cache_write_tokens = r.Int(10),
                   .created_at = r.Str(11)});
  }
  return out;
}

}  // namespace baton
