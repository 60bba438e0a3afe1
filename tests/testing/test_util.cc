#include "test_util.h"

#include <cstdlib>
#include <map>
#include <mutex>

#include <gtest/gtest.h>

#include "pg_test_db.h"
#include "util/scoped_path.h"

namespace baton::testing {

bool OnPostgres() {
  const char* backend = std::getenv("BATON_TEST_BACKEND");
  return backend != nullptr && std::string(backend) == "postgres";
}

std::string TestStoreLocation(const std::string& location) {
  if (!OnPostgres() || IsPostgresLocation(location)) return location;
  if (location == ":memory:") return NewPostgresStore();
  static std::mutex mu;
  static std::map<std::string, std::string> databases;
  std::lock_guard<std::mutex> lock(mu);
  std::string& database = databases[location];
  if (database.empty()) database = NewPostgresStore();
  return database;
}

std::unique_ptr<Api> OpenApi(const std::string& location, bool group_commit,
                             const TimeSource* time) {
  ApiOptions options;
  options.store.location = TestStoreLocation(location);
  // A file store's folder is its project's (PathScope::DefaultRoot); the
  // database standing for it keeps that folder.
  if (options.store.location != location && location != ":memory:") {
    options.roots = {PathScope::DefaultRoot(location)};
  }
  options.group_commit = group_commit;
  options.time = time;
  options.validate_output = true;
  Result<std::unique_ptr<Api>> api = Api::Open(options);
  EXPECT_TRUE(api.ok()) << api.status().ToString();
  if (!api.ok()) std::abort();
  Status s = (*api)->EnsureStore();
  EXPECT_TRUE(s.ok()) << s.ToString();
  return std::move(api).value();
}

Json MustCall(Api& api, const std::string& op, const Json& input, const Actor& actor) {
  Result<Json> r = api.Call(op, input, actor);
  EXPECT_TRUE(r.ok()) << op << " " << DumpJson(input) << ": " << r.status().ToString();
  return r.ok() ? *r : Json();
}

int64_t LedgerLength(Api& api) {
  Result<Json> s = api.Call("store.status", Json::object(), Human());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? (*s)["ledger"]["head_seq"].get<int64_t>() : -1;
}

Status Refused(Api& api, const std::string& op, const Json& input, StatusCode code,
               const Actor& actor) {
  const int64_t before = LedgerLength(api);
  Result<Json> r = api.Call(op, input, actor);
  EXPECT_FALSE(r.ok()) << op << " " << DumpJson(input) << " unexpectedly succeeded";
  EXPECT_EQ(r.status().code(), code) << op << " " << DumpJson(input) << ": " << r.status().ToString();
  EXPECT_EQ(LedgerLength(api), before) << op << " changed the ledger although refused";
  return r.status();
}

}  // namespace baton::testing
