// File: run.h
//
// One row of the runs table, typed. store/tables/run_table.h reads and
// writes it; RunToJson gives the shape every operation returns for a run
// (LoadRun, ops/schemas.cc RunOut). JSON remains only where the row itself
// holds JSON: "context" and "meta".

#ifndef BATON_SRC_MODEL_RUN_H_
#define BATON_SRC_MODEL_RUN_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct Run {
  std::string id;
  std::optional<std::string> project_id;
  std::string profile;
  std::string machine;
  std::string status;
  std::string title;
  std::optional<std::string> cursor;
  std::optional<int64_t> cursor_index;
  Json context = Json::object();
  Json meta = Json::object();
  int64_t version = 0;
  std::string created_at;
  std::string updated_at;
};

// {id, project_id | null, profile, machine, status, title, cursor | null,
// cursor_index | null, context, meta, version, created_at, updated_at}.
Json RunToJson(const Run& run);

// A run as an operation answers it (RunToJson's shape), typed again — for
// those who see a run only through operations (ops/graph_runner.cc). A text
// or number that is missing or of another type leaves its field empty (an
// optional one unset); context and meta are taken as they are ({} when
// missing).
Run RunFromJson(const Json& answer);

}  // namespace baton

#endif  // BATON_SRC_MODEL_RUN_H_
