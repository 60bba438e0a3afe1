// File: session_table.h
//
// The sessions table: an agent's working sessions within a run, with
// their status and activity times and meta as JSON. Ids are unique in the
// store. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_SESSION_TABLE_H_
#define BATON_SRC_STORE_TABLES_SESSION_TABLE_H_

#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

// One session as a run image carries it (run.export reads it, run.import
// writes it).
struct ExportedSession {
  std::string id;
  std::string status;
  std::string started_at;
  std::string last_active_at;
  Json meta;  // {} when unset
};

// run.export: run "run_id"'s sessions, by start, then id.
Result<std::vector<ExportedSession>> ExportRunSessionRows(Txn& txn, const std::string& run_id);

// run.import: stores "session" in run "run_id"; false (nothing stored)
// when its id is already held.
Result<bool> InsertImportedSession(Txn& txn, const std::string& run_id,
                                   const ExportedSession& session);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_SESSION_TABLE_H_
