// File: task_table.h
//
// The tasks table's reads, typed (model/task.h): the columns, a row as a
// Task, one task by id, a run's tasks, and the filtered list task.list
// shows. Portable SQL (? placeholders), so a second backend runs it as is.
// The engine's writes to tasks move here table by table (issue 19).

#ifndef BATON_SRC_STORE_TABLES_TASK_TABLE_H_
#define BATON_SRC_STORE_TABLES_TASK_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "model/task.h"
#include "store/store.h"

namespace baton {

// The columns TaskFromRow reads, in its order, for "SELECT <columns> FROM tasks".
extern const char kTaskColumns[];

Task TaskFromRow(const Row& row);

// NotFound "task: no task with id ..." when there is none.
Result<Task> LoadTaskRow(Txn& txn, const std::string& id);

// Every task of a run, by position, then creation, then id.
Result<std::vector<Task>> LoadRunTaskRows(Txn& txn, const std::string& run_id);

// task.list: the tasks matching every filter that is set, by priority
// (highest first), position, creation, id; at most "limit".
struct TaskFilter {
  std::optional<std::string> project_id;
  std::optional<std::string> run_id;
  std::optional<std::string> status;
  std::optional<std::string> kind;
  std::optional<std::string> assignee;
  std::optional<std::string> parent_id;
  int64_t limit = 1000;
};
Result<std::vector<Task>> ListTaskRows(Txn& txn, const TaskFilter& filter);

// A claim's UPDATE of "task" (as loaded), made only while the row is still
// in its loaded status at its loaded epoch (otherwise another claim moved
// it: false, and "task" is unchanged). The lease goes to "owner" at "epoch"
// until "expires_at_ms", a new attempt is counted when "new_attempt", the
// blocked reason is cleared; on success "task" is the row as the UPDATE
// left it, so the caller answers without reading it again.
struct TaskClaim {
  std::string to_status;
  std::string owner;
  int64_t epoch = 0;
  int64_t expires_at_ms = 0;
  bool new_attempt = false;
  std::string now;  // updated_at
};
Result<bool> ClaimTaskRow(Txn& txn, Task& task, const TaskClaim& claim);

// A heartbeat's UPDATE: the lease of "task" (which has one) now ends at
// "expires_at_ms"; "task" becomes the row as the UPDATE left it.
Status RenewTaskLease(Txn& txn, Task& task, int64_t expires_at_ms, const std::string& now);

// Whether run "run_id" has a task of "kind" whose key is "key".
Result<bool> TaskKeyExists(Txn& txn, const std::string& run_id, const std::string& kind,
                           const std::string& key);

// h19-ledger-profiles:

// What `baton verify --deep` compares of a task with its events
// (engine/ledger/ledger_replay.h). The lease's epoch and expiry are the
// values as stored, whatever their type: a row edited by hand to hold text
// there is still reported as it is.
struct TaskLeaseForReplay {
  std::string id;
  std::string status;
  std::optional<std::string> lease_owner;
  SqlValue lease_epoch;
  SqlValue lease_expires_at;
  std::optional<std::string> run_id;
};
// Every task, by id.
Result<std::vector<TaskLeaseForReplay>> ListTaskLeasesForReplay(Txn& txn);

// sgai's todo lists: the ids of run "run_id"'s tasks of "kind" ("todo" or
// "project_todo") that still have a key (not archived), only those
// assigned to "assignee" when it is set; by position, creation, id.
Result<std::vector<std::string>> ListSgaiTodoIds(Txn& txn, const std::string& run_id,
                                                 const std::string& kind,
                                                 const std::optional<std::string>& assignee);

// Takes todo "id" off its list: its key is cleared (so the todo id can be
// used again) and "meta" stored.
Status ArchiveSgaiTodoRow(Txn& txn, const std::string& id, const Json& meta,
                          const std::string& now);

// todo_write's update of an existing todo "id".
struct SgaiTodoUpdate {
  std::string title;
  int64_t priority = 0;
  int64_t position = 0;
  Json meta;
  std::string now;
};
Status UpdateSgaiTodoRow(Txn& txn, const std::string& id, const SgaiTodoUpdate& update);

// The ids of run "run_id"'s Sinfonia steps (kind "step"), by position,
// creation, id.
Result<std::vector<std::string>> ListSinfoniaStepIds(Txn& txn, const std::string& run_id);

// A Sinfonia retry counts one more attempt of step "id".
Status CountSinfoniaStepAttempt(Txn& txn, const std::string& id, const std::string& now);

// A stigmergy item (an epic, story or issue: a task of that kind).
struct StigmergyItem {
  std::string id;
  std::string kind;
  std::string key;  // "" for NULL
  std::string title;
  std::string status;
  std::optional<std::string> parent_id;
  int64_t attempts = 0;
  Json meta;  // {} when NULL or not JSON
  std::string created_at;
  std::string machine;
  std::string run_id;  // "" for NULL
};
// Run "run_id"'s items of "kind", by position then key.
Result<std::vector<StigmergyItem>> ListStigmergyItems(Txn& txn, const std::string& run_id,
                                                      const std::string& kind);
// Run "run_id"'s item of "kind" keyed "key", if any.
Result<std::optional<StigmergyItem>> FindStigmergyItem(Txn& txn, const std::string& run_id,
                                                       const std::string& kind,
                                                       const std::string& key);
// How many of epic "epic_id"'s stories in run "run_id" are not COMPLETE.
Result<int64_t> CountOpenStigmergyStories(Txn& txn, const std::string& run_id,
                                          const std::string& epic_id);
// How many issues run "run_id" has had.
Result<int64_t> CountStigmergyIssues(Txn& txn, const std::string& run_id);
// The manifest renames item "id" to "title".
Status RetitleStigmergyItem(Txn& txn, const std::string& id, const std::string& title,
                            const std::string& now);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_TASK_TABLE_H_
