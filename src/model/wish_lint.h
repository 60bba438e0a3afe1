// File: wish_lint.h
//
// Genie's wish linter, rule for rule (automagik-dev/genie
// src/services/wish-lint.ts and the parse errors of wish-parser.ts, read at
// 506493a3): the same 18 rule ids, the same positions (1-based line and
// column; the column of a placeholder counts UTF-16 units, as JavaScript
// does), the same messages, and `--fix` giving Genie's text byte for byte.
//
// Two phases, as Genie's: a parse error (missing title, metadata field,
// summary, Execution Groups section, group title or group) is the only
// violation reported (a missing section also lists the stray group headers);
// otherwise every post-parse scan runs. Violations are deduplicated on rule,
// position and message and sorted by line, column and rule, keeping the
// order they were found in on ties. Every violation is an "error"; some are
// fixable with no fix to apply (Genie marks them so).
//
// Differences kept on purpose: JavaScript's \s also matches U+00A0 and other
// Unicode spaces; here only ASCII whitespace counts (a wish written with
// no-break spaces in its labels reads as Genie reads it otherwise).
//
// Pure code, no I/O; every function is thread-safe.

#ifndef BATON_SRC_MODEL_WISH_LINT_H_
#define BATON_SRC_MODEL_WISH_LINT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json_util.h"

namespace baton {

// A repair: "insert" puts "content"'s lines (less one trailing empty line)
// before line "line"; "rewrite" replaces lines "line".."end_line" by them.
struct WishLintFix {
  std::string kind;  // "insert" | "rewrite"
  int line = 0;
  int end_line = 0;  // rewrite only
  std::string content;
};

struct WishLintViolation {
  std::string rule;
  std::string severity = "error";
  int line = 0;
  int column = 1;
  std::string message;
  bool fixable = false;
  std::optional<WishLintFix> fix;  // may be empty although "fixable" (Genie's way)
};

struct WishLintReport {
  std::string slug;  // the metadata table's Slug; "" after a parse error
  std::vector<WishLintViolation> violations;
};

struct WishLintOptions {
  bool allow_todo_placeholders = false;  // Genie's --allow-todo-placeholders
};

// Lints "markdown" (CRLF read as LF). Never fails: problems are violations.
WishLintReport LintWishMarkdown(std::string_view markdown, WishLintOptions options = {});

// Genie's applyFixes: the fixes of the report, bottom up (ties in report
// order); the result has LF line endings.
std::string ApplyWishFixes(std::string_view markdown, const WishLintReport& report);

// {"violations": [{rule, severity, line, column, message, fixable, fix}],
//  "summary": {total, fixable, unfixable}}, fix as Genie's JSON has it
// ({kind, at: {line}, content[, range: {endLine}]} or null).
Json WishLintJson(const WishLintReport& report);

}  // namespace baton

#endif  // BATON_SRC_MODEL_WISH_LINT_H_
