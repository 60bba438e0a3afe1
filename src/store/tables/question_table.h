// File: question_table.h
//
// The questions table: what an agent, a graph's human node or a work gate
// asks the human, with its choices as JSON, its status (open until
// answered) and the run status to return to. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_QUESTION_TABLE_H_
#define BATON_SRC_STORE_TABLES_QUESTION_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "store/tables/run_table.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

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

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_QUESTION_TABLE_H_
