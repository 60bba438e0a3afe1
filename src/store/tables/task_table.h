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
#include "store/tables/run_table.h"

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

// h19-interchange:

// run.import: what a file says of a task, written over a stored task or
// into a new one. "result" null stores NULL; "meta" is stored as canonical
// JSON.
struct ImportedTaskFields {
  std::string title;
  std::string body;
  std::string status;
  int64_t priority = 0;
  int64_t position = 0;
  std::optional<std::string> assignee;
  int64_t attempts = 0;
  std::optional<std::string> board_column;
  Json result;
  Json meta;
  std::string updated_at;
};
// Writes "fields" over task "id" and bumps its version.
Status UpdateImportedTaskRow(Txn& txn, const std::string& id, const ImportedTaskFields& fields);
// A new task "id" of run "run_id" at version 1; "project_id" "" and "key"
// "" store NULL.
struct ImportedTaskIdentity {
  std::string id;
  std::string run_id;
  std::string project_id;
  std::string kind;
  std::string key;
  std::string machine;
  std::string created_at;
};
Status InsertImportedTaskRow(Txn& txn, const ImportedTaskIdentity& identity,
                             const ImportedTaskFields& fields);
// Task "id" is a child of "parent_id".
Status SetImportedTaskParent(Txn& txn, const std::string& id, const std::string& parent_id);

// A task as an inbox item shows it, with its run when it has one.
struct InboxTask {
  std::string id;  // the story's key for ListStoriesAwaitingVerificationForInbox
  std::string title;
  std::string updated_at;
  int64_t version = 0;
  std::optional<std::string> assignee;
  std::optional<RunLabel> run;
};
// inbox.list: Stigmergy stories awaiting verification within "scope",
// oldest update first ("id" holds each story's key).
Result<std::vector<InboxTask>> ListStoriesAwaitingVerificationForInbox(Txn& txn,
                                                                       const InboxScope& scope);
// inbox.list: the open tasks (neither done nor cancelled) in column
// "column_id" of board "board_id" (only run "run_id"'s when it is not ""),
// oldest update first.
Result<std::vector<InboxTask>> ListBoardColumnCardsForInbox(Txn& txn, const std::string& board_id,
                                                            const std::string& column_id,
                                                            const std::string& run_id);

// inbox.list: tasks in progress whose lease holder is marked lost or whose
// lease ended before "now_ms", by holder, then lease end, then id; only
// project "project_id" and run "run_id" when those are not "".
struct HeldTask {
  std::string lease_owner;
  std::string agent_status;  // "" when the holder is not a registered agent
  std::optional<int64_t> lease_expires_at;
  std::string id;
  std::string title;
  std::optional<RunLabel> run;
};
Result<std::vector<HeldTask>> ListTasksOfLostAgentsForInbox(Txn& txn, int64_t now_ms,
                                                            const std::string& project_id,
                                                            const std::string& run_id);

// baton status: how many tasks the store holds.
Result<int64_t> CountAllTaskRows(Txn& txn);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_TASK_TABLE_H_
