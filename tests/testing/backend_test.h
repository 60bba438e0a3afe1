// File: backend_test.h
//
// The one fixture for suites that run on every backend: a store in memory, a
// file, a file with group commit, and a PostgreSQL database with group
// commit (pg_test_db.h: a new database per test, on the server CTest
// starts). A suite derives from BackendTest, opens its Api with
// OpenBackend(), and is instantiated with
//
//   BATON_INSTANTIATE_BACKENDS(MySuite);
//
// which names each instance after its backend (MySuite.Case/file_group).

#ifndef BATON_TESTS_BACKEND_TEST_H_
#define BATON_TESTS_BACKEND_TEST_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "pg_test_db.h"
#include "test_util.h"

namespace baton::testing {

class BackendTest : public ::testing::TestWithParam<std::string> {
 public:
  // "file+group" → "file_group": test names allow no '+'.
  static std::string Name(const ::testing::TestParamInfo<std::string>& info) {
    std::string name = info.param;
    for (char& c : name) c = c == '+' ? '_' : c;
    return name;
  }

 protected:
  // The store for this backend: ":memory:", the file "name" in dir_, or
  // the database made for "name" (the same one each time it is asked for).
  std::string Location(const std::string& name = "baton.db") const {
    if (GetParam() == "memory") return ":memory:";
    if (GetParam() != "postgres") return dir_.File(name);
    std::string& database = databases_[name];
    if (database.empty()) database = NewPostgresStore();
    return database;
  }
  bool GroupCommit() const { return GetParam() == "file+group" || GetParam() == "postgres"; }
  // An Api on this backend's store; its "now" is "time" when given.
  std::unique_ptr<Api> OpenBackend(const TimeSource* time = nullptr,
                                   const std::string& name = "baton.db") const {
    return OpenApi(Location(name), GroupCommit(), time);
  }

  TempDir dir_;

 private:
  mutable std::map<std::string, std::string> databases_;
};

}  // namespace baton::testing

#define BATON_INSTANTIATE_BACKENDS(suite)                                               \
  INSTANTIATE_TEST_SUITE_P(Backends, suite, ::testing::Values("memory", "file", "file+group", "postgres"), \
                           ::baton::testing::BackendTest::Name)

#endif  // BATON_TESTS_BACKEND_TEST_H_
