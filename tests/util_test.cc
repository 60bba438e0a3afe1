#include <gtest/gtest.h>

#include "util/clock.h"
#include "util/json_util.h"
#include "util/sha256.h"

namespace baton {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(JsonUtilTest, CanonicalJsonSortsKeysAndIsStable) {
  Json a = Json::parse(R"({"b": 1, "a": [true, null, "x"], "c": {"z": 1.5, "y": -2}})");
  EXPECT_EQ(CanonicalJson(a), R"({"a":[true,null,"x"],"b":1,"c":{"y":-2,"z":1.5}})");
  EXPECT_EQ(CanonicalJson(Json::parse(CanonicalJson(a))), CanonicalJson(a));
}

TEST(JsonUtilTest, ParseErrorsNameSourceLineAndColumn) {
  Result<Json> r = ParseJson("{\n  \"a\": 1,\n  oops\n}", "in.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("in.json"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("line 3"), std::string::npos) << r.status().message();
}

TEST(JsonUtilTest, DeepNestingIsRefusedNotAStackOverflow) {
  for (const std::string& deep : {std::string(100000, '['),
                                  std::string(100000, '[') + std::string(100000, ']')}) {
    Result<Json> r = ParseJson(deep, "deep");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("nesting"), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(ParseJson(std::string(200, '[') + std::string(200, ']'), "ok").ok());
}

TEST(ClockTest, FormatsRfc3339Utc) {
  EXPECT_EQ(FormatTime(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatTime(1795311499123), "2026-11-22T01:38:19.123Z");
  EXPECT_NE(NewId("run"), NewId("run"));
  EXPECT_EQ(NewId("run").size(), 16u);
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

TEST(JsonUtilTest, AppendJsonStringMatchesNlohmannDump) {
  const std::string cases[] = {"", "plain", "quote \" and \\ back", "tab\tnew\nline\r",
                               std::string("nul\0byte", 8), "\x01\x1f\x7f", "ünïcödé ✓"};
  for (const std::string& c : cases) {
    std::string mine;
    AppendJsonString(c, &mine);
    EXPECT_EQ(mine, Json(c).dump()) << c;
  }
}

}  // namespace
}  // namespace baton
