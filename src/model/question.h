// File: question.h
//
// One row of the questions table (a question to the human partner, in
// sgai's shape: engine/core/questions.h), typed. store/tables/
// question_table.h reads and writes it; QuestionToJson gives the shape the
// question operations return (before the run's status is added). JSON
// remains where the row holds JSON: "questions", "blocks" and "answer".

#ifndef BATON_SRC_MODEL_QUESTION_H_
#define BATON_SRC_MODEL_QUESTION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct Question {
  int64_t seq = 0;  // the row's own key: one id can be asked in several runs
  std::string id;
  std::optional<std::string> run_id;
  std::optional<std::string> project_id;
  std::string asked_by;
  std::string asked_by_role;
  std::string message;
  Json questions = Json::array();  // [{question, choices[], multiSelect}]
  bool work_gate = false;
  Json blocks = Json::array();  // task ids
  std::string status;           // open | answered | cancelled
  std::optional<std::string> status_before;
  Json answer;  // null: none; else {answers, text}
  std::optional<std::string> answered_by;
  std::optional<std::string> answered_at;
  std::optional<std::string> delivered_at;
  std::string created_at;
  std::string updated_at;
};

// {seq, id, run_id | null, project_id | null, asked_by, asked_by_role,
// message, questions, work_gate, blocks, status, status_before | null,
// answer, answered_by | null, answered_at | null, delivered_at | null,
// created_at, updated_at}.
Json QuestionToJson(const Question& question);

}  // namespace baton

#endif  // BATON_SRC_MODEL_QUESTION_H_
