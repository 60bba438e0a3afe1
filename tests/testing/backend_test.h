// File: backend_test.h
//
// The one fixture for suites that run on every backend: a store in memory, a
// file, and a file with group commit (PostgreSQL joins the list with issue
// 20). A suite derives from BackendTest, opens its Api with OpenBackend(),
// and is instantiated with
//
//   BATON_INSTANTIATE_BACKENDS(MySuite);
//
// which names each instance after its backend (MySuite.Case/file_group).

#ifndef BATON_TESTS_BACKEND_TEST_H_
#define BATON_TESTS_BACKEND_TEST_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

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
  // The store for this backend: ":memory:", or the file "name" in dir_.
  std::string Location(const std::string& name = "baton.db") const {
    return GetParam() == "memory" ? ":memory:" : dir_.File(name);
  }
  bool GroupCommit() const { return GetParam() == "file+group"; }
  // An Api on this backend's store; its "now" is "time" when given.
  std::unique_ptr<Api> OpenBackend(const TimeSource* time = nullptr,
                                   const std::string& name = "baton.db") const {
    return OpenApi(Location(name), GroupCommit(), time);
  }

  TempDir dir_;
};

}  // namespace baton::testing

#define BATON_INSTANTIATE_BACKENDS(suite)                                               \
  INSTANTIATE_TEST_SUITE_P(Backends, suite, ::testing::Values("memory", "file", "file+group"), \
                           ::baton::testing::BackendTest::Name)

#endif  // BATON_TESTS_BACKEND_TEST_H_
