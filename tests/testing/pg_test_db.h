// File: pg_test_db.h
//
// PostgreSQL databases for the suites, on the server CTest's fixture
// "postgres" starts (scripts/pg_test_cluster.sh; tests/CMakeLists.txt). The
// server is named by $BATON_TEST_PG, a libpq "keyword=value" string without
// a dbname (any server a test may fill and empty); without it, the one
// CTest's fixture starts for this build tree. Each call makes a new database from a
// template that holds the current schema (made once per server, under an
// advisory lock, so parallel suites share it), as River's test schemas and
// pgtestdb do; every database a process made is dropped when it exits.

#ifndef BATON_TESTS_TESTING_PG_TEST_DB_H_
#define BATON_TESTS_TESTING_PG_TEST_DB_H_

#include <string>

namespace baton::testing {

// A new, migrated, empty database: its connection string for --store.
// Aborts the test (a fatal failure, then std::abort) when it cannot.
std::string NewPostgresStore();
// A new database with nothing in it (no baton schema).
std::string NewEmptyPostgresDatabase();
// Ends every other session on "location"'s database, as a restart or a
// failover of the server does to baton's connections; fails the test when
// there was none to end.
void DropEveryConnection(const std::string& location);

}  // namespace baton::testing

#endif  // BATON_TESTS_TESTING_PG_TEST_DB_H_
