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

namespace {

// "task" as a claim's UPDATE leaves it.
void ApplyClaim(Task& task, const TaskClaim& c) {
  task.status = c.to_status;
  task.lease = TaskLease{.owner = c.owner, .expires_at_ms = c.expires_at_ms};
  task.lease_epoch = c.epoch;
  task.attempts += c.new_attempt ? 1 : 0;
  task.blocked_reason.reset();
  task.version += 1;
  task.updated_at = c.now;
}

}  // namespace

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
  ApplyClaim(task, c);
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

// ---- What engine/core asks for runs, questions, approvals and projects ----

Result<std::vector<TaskStatusCount>> CountRunTasksByStatus(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT status, COUNT(*) FROM tasks WHERE run_id = ? "
                             "GROUP BY status ORDER BY status",
                             {SqlText(run_id)}));
  std::vector<TaskStatusCount> counts;
  counts.reserve(rows.size());
  for (const Row& r : rows) counts.push_back({.status = r.Str(0), .count = r.Int(1)});
  return counts;
}

// ---- What engine/core asks for the task graph, claims, agents and tokens ----

namespace {

// " AND run_id = ?" and so on for each filter of "scope" that is set, its
// values appended to "params".
std::string ScopeSql(const TaskScope& scope, std::vector<SqlValue>& params) {
  std::string sql;
  for (const auto& [value, column] : {std::pair{&scope.run_id, "run_id"},
                                      {&scope.project_id, "project_id"}, {&scope.kind, "kind"}}) {
    if (!value->has_value()) continue;
    sql += std::string(" AND ") + column + " = ?";
    params.push_back(SqlText(**value));
  }
  return sql;
}

Result<std::optional<std::string>> FirstId(Txn& txn, const std::string& sql,
                                           const std::vector<SqlValue>& params) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].Str(0));
}

// The first column of each row "sql" returns, as text.
Result<std::vector<std::string>> Ids(Txn& txn, std::string_view sql,
                                     const std::vector<SqlValue>& params) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  return FirstColumn(rows);
}

const char* LeaseSql(TaskLeaseUpdate lease) {
  switch (lease) {
    case TaskLeaseUpdate::kKeep:
      return "";
    case TaskLeaseUpdate::kClearExpiry:
      return ", lease_expires_at = NULL";
    case TaskLeaseUpdate::kClear:
      return ", lease_owner = NULL, lease_expires_at = NULL";
  }
  return "";
}

}  // namespace

Status InsertTaskRow(Txn& txn, const Task& t) {
  return txn
      .Exec("INSERT INTO tasks (id, run_id, project_id, parent_id, kind, key, "
            "title, body, machine, status, priority, position, assignee, attempts, "
            "board_column, result, meta, trigger_rule, version, created_at, updated_at) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
            {SqlText(t.id), SqlNullable(t.run_id), SqlNullable(t.project_id), SqlNullable(t.parent_id),
             SqlText(t.kind), SqlNullable(t.key), SqlText(t.title), SqlText(t.body),
             SqlText(t.machine), SqlText(t.status), SqlInt(t.priority), SqlInt(t.position),
             SqlNullable(t.assignee), SqlInt(t.attempts), SqlNullable(t.board_column),
             t.result.is_null() ? SqlNull() : SqlText(CanonicalJson(t.result)),
             SqlText(CanonicalJson(t.meta)), SqlText(t.trigger_rule), SqlText(t.created_at),
             SqlText(t.updated_at)})
      .status();
}

Status UpdateTaskStatusRow(Txn& txn, const std::string& id, const TaskStatusUpdate& u) {
  std::string sql = "UPDATE tasks SET status = ?, blocked_reason = ?, "
                    "version = version + 1, updated_at = ?";
  sql += LeaseSql(u.lease);
  std::vector<SqlValue> params = {SqlText(u.to_status), SqlNullable(u.blocked_reason),
                                  SqlText(u.now)};
  const TaskAlsoSet& also = u.also;
  if (also.meta) {
    sql += ", meta = ?";
    params.push_back(SqlText(CanonicalJson(*also.meta)));
  }
  if (also.result) {
    sql += ", result = ?";
    params.push_back(SqlText(CanonicalJson(*also.result)));
  }
  if (also.attempts) {
    sql += ", attempts = ?";
    params.push_back(SqlInt(*also.attempts));
  }
  if (also.assignee) {
    sql += ", assignee = ?";
    params.push_back(SqlText(*also.assignee));
  }
  sql += " WHERE id = ?";
  params.push_back(SqlText(id));
  return txn.Exec(sql, params).status();
}

Status UpdateTaskBlockedReason(Txn& txn, const std::string& id, const std::string& reason,
                               const std::string& now) {
  return txn
      .Exec("UPDATE tasks SET blocked_reason = ?, version = version + 1, "
            "updated_at = ? WHERE id = ?",
            {SqlText(reason), SqlText(now), SqlText(id)})
      .status();
}

Status UpdateTaskBlockedReasonAndResult(Txn& txn, const std::string& id,
                                        const std::string& reason,
                                        const std::optional<Json>& result,
                                        const std::string& now) {
  return txn
      .Exec("UPDATE tasks SET blocked_reason = ?, result = COALESCE(?, result), "
            "version = version + 1, updated_at = ? WHERE id = ?",
            {SqlText(reason), result ? SqlText(CanonicalJson(*result)) : SqlNull(),
             SqlText(now), SqlText(id)})
      .status();
}

Result<std::optional<ClaimedTaskRow>> ClaimNextUnclaimedTaskRow(Txn& txn,
                                                                const std::string& status,
                                                                const TaskScope& scope,
                                                                const TaskClaim& claim) {
  std::vector<SqlValue> params = {SqlText(status)};
  const std::string next = "SELECT " + std::string(kTaskColumns) +
                           " FROM tasks WHERE status = ?" + ScopeSql(scope, params) +
                           " AND (assignee IS NULL OR assignee = ?)"
                           " ORDER BY priority DESC, position, created_at, id LIMIT 1";
  params.push_back(SqlText(claim.owner));
  std::optional<ClaimedTaskRow> claimed;
  // The claim of "before": a new attempt at the epoch after its own.
  auto claim_of = [&claim](const Task& before) {
    return TaskClaim{.to_status = claim.to_status,
                     .owner = claim.owner,
                     .epoch = before.lease_epoch + 1,
                     .expires_at_ms = claim.expires_at_ms,
                     .new_attempt = true,
                     .now = claim.now};
  };
  if (txn.dialect() != SqlDialect::kPostgres) {
    ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(next, params));
    if (rows.empty()) return claimed;
    claimed = ClaimedTaskRow{.before = TaskFromRow(rows[0]), .after = TaskFromRow(rows[0])};
    ASSIGN_OR_RETURN(const bool updated,
                     ClaimTaskRow(txn, claimed->after, claim_of(claimed->before)));
    if (!updated) return InternalError("task " + claimed->before.id + " changed mid-claim");
    return claimed;
  }
  // One round trip: the row as it was comes back, and the UPDATE's effect on
  // it is known (ApplyClaim).
  for (SqlValue v : {SqlText(claim.to_status), SqlText(claim.owner), SqlInt(claim.expires_at_ms),
                     SqlText(claim.now)}) {
    params.push_back(std::move(v));
  }
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("WITH next AS (" + next + " FOR UPDATE SKIP LOCKED), claimed AS ("
                "UPDATE tasks SET status = ?, lease_owner = ?, "
                "lease_epoch = tasks.lease_epoch + 1, lease_expires_at = ?, "
                "attempts = tasks.attempts + 1, blocked_reason = NULL, "
                "version = tasks.version + 1, updated_at = ? "
                "FROM next WHERE tasks.id = next.id RETURNING tasks.id) "
                "SELECT next.* FROM next JOIN claimed ON claimed.id = next.id",
                params));
  if (rows.empty()) return claimed;
  claimed = ClaimedTaskRow{.before = TaskFromRow(rows[0]), .after = TaskFromRow(rows[0])};
  ApplyClaim(claimed->after, claim_of(claimed->before));
  return claimed;
}

Result<std::optional<std::string>> NextExpiredLeaseTaskId(Txn& txn, const std::string& status,
                                                          int64_t now_ms,
                                                          const TaskScope& scope) {
  std::vector<SqlValue> params = {SqlText(status), SqlInt(now_ms)};
  const std::string where = ScopeSql(scope, params);
  return FirstId(txn,
                 "SELECT id FROM tasks WHERE status = ? AND "
                 "lease_expires_at < ?" + where + " ORDER BY lease_expires_at, id LIMIT 1",
                 params);
}

Result<std::vector<TaskStatusCount>> CountTasksByStatus(Txn& txn, const TaskScope& scope,
                                                        const std::string& agent) {
  std::vector<SqlValue> params = {SqlText(agent)};
  const std::string where = ScopeSql(scope, params);
  // CASE, not sum() over a boolean, which PostgreSQL refuses.
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT status, count(*), "
                             "sum(CASE WHEN assignee IS NOT NULL AND assignee <> ? THEN 1 ELSE 0 "
                             "END) FROM tasks "
                             "WHERE 1 = 1" + where + " GROUP BY status ORDER BY status",
                             params));
  std::vector<TaskStatusCount> counts;
  counts.reserve(rows.size());
  for (const Row& r : rows) {
    counts.push_back({.status = r.Str(0), .count = r.Int(1), .assigned_elsewhere = r.Int(2)});
  }
  return counts;
}

Result<std::vector<std::string>> LeasedTaskIds(Txn& txn, const std::string& owner,
                                               const std::string& status) {
  return Ids(txn, "SELECT id FROM tasks WHERE lease_owner = ? AND status = ? ORDER BY id",
             {SqlText(owner), SqlText(status)});
}

Result<std::vector<TaskIdStatus>> TasksHeldOrAssigned(Txn& txn, const std::string& agent) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, status FROM tasks WHERE (lease_owner = ? OR "
                             "assignee = ?) ORDER BY updated_at DESC",
                             {SqlText(agent), SqlText(agent)}));
  std::vector<TaskIdStatus> tasks;
  tasks.reserve(rows.size());
  for (const Row& r : rows) tasks.push_back({.id = r.Str(0), .status = r.Str(1)});
  return tasks;
}

Result<std::vector<std::string>> LeaseOwnersInStatus(Txn& txn, const std::string& agent_status,
                                                     const std::string& task_status) {
  return Ids(txn,
             "SELECT DISTINCT t.lease_owner FROM tasks t JOIN agents a ON "
             "a.id = t.lease_owner WHERE a.status = ? AND t.status = ? "
             "AND t.lease_owner IS NOT NULL ORDER BY t.lease_owner",
             {SqlText(agent_status), SqlText(task_status)});
}

// ---- What engine/coord asks (mail, teams, boards) ----

Result<std::vector<std::string>> ListRunTaskIdsInStatus(Txn& txn, const std::string& run_id,
                                                        const std::string& status) {
  return Ids(txn, "SELECT id FROM tasks WHERE run_id = ? AND status = ? ORDER BY id",
             {SqlText(run_id), SqlText(status)});
}

Status SetTaskBoardPlacement(Txn& txn, const std::string& id, const std::string& board_id,
                             const std::string& column_id, const std::string& now) {
  return txn
      .Exec("UPDATE tasks SET board_id = ?, board_column = ?, version = version + 1, "
            "updated_at = ? WHERE id = ?",
            {SqlTextOrNull(board_id), SqlTextOrNull(column_id), SqlText(now), SqlText(id)})
      .status();
}

Status ClearBoardOfTasks(Txn& txn, const std::string& board_id, const std::string& now) {
  return txn
      .Exec("UPDATE tasks SET board_id = NULL, board_column = NULL, "
            "version = version + 1, updated_at = ? WHERE board_id = ?",
            {SqlText(now), SqlText(board_id)})
      .status();
}

Result<std::vector<BoardCard>> ListBoardCards(Txn& txn, const std::string& board_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, title, status, board_column FROM tasks "
                             "WHERE board_id = ? ORDER BY priority DESC, position, created_at, id",
                             {SqlText(board_id)}));
  std::vector<BoardCard> cards;
  cards.reserve(rows.size());
  for (const Row& r : rows) {
    cards.push_back({.id = r.Str(0),
                     .title = r.Str(1),
                     .status = r.Str(2),
                     .board_column = TextOrNone(r, 3)});
  }
  return cards;
}

Result<std::vector<BoardPlacement>> ListBoardPlacements(Txn& txn, const std::string& board_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, board_column, run_id FROM tasks WHERE board_id = ? "
                             "ORDER BY id",
                             {SqlText(board_id)}));
  std::vector<BoardPlacement> placements;
  placements.reserve(rows.size());
  for (const Row& r : rows) {
    placements.push_back(
        {.id = r.Str(0), .board_column = TextOrNone(r, 1), .run_id = TextOrNone(r, 2)});
  }
  return placements;
}

Result<std::vector<std::string>> ListBoardTaskIds(Txn& txn, const std::string& board_id) {
  return Ids(txn, "SELECT id FROM tasks WHERE board_id = ? ORDER BY id", {SqlText(board_id)});
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

namespace {

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

Status UpdateImportedTaskRow(Txn& txn, const Task& t) {
  return txn
      .Exec(
          "UPDATE tasks SET title = ?, body = ?, status = ?, priority = ?, "
          "position = ?, assignee = ?, attempts = ?, board_column = ?, "
          "result = ?, meta = ?, updated_at = ?, version = version + 1 "
          "WHERE id = ?",
          {SqlText(t.title), SqlText(t.body), SqlText(t.status), SqlInt(t.priority),
           SqlInt(t.position), SqlNullable(t.assignee), SqlInt(t.attempts), SqlNullable(t.board_column),
           t.result.is_null() ? SqlNull() : SqlText(CanonicalJson(t.result)),
           SqlText(CanonicalJson(t.meta)), SqlText(t.updated_at), SqlText(t.id)})
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
  // Kept by triggers (migration 12), not counted.
  ASSIGN_OR_RETURN(Row r, txn.QueryOne("SELECT n FROM row_counts WHERE name = 'tasks'", {},
                                       "row count of tasks"));
  return r.Int(0);
}

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

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
  return Ids(txn, sql, params);
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

Result<std::vector<Task>> ListSinfoniaSteps(Txn& txn, const std::string& run_id) {
  const SqlValue params[] = {SqlText(run_id)};
  return QueryTasks(txn, "WHERE run_id = ? AND kind = 'step' ORDER BY position, created_at, id",
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

Result<std::vector<Task>> ListStigmergyTasks(Txn& txn, const std::string& run_id,
                                             const std::string& kind) {
  const SqlValue params[] = {SqlText(run_id), SqlText(kind)};
  return QueryTasks(txn, "WHERE run_id = ? AND kind = ? ORDER BY position, key", params);
}

Result<std::optional<Task>> FindStigmergyTask(Txn& txn, const std::string& run_id,
                                              const std::string& kind, const std::string& key) {
  const SqlValue params[] = {SqlText(run_id), SqlText(kind), SqlText(key)};
  ASSIGN_OR_RETURN(std::vector<Task> tasks,
                   QueryTasks(txn, "WHERE run_id = ? AND kind = ? AND key = ?", params));
  if (tasks.empty()) return std::optional<Task>();
  return std::optional<Task>(std::move(tasks[0]));
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
