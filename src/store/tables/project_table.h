// File: project_table.h
//
// The projects table, typed (model/project.h): the columns, a row as a
// Project, one project by id, every project by name, the id a name or id
// stands for, a new project, and the count baton status shows. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_PROJECT_TABLE_H_
#define BATON_SRC_STORE_TABLES_PROJECT_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "model/project.h"
#include "store/store.h"

namespace baton {

// The columns ProjectFromRow reads, in its order.
extern const char kProjectColumns[];

Project ProjectFromRow(const Row& row);

// NotFound "project <id>" when there is none.
Result<Project> LoadProjectRow(Txn& txn, const std::string& id);

// Every project, by name.
Result<std::vector<Project>> ListProjectRows(Txn& txn);

// The id of the project whose id or name is "id_or_name", if any.
Result<std::optional<std::string>> FindProjectId(Txn& txn, const std::string& id_or_name);

// The id of a project named "name" or with id "id", if any: a new project
// may take neither.
Result<std::optional<std::string>> FindProjectNamedOrWithId(Txn& txn, const std::string& name,
                                                            const std::string& id);

// Inserts "project" at version 1 (its version is not written).
Status InsertProjectRow(Txn& txn, const Project& project);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

// baton status: how many projects the store holds.
Result<int64_t> CountAllProjectRows(Txn& txn);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_PROJECT_TABLE_H_
