// Genie's wish linter, rule for rule (issue 18): each of its 18 rules fires
// on a minimal wish at Genie's line:column with Genie's message, and --fix
// gives Genie's text; the Genie fixtures in the shared folder are matched
// by rule, severity, line, column and fixability, and their fixed text byte
// for byte. The cases are written from Genie's wish-lint.ts, not copied.

#include "model/wish_lint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace baton {
namespace {

namespace fs = std::filesystem;

// The minimal clean wish; its lines are numbered as Genie's fixtures number
// theirs (the group header is line 28, Validation 38, depends-on 43).
const std::vector<std::string> kClean = {
    "# Wish: Minimal",                  // 1
    "",                                 // 2
    "| Field | Value |",                // 3
    "|-------|-------|",                // 4
    "| **Status** | DRAFT |",           // 5
    "| **Slug** | `minimal` |",         // 6
    "| **Date** | 2026-11-26 |",        // 7
    "| **Author** | you |",             // 8
    "| **Appetite** | small |",         // 9
    "| **Branch** | `wish/minimal` |",  // 10
    "",                                 // 11
    "## Summary",                       // 12
    "",                                 // 13
    "One group.",                       // 14
    "",                                 // 15
    "## Scope",                         // 16
    "",                                 // 17
    "### IN",                           // 18
    "",                                 // 19
    "- the thing",                      // 20
    "",                                 // 21
    "### OUT",                          // 22
    "",                                 // 23
    "- other things",                   // 24
    "",                                 // 25
    "## Execution Groups",              // 26
    "",                                 // 27
    "### Group 1: Do the thing",        // 28
    "",                                 // 29
    "**Goal:** Do it.",                 // 30
    "",                                 // 31
    "**Deliverables:**",                // 32
    "1. thing.ts",                      // 33
    "",                                 // 34
    "**Acceptance Criteria:**",         // 35
    "- [ ] it exists",                  // 36
    "",                                 // 37
    "**Validation:**",                  // 38
    "```bash",                          // 39
    "true",                             // 40
    "```",                              // 41
    "",                                 // 42
    "**depends-on:** none",             // 43
    "",                                 // 44: the text ends with a newline
};

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
  return out;
}

// kClean with lines [first, last] (1-based) replaced by "with".
std::string Edit(int first, int last, std::vector<std::string> with = {}) {
  std::vector<std::string> lines = kClean;
  lines.erase(lines.begin() + first - 1, lines.begin() + last);
  lines.insert(lines.begin() + first - 1, with.begin(), with.end());
  return Join(lines);
}

// "rule@line:col", fixable ones marked "+".
std::vector<std::string> Found(const WishLintReport& r) {
  std::vector<std::string> out;
  for (const WishLintViolation& v : r.violations) {
    out.push_back(v.rule + "@" + std::to_string(v.line) + ":" + std::to_string(v.column) +
                  (v.fixable ? "+" : ""));
  }
  return out;
}

struct Case {
  const char* name;
  std::string text;
  std::vector<std::string> want;
  std::string message;  // of the first violation, when given
  std::string fixed;    // the --fix text, when given
};

TEST(WishLintTest, EachOfGeniesRulesAtItsPlaceWithItsFix) {
  const std::string clean = Join(kClean);
  const std::vector<Case> cases = {
      {"clean", clean, {}, "", clean},
      {"missing-title", Edit(1, 1, {"# Minimal"}), {"missing-title@1:1"},
       "Wish must start with a `# Wish: <title>` heading", ""},
      {"metadata field", Edit(5, 5), {"metadata-table-missing-field@2:1+"},
       "Metadata table is missing required field: status", Edit(5, 5)},
      {"no metadata table", Edit(3, 10), {"metadata-table-missing-field@2:1+"},
       "Metadata table not found at top of wish", ""},
      {"missing-summary", Edit(12, 12, {"## Overview"}), {"missing-summary@12:1"},
       "Wish is missing the `## Summary` section", ""},
      {"missing-execution-groups-header", Edit(26, 27), {"missing-execution-groups-header@26:1+"},
       "Wish contains a \"### Group 1: Do the thing\" header but the parent \"## Execution "
       "Groups\" header is missing",
       clean},
      {"empty group title", Edit(28, 28, {"### Group 1:"}), {"group-header-format@28:1+"},
       "Execution group header not in canonical \"### Group N: Title\" form: ### Group 1:", ""},
      {"missing-execution-group", Edit(28, 28, {"### Grupo 1 \u2014 Do the thing"}),
       {"missing-execution-group@26:1"},
       "Wish contains `## Execution Groups` but no `### Group N: \u2026` subsections", ""},
      {"group-header-format", Edit(28, 28, {"### group 1: Do the thing"}),
       {"group-header-format@28:1+"},
       "Group header \"### group 1: Do the thing\" is not in canonical \"### Group N: Title\" "
       "form",
       clean},
      {"missing-goal-field", Edit(30, 31), {"missing-goal-field@28:1+"},
       "Group 1 (Do the thing) is missing the **Goal:** field label",
       Edit(30, 30, {"**Goal:** <TODO>"})},
      {"missing-deliverables-field", Edit(32, 34), {"missing-deliverables-field@28:1+"},
       "Group 1 (Do the thing) is missing the **Deliverables:** field label", ""},
      {"missing-acceptance-field", Edit(35, 37), {"missing-acceptance-field@28:1+"},
       "Group 1 (Do the thing) is missing the **Acceptance Criteria:** field label", ""},
      {"missing-validation-field", Edit(38, 42), {"missing-validation-field@28:1+"},
       "Group 1 (Do the thing) is missing the **Validation:** field label", ""},
      {"missing-depends-on-field", Edit(42, 43), {"missing-depends-on-field@28:1+"},
       "Group 1 (Do the thing) is missing the **depends-on:** field label", ""},
      {"goal without content", Edit(30, 30, {"**Goal:**"}), {"missing-goal-field@28:1"},
       "Group 1 (Do the thing) has the Goal label but no content", ""},
      {"acceptance without a checklist", Edit(36, 36, {"- it exists"}),
       {"missing-acceptance-field@28:1"},
       "Group 1 (Do the thing) has the Acceptance Criteria label but no content", ""},
      {"depends-on on the next line has content", Edit(43, 43, {"**depends-on:**", "none"}), {},
       "", ""},
      {"validation-not-fenced-bash", Edit(39, 41, {"true"}), {"validation-not-fenced-bash@38:1+"},
       "Validation block is not wrapped in a ```bash fenced code block", clean},
      {"validation fence tag", Edit(39, 39, {"```sh"}), {"validation-not-fenced-bash@39:1+"},
       "Validation fence has tag \"sh\" \u2014 expected `bash`", clean},
      {"missing-validation-command, empty fence", Edit(40, 40, {""}),
       {"missing-validation-command@39:1"},
       "Validation bash block is empty \u2014 add a command that verifies this group", ""},
      {"missing-validation-command, no block", Edit(39, 41), {"missing-validation-command@38:1"},
       "Validation block is empty \u2014 add a fenced `bash` block with the verification command",
       ""},
      {"scope-section-missing", Edit(16, 25), {"scope-section-missing@1:1"},
       "Wish is missing the `## Scope` section", ""},
      {"scope without IN or OUT", Edit(18, 24), {"scope-section-missing@16:1"},
       "`## Scope` section has no `### IN` or `### OUT` subsections", ""},
      {"scope without OUT", Edit(22, 25), {"scope-section-missing@16:1+"},
       "`## Scope` is missing the `### OUT` subsection",
       Edit(22, 25, {"### OUT", "", "- <TODO>", ""})},
      {"scope without IN", Edit(18, 21), {"scope-section-missing@16:1+"},
       "`## Scope` is missing the `### IN` subsection",
       Edit(17, 21, {"", "### IN", "", "- <TODO>", ""})},
      {"a title of one space parses", Edit(28, 28, {"### Group 1: "}), {}, "", ""},
      {"OUT bullets in a fence count, as Genie counts them",
       Edit(24, 24, {"```", "- other things", "```"}), {}, "", ""},
      {"empty-out-scope", Edit(24, 24, {"nothing listed"}), {"empty-out-scope@22:1"},
       "`### OUT` scope has no bullets \u2014 list at least one explicit exclusion", ""},
      {"depends-on-malformed, fixable", Edit(43, 43, {"**depends-on:** 1"}),
       {"depends-on-malformed@43:1+"},
       "depends-on value \"1\" is not in canonical \"Group N, Group M\" form",
       Edit(43, 43, {"**depends-on:** Group 1"})},
      {"depends-on-malformed and a placeholder", Edit(43, 43, {"**depends-on:** <TODO>"}),
       {"depends-on-malformed@43:1", "todo-placeholder-remaining@43:17"},
       "depends-on value \"<TODO>\" cannot be parsed \u2014 expected \"none\", \"Group N\", a "
       "descriptive name, or a slug/group reference",
       ""},
      {"depends-on-dangling", Edit(43, 43, {"**depends-on:** Group 9."}),
       {"depends-on-dangling@43:1"}, "Group 1 depends-on references non-existent Group 9", ""},
      {"descriptive and cross-wish names", Edit(43, 43, {"**depends-on:** Foundation, other-wish#2"}),
       {}, "", ""},
      {"todo-placeholder-remaining", Edit(14, 14, {"One <TODO: say more> `<TODO>` group."}),
       {"todo-placeholder-remaining@14:5"},
       "Placeholder \"<TODO: say more>\" still present \u2014 replace with real content before "
       "dispatch",
       ""},
      {"a placeholder's column counts UTF-16 units", Edit(14, 14, {"\U0001F389 <TODO>"}),
       {"todo-placeholder-remaining@14:4"}, "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const WishLintReport report = LintWishMarkdown(c.text);
    EXPECT_EQ(Found(report), c.want) << WishLintJson(report).dump(2);
    if (!c.message.empty() && !report.violations.empty()) {
      EXPECT_EQ(report.violations[0].message, c.message);
    }
    if (!c.fixed.empty()) EXPECT_EQ(ApplyWishFixes(c.text, report), c.fixed);
  }
}

TEST(WishLintTest, EveryRuleOfGeniesListIsCovered) {
  // VIOLATION_RULES of wish-schema.ts, in its order.
  const std::vector<std::string> genie = {
      "missing-execution-groups-header", "group-header-format",    "missing-goal-field",
      "missing-deliverables-field",      "missing-acceptance-field", "missing-validation-field",
      "missing-depends-on-field",        "empty-out-scope",          "missing-validation-command",
      "depends-on-malformed",            "depends-on-dangling",      "validation-not-fenced-bash",
      "metadata-table-missing-field",    "scope-section-missing",    "todo-placeholder-remaining",
      "missing-title",                   "missing-summary",          "missing-execution-group"};
  const std::vector<std::string> texts = {
      Edit(1, 1, {"# Minimal"}), Edit(5, 5), Edit(12, 12, {"## Overview"}), Edit(26, 27),
      Edit(28, 28, {"### Grupo 1 \u2014 X"}), Edit(28, 28, {"### group 1: X"}), Edit(30, 31),
      Edit(32, 34), Edit(35, 37), Edit(38, 42), Edit(42, 43), Edit(24, 24, {"x"}),
      Edit(39, 41, {"true"}),
      Edit(40, 40, {""}), Edit(43, 43, {"**depends-on:** 1"}), Edit(43, 43, {"**depends-on:** Group 9"}),
      Edit(16, 25), Edit(14, 14, {"<TODO>"})};
  std::vector<std::string> seen;
  for (const std::string& t : texts) {
    for (const WishLintViolation& v : LintWishMarkdown(t).violations) seen.push_back(v.rule);
  }
  for (const std::string& rule : genie) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), rule), seen.end()) << rule;
  }
}

// Several labels missing from one group: reported by rule, inserted bottom
// up in report order, so they read Validation, Goal, depends-on,
// Deliverables, Acceptance Criteria (as Genie's fixer leaves them).
TEST(WishLintTest, SeveralMissingLabelsAreInsertedInGeniesOrder) {
  const std::string text = Join({"# Wish: W", "", "| Field | Value |", "|---|---|",
                                 "| **Status** | DRAFT |", "| **Slug** | `w` |", "| **Date** | d |",
                                 "| **Author** | a |", "| **Appetite** | s |", "| **Branch** | b |",
                                 "", "## Summary", "", "S.", "", "## Scope", "", "### IN", "",
                                 "- x", "", "### OUT", "", "- y", "", "## Execution Groups", "",
                                 "### Group 1: One", "", "Just prose.", ""});
  const WishLintReport report = LintWishMarkdown(text);
  EXPECT_EQ(Found(report),
            (std::vector<std::string>{"missing-acceptance-field@28:1+",
                                      "missing-deliverables-field@28:1+",
                                      "missing-depends-on-field@28:1+", "missing-goal-field@28:1+",
                                      "missing-validation-field@28:1+"}));
  const std::string fixed = ApplyWishFixes(text, report);
  const size_t header = fixed.find("### Group 1: One\n");
  EXPECT_EQ(fixed.substr(header),
            "### Group 1: One\n\n**Validation:** <TODO>\n\n**Goal:** <TODO>\n\n"
            "**depends-on:** <TODO>\n\n**Deliverables:** <TODO>\n\n"
            "**Acceptance Criteria:** <TODO>\n\nJust prose.\n");
}

TEST(WishLintTest, APlaceholderCanBeAllowedAndCrlfIsReadAsLf) {
  const std::string todo = Edit(14, 14, {"<TODO>"});
  EXPECT_EQ(Found(LintWishMarkdown(todo, {.allow_todo_placeholders = true})),
            std::vector<std::string>{});
  std::string crlf;
  for (char c : Join(kClean)) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const WishLintReport report = LintWishMarkdown(crlf);
  EXPECT_TRUE(report.violations.empty()) << WishLintJson(report).dump(2);
  EXPECT_EQ(report.slug, "minimal");
  EXPECT_EQ(ApplyWishFixes(crlf, report), Join(kClean)) << "Genie writes LF";
}

TEST(WishLintTest, JsonIsGeniesShape) {
  const Json j = WishLintJson(LintWishMarkdown(Edit(39, 39, {"```sh"})));
  EXPECT_EQ(j["summary"], Json({{"total", 1}, {"fixable", 1}, {"unfixable", 0}}));
  EXPECT_EQ(j["violations"][0]["fix"],
            Json({{"kind", "rewrite"}, {"at", {{"line", 39}}}, {"content", "```bash"},
                  {"range", {{"endLine", 39}}}}));
  EXPECT_TRUE(WishLintJson(LintWishMarkdown(Edit(5, 5)))["violations"][0]["fix"].is_null());
}

fs::path SharedDir() {
  if (const char* dir = std::getenv("BATON_SHARED_DIR"); dir && *dir) return dir;
  return fs::path(BATON_SOURCE_DIR) / ".." / "shared";
}

std::string Slurp(const fs::path& path) {
  Result<std::string> text = ReadFile(path.string());
  EXPECT_TRUE(text.ok()) << path;
  return text.ok() ? *text : std::string();
}

TEST(WishLintTest, GeniesOwnFixtures) {
  const fs::path root = SharedDir() / "fixtures" / "seeds" / "genie" / "wishes";
  ASSERT_TRUE(fs::is_directory(root)) << root;
  int checked = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(root)) {
    SCOPED_TRACE(e.path().string());
    const std::string input = Slurp(e.path() / "input.md");
    Result<Json> expected = ParseJson(Slurp(e.path() / "expected-violations.json"), "expected");
    ASSERT_TRUE(expected.ok());
    const WishLintReport report = LintWishMarkdown(input);
    const Json got = WishLintJson(report);
    ASSERT_EQ(got["violations"].size(), (*expected)["violations"].size()) << got.dump(2);
    for (size_t i = 0; i < got["violations"].size(); ++i) {
      for (const char* k : {"rule", "severity", "line", "column", "fixable"}) {
        EXPECT_EQ(got["violations"][i][k], (*expected)["violations"][i][k]) << k;
      }
    }
    EXPECT_EQ(got["summary"], (*expected)["summary"]);
    if (fs::exists(e.path() / "expected-fixed.md")) {
      std::string fixed = ApplyWishFixes(input, report);
      if (!fixed.ends_with("\n")) fixed += "\n";  // as Genie's fixture test compares
      EXPECT_EQ(fixed, Slurp(e.path() / "expected-fixed.md"));
    }
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

}  // namespace
}  // namespace baton
