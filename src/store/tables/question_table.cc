#include "store/tables/question_table.h"

#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

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

}  // namespace baton
