// File: task.h
//
// One row of the tasks table, typed. store/tables/task_table.h reads it;
// the engine passes it around instead of a JSON object, and TaskToJson gives
// the shape every operation returns (ops/schemas.cc TaskOut). JSON remains
// only where the row itself holds JSON: "result" and "meta".

#ifndef BATON_SRC_MODEL_TASK_H_
#define BATON_SRC_MODEL_TASK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

// The lease an agent holds on an in-progress task (its epoch is the task's
// lease_epoch, which outlives the lease so that every new claim goes higher).
struct TaskLease {
  std::string owner;
  std::optional<int64_t> expires_at_ms;  // none: until it is released
};

struct Task {
  std::string id;
  std::optional<std::string> run_id;
  std::optional<std::string> project_id;
  std::optional<std::string> parent_id;
  std::string kind;
  std::optional<std::string> key;
  std::string title;
  std::string body;
  std::string machine;
  std::string status;
  int64_t priority = 0;
  int64_t position = 0;
  std::optional<std::string> assignee;
  std::optional<TaskLease> lease;
  int64_t lease_epoch = 0;
  int64_t attempts = 0;
  std::optional<std::string> board_column;
  Json result;  // null: none
  Json meta = Json::object();
  int64_t version = 0;
  std::string created_at;
  std::string updated_at;
  std::string trigger_rule;
  std::optional<std::string> blocked_reason;
  std::optional<std::string> board_id;
};

// {id, run_id, ..., lease: {owner, epoch, expires_at} | null, ...}.
Json TaskToJson(const Task& task);
// The lease as TaskToJson writes it (null when none).
Json TaskLeaseToJson(const Task& task);

}  // namespace baton

#endif  // BATON_SRC_MODEL_TASK_H_
