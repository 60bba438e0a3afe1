// File: usage_table.h
//
// The usage table: what each step of a run cost (money and tokens), by
// agent and model, as the profiles record it: a run's sums, sgai's reports,
// a run image's export and import. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_USAGE_TABLE_H_
#define BATON_SRC_STORE_TABLES_USAGE_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

// One agent and model's share of a run: its steps, and the sums of their
// cost and tokens.
struct UsageSum {
  std::string agent;
  std::string model;
  int64_t steps = 0;
  double cost = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t reasoning_tokens = 0;
  int64_t cache_read_tokens = 0;
  int64_t cache_write_tokens = 0;
};

// Run "run_id"'s usage summed per agent and model, by agent then model.
Result<std::vector<UsageSum>> SumRunUsage(Txn& txn, const std::string& run_id);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

// One usage report: what one call of an agent's model cost a run.
struct UsageRow {
  int64_t seq = 0;  // the store's, read back; not written
  std::string run_id;
  std::string agent;
  std::string model;
  std::string step_id;
  std::string session_id;
  double cost = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t reasoning_tokens = 0;
  int64_t cache_read_tokens = 0;
  int64_t cache_write_tokens = 0;
  std::string created_at;
};

// Records "usage" (sgai.usage.add, or run.import of a run image's usage);
// returns the row's seq.
Result<int64_t> InsertUsageRow(Txn& txn, const UsageRow& usage);

// run.export: run "run_id"'s usage, in the order recorded.
Result<std::vector<UsageRow>> ExportRunUsageRows(Txn& txn, const std::string& run_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_USAGE_TABLE_H_
