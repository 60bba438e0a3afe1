// File: wish_table.h
//
// The wishes table: Genie's wishes, one row per (project_key, slug), each
// naming its run (whose group tasks are the wish's execution groups), the
// WISH.md it came from and the signature of its group structure.
// Portable SQL (? placeholders), so a second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_WISH_TABLE_H_
#define BATON_SRC_STORE_TABLES_WISH_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

struct WishRow {
  std::string project_key;  // "" outside any project
  std::string slug;
  std::string run_id;
  std::string wish_file;  // "" for none (NULL)
  std::string signature;
  std::string created_at;
};

// The wish "slug" of "project_key", if any.
Result<std::optional<WishRow>> FindWishRow(Txn& txn, const std::string& project_key,
                                           const std::string& slug);

// The slugs of "project_key"'s wishes, in order.
Result<std::vector<std::string>> ListWishSlugs(Txn& txn, const std::string& project_key);

Status InsertWishRow(Txn& txn, const WishRow& wish);

// Forgets the wish "slug" of "project_key" (its run stays).
Status DeleteWishRow(Txn& txn, const std::string& project_key, const std::string& slug);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

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
