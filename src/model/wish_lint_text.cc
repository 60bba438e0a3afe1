#include "model/wish_lint_text.h"

#include <algorithm>

namespace baton {
namespace wish_text {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsWs(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsWs(s.back())) s.remove_suffix(1);
  return s;
}

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}


bool IsFence(std::string_view line) {  // /^\s*```/
  Scan sc{line};
  sc.Spaces();
  return sc.Eat("```", false);
}


// /^(#{1,6})\s+(.*?)\s*$/
std::optional<Heading> HeadingOf(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[n] == '#') ++n;
  if (n == 0 || n > 6 || n == line.size() || !IsWs(line[n])) return std::nullopt;
  std::string_view rest = line.substr(n);
  while (!rest.empty() && IsWs(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && IsWs(rest.back())) rest.remove_suffix(1);
  return Heading{static_cast<int>(n), std::string(rest)};
}

// /^###\s+Group\s+\d+\s*:/ (icase as Genie's parser, or not as its linter)
bool IsCanonicalGroupHeader(std::string_view line, bool icase) {
  Scan sc{line};
  if (!sc.Eat("###", false) || sc.Spaces() == 0 || !sc.Eat("Group", icase) || sc.Spaces() == 0 ||
      sc.Digits().empty()) {
    return false;
  }
  sc.Spaces();
  return sc.Eat(":", false);
}

// /^###\s+(group|grupo)\s+\d+/i
bool IsAnyGroupHeader(std::string_view line) {
  Scan sc{line};
  if (!sc.Eat("###", false) || sc.Spaces() == 0 || !(sc.Eat("grupo") || sc.Eat("group")) ||
      sc.Spaces() == 0) {
    return false;
  }
  return !sc.Digits().empty();
}

// /^###\s+(group|grupo)\s+(\d+)\s*([-—:])?\s*(.*)$/i: the number and the
// title as written.
std::optional<std::pair<std::string, std::string>> StrayGroupHeader(std::string_view line) {
  Scan sc{line};
  if (!sc.Eat("###", false) || sc.Spaces() == 0 || !(sc.Eat("grupo") || sc.Eat("group")) ||
      sc.Spaces() == 0) {
    return std::nullopt;
  }
  const std::string_view number = sc.Digits();
  if (number.empty()) return std::nullopt;
  sc.Spaces();
  if (!sc.Eat("-", false) && !sc.Eat("\u2014", false)) sc.Eat(":", false);
  sc.Spaces();
  return std::make_pair(std::string(number), std::string(sc.Rest()));
}

// /^\*\*LABEL\s*:\*\*/i (the linter's) or /^\*\*LABEL:\*\*/i (the parser's);
// the rest of the line after it.
std::optional<std::string_view> AfterLabel(std::string_view line, std::string_view label,
                                           bool spaces) {
  Scan sc{line};
  if (!sc.Eat("**", false) || !sc.Eat(label)) return std::nullopt;
  if (spaces) sc.Spaces();
  if (!sc.Eat(":**", false)) return std::nullopt;
  return sc.Rest();
}

constexpr std::string_view kFieldNames[] = {"Goal", "Deliverables", "Acceptance Criteria",
                                            "Validation", "depends-on"};

bool IsAnyFieldLabel(std::string_view line) {
  for (std::string_view name : kFieldNames) {
    if (AfterLabel(line, name, true)) return true;
  }
  return false;
}

// /^\s*[-*]\s+(.*)$/: the item's text.
std::optional<std::string_view> Bullet(std::string_view line) {
  Scan sc{line};
  sc.Spaces();
  if (!sc.Eat("-", false) && !sc.Eat("*", false)) return std::nullopt;
  if (sc.Spaces() == 0) return std::nullopt;
  return sc.Rest();
}

// /^\s*[-*]\s+\[[ xX]\]\s+(.*)$/
bool IsChecklistItem(std::string_view line) {
  std::optional<std::string_view> text = Bullet(line);
  if (!text || text->size() < 4 || (*text)[0] != '[' || (*text)[2] != ']') return false;
  const char mark = (*text)[1];
  return (mark == ' ' || mark == 'x' || mark == 'X') && IsWs((*text)[3]);
}

// JavaScript's parseInt of a digit string, for numbering groups.
int64_t ParseNumber(std::string_view digits) {
  int64_t n = 0;
  for (char c : digits) n = std::min<int64_t>(n * 10 + (c - '0'), int64_t{1} << 52);
  return n;
}

// Column of byte "index" of "line" in UTF-16 units, 1-based.
int Utf16Column(std::string_view line, size_t index) {
  int column = 1;
  for (size_t i = 0; i < index && i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if ((c & 0xC0) != 0x80) column += c >= 0xF0 ? 2 : 1;
  }
  return column;
}


std::vector<std::string> SplitLines(std::string_view markdown) {
  std::string text;
  text.reserve(markdown.size());
  for (size_t i = 0; i < markdown.size(); ++i) {
    if (markdown[i] == '\r' && i + 1 < markdown.size() && markdown[i + 1] == '\n') continue;
    text += markdown[i];
  }
  std::vector<std::string> lines;
  size_t from = 0;
  for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
    lines.push_back(text.substr(from, nl - from));
  }
  lines.push_back(text.substr(from));
  return lines;
}

void FindHeadings(Doc& d) {
  bool fence = false;
  for (size_t i = 0; i < d.lines.size(); ++i) {
    if (IsFence(d.lines[i])) {
      fence = !fence;
      continue;
    }
    if (fence) continue;
    if (std::optional<Heading> h = HeadingOf(d.lines[i])) {
      d.headings.push_back({h->level, h->title, static_cast<int>(i) + 1, 0});
    }
  }
  for (size_t k = 0; k < d.headings.size(); ++k) {
    d.headings[k].end = static_cast<int>(d.lines.size());
    for (size_t j = k + 1; j < d.headings.size(); ++j) {
      if (d.headings[j].level <= d.headings[k].level) {
        d.headings[k].end = d.headings[j].start - 1;
        break;
      }
    }
  }
}

const Span* FirstHeading(const Doc& d, int level, std::string_view title_icase) {
  for (const Span& h : d.headings) {
    if (h.level == level && (title_icase.empty() || IEquals(h.title, title_icase))) return &h;
  }
  return nullptr;
}

// H3 spans inside "parent".
std::vector<const Span*> Children(const Doc& d, const Span& parent) {
  std::vector<const Span*> out;
  for (const Span& h : d.headings) {
    if (h.level == 3 && h.start > parent.start && h.start <= parent.end) out.push_back(&h);
  }
  return out;
}

}  // namespace wish_text
}  // namespace baton
