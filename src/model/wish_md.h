// File: wish_md.h
//
// Parser of Genie's WISH.md documents (automagik-dev/genie,
// `.genie/wishes/<slug>/WISH.md`) for wish.create: the title, the metadata
// table, and the execution groups under "## Execution Groups" with their
// depends-on edges, read tolerantly ("Grupo", letter names, other
// separators), and the problems that make the group graph wrong, which
// wish.create refuses: a missing section or group, malformed or dangling
// depends-on, self-dependencies, cycles and duplicate groups. Rule ids and
// positions follow Genie's where it has the rule. Genie's own report, all 18
// rules and --fix, is model/wish_lint.h (wish.lint). Lines and columns are
// 1-based; columns count code points.
//
// Pure code, no I/O; every function is thread-safe.

#ifndef BATON_SRC_MODEL_WISH_MD_H_
#define BATON_SRC_MODEL_WISH_MD_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/status.h"
#include "util/json_util.h"

namespace baton {

struct WishGroup {
  std::string name;   // "1" for "### Group 1: First", "A" for "### Group A: ..."
  std::string title;  // "First"
  // Referenced group names as written, digits without leading zeros
  // ("Group 01" -> "1"); empty for "none". Cross-wish references
  // ("other-wish#2", "slug/Group 1") are not listed.
  std::vector<std::string> depends_on;
  bool has_depends_on_field = false;
  int line = 0;             // line of the "### Group" header
  int depends_on_line = 0;  // line of the **depends-on:** label, 0 if none
};

// How a fixable violation is repaired: the "remove" lines starting at "line"
// are replaced by "lines" ("remove" 0 inserts before "line").
struct WishEdit {
  int line = 0;
  int remove = 0;
  std::vector<std::string> lines;
};

struct WishViolation {
  std::string rule;      // "depends-on-dangling", "missing-depends-on-field", ...
  std::string severity;  // "error" | "warning"
  int line = 0;
  int column = 0;
  bool fixable = false;
  std::string message;          // names the group and the reason
  std::optional<WishEdit> fix;  // set exactly when "fixable"
};

struct WishDocument {
  std::string title;  // "Multi Group" from "# Wish: Multi Group"
  std::string slug;   // the metadata table's Slug row, backticks stripped; may be empty
  // Metadata table rows, bold and backticks stripped: "Status" -> "DRAFT".
  std::map<std::string, std::string> fields;
  std::vector<WishGroup> groups;          // in document order, duplicates included
  std::vector<WishViolation> violations;  // sorted by line, column, rule
};

// Parses and lints "text". Problems in the content become violations and never
// fail the call. Returns InvalidArgument, naming the line and column, only for
// input that is not text (a NUL byte or invalid UTF-8), or for input larger than
// 1 MiB. CRLF line endings are accepted.
Result<WishDocument> ParseWishMarkdown(std::string_view text);

// {"summary": {"total", "fixable", "unfixable"},
//  "violations": [{"rule", "severity", "line", "column", "fixable", "message"}]}
Json WishViolationReport(const WishDocument& doc);


}  // namespace baton

#endif  // BATON_SRC_MODEL_WISH_MD_H_
