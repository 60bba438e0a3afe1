// File: session_table.h
//
// The sessions table: a run's working sessions (Sinfonia's: one active at a
// time per run, the others ended), each with when it started and was last
// active. Portable SQL (? placeholders), so a second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_SESSION_TABLE_H_
#define BATON_SRC_STORE_TABLES_SESSION_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// Whether a session "id" exists (of any run).
Result<bool> SessionIdTaken(Txn& txn, const std::string& id);

// The run of session "id"; nullopt when there is no such session or it has
// no run.
Result<std::optional<std::string>> FindSessionRunId(Txn& txn, const std::string& id);

// The id of run "run_id"'s active session (the newest started, should there
// be several), if any.
Result<std::optional<std::string>> FindActiveSessionId(Txn& txn, const std::string& run_id);

// Ends every active session of run "run_id" at "now".
Status EndActiveSessions(Txn& txn, const std::string& run_id, const std::string& now);

// Starts session "id" of run "run_id" at "now": active, meta {}.
Status InsertActiveSession(Txn& txn, const std::string& id, const std::string& run_id,
                           const std::string& now);

// Run "run_id"'s active sessions were last active at "now".
Status TouchActiveSessions(Txn& txn, const std::string& run_id, const std::string& now);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

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
