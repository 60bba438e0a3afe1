// WISH.md parser and the checks wish.create refuses on: every Genie fixture
// in the shared folder (violations pinned by rule, severity, line, column and
// fixability), then table-driven cases for each rule. Genie's report and
// --fix are model/wish_lint's (wish_lint_test.cc).

#include "model/wish_md.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "util/json_util.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

// $BATON_SHARED_DIR, else "<source root>/../shared" (CTest sets
// $BATON_SOURCE_DIR; a build may define it), else "../shared".
fs::path SharedDir() {
  if (const char* dir = std::getenv("BATON_SHARED_DIR"); dir && *dir) return dir;
  if (const char* src = std::getenv("BATON_SOURCE_DIR"); src && *src) {
    return fs::path(src) / ".." / "shared";
  }
#ifdef BATON_SOURCE_DIR
  return fs::path(BATON_SOURCE_DIR) / ".." / "shared";
#else
  return "../shared";
#endif
}

std::string MustRead(const fs::path& path) {
  Result<std::string> text = ReadFile(path.string());
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

WishDocument MustParse(std::string_view text) {
  Result<WishDocument> doc = ParseWishMarkdown(text);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString() << "\n" << text;
  return doc.ok() ? *std::move(doc) : WishDocument();
}

std::vector<std::string> Rules(const WishDocument& doc) {
  std::vector<std::string> rules;
  for (const WishViolation& v : doc.violations) rules.push_back(v.rule);
  return rules;
}

const WishViolation* Find(const WishDocument& doc, std::string_view rule) {
  for (const WishViolation& v : doc.violations) {
    if (v.rule == rule) return &v;
  }
  return nullptr;
}

void CheckFixture(const fs::path& dir) {
  SCOPED_TRACE(dir.string());
  std::string input = MustRead(dir / "input.md");
  Result<Json> expected = ParseJson(MustRead(dir / "expected-violations.json"), "expected");
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  WishDocument doc = MustParse(input);
  Json report = WishViolationReport(doc);
  EXPECT_EQ(report["summary"], (*expected)["summary"]) << report.dump(2);
  const Json& want = (*expected)["violations"];
  ASSERT_EQ(report["violations"].size(), want.size()) << report.dump(2);
  for (size_t i = 0; i < want.size(); ++i) {
    for (const char* key : {"rule", "severity", "line", "column", "fixable"}) {
      EXPECT_EQ(report["violations"][i][key], want[i][key]) << "violation " << i << " " << key;
    }
    EXPECT_FALSE(report["violations"][i]["message"].get<std::string>().empty());
  }
}

TEST(WishMdTest, GenieFixtures) {
  fs::path root = SharedDir() / "fixtures" / "seeds" / "genie" / "wishes";
  ASSERT_TRUE(fs::is_directory(root))
      << root << " not found; set BATON_SHARED_DIR to the shared folder";
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(root)) {
    if (e.is_directory()) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  ASSERT_GE(dirs.size(), 3u);
  for (const fs::path& dir : dirs) CheckFixture(dir);
}

// A wish with the given execution-groups body.
std::string Wish(const std::string& groups) {
  return "# Wish: Test\n\n| Field | Value |\n|-------|-------|\n| **Status** | DRAFT |\n"
         "| **Slug** | `test-wish` |\n\n## Summary\n\nS.\n\n## Execution Groups\n\n" +
         groups;
}
// Header line of the first group in Wish(): the text above it has 13 lines.
constexpr int kFirstGroupLine = 14;

std::string Group(const std::string& name, const std::string& deps) {
  return "### Group " + name + ": T" + name + "\n\n**Goal:** g.\n\n**depends-on:** " + deps +
         "\n\n";
}

TEST(WishMdTest, ParsesCleanMultiGroup) {
  std::string input =
      MustRead(SharedDir() / "fixtures/seeds/genie/wishes/clean-multi-group/input.md");
  WishDocument doc = MustParse(input);
  EXPECT_EQ(doc.title, "Multi Group");
  EXPECT_EQ(doc.slug, "clean-multi-group");
  EXPECT_EQ(doc.fields["Status"], "DRAFT");
  EXPECT_EQ(doc.fields["Branch"], "wish/clean-multi-group");
  ASSERT_EQ(doc.groups.size(), 3u);
  struct Want {
    std::string name, title;
    std::vector<std::string> deps;
    int line;
  } want[] = {{"1", "First", {}, 28}, {"2", "Second", {"1"}, 47}, {"3", "Third", {"1", "2"}, 66}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(doc.groups[i].name, want[i].name) << i;
    EXPECT_EQ(doc.groups[i].title, want[i].title) << i;
    EXPECT_EQ(doc.groups[i].depends_on, want[i].deps) << i;
    EXPECT_EQ(doc.groups[i].line, want[i].line) << i;
    EXPECT_TRUE(doc.groups[i].has_depends_on_field) << i;
    EXPECT_GT(doc.groups[i].depends_on_line, doc.groups[i].line) << i;
  }
  EXPECT_TRUE(doc.violations.empty()) << WishViolationReport(doc).dump(2);
}

struct RuleCase {
  std::string name;
  std::string text;
  std::vector<std::string> rules;  // exactly, in report order
  std::string message_part;        // in the first violation's message
};

TEST(WishMdTest, RulesTable) {
  const RuleCase cases[] = {
      {"self",
       Wish(Group("1", "none") + Group("2", "Group 2")),
       {"depends-on-self"},
       "Group 2 (T2) depends on itself"},
      {"two-cycle",
       Wish(Group("1", "Group 2") + Group("2", "Group 1")),
       {"depends-on-cycle"},
       "1 -> 2 -> 1"},
      {"three-cycle",
       Wish(Group("1", "Group 2") + Group("2", "3") + Group("3", "group 1")),
       {"depends-on-cycle"},
       "1 -> 2 -> 3 -> 1"},
      {"cycle-behind-root",
       Wish(Group("A", "none") + Group("B", "A, C") + Group("C", "B")),
       {"depends-on-cycle"},
       "B -> C -> B"},
      {"duplicate",
       Wish(Group("1", "none") + Group("1", "none")),
       {"duplicate-group"},
       "first declaration is on line 14"},
      {"dangling",
       Wish(Group("1", "Group 1, Group 99")),
       {"depends-on-dangling", "depends-on-self"},
       "non-existent Group 99"},
      {"malformed-fixable",
       Wish(Group("1", "none") + Group("2", "none") + Group("3", "Groups 1 and 2")),
       {"depends-on-malformed"},
       "canonical"},
      {"malformed-unfixable",
       Wish(Group("1", "whatever it takes!")),
       {"depends-on-malformed"},
       "cannot be parsed"},
      {"letters-and-external",
       Wish(Group("A", "none") + Group("B", "Group a, other-wish#3")),
       {},
       ""},
      {"fenced-header-ignored",
       Wish(Group("1", "none") + "```md\n### Group 2: Fake\n**depends-on:** Group 7\n```\n"),
       {},
       ""},
      {"empty-document", "", {"missing-execution-groups-header"}, "no \"## Execution Groups\""},
      {"section-without-groups", Wish("Nothing yet.\n"), {"missing-execution-group"}, "no"},
      {"empty-depends-value",
       Wish("### Group 1: X\n\n**depends-on:**\n"),
       {"missing-depends-on-field"},
       "no value"},
      {"todo-placeholder", Wish(Group("1", "<TODO>")), {"todo-placeholder-remaining"}, "<TODO>"},
  };
  for (const RuleCase& c : cases) {
    WishDocument doc = MustParse(c.text);
    EXPECT_EQ(Rules(doc), c.rules) << c.name << "\n" << WishViolationReport(doc).dump(2);
    if (!c.rules.empty() && !doc.violations.empty()) {
      EXPECT_NE(doc.violations[0].message.find(c.message_part), std::string::npos)
          << c.name << ": " << doc.violations[0].message;
      EXPECT_EQ(doc.violations[0].severity, "error") << c.name;
    }
  }
}

TEST(WishMdTest, PositionsPointAtTheDependsOnLine) {
  WishDocument doc = MustParse(Wish(Group("1", "Group 2") + Group("2", "Group 1")));
  ASSERT_EQ(doc.violations.size(), 1u);
  EXPECT_EQ(doc.violations[0].line, kFirstGroupLine + 4);  // group 1's depends-on line
  EXPECT_EQ(doc.violations[0].column, 1);
  EXPECT_FALSE(doc.violations[0].fixable);
  doc = MustParse(Wish(Group("1", "<TODO>")));
  ASSERT_EQ(doc.violations.size(), 1u);
  EXPECT_EQ(doc.violations[0].column, 17);  // after "**depends-on:** "
}

TEST(WishMdTest, GrupoHeadersAreGroupsInNonCanonicalForm) {
  std::string text =
      Wish(Group("1", "none") + "### Grupo 2 \xE2\x80\x94 Segundo\n\n**depends-on:** Grupo 1\n");
  WishDocument doc = MustParse(text);
  ASSERT_EQ(doc.groups.size(), 2u);
  EXPECT_EQ(doc.groups[1].name, "2");
  EXPECT_EQ(doc.groups[1].title, "Segundo");
  EXPECT_EQ(doc.groups[1].depends_on, std::vector<std::string>{"1"});
  // Like Genie, both the header and "Grupo 1" are repaired to the canonical English form.
  ASSERT_EQ(Rules(doc), (std::vector<std::string>{"group-header-format", "depends-on-malformed"}));
  EXPECT_EQ(doc.violations[0].line, kFirstGroupLine + 6);
  EXPECT_EQ(doc.violations[1].line, kFirstGroupLine + 8);
  EXPECT_TRUE(doc.violations[0].fixable && doc.violations[1].fixable);
}

TEST(WishMdTest, AStrayGroupWithoutItsSectionIsReported) {
  std::string text = "# Wish: X\n\n## Summary\n\nS.\n\n### Group 1: One\n\n**depends-on:** none\n";
  WishDocument doc = MustParse(text);
  ASSERT_EQ(Rules(doc), std::vector<std::string>{"missing-execution-groups-header"});
  EXPECT_EQ(doc.violations[0].line, 7);
  EXPECT_TRUE(doc.groups.empty());
}

TEST(WishMdTest, RefusesInputThatIsNotText) {
  const struct {
    std::string text;
    std::string message_part;
  } cases[] = {
      {"# Wish: X\n\nbad \xFF byte\n", "line 3, column 5"},
      {"# Wish: X\n\xC0\xAF overlong\n", "line 2, column 1"},
      {"# Wish: X\n\xED\xA0\x80 surrogate\n", "invalid UTF-8"},
      {std::string("# Wish\0X", 8), "NUL byte"},
      {std::string((1 << 20) + 1, 'a'), "1 MiB"},
  };
  for (const auto& c : cases) {
    Result<WishDocument> doc = ParseWishMarkdown(c.text);
    ASSERT_FALSE(doc.ok()) << c.message_part;
    EXPECT_EQ(doc.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(doc.status().message().find(c.message_part), std::string::npos)
        << doc.status().message();
  }
  EXPECT_TRUE(ParseWishMarkdown(std::string(1 << 20, 'a')).ok());
  EXPECT_TRUE(ParseWishMarkdown("# Wish: T\xC3\xADtulo \xF0\x9F\x8E\x89\n").ok());
}

TEST(WishMdTest, ReportShape) {
  WishDocument doc = MustParse(Wish("### Group 1: X\n\n**Goal:** g.\n"));
  Json report = WishViolationReport(doc);
  EXPECT_EQ(report["summary"], Json({{"total", 1}, {"fixable", 1}, {"unfixable", 0}}));
  ASSERT_EQ(report["violations"].size(), 1u);
  const Json& v = report["violations"][0];
  EXPECT_EQ(v["rule"], "missing-depends-on-field");
  EXPECT_EQ(v["line"], kFirstGroupLine);
  EXPECT_EQ(v["column"], 1);
  EXPECT_EQ(v["fixable"], true);
  EXPECT_EQ(v["message"], "Group 1 (X) is missing the **depends-on:** field label");
}

}  // namespace
}  // namespace baton
