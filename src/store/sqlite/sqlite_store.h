// File: sqlite_store.h
//
// The SQLite backend of store.h: WAL, foreign keys on, busy_timeout, writes
// in BEGIN IMMEDIATE, synchronous FULL/NORMAL/OFF from the durability mode.
// Prepared statements are cached per connection. See docs/impl.md "Store".

#ifndef BATON_SRC_STORE_SQLITE_SQLITE_STORE_H_
#define BATON_SRC_STORE_SQLITE_SQLITE_STORE_H_

#include <memory>

#include "store/store.h"

namespace baton {

// Creates the folder and the file if needed, sets the pragmas and migrates.
// A file that is not a SQLite database is DataLoss naming the path.
Result<std::unique_ptr<Store>> OpenSqliteStore(const StoreOptions& options);

}  // namespace baton

#endif  // BATON_SRC_STORE_SQLITE_SQLITE_STORE_H_
