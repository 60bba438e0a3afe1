// File: run_table.h
//
// The runs table: one row per run (its profile, machine, status, cursor,
// context and meta as JSON text, version). Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_RUN_TABLE_H_
#define BATON_SRC_STORE_TABLES_RUN_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

// The part of the inbox's reads that a scope narrows: runs of one project,
// or one run ("" for every project or run).
struct InboxScope {
  std::string project_id;
  std::string run_id;
};
// " AND <alias>.project_id = ? AND <alias>.id = ?" for what "scope" sets,
// "alias" naming runs in the caller's statement; appends the values to
// "params".
std::string InboxScopeSql(const InboxScope& scope, const std::string& alias,
                          std::vector<SqlValue>& params);

// A run as an inbox item shows it, read from a statement's columns "at",
// "at" + 1 and "at" + 2 (id, title, profile): none when the id is NULL.
struct RunLabel {
  std::string id;
  std::string title;
  std::string profile;
};
std::optional<RunLabel> RunLabelAt(const Row& row, size_t at);

// run.import: a run read from a file, stored as new or over run "id".
// "project_id" "" stores NULL; "cursor" and "cursor_index" are NULL when
// unset; "context" and "meta" are stored as canonical JSON.
struct ImportedRun {
  std::string id;
  std::string project_id;
  std::string profile;
  std::string machine;
  std::string status;
  std::string title;
  std::optional<std::string> cursor;
  std::optional<int64_t> cursor_index;
  Json context;
  Json meta;
  std::string created_at;
  std::string updated_at;
};
// Inserts a new run at version 1.
Status InsertImportedRun(Txn& txn, const ImportedRun& run);
// Overwrites run "run.id"'s status, title, cursor, context, meta and
// updated_at, and bumps its version (project, profile, machine and
// created_at are kept).
Status UpdateImportedRun(Txn& txn, const ImportedRun& run);

// inbox.list: supervised Stigmergy projects waiting to execute — the runs
// of profile stigmergy in READY_FOR_EXECUTION within "scope", oldest
// update first.
struct ExecutionReadyRun {
  std::string id;
  std::string title;
  std::string profile;
  std::string updated_at;
  Json meta;  // {} when unset
  std::string status;
  int64_t version = 0;
};
Result<std::vector<ExecutionReadyRun>> ListRunsReadyForExecutionForInbox(Txn& txn,
                                                                         const InboxScope& scope);

// baton status: how many runs the store holds.
Result<int64_t> CountAllRunRows(Txn& txn);

// baton status: the 200 runs updated last, latest first.
struct OverviewRun {
  std::string id;
  std::string profile;
  std::string machine;
  std::string status;
  std::string title;
  std::string updated_at;
};
Result<std::vector<OverviewRun>> ListRecentRunsForOverview(Txn& txn);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_RUN_TABLE_H_
