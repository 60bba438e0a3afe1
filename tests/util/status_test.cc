#include "baton/status.h"

#include <gtest/gtest.h>

#include <set>

#include "baton/error_table.h"

namespace baton {
namespace {

TEST(StatusTest, OkHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, CarriesCodeMessageAndDetails) {
  Status s(StatusCode::kFailedPrecondition, "nope", {{"allowed", {"a"}}});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.ToString(), "FailedPrecondition: nope");
  EXPECT_EQ(s.ToJson()["details"]["allowed"][0], "a");
  EXPECT_EQ(s.WithPrefix("run r1").message(), "run r1: nope");
  EXPECT_EQ(s.WithPrefix("x").details(), s.details());
}

TEST(StatusTest, ResultHoldsValueOrStatus) {
  Result<int> good = 7;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  Result<int> bad = NotFoundError("gone");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
}

Result<int> Twice(Result<int> in) {
  ASSIGN_OR_RETURN(int v, std::move(in));
  return 2 * v;
}

TEST(StatusTest, AssignOrReturnPropagates) {
  EXPECT_EQ(*Twice(21), 42);
  EXPECT_EQ(Twice(AbortedError("moved")).status().code(), StatusCode::kAborted);
}

TEST(ErrorTableTest, EveryCodeHasOneRowWithDistinctExitCode) {
  std::set<int> exit_codes;
  for (StatusCode code : kAllStatusCodes) {
    const ErrorMapping& m = MappingFor(code);
    EXPECT_EQ(m.code, code);
    EXPECT_EQ(ParseStatusCode(m.name), code) << m.name;
    EXPECT_TRUE(exit_codes.insert(m.exit_code).second) << "duplicate exit code for " << m.name;
    EXPECT_GE(m.http_status, 200) << m.name;
  }
  EXPECT_EQ(ErrorTable().size(), std::size(kAllStatusCodes));
  EXPECT_EQ(MappingFor(StatusCode::kOk).exit_code, 0);
  EXPECT_EQ(MappingFor(StatusCode::kInvalidArgument).exit_code, kUsageExitCode);
  EXPECT_EQ(MappingFor(StatusCode::kNotFound).http_status, 404);
  EXPECT_EQ(MappingFor(StatusCode::kUnavailable).http_status, 503);
}

}  // namespace
}  // namespace baton
