#include "store/tables/task_table.h"

#include <utility>

#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {
namespace {

Result<std::vector<Task>> QueryTasks(Txn& txn, const std::string& where, SqlParams params) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT ") + kTaskColumns + " FROM tasks " + where,
                             params));
  std::vector<Task> tasks;
  tasks.reserve(rows.size());
  for (const Row& r : rows) tasks.push_back(TaskFromRow(r));
  return tasks;
}

}  // namespace

const char kTaskColumns[] =
    "id, run_id, project_id, parent_id, kind, key, title, body, machine, status, "
    "priority, position, assignee, lease_owner, lease_epoch, lease_expires_at, "
    "attempts, board_column, result, meta, version, created_at, updated_at, "
    "trigger_rule, blocked_reason, board_id";

Task TaskFromRow(const Row& r) {
  Task t;
  t.id = r.Str(0);
  t.run_id = TextOrNone(r, 1);
  t.project_id = TextOrNone(r, 2);
  t.parent_id = TextOrNone(r, 3);
  t.kind = r.Str(4);
  t.key = TextOrNone(r, 5);
  t.title = r.Str(6);
  t.body = r.Str(7);
  t.machine = r.Str(8);
  t.status = r.Str(9);
  t.priority = r.Int(10);
  t.position = r.Int(11);
  t.assignee = TextOrNone(r, 12);
  if (!r.IsNull(13)) {
    t.lease = TaskLease{.owner = r.Str(13),
                        .expires_at_ms = r.IsNull(15) ? std::nullopt
                                                      : std::optional<int64_t>(r.Int(15))};
  }
  t.lease_epoch = r.Int(14);
  t.attempts = r.Int(16);
  t.board_column = TextOrNone(r, 17);
  t.result = JsonOr(r, 18, Json());
  t.meta = JsonOr(r, 19, Json::object());
  t.version = r.Int(20);
  t.created_at = r.Str(21);
  t.updated_at = r.Str(22);
  t.trigger_rule = r.Str(23);
  t.blocked_reason = TextOrNone(r, 24);
  t.board_id = TextOrNone(r, 25);
  return t;
}

Result<Task> LoadTaskRow(Txn& txn, const std::string& id) {
  const SqlValue params[] = {SqlText(id)};
  ASSIGN_OR_RETURN(std::vector<Task> tasks, QueryTasks(txn, "WHERE id = ?", params));
  if (tasks.empty()) return NotFoundError("task: no task with id \"" + id + "\"");
  return std::move(tasks[0]);
}

Result<std::vector<Task>> LoadRunTaskRows(Txn& txn, const std::string& run_id) {
  const SqlValue params[] = {SqlText(run_id)};
  return QueryTasks(txn, "WHERE run_id = ? ORDER BY position, created_at, id", params);
}

Result<std::vector<Task>> ListTaskRows(Txn& txn, const TaskFilter& filter) {
  std::string where = "WHERE 1 = 1";
  std::vector<SqlValue> params;
  for (const auto& [value, column] :
       {std::pair{&filter.project_id, "project_id"}, {&filter.run_id, "run_id"},
        {&filter.status, "status"}, {&filter.kind, "kind"}, {&filter.assignee, "assignee"},
        {&filter.parent_id, "parent_id"}}) {
    if (!value->has_value()) continue;
    where += std::string(" AND ") + column + " = ?";
    params.push_back(SqlText(**value));
  }
  where += " ORDER BY priority DESC, position, created_at, id LIMIT ?";
  params.push_back(SqlInt(filter.limit));
  return QueryTasks(txn, where, params);
}

Result<bool> TaskKeyExists(Txn& txn, const std::string& run_id, const std::string& kind,
                           const std::string& key) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT 1 FROM tasks WHERE run_id = ? AND kind = ? AND key = ?",
                             {SqlText(run_id), SqlText(kind), SqlText(key)}));
  return !rows.empty();
}

Result<bool> ClaimTaskRow(Txn& txn, Task& task, const TaskClaim& c) {
  ASSIGN_OR_RETURN(
      int64_t changed,
      txn.Exec("UPDATE tasks SET status = ?, lease_owner = ?, lease_epoch = ?, "
               "lease_expires_at = ?, attempts = attempts + ?, blocked_reason = NULL, "
               "version = version + 1, updated_at = ? "
               "WHERE id = ? AND status = ? AND lease_epoch = ?",
               {SqlText(c.to_status), SqlText(c.owner), SqlInt(c.epoch), SqlInt(c.expires_at_ms),
                SqlInt(c.new_attempt ? 1 : 0), SqlText(c.now), SqlText(task.id),
                SqlText(task.status), SqlInt(task.lease_epoch)}));
  if (changed != 1) return false;
  task.status = c.to_status;
  task.lease = TaskLease{.owner = c.owner, .expires_at_ms = c.expires_at_ms};
  task.lease_epoch = c.epoch;
  task.attempts += c.new_attempt ? 1 : 0;
  task.blocked_reason.reset();
  task.version += 1;
  task.updated_at = c.now;
  return true;
}

Status RenewTaskLease(Txn& txn, Task& task, int64_t expires_at_ms, const std::string& now) {
  RETURN_IF_ERROR(txn.Exec("UPDATE tasks SET lease_expires_at = ?, version = version + 1, "
                           "updated_at = ? WHERE id = ?",
                           {SqlInt(expires_at_ms), SqlText(now), SqlText(task.id)})
                      .status());
  if (task.lease) task.lease->expires_at_ms = expires_at_ms;
  task.version += 1;
  task.updated_at = now;
  return Status();
}

// h19-interchange:

namespace {

std::vector<SqlValue> ImportedTaskValues(const ImportedTaskFields& f) {
  return {SqlText(f.title),
          SqlText(f.body),
          SqlText(f.status),
          SqlInt(f.priority),
          SqlInt(f.position),
          f.assignee ? SqlText(*f.assignee) : SqlNull(),
          SqlInt(f.attempts),
          f.board_column ? SqlText(*f.board_column) : SqlNull(),
          f.result.is_null() ? SqlNull() : SqlText(CanonicalJson(f.result)),
          SqlText(CanonicalJson(f.meta)),
          SqlText(f.updated_at)};
}

Result<std::vector<InboxTask>> QueryInboxTasks(Txn& txn, const std::string& sql, SqlParams params) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  std::vector<InboxTask> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0),
                   .title = r.Str(1),
                   .updated_at = r.Str(2),
                   .version = r.Int(3),
                   .assignee = TextOrNone(r, 4),
                   .run = RunLabelAt(r, 5)});
  }
  return out;
}

}  // namespace

Status UpdateImportedTaskRow(Txn& txn, const std::string& id, const ImportedTaskFields& fields) {
  std::vector<SqlValue> values = ImportedTaskValues(fields);
  values.push_back(SqlText(id));
  return txn
      .Exec(
          "UPDATE tasks SET title = ?, body = ?, status = ?, priority = ?, "
          "position = ?, assignee = ?, attempts = ?, board_column = ?, "
          "result = ?, meta = ?, updated_at = ?, version = version + 1 "
          "WHERE id = ?",
          values)
      .status();
}

Status InsertImportedTaskRow(Txn& txn, const ImportedTaskIdentity& t,
                             const ImportedTaskFields& fields) {
  std::vector<SqlValue> insert = {
      SqlText(t.id),        SqlText(t.run_id),  SqlTextOrNull(t.project_id), SqlText(t.kind),
      SqlTextOrNull(t.key), SqlText(t.machine), SqlText(t.created_at)};
  std::vector<SqlValue> values = ImportedTaskValues(fields);
  insert.insert(insert.end(), values.begin(), values.end());
  return txn
      .Exec(
          "INSERT INTO tasks (id, run_id, project_id, kind, key, machine, created_at, "
          "title, body, status, priority, position, assignee, attempts, board_column, "
          "result, meta, updated_at, version) VALUES "
          "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
          insert)
      .status();
}

Status SetImportedTaskParent(Txn& txn, const std::string& id, const std::string& parent_id) {
  return txn.Exec("UPDATE tasks SET parent_id = ? WHERE id = ?", {SqlText(parent_id), SqlText(id)})
      .status();
}

Result<std::vector<InboxTask>> ListStoriesAwaitingVerificationForInbox(Txn& txn,
                                                                       const InboxScope& scope) {
  std::vector<SqlValue> params;
  const std::string where = InboxScopeSql(scope, "r", params);
  return QueryInboxTasks(txn,
                         "SELECT t.key, t.title, t.updated_at, t.version, t.assignee, t.run_id, "
                         "r.title, r.profile FROM tasks t JOIN runs r ON r.id = t.run_id WHERE "
                         "r.profile = 'stigmergy' AND t.kind = 'story' AND t.status = "
                         "'AWAITING_VERIFICATION'" +
                             where + " ORDER BY t.updated_at",
                         params);
}

Result<std::vector<InboxTask>> ListBoardColumnCardsForInbox(Txn& txn, const std::string& board_id,
                                                            const std::string& column_id,
                                                            const std::string& run_id) {
  std::vector<SqlValue> params = {SqlText(board_id), SqlText(column_id)};
  std::string sql =
      "SELECT t.id, t.title, t.updated_at, t.version, t.assignee, t.run_id, r.title, r.profile "
      "FROM tasks t LEFT JOIN runs r ON r.id = t.run_id WHERE t.board_id = ? AND "
      "t.board_column = ? AND t.status NOT IN ('done', 'cancelled')";
  if (!run_id.empty()) {
    sql += " AND t.run_id = ?";
    params.push_back(SqlText(run_id));
  }
  return QueryInboxTasks(txn, sql + " ORDER BY t.updated_at", params);
}

Result<std::vector<HeldTask>> ListTasksOfLostAgentsForInbox(Txn& txn, int64_t now_ms,
                                                            const std::string& project_id,
                                                            const std::string& run_id) {
  std::vector<SqlValue> params = {SqlInt(now_ms)};
  std::string sql =
      "SELECT t.lease_owner, COALESCE(a.status, ''), t.lease_expires_at, t.id, t.title, "
      "t.run_id, r.title, r.profile FROM tasks t LEFT JOIN agents a ON a.id = t.lease_owner "
      "LEFT JOIN runs r ON r.id = t.run_id WHERE t.status = 'in_progress' AND t.lease_owner IS "
      "NOT NULL AND (a.status = 'lost' OR t.lease_expires_at < ?)";
  if (!project_id.empty()) {
    sql += " AND t.project_id = ?";
    params.push_back(SqlText(project_id));
  }
  if (!run_id.empty()) {
    sql += " AND t.run_id = ?";
    params.push_back(SqlText(run_id));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(sql + " ORDER BY t.lease_owner, t.lease_expires_at, t.id", params));
  std::vector<HeldTask> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back(
        {.lease_owner = r.Str(0),
         .agent_status = r.Str(1),
         .lease_expires_at = r.IsNull(2) ? std::nullopt : std::optional<int64_t>(r.Int(2)),
         .id = r.Str(3),
         .title = r.Str(4),
         .run = RunLabelAt(r, 5)});
  }
  return out;
}

Result<int64_t> CountAllTaskRows(Txn& txn) {
  ASSIGN_OR_RETURN(Row r, txn.QueryOne("SELECT COUNT(*) FROM tasks", {}, "tasks"));
  return r.Int(0);
}

}  // namespace baton
