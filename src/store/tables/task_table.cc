#include "store/tables/task_table.h"

#include <utility>

#include "store/tables/row_values.h"

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

// h19-ledger-profiles:

Result<std::vector<TaskLeaseForReplay>> ListTaskLeasesForReplay(Txn& txn) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT id, status, lease_owner, lease_epoch, lease_expires_at, run_id "
                "FROM tasks ORDER BY id",
                {}));
  std::vector<TaskLeaseForReplay> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0),
                   .status = r.Str(1),
                   .lease_owner = TextOrNone(r, 2),
                   .lease_epoch = r.at(3),
                   .lease_expires_at = r.at(4),
                   .run_id = TextOrNone(r, 5)});
  }
  return out;
}

namespace {

Result<std::vector<std::string>> FirstColumnTexts(Txn& txn, std::string_view sql,
                                                  SqlParams params) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(r.Str(0));
  return out;
}

}  // namespace

Result<std::vector<std::string>> ListSgaiTodoIds(Txn& txn, const std::string& run_id,
                                                 const std::string& kind,
                                                 const std::optional<std::string>& assignee) {
  std::string sql = "SELECT id FROM tasks WHERE run_id = ? AND key IS NOT NULL AND kind = ?";
  std::vector<SqlValue> params = {SqlText(run_id), SqlText(kind)};
  if (assignee) {
    sql += " AND assignee = ?";
    params.push_back(SqlText(*assignee));
  }
  sql += " ORDER BY position, created_at, id";
  return FirstColumnTexts(txn, sql, params);
}

Status ArchiveSgaiTodoRow(Txn& txn, const std::string& id, const Json& meta,
                          const std::string& now) {
  return txn
      .Exec(
          "UPDATE tasks SET key = NULL, meta = ?, version = version + 1, updated_at = ? "
          "WHERE id = ?",
          {SqlText(CanonicalJson(meta)), SqlText(now), SqlText(id)})
      .status();
}

Status UpdateSgaiTodoRow(Txn& txn, const std::string& id, const SgaiTodoUpdate& u) {
  return txn
      .Exec(
          "UPDATE tasks SET title = ?, priority = ?, position = ?, meta = ?, "
          "version = version + 1, updated_at = ? WHERE id = ?",
          {SqlText(u.title), SqlInt(u.priority), SqlInt(u.position), SqlText(CanonicalJson(u.meta)),
           SqlText(u.now), SqlText(id)})
      .status();
}

Result<std::vector<std::string>> ListSinfoniaStepIds(Txn& txn, const std::string& run_id) {
  const SqlValue params[] = {SqlText(run_id)};
  return FirstColumnTexts(txn,
                          "SELECT id FROM tasks WHERE run_id = ? AND kind = 'step' "
                          "ORDER BY position, created_at, id",
                          params);
}

Status CountSinfoniaStepAttempt(Txn& txn, const std::string& id, const std::string& now) {
  return txn
      .Exec(
          "UPDATE tasks SET attempts = attempts + 1, version = version + 1, "
          "updated_at = ? WHERE id = ?",
          {SqlText(now), SqlText(id)})
      .status();
}

namespace {

constexpr char kStigmergyItemColumns[] =
    "id, kind, key, title, status, parent_id, attempts, meta, created_at, machine, run_id";

StigmergyItem StigmergyItemFromRow(const Row& r) {
  return StigmergyItem{.id = r.Str(0),
                       .kind = r.Str(1),
                       .key = r.Str(2),
                       .title = r.Str(3),
                       .status = r.Str(4),
                       .parent_id = TextOrNone(r, 5),
                       .attempts = r.Int(6),
                       .meta = JsonOr(r, 7, Json::object()),
                       .created_at = r.Str(8),
                       .machine = r.Str(9),
                       .run_id = r.Str(10)};
}

}  // namespace

Result<std::vector<StigmergyItem>> ListStigmergyItems(Txn& txn, const std::string& run_id,
                                                      const std::string& kind) {
  static const std::string kSql =
      std::string("SELECT ") + kStigmergyItemColumns +
      " FROM tasks WHERE run_id = ? AND kind = ? ORDER BY position, key";
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(kSql, {SqlText(run_id), SqlText(kind)}));
  std::vector<StigmergyItem> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(StigmergyItemFromRow(r));
  return out;
}

Result<std::optional<StigmergyItem>> FindStigmergyItem(Txn& txn, const std::string& run_id,
                                                       const std::string& kind,
                                                       const std::string& key) {
  static const std::string kSql = std::string("SELECT ") + kStigmergyItemColumns +
                                  " FROM tasks WHERE run_id = ? AND kind = ? AND key = ?";
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(kSql, {SqlText(run_id), SqlText(kind), SqlText(key)}));
  if (rows.empty()) return std::optional<StigmergyItem>();
  return std::optional<StigmergyItem>(StigmergyItemFromRow(rows[0]));
}

Result<int64_t> CountOpenStigmergyStories(Txn& txn, const std::string& run_id,
                                          const std::string& epic_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT COUNT(*) FROM tasks WHERE run_id = ? AND kind = 'story' "
                             "AND parent_id = ? AND status <> 'COMPLETE'",
                             {SqlText(run_id), SqlText(epic_id)}));
  return rows[0].Int(0);
}

Result<int64_t> CountStigmergyIssues(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT COUNT(*) FROM tasks WHERE run_id = ? AND kind = 'issue'",
                             {SqlText(run_id)}));
  return rows[0].Int(0);
}

Status RetitleStigmergyItem(Txn& txn, const std::string& id, const std::string& title,
                            const std::string& now) {
  return txn
      .Exec(
          "UPDATE tasks SET title = ?, version = version + 1, updated_at = ? "
          "WHERE id = ?",
          {SqlText(title), SqlText(now), SqlText(id)})
      .status();
}

}  // namespace baton
