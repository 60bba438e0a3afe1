// File: handoff_table.h
//
// The handoffs table: Sinfonia's hand-offs of a run, written by
// engine/profiles/sinfonia; then, section by section, what the other rooms
// ask of them (whether one exists, a run image's export and import, the
// inbox's returned steps). Every statement on handoffs is here. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_HANDOFF_TABLE_H_
#define BATON_SRC_STORE_TABLES_HANDOFF_TABLE_H_

#include <string>
#include <optional>
#include <vector>
#include <cstdint>

#include "store/store.h"
#include "store/tables/run_table.h"
#include "util/json_util.h"

namespace baton {

// A hand-off as stored (Sinfonia's envelope). "meta" is {} when NULL or
// not JSON.
struct HandoffRow {
  std::string id;
  std::string run_id;
  std::optional<std::string> session_id;
  int64_t sequence = 0;
  std::string source;
  std::string target;
  std::string type;
  std::string status;
  std::optional<std::string> step_id;
  std::string body;
  Json meta;
  std::string created_at;
  std::string updated_at;
};

// Whether run "run_id" has a hand-off "id".
Result<bool> HandoffExists(Txn& txn, const std::string& run_id, const std::string& id);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

// run.export: run "run_id"'s hand-offs, by sequence, with the kind and key
// of the task each is a step of (none when it has no key or no task).
struct ExportedHandoff {
  std::string id;
  std::optional<std::string> session_id;
  int64_t sequence = 0;
  std::string source;
  std::string target;
  std::string type;
  std::string status;
  std::string step_kind;                // the step task's kind, when "step_key" is set
  std::optional<std::string> step_key;  // the step task's key
  std::optional<std::string> step_id;
  std::string body;
  Json meta;  // {} when unset
  std::string created_at;
  std::string updated_at;
};
Result<std::vector<ExportedHandoff>> ExportRunHandoffRows(Txn& txn, const std::string& run_id);

// run.import: a hand-off read from a file, stored in its run; false
// (nothing stored) when its id, or its run's sequence, is already held.
Result<bool> InsertImportedHandoff(Txn& txn, const HandoffRow& handoff);

// inbox.list: Sinfonia steps returned for review — pending "return"
// hand-offs of runs still created or in progress within "scope", oldest
// first; "step" is the step task's key, else the run's cursor, else "".
struct ReturnedStep {
  std::string id;
  std::string source;
  std::string target;
  std::string body;
  std::string created_at;
  std::optional<RunLabel> run;
  std::string step;
};
Result<std::vector<ReturnedStep>> ListReturnedStepsForInbox(Txn& txn, const InboxScope& scope);

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----


// Run "run_id"'s hand-off "id", if any.
Result<std::optional<HandoffRow>> LoadSinfoniaHandoff(Txn& txn, const std::string& run_id,
                                                              const std::string& id);

// The sequence number run "run_id"'s next hand-off takes (1 for the first).
Result<int64_t> NextSinfoniaHandoffSequence(Txn& txn, const std::string& run_id);

// Records "handoff" as pending ("status" is not read), created and updated
// at "handoff.created_at".
Status InsertSinfoniaHandoff(Txn& txn, const HandoffRow& handoff);

// A review's stamp on hand-off "id": its status and meta, updated at "now".
Status StampSinfoniaHandoff(Txn& txn, const std::string& id, const std::string& status,
                            const Json& meta, const std::string& now);

// Run "run_id"'s hand-off for the furthest step (by the step task's
// position; the latest such hand-off), with that position.
struct SinfoniaStepHandoff {
  std::string id;
  int64_t step_position = 0;
};
Result<std::optional<SinfoniaStepHandoff>> FurthestSinfoniaStepHandoff(Txn& txn,
                                                                       const std::string& run_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_HANDOFF_TABLE_H_
