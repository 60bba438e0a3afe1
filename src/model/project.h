// File: project.h
//
// One row of the projects table, typed (store/tables/project_table.h reads
// and writes it). ProjectToJson gives the shape project.show and
// project.list return; JSON remains where the row holds JSON: "meta".

#ifndef BATON_SRC_MODEL_PROJECT_H_
#define BATON_SRC_MODEL_PROJECT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "util/json_util.h"

namespace baton {

struct Project {
  std::string id;
  std::string name;
  std::optional<std::string> repo_path;
  std::string autonomy_mode;
  Json meta = Json::object();
  int64_t version = 0;
  std::string created_at;
  std::string updated_at;
};

// {id, name, repo_path | null, autonomy_mode, meta, version, created_at,
// updated_at}.
Json ProjectToJson(const Project& project);

}  // namespace baton

#endif  // BATON_SRC_MODEL_PROJECT_H_
