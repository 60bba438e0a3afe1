// File: postgres_store.h
//
// The PostgreSQL backend of store.h (docs/postgres.md), on libpq through
// pg_client.h. What it keeps of SQLite's behaviour, so the same engine runs
// on both:
//
//   * Writes are serialised across every server on the database: a write
//     transaction takes one transaction-scoped advisory lock as it begins,
//     as SQLite's BEGIN IMMEDIATE takes the write lock. The ledger's head is
//     therefore read and advanced by one transaction at a time, and its seq
//     is the order of commits. A server's group commit takes it once per
//     batch. Waiting longer than the store's busy deadline is Unavailable
//     busy, like a busy SQLite file.
//   * Reads run in REPEATABLE READ READ ONLY transactions: one snapshot,
//     as a SQLite read transaction sees.
//   * A failed statement aborts a PostgreSQL transaction until a rollback to
//     a savepoint; the Txn keeps the first failure and answers every later
//     statement with it, so nothing runs on a transaction in that state.
//   * Durability full is synchronous_commit=on; normal and off are
//     synchronous_commit=off (a commit acknowledged before it is flushed:
//     a server crash may lose the last moments, never corrupt).

#ifndef BATON_SRC_STORE_POSTGRES_POSTGRES_STORE_H_
#define BATON_SRC_STORE_POSTGRES_POSTGRES_STORE_H_

#include <memory>

#include "store/store.h"

namespace baton {

// Connects to the database "options.location" names (it must exist) and
// migrates it; with "create_if_missing" false, a database without a baton
// schema is NotFound. The password never appears in a message or in info().
Result<std::unique_ptr<Store>> OpenPostgresStore(const StoreOptions& options);

}  // namespace baton

#endif  // BATON_SRC_STORE_POSTGRES_POSTGRES_STORE_H_
