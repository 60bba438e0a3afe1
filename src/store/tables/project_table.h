// File: project_table.h
//
// The projects table: the projects runs, tasks, boards and messages belong
// to, by id and unique name. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_PROJECT_TABLE_H_
#define BATON_SRC_STORE_TABLES_PROJECT_TABLE_H_

#include "store/store.h"

namespace baton {

// h19-interchange:

// baton status: how many projects the store holds.
Result<int64_t> CountAllProjectRows(Txn& txn);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_PROJECT_TABLE_H_
