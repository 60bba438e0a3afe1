// File: migrations.h
//
// The schema, as an ordered list of migrations in portable SQL. A store
// records each applied migration in "schema_migrations"; Migrate() applies the
// missing ones in one write transaction, so two processes opening a new store
// at once both succeed and the schema is built once. Never edit a migration
// that has shipped: add a new one. The schema is described in docs/impl.md.

#ifndef BATON_SRC_STORE_MIGRATIONS_MIGRATIONS_H_
#define BATON_SRC_STORE_MIGRATIONS_MIGRATIONS_H_

#include <span>

#include "store/store.h"

namespace baton {

struct Migration {
  int version;
  const char* name;
  const char* sql;  // one or more statements separated by ";\n"
};

std::span<const Migration> AllMigrations();
int LatestSchemaVersion();

// Applies every missing migration on "conn". Returns the schema version.
// FailedPrecondition when the store was written by a newer baton.
Result<int> Migrate(Connection& conn);

}  // namespace baton

#endif  // BATON_SRC_STORE_MIGRATIONS_MIGRATIONS_H_
