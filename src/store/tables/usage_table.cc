#include "store/tables/usage_table.h"

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

}  // namespace baton
