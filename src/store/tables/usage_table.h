// File: usage_table.h
//
// The usage table: what each step of a run cost (money and tokens), by
// agent and model, as the profiles record it. Portable SQL.

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

// h19-interchange:

// One usage record as a run image carries it (run.export reads it with its
// seq, run.import writes it without).
struct ExportedUsage {
  int64_t seq = 0;
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

// run.export: run "run_id"'s usage, in the order recorded.
Result<std::vector<ExportedUsage>> ExportRunUsageRows(Txn& txn, const std::string& run_id);

// run.import: "usage" recorded for run "run_id" (its seq is the store's).
Status InsertImportedUsage(Txn& txn, const std::string& run_id, const ExportedUsage& usage);

// h19-ledger-profiles:

// One usage report, as sgai.usage.add records it.
struct SgaiUsage {
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
// Inserts "usage"; returns the row's seq.
Result<int64_t> InsertSgaiUsageRow(Txn& txn, const SgaiUsage& usage);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_USAGE_TABLE_H_
