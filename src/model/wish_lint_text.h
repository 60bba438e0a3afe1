// File: wish_lint_text.h
//
// The text side of the wish linter: JavaScript's regex pieces written by
// hand (anchored, no backtracking), and the document as Genie's
// wish-parser.ts sees it (headings outside fences, their spans, the
// execution groups). model/wish_lint.cc builds its rules on these.
//
// Pure code, no I/O; every function is thread-safe.

#ifndef BATON_SRC_MODEL_WISH_LINT_TEXT_H_
#define BATON_SRC_MODEL_WISH_LINT_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton {
namespace wish_text {

inline bool IsWs(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string_view Trim(std::string_view s);

bool IEquals(std::string_view a, std::string_view b);

// A cursor over one line, for the anchored patterns below.
struct Scan {
  std::string_view s;
  size_t i = 0;
  bool Eat(std::string_view word, bool icase = true) {
    if (s.size() - i < word.size()) return false;
    const std::string_view at = s.substr(i, word.size());
    if (icase ? !IEquals(at, word) : at != word) return false;
    i += word.size();
    return true;
  }
  size_t Spaces() {  // \s*
    const size_t from = i;
    while (i < s.size() && IsWs(s[i])) ++i;
    return i - from;
  }
  std::string_view Digits() {  // \d*
    const size_t from = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    return s.substr(from, i - from);
  }
  std::string_view Rest() const { return s.substr(i); }
};

struct Heading {
  int level = 0;
  std::string title;
};

// /^\s*```/
bool IsFence(std::string_view line);

// /^(#{1,6})\s+(.*?)\s*$/
std::optional<Heading> HeadingOf(std::string_view line);

// /^###\s+Group\s+\d+\s*:/ (icase as Genie's parser, or not as its linter)
bool IsCanonicalGroupHeader(std::string_view line, bool icase);

// /^###\s+(group|grupo)\s+\d+/i
bool IsAnyGroupHeader(std::string_view line);

// /^###\s+(group|grupo)\s+(\d+)\s*([-—:])?\s*(.*)$/i: the number and the
// title as written.
std::optional<std::pair<std::string, std::string>> StrayGroupHeader(std::string_view line);

// /^\*\*LABEL\s*:\*\*/i (the linter's) or /^\*\*LABEL:\*\*/i (the parser's);

// the rest of the line after it.
std::optional<std::string_view> AfterLabel(std::string_view line, std::string_view label,
                                           bool spaces);

bool IsAnyFieldLabel(std::string_view line);

// /^\s*[-*]\s+(.*)$/: the item's text.
std::optional<std::string_view> Bullet(std::string_view line);

// /^\s*[-*]\s+\[[ xX]\]\s+(.*)$/
bool IsChecklistItem(std::string_view line);

// JavaScript's parseInt of a digit string, for numbering groups.
int64_t ParseNumber(std::string_view digits);

// Column of byte "index" of "line" in UTF-16 units, 1-based.
int Utf16Column(std::string_view line, size_t index);

// --- the document, as wish-parser.ts sees it ---

struct Span {
  int level = 0;
  std::string title;
  int start = 0;  // 1-based line of the heading
  int end = 0;    // 1-based last line, inclusive
};

struct Group {
  int64_t number = 0;
  std::string title;
  int start = 0, end = 0;  // as Span
};

struct Doc {
  std::vector<std::string> lines;
  std::vector<Span> headings;  // outside fences, in order
  const Span* title = nullptr;
  const Span* first_h2 = nullptr;
  const Span* exec = nullptr;
  const Span* scope = nullptr;
  std::vector<Group> groups;
  std::string slug;
};

std::vector<std::string> SplitLines(std::string_view markdown);

void FindHeadings(Doc& d);

const Span* FirstHeading(const Doc& d, int level, std::string_view title_icase = {});

// H3 spans inside "parent".
std::vector<const Span*> Children(const Doc& d, const Span& parent);

}  // namespace wish_text
}  // namespace baton

#endif  // BATON_SRC_MODEL_WISH_LINT_TEXT_H_
