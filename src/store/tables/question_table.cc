#include "store/tables/question_table.h"

#include <utility>

#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {
namespace {

Result<std::vector<Question>> QueryQuestions(Txn& txn, const std::string& where, SqlParams params) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(std::string("SELECT ") + kQuestionColumns +
                                                        " FROM questions WHERE " + where,
                                                    params));
  std::vector<Question> questions;
  questions.reserve(rows.size());
  for (const Row& r : rows) questions.push_back(QuestionFromRow(r));
  return questions;
}

Result<std::optional<Question>> QueryNewestQuestion(Txn& txn, const std::string& where,
                                                    SqlParams params) {
  ASSIGN_OR_RETURN(std::vector<Question> found, QueryQuestions(txn, where, params));
  if (found.empty()) return std::optional<Question>();
  return std::optional<Question>(std::move(found[0]));
}

}  // namespace

const char kQuestionColumns[] =
    "seq, id, run_id, project_id, asked_by, asked_by_role, message, questions, work_gate, "
    "blocks, status, status_before, answer, answered_by, answered_at, delivered_at, "
    "created_at, updated_at";

Question QuestionFromRow(const Row& r) {
  Question q;
  q.seq = r.Int(0);
  q.id = r.Str(1);
  q.run_id = TextOrNone(r, 2);
  q.project_id = TextOrNone(r, 3);
  q.asked_by = r.Str(4);
  q.asked_by_role = r.Str(5);
  q.message = r.Str(6);
  q.questions = JsonOr(r, 7, Json::array());
  q.work_gate = r.Int(8) != 0;
  q.blocks = JsonOr(r, 9, Json::array());
  q.status = r.Str(10);
  q.status_before = TextOrNone(r, 11);
  q.answer = JsonOr(r, 12, Json());
  q.answered_by = TextOrNone(r, 13);
  q.answered_at = TextOrNone(r, 14);
  q.delivered_at = TextOrNone(r, 15);
  q.created_at = r.Str(16);
  q.updated_at = r.Str(17);
  return q;
}

Result<Question> LoadQuestionRow(Txn& txn, int64_t seq) {
  const SqlValue params[] = {SqlInt(seq)};
  ASSIGN_OR_RETURN(std::vector<Question> found, QueryQuestions(txn, "seq = ?", params));
  if (found.empty()) return NotFoundError("question: no question with seq " + std::to_string(seq));
  return std::move(found[0]);
}

Result<std::vector<Question>> FindQuestionRows(Txn& txn, const std::string& id,
                                               const std::optional<std::string>& run_id) {
  std::string where = "id = ?";
  std::vector<SqlValue> params = {SqlText(id)};
  if (run_id) {
    where += " AND run_id = ?";
    params.push_back(SqlText(*run_id));
  }
  where += " ORDER BY CASE status WHEN 'open' THEN 0 ELSE 1 END, seq DESC";
  return QueryQuestions(txn, where, params);
}

Result<std::optional<Question>> FindOpenOrUndeliveredQuestion(
    Txn& txn, const std::string& id, const std::optional<std::string>& run_id) {
  const std::string same = run_id ? "run_id = ?" : "run_id IS NULL";
  std::vector<SqlValue> params = {SqlText(id)};
  if (run_id) params.push_back(SqlText(*run_id));
  return QueryNewestQuestion(txn,
                             "id = ? AND " + same +
                                 " AND (status = 'open' OR (status = 'answered' AND "
                                 "delivered_at IS NULL)) ORDER BY seq DESC LIMIT 1",
                             params);
}

Result<std::optional<Question>> FindUndeliveredClosedQuestion(
    Txn& txn, const std::string& id, const std::optional<std::string>& run_id) {
  std::vector<SqlValue> params = {SqlText(id)};
  std::string where = "id = ? AND status != 'open' AND delivered_at IS NULL";
  if (run_id) {
    where += " AND run_id = ?";
    params.push_back(SqlText(*run_id));
  } else {
    where += " AND run_id IS NULL";
  }
  return QueryNewestQuestion(txn, where + " ORDER BY seq DESC LIMIT 1", params);
}

Result<std::vector<Question>> ListQuestionRows(Txn& txn, const QuestionFilter& filter) {
  std::string where = "1 = 1";
  std::vector<SqlValue> params;
  for (const auto& [value, column] : {std::pair{&filter.run_id, "run_id"},
                                      {&filter.project_id, "project_id"},
                                      {&filter.status, "status"}}) {
    if (!value->has_value()) continue;
    where += std::string(" AND ") + column + " = ?";
    params.push_back(SqlText(**value));
  }
  where += " ORDER BY seq LIMIT ?";
  params.push_back(SqlInt(filter.limit));
  return QueryQuestions(txn, where, params);
}

Result<int64_t> CountOpenQuestions(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> open,
                   txn.Query("SELECT COUNT(*) FROM questions WHERE run_id = ? AND status = 'open'",
                             {SqlText(run_id)}));
  return open[0].Int(0);
}

Result<std::optional<std::string>> FirstOpenQuestionId(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id FROM questions WHERE run_id = ? AND status = 'open' "
                             "ORDER BY seq LIMIT 1",
                             {SqlText(run_id)}));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].Str(0));
}

Result<std::optional<std::string>> FirstOpenStatusBefore(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> held,
                   txn.Query("SELECT status_before FROM questions WHERE run_id = ? AND "
                             "status = 'open' ORDER BY seq LIMIT 1",
                             {SqlText(run_id)}));
  if (held.empty()) return std::optional<std::string>();
  return TextOrNone(held[0], 0);
}

Result<int64_t> InsertQuestionRow(Txn& txn, const Question& q) {
  ASSIGN_OR_RETURN(
      std::vector<Row> inserted,
      txn.Query(
          "INSERT INTO questions (id, run_id, project_id, asked_by, asked_by_role, "
          "message, questions, work_gate, blocks, status, status_before, created_at, "
          "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?) RETURNING seq",
          {SqlText(q.id), SqlNullable(q.run_id), SqlNullable(q.project_id), SqlText(q.asked_by),
           SqlText(q.asked_by_role), SqlText(q.message), SqlText(CanonicalJson(q.questions)),
           SqlInt(q.work_gate ? 1 : 0), SqlText(CanonicalJson(q.blocks)),
           SqlNullable(q.status_before), SqlText(q.created_at), SqlText(q.updated_at)}));
  return inserted.at(0).Int(0);
}

Status AnswerQuestionRow(Txn& txn, int64_t seq, const Json& answer, const std::string& answered_by,
                         const std::string& now) {
  return txn
      .Exec(
          "UPDATE questions SET status = 'answered', answer = ?, answered_by = ?, "
          "answered_at = ?, updated_at = ? WHERE seq = ?",
          {SqlText(CanonicalJson(answer)), SqlText(answered_by), SqlText(now), SqlText(now),
           SqlInt(seq)})
      .status();
}

Status CancelQuestionRow(Txn& txn, int64_t seq, const std::string& cancelled_by,
                         const std::string& now) {
  return txn
      .Exec(
          "UPDATE questions SET status = 'cancelled', answered_by = ?, answered_at = ?, "
          "updated_at = ? WHERE seq = ?",
          {SqlText(cancelled_by), SqlText(now), SqlText(now), SqlInt(seq)})
      .status();
}

Status MarkQuestionDelivered(Txn& txn, int64_t seq, const std::string& now) {
  return txn
      .Exec("UPDATE questions SET delivered_at = ?, updated_at = ? WHERE seq = ?",
            {SqlText(now), SqlText(now), SqlInt(seq)})
      .status();
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

Result<std::vector<ExportedQuestion>> ExportOpenQuestionRows(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, message, questions, work_gate, status, asked_by, "
                             "created_at FROM questions WHERE run_id = ? AND status = 'open' "
                             "ORDER BY seq",
                             {SqlText(run_id)}));
  std::vector<ExportedQuestion> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0),
                   .message = r.Str(1),
                   .questions = JsonOr(r, 2, Json::array()),
                   .work_gate = r.Int(3) != 0,
                   .status = r.Str(4),
                   .asked_by = r.Str(5),
                   .created_at = r.Str(6)});
  }
  return out;
}

Result<bool> ImportedRunHasOpenQuestion(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(
      std::vector<Row> open,
      txn.Query("SELECT 1 FROM questions WHERE run_id = ? AND status = 'open'", {SqlText(run_id)}));
  return !open.empty();
}

Status InsertImportedQuestion(Txn& txn, const ImportedQuestion& q) {
  return txn
      .Exec(
          "INSERT INTO questions (id, run_id, project_id, asked_by, asked_by_role, "
          "message, questions, work_gate, blocks, status, status_before, created_at, "
          "updated_at) VALUES (?, ?, ?, ?, 'agent', ?, ?, ?, '[]', 'open', ?, ?, ?)",
          {SqlText(q.id), SqlText(q.run_id), SqlTextOrNull(q.project_id), SqlText(q.asked_by),
           SqlText(q.message), SqlText(CanonicalJson(q.questions)), SqlInt(q.work_gate ? 1 : 0),
           SqlText(q.status_before), SqlText(q.created_at), SqlText(q.updated_at)})
      .status();
}

Result<std::vector<InboxQuestion>> ListOpenQuestionsForInbox(Txn& txn, const InboxScope& scope) {
  std::vector<SqlValue> params;
  const std::string where = InboxScopeSql(scope, "r", params);
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT q.seq, q.id, q.asked_by, q.message, q.questions, q.work_gate, "
                "q.created_at, q.run_id, r.title, r.profile FROM questions q LEFT JOIN runs "
                "r ON r.id = q.run_id WHERE q.status = 'open'" +
                    (where.empty() ? "" : " AND q.run_id IS NOT NULL" + where) + " ORDER BY q.seq",
                params));
  std::vector<InboxQuestion> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.seq = r.Int(0),
                   .id = r.Str(1),
                   .asked_by = r.Str(2),
                   .message = r.Str(3),
                   .questions = JsonOr(r, 4, Json::array()),
                   .work_gate = r.Int(5) != 0,
                   .created_at = r.Str(6),
                   .run = RunLabelAt(r, 7)});
  }
  return out;
}

Result<std::vector<OverviewQuestion>> ListOpenQuestionsForOverview(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, run_id, asked_by, questions, created_at FROM questions "
                             "WHERE status = 'open' ORDER BY seq LIMIT 200",
                             {}));
  std::vector<OverviewQuestion> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0),
                   .run_id = TextOrNone(r, 1),
                   .asked_by = r.Str(2),
                   .questions = JsonOr(r, 3, Json()),
                   .created_at = r.Str(4)});
  }
  return out;
}

// ---- What engine/graph asks ----

Result<std::vector<Question>> OpenQuestionRows(Txn& txn, const std::string& run_id) {
  const SqlValue params[] = {SqlText(run_id)};
  return QueryQuestions(txn, "run_id = ? AND status = 'open' ORDER BY seq", params);
}

Result<std::vector<std::string>> ListRunsAwaitingQuestions(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT DISTINCT run_id FROM questions WHERE run_id IS NOT NULL "
                             "AND status = 'open'",
                             {}));
  std::vector<std::string> out;
  for (const Row& r : rows) out.push_back(r.Str(0));
  return out;
}

}  // namespace baton
