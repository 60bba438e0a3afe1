// File: usage_table.h
//
// The usage table: what each model call of a run cost, in money and
// tokens, by agent, model, step and session. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_USAGE_TABLE_H_
#define BATON_SRC_STORE_TABLES_USAGE_TABLE_H_

#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

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

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_USAGE_TABLE_H_
