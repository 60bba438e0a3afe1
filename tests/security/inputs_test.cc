// Issue 15, "What was seen" 9: inputs are read exactly. A priority of 2^63
// was stored as the most negative integer, a key named twice was accepted
// with the last winning, and a full disk answered HTTP 429.

#include <gtest/gtest.h>
#include <sys/mount.h>

#include <filesystem>

#include "baton/error_table.h"
#include "formats/reader.h"
#include "test_util.h"

namespace baton::testing {
namespace {

// Parses "body" as a transport would, then calls "op" with it.
Result<Json> CallWithText(Api& api, const std::string& op, const std::string& body) {
  ASSIGN_OR_RETURN(Json input, ParseJson(body, "request body"));
  return api.Call(op, input, Human());
}

TEST(InputsTest, IntegersOutsideTheirRangeAreRefusedNamingTheField) {
  auto api = OpenApi(":memory:");
  const struct {
    std::string priority;
    std::string rule;
  } cases[] = {
      {"9223372036854775808", "must be <= 9007199254740991"},     // 2^63: stored as INT64_MIN before
      {"18446744073709551615", "must be <= 9007199254740991"},    // 2^64 - 1
      {"9007199254740992", "must be <= 9007199254740991"},        // 2^53: past what every reader holds
      {"-9223372036854775809", "must be >= -9007199254740991"},    // parsed as a float below INT64_MIN
      {"1e300", "must be <= 9007199254740991"},
      {"-1e300", "must be >= -9007199254740991"},
  };
  for (const auto& c : cases) {
    const int64_t before = LedgerLength(*api);
    Result<Json> out =
        CallWithText(*api, "task.create", R"({"title": "t", "priority": )" + c.priority + "}");
    ASSERT_FALSE(out.ok()) << c.priority << " was accepted: " << out->dump();
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << c.priority;
    EXPECT_NE(out.status().message().find("priority"), std::string::npos)
        << c.priority << ": " << out.status().message();
    EXPECT_NE(out.status().message().find(c.rule), std::string::npos)
        << c.priority << ": " << out.status().message();
    EXPECT_EQ(LedgerLength(*api), before) << c.priority;
  }
  // The largest safe integer itself is kept exactly.
  Result<Json> ok = CallWithText(*api, "task.create",
                                 R"({"title": "t", "priority": 9007199254740991})");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)["priority"].get<int64_t>(), 9007199254740991);
}

TEST(InputsTest, EveryIntegerOfEveryOperationHasARange) {
  auto api = OpenApi(":memory:");
  std::vector<std::string> unbounded;
  std::function<void(const std::string&, const Json&)> walk = [&](const std::string& at,
                                                                  const Json& schema) {
    if (!schema.is_object()) return;
    if (schema.value("type", Json()) == "integer" &&
        (!schema.contains("minimum") && !schema.contains("exclusiveMinimum") ||
         !schema.contains("maximum") && !schema.contains("exclusiveMaximum"))) {
      unbounded.push_back(at);
    }
    if (schema.contains("properties")) {
      for (const auto& [k, v] : schema["properties"].items()) walk(at + "/" + k, v);
    }
    if (schema.contains("items")) walk(at + "/items", schema["items"]);
  };
  for (const Operation* op : api->registry().All()) walk(op->name, op->input_schema);
  EXPECT_TRUE(unbounded.empty()) << "integers without a range: " << Json(unbounded).dump();
}

TEST(InputsTest, DuplicateKeysAreRefusedNamingTheKey) {
  const struct {
    std::string text;
    std::string key;
  } cases[] = {
      {R"({"title": "a", "title": "b"})", "\"title\""},
      {R"({"meta": {"x": 1, "x": 2}})", "\"x\""},
      {R"({"a": [{"k": 1}, {"k": 1, "k": 2}]})", "\"k\""},
  };
  for (const auto& c : cases) {
    Result<Json> parsed = ParseJson(c.text, "request body");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_NE(parsed.status().message().find("duplicate key " + c.key), std::string::npos)
        << c.text << ": " << parsed.status().message();
  }
  // The same key in sibling objects is no duplicate.
  EXPECT_TRUE(ParseJson(R"([{"k": 1}, {"k": 2}, {"a": {"k": 3}, "k": 4}])", "x").ok());
}

TEST(InputsTest, DuplicateKeysOverHttpChangeNothing) {
  TempDir dir;
  ServeProcess serve(dir.File("baton.db"), {"--auth", "none"});
  const std::string url = "http://127.0.0.1:" + std::to_string(serve.port()) + "/v1/ops/run.create";
  ProcessResult r = RunShell("curl -s -o /dev/stdout -w '\\n%{http_code}' -H 'Content-Type: "
                             "application/json' -d '{\"title\": \"a\", \"title\": \"b\"}' " + url);
  EXPECT_NE(r.out.find("duplicate key \\\"title\\\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n400"), std::string::npos) << r.out;
  ProcessResult list = RunBaton({"--store", dir.File("baton.db"), "--output", "json", "run", "list"});
  EXPECT_EQ(list.out.find("\"title\""), std::string::npos) << list.out;
}

TEST(InputsTest, SeedFilesKeepTheLastOfARepeatedKeyAsTheirSystemsDo) {
  // Go's encoding/json and JSON.parse keep the last value: so does a seed reader.
  Result<Json> parsed = ReadJsonObject(R"({"status": "a", "status": "b"})", "state.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ((*parsed)["status"], "b");
}

// A store on a 1 MiB tmpfs, written until the disk is full.
class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0 ||
        mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, "size=1m") != 0) {
      GTEST_SKIP() << "mounting a tmpfs needs root (CI runs as root)";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) umount2(dir_.path().c_str(), MNT_DETACH);
  }
  TempDir dir_;
  bool mounted_ = false;
};

TEST_F(FullDiskTest, AFullDiskIsResourceExhaustedAndHttp507) {
  auto api = OpenApi(dir_.File("baton.db"));
  Json run = MustCall(*api, "run.create", {{"title", "fill"}});
  const std::string body(9000, 'x');
  Status last;
  for (int i = 0; i < 2000 && last.ok(); ++i) {
    last = api->Call("run.add_progress", {{"id", run["id"]}, {"description", body}}, Human())
               .status();
  }
  ASSERT_FALSE(last.ok()) << "1 MiB never filled";
  EXPECT_EQ(last.code(), StatusCode::kResourceExhausted) << last.ToString();
  EXPECT_EQ(HttpStatusFor(last), 507) << last.ToString();
  EXPECT_NE(last.message().find("disk is full"), std::string::npos) << last.ToString();
  // Other limits keep their status: only storage is 507.
  EXPECT_EQ(HttpStatusFor(ResourceExhaustedError("too big")), 429);
}

}  // namespace
}  // namespace baton::testing
