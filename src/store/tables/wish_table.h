// File: wish_table.h
//
// The wishes table: Genie wishes, each a run registered under its slug
// within a project, with the wish file and its groups' signature. Portable
// SQL.

#ifndef BATON_SRC_STORE_TABLES_WISH_TABLE_H_
#define BATON_SRC_STORE_TABLES_WISH_TABLE_H_

#include <optional>
#include <string>

#include "store/store.h"

namespace baton {

// h19-interchange:

// run.import: registers run "run_id" as the wish "slug" of "project_key";
// false (nothing stored) when that slug is already held.
struct ImportedWish {
  std::string project_key;
  std::string slug;
  std::string run_id;
  std::optional<std::string> wish_file;
  std::string signature;
  std::string created_at;
};
Result<bool> InsertImportedWish(Txn& txn, const ImportedWish& wish);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_WISH_TABLE_H_
