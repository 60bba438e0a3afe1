// File: task_table.h
//
// The tasks table, typed (model/task.h): the columns, a row as a Task, one
// task by id, a run's tasks, the filtered list task.list shows, a claim's and
// a heartbeat's lease writes, a change of status; then, section by section,
// what each room of the engine asks of tasks. Every statement on tasks is
// here. Portable SQL (? placeholders), so a second backend runs it as is.

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


// ---- What engine/core asks for the task graph, claims, agents and tokens ----

// A task's id and status, for the reads that need no more.
struct TaskIdStatus {
  std::string id;
  std::string status;
};

// Inserts "task" at version 1: its id, run, project, parent, kind, key,
// title, body, machine, status, priority, position, assignee, attempts,
// board column, result (null stores NULL), meta, trigger rule, created_at
// and updated_at; the other columns take their defaults (no lease, no
// blocked reason, no board). task.create's new task, and run.import's task
// read from a file. AlreadyExists (from the store) when its id, or its key
// within its run, is taken.
Status InsertTaskRow(Txn& txn, const Task& task);

// Columns a change of status may set too (engine/core/task_graph.h's
// ChangeTaskStatus): each one given is written, the others keep what is
// stored.
struct TaskAlsoSet {
  std::optional<Json> meta;
  std::optional<Json> result;
  std::optional<int64_t> attempts;
  std::optional<std::string> assignee;
};

// What a change of status does to the lease columns (the epoch always stays).
enum class TaskLeaseUpdate {
  kKeep,
  kClearExpiry,  // the owner stays, to recognise a retried completion
  kClear,        // owner and expiry
};
struct TaskStatusUpdate {
  std::string to_status;
  std::optional<std::string> blocked_reason;  // none: NULL
  TaskLeaseUpdate lease = TaskLeaseUpdate::kKeep;
  TaskAlsoSet also;
  std::string now;  // updated_at
};
// Moves task "id" to "update.to_status" and bumps its version.
Status UpdateTaskStatusRow(Txn& txn, const std::string& id, const TaskStatusUpdate& update);

// Task "id" stays in its status with a new blocked reason; its version is bumped.
Status UpdateTaskBlockedReason(Txn& txn, const std::string& id, const std::string& reason,
                               const std::string& now);
// The same, setting its result to "result" when there is one.
Status UpdateTaskBlockedReasonAndResult(Txn& txn, const std::string& id,
                                        const std::string& reason,
                                        const std::optional<Json>& result,
                                        const std::string& now);

// The tasks a claim looks among: every filter that is set must match.
struct TaskScope {
  std::optional<std::string> run_id;
  std::optional<std::string> project_id;
  std::optional<std::string> kind;
};
// Claims the first task in "status" within "scope" that is assigned to
// nobody or to claim.owner, by priority (highest first), position, creation,
// id: as a new attempt, at the epoch after the row's (claim.epoch and
// claim.new_attempt are not used). On PostgreSQL one statement finds, locks
// (FOR UPDATE SKIP LOCKED) and updates the row; on SQLite, whose writer is
// alone and in-process, a read and an UPDATE. Nothing: no such task.
struct ClaimedTaskRow {
  Task before;  // the row as the claim found it
  Task after;   // the row as the claim left it
};
Result<std::optional<ClaimedTaskRow>> ClaimNextUnclaimedTaskRow(Txn& txn,
                                                                const std::string& status,
                                                                const TaskScope& scope,
                                                                const TaskClaim& claim);
// The task in "status" within "scope" whose lease ended longest before
// "now_ms" (then by id).
Result<std::optional<std::string>> NextExpiredLeaseTaskId(Txn& txn, const std::string& status,
                                                          int64_t now_ms,
                                                          const TaskScope& scope);

// The tasks within "scope" counted by status (by status name), with how many
// of each are assigned to an agent other than "agent".
struct TaskStatusCount {
  std::string status;
  int64_t count = 0;
  int64_t assigned_elsewhere = 0;
};
Result<std::vector<TaskStatusCount>> CountTasksByStatus(Txn& txn, const TaskScope& scope,
                                                        const std::string& agent);

// How many tasks run "run_id" has in each status, by status
// (assigned_elsewhere is not counted).
Result<std::vector<TaskStatusCount>> CountRunTasksByStatus(Txn& txn, const std::string& run_id);

// The ids of the tasks in "status" whose lease "owner" holds, by id.
Result<std::vector<std::string>> LeasedTaskIds(Txn& txn, const std::string& owner,
                                               const std::string& status);

// The tasks "agent" holds a lease on or is assigned, most recently updated first.
Result<std::vector<TaskIdStatus>> TasksHeldOrAssigned(Txn& txn, const std::string& agent);

// The agents in "agent_status" that hold a lease on a task in "task_status",
// each once, by id.
Result<std::vector<std::string>> LeaseOwnersInStatus(Txn& txn, const std::string& agent_status,
                                                     const std::string& task_status);

// ---- What engine/coord asks (mail, teams, boards) ----

// The ids of run "run_id"'s tasks in "status", by id.
Result<std::vector<std::string>> ListRunTaskIdsInStatus(Txn& txn, const std::string& run_id,
                                                        const std::string& status);

// Puts task "id" on board "board_id" in column "column_id" (both empty: on
// no board), bumping its version.
Status SetTaskBoardPlacement(Txn& txn, const std::string& id, const std::string& board_id,
                             const std::string& column_id, const std::string& now);
// Takes every task of board "board_id" off it.
Status ClearBoardOfTasks(Txn& txn, const std::string& board_id, const std::string& now);

// A task as a board shows it, in board order (priority, highest first,
// position, creation, id).
struct BoardCard {
  std::string id;
  std::string title;
  std::string status;
  std::optional<std::string> board_column;
};
Result<std::vector<BoardCard>> ListBoardCards(Txn& txn, const std::string& board_id);

// Where a task of a board sits, by task id, for board.reconcile.
struct BoardPlacement {
  std::string id;
  std::optional<std::string> board_column;
  std::optional<std::string> run_id;
};
Result<std::vector<BoardPlacement>> ListBoardPlacements(Txn& txn, const std::string& board_id);

// The ids of board "board_id"'s tasks, by id.
Result<std::vector<std::string>> ListBoardTaskIds(Txn& txn, const std::string& board_id);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

// run.import over a stored task: writes what a file says of it — "task"'s
// title, body, status, priority, position, assignee, attempts, board
// column, result (null stores NULL), meta and updated_at — over task
// "task.id", and bumps its version.
Status UpdateImportedTaskRow(Txn& txn, const Task& task);
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

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

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

// Run "run_id"'s Sinfonia steps (tasks of kind "step"), by position,
// creation, id: one read for the whole workflow.
Result<std::vector<Task>> ListSinfoniaSteps(Txn& txn, const std::string& run_id);

// A Sinfonia retry counts one more attempt of step "id".
Status CountSinfoniaStepAttempt(Txn& txn, const std::string& id, const std::string& now);

// Run "run_id"'s tasks of "kind" (Stigmergy epics, stories or issues), by
// position then key.
Result<std::vector<Task>> ListStigmergyTasks(Txn& txn, const std::string& run_id,
                                             const std::string& kind);
// Run "run_id"'s task of "kind" keyed "key", if any.
Result<std::optional<Task>> FindStigmergyTask(Txn& txn, const std::string& run_id,
                                              const std::string& kind, const std::string& key);
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
