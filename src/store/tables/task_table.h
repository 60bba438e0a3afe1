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

// h19-core-runs:

// How many tasks run "run_id" has in each status, by status.
struct TaskStatusCount {
  std::string status;
  int64_t count = 0;
};
Result<std::vector<TaskStatusCount>> CountRunTasksByStatus(Txn& txn, const std::string& run_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_TASK_TABLE_H_
