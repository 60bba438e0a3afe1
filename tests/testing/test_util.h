// File: test_util.h
//
// For suites of the engine and the operations: an Api on a fresh store, the
// callers (human, coordinator, agent), and calls that must succeed or must
// be refused without changing the ledger. Everything in test_env.h too.

#ifndef BATON_TESTS_TESTING_TEST_UTIL_H_
#define BATON_TESTS_TESTING_TEST_UTIL_H_

#include <memory>
#include <string>

#include "ops/api.h"
#include "test_env.h"

namespace baton::testing {

// An Api on "location" (":memory:" or a file) whose operations read the
// time from "time" (null: the system clock); aborts the test on failure.
// With BATON_TEST_BACKEND=postgres (CTest's "pg:" tests) the store is a
// PostgreSQL database instead: a new one for ":memory:", and for a file
// path the one made the first time that path was opened.
std::unique_ptr<Api> OpenApi(const std::string& location, bool group_commit = false,
                             const TimeSource* time = nullptr);

// "location" itself, or under BATON_TEST_BACKEND=postgres the PostgreSQL
// database that stands for it (see OpenApi).
std::string TestStoreLocation(const std::string& location);
// Whether this run's stores are PostgreSQL databases (a "pg:" test).
bool OnPostgres();

inline Actor Human() { return Actor{"alice", "human"}; }
inline Actor Coordinator() { return Actor{"coord", "coordinator"}; }
inline Actor Agent(const std::string& id = "coder") { return Actor{id, "agent"}; }
// "a" holding every grant, as the user at the terminal does: for suites
// whose callers run commands or name folders outside the store's project.
inline Actor Granted(Actor a) {
  a.grants = AllGrants();
  return a;
}

// Calls and asserts success, returning the result (null JSON on failure,
// after recording a test failure naming the op and status).
Json MustCall(Api& api, const std::string& op, const Json& input,
              const Actor& actor = Human());

// Number of ledger events in the store.
int64_t LedgerLength(Api& api);

// Calls "op" expecting it to fail with "code" and to leave the ledger as it
// was (a refused call changes nothing); returns the status for more checks.
Status Refused(Api& api, const std::string& op, const Json& input, StatusCode code,
               const Actor& actor = Human());

}  // namespace baton::testing

#endif  // BATON_TESTS_TESTING_TEST_UTIL_H_
