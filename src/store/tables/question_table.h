// File: question_table.h
//
// The questions table, typed (model/question.h): questions to the human
// partner, one row per asking (seq), several rows sharing an id when the
// same words were asked in several runs. The columns, a row as a Question,
// the lookups question.* makes by id, run and status, the new row and the
// three updates that close it or hand its outcome over. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_QUESTION_TABLE_H_
#define BATON_SRC_STORE_TABLES_QUESTION_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/question.h"
#include "store/store.h"
#include "store/tables/run_table.h"
#include "util/json_util.h"

namespace baton {

// The columns QuestionFromRow reads, in its order.
extern const char kQuestionColumns[];

Question QuestionFromRow(const Row& row);

// The row "seq"; NotFound when there is none.
Result<Question> LoadQuestionRow(Txn& txn, int64_t seq);

// Every question with id "id" (in run "run_id" when given), open ones
// first, then the newest.
Result<std::vector<Question>> FindQuestionRows(Txn& txn, const std::string& id,
                                               const std::optional<std::string>& run_id);

// The newest question "id" of run "run_id" (none: asked outside any run)
// that is still open or was answered without its asker having the answer.
Result<std::optional<Question>> FindOpenOrUndeliveredQuestion(
    Txn& txn, const std::string& id, const std::optional<std::string>& run_id);

// The newest question "id" of run "run_id" (none: asked outside any run)
// that is closed but whose outcome its asker has not had.
Result<std::optional<Question>> FindUndeliveredClosedQuestion(
    Txn& txn, const std::string& id, const std::optional<std::string>& run_id);

// question.list: the questions matching every filter that is set, by seq;
// at most "limit".
struct QuestionFilter {
  std::optional<std::string> run_id;
  std::optional<std::string> project_id;
  std::optional<std::string> status;
  int64_t limit = 1000;
};
Result<std::vector<Question>> ListQuestionRows(Txn& txn, const QuestionFilter& filter);

// How many questions of run "run_id" are open.
Result<int64_t> CountOpenQuestions(Txn& txn, const std::string& run_id);

// The id of run "run_id"'s oldest open question, if any.
Result<std::optional<std::string>> FirstOpenQuestionId(Txn& txn, const std::string& run_id);

// The status_before of run "run_id"'s oldest open question: none when it
// has no open question or that one has none.
Result<std::optional<std::string>> FirstOpenStatusBefore(Txn& txn, const std::string& run_id);

// Inserts "question" as an open question (its seq, status and answer
// fields are not written). Returns the new row's seq.
Result<int64_t> InsertQuestionRow(Txn& txn, const Question& question);

// Question "seq" becomes answered with "answer" by "answered_by" at "now".
Status AnswerQuestionRow(Txn& txn, int64_t seq, const Json& answer, const std::string& answered_by,
                         const std::string& now);

// Question "seq" becomes cancelled by "cancelled_by" at "now" (kept in
// answered_by and answered_at).
Status CancelQuestionRow(Txn& txn, int64_t seq, const std::string& cancelled_by,
                         const std::string& now);

// Question "seq"'s outcome reached its asker at "now".
Status MarkQuestionDelivered(Txn& txn, int64_t seq, const std::string& now);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

// run.export: run "run_id"'s open questions, in the order asked.
struct ExportedQuestion {
  std::string id;
  std::string message;
  Json questions;  // [] when unset
  bool work_gate = false;
  std::string status;
  std::string asked_by;
  std::string created_at;
};
Result<std::vector<ExportedQuestion>> ExportOpenQuestionRows(Txn& txn, const std::string& run_id);

// run.import: whether run "run_id" has an open question.
Result<bool> ImportedRunHasOpenQuestion(Txn& txn, const std::string& run_id);

// run.import: an open question read from a file, asked by an agent, that
// blocks nothing; "project_id" "" stores NULL; the run returns to
// "status_before" when it is answered.
struct ImportedQuestion {
  std::string id;
  std::string run_id;
  std::string project_id;
  std::string asked_by;
  std::string message;
  Json questions;
  bool work_gate = false;
  std::string status_before;
  std::string created_at;
  std::string updated_at;
};
Status InsertImportedQuestion(Txn& txn, const ImportedQuestion& q);

// inbox.list: the open questions (only those of a run within "scope" when
// it narrows anything), in the order asked, with their run when they have
// one.
struct InboxQuestion {
  int64_t seq = 0;
  std::string id;
  std::string asked_by;
  std::string message;
  Json questions;  // [] when unset
  bool work_gate = false;
  std::string created_at;
  std::optional<RunLabel> run;
};
Result<std::vector<InboxQuestion>> ListOpenQuestionsForInbox(Txn& txn, const InboxScope& scope);

// baton status: the first 200 open questions, in the order asked.
struct OverviewQuestion {
  std::string id;
  std::optional<std::string> run_id;
  std::string asked_by;
  Json questions;  // null when unset or unreadable
  std::string created_at;
};
Result<std::vector<OverviewQuestion>> ListOpenQuestionsForOverview(Txn& txn);

// The runs with a question still open, whatever their status (`baton
// ledger archive` keeps their events).
Result<std::vector<std::string>> ListRunsAwaitingQuestions(Txn& txn);

// ---- What engine/graph asks ----

// Every open question of run "run_id", oldest first (a graph run's human
// nodes: compaction keeps their checkpoints, a reset cancels them).
Result<std::vector<Question>> OpenQuestionRows(Txn& txn, const std::string& run_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_QUESTION_TABLE_H_
