// File: migrations.h
//
// The schema, as an ordered list of migrations in portable SQL. A store
// records each applied migration in "schema_migrations"; Migrate() applies
// each missing one in its own write transaction (which holds the store's
// write lock: BEGIN IMMEDIATE on SQLite, the advisory write lock on
// PostgreSQL), re-reading the version inside it, so two processes opening a
// new store at once both succeed and each migration runs once.
// On PostgreSQL the same text runs with INTEGER read as BIGINT, REAL as
// DOUBLE PRECISION and "INTEGER PRIMARY KEY" as a BIGINT identity; a
// migration whose text must differ there carries "postgres_sql". Never edit a migration
// that has shipped: add a new one. The schema is described in docs/impl.md.

#ifndef BATON_SRC_STORE_MIGRATIONS_MIGRATIONS_H_
#define BATON_SRC_STORE_MIGRATIONS_MIGRATIONS_H_

#include <span>
#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

struct Migration {
  int version;
  const char* name;
  const char* sql;  // one or more statements separated by ";\n"
  // The whole text for PostgreSQL, when "sql" cannot run there as it is.
  const char* postgres_sql = nullptr;
};

std::span<const Migration> AllMigrations();
// The statements of "m" in "dialect".
std::vector<std::string> MigrationStatements(const Migration& m, SqlDialect dialect);
int LatestSchemaVersion();

// Applies every missing migration on "conn". Returns the schema version.
// FailedPrecondition when the store was written by a newer baton.
Result<int> Migrate(Connection& conn);

}  // namespace baton

#endif  // BATON_SRC_STORE_MIGRATIONS_MIGRATIONS_H_
