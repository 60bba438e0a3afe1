#include "model/wish_lint.h"

#include "model/wish_lint_text.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>

namespace baton {
namespace {

using namespace wish_text;  // NOLINT: this file is the rules over that text

WishLintViolation Violation(std::string rule, int line, std::string message, bool fixable = false,
                            std::optional<WishLintFix> fix = std::nullopt, int column = 1) {
  return {std::move(rule), "error", line, column, std::move(message), fixable, std::move(fix)};
}

std::string GroupHeaderMessage(std::string_view raw) {
  return "Group header \"" + std::string(Trim(raw)) +
         "\" is not in canonical \"### Group N: Title\" form";
}

// scanStrayGroupHeaders over lines [from, to] (0-based, inclusive).
void ScanStrayGroupHeaders(const Doc& d, size_t from, size_t to,
                           std::vector<WishLintViolation>& out) {
  bool fence = false;
  for (size_t i = from; i <= to && i < d.lines.size(); ++i) {
    const std::string& raw = d.lines[i];
    if (IsFence(raw)) {
      fence = !fence;
      continue;
    }
    if (fence || IsCanonicalGroupHeader(raw, false)) continue;
    std::optional<std::pair<std::string, std::string>> m = StrayGroupHeader(raw);
    if (!m) continue;
    std::string title(Trim(m->second));
    const int line = static_cast<int>(i) + 1;
    out.push_back(Violation(
        "group-header-format", line, GroupHeaderMessage(raw), true,
        WishLintFix{"rewrite", line, line,
                    "### Group " + m->first + ": " + (title.empty() ? "<TODO title>" : title)}));
  }
}

// The metadata table's rows, keyed by lower-case field: "" when there is no
// table at all (std::nullopt).
std::optional<std::map<std::string, std::string>> MetadataTable(const Doc& d) {
  const size_t from = static_cast<size_t>(d.title->start);
  size_t to = d.lines.size();
  if (d.first_h2 != nullptr) to = static_cast<size_t>(std::max(0, d.first_h2->start - 1));
  std::map<std::string, std::string> rows;
  bool seen = false;
  int row = 0;
  for (size_t i = from; i < to; ++i) {
    const std::string_view line = Trim(d.lines[i]);
    if (line.empty() || line[0] != '|') {
      if (seen) break;
      continue;
    }
    seen = true;
    if (row++ < 2) continue;  // the header and the divider
    std::vector<std::string_view> cells;
    size_t from_cell = 1;
    for (size_t bar; (bar = line.find('|', from_cell)) != std::string_view::npos; from_cell = bar + 1) {
      cells.push_back(Trim(line.substr(from_cell, bar - from_cell)));
    }
    if (cells.size() < 2) continue;
    std::string_view key = cells[0];
    if (key.starts_with("**")) key.remove_prefix(2);
    if (key.ends_with("**")) key.remove_suffix(2);
    std::string lower(Trim(key));
    for (char& c : lower) c = Lower(c);
    std::string_view value = cells[1];
    while (!value.empty() && value.front() == '`') value.remove_prefix(1);
    while (!value.empty() && value.back() == '`') value.remove_suffix(1);
    rows[lower] = std::string(Trim(value));
  }
  if (!seen) return std::nullopt;
  return rows;
}

// wish-parser.ts: the first problem that stops parsing, or none.
std::optional<std::vector<WishLintViolation>> ParseError(Doc& d) {
  std::vector<WishLintViolation> out;
  d.title = FirstHeading(d, 1);
  d.first_h2 = FirstHeading(d, 2);
  if (d.title == nullptr || !IEquals(std::string_view(d.title->title).substr(0, 5), "wish:")) {
    out.push_back(Violation("missing-title", d.title == nullptr ? 1 : d.title->start,
                            "Wish must start with a `# Wish: <title>` heading"));
    return out;
  }
  std::optional<std::map<std::string, std::string>> meta = MetadataTable(d);
  const int meta_line = d.title->start + 1;
  if (!meta) {
    out.push_back(Violation("metadata-table-missing-field", meta_line,
                            "Metadata table not found at top of wish", true));
    return out;
  }
  for (const char* field : {"status", "slug", "date", "author", "appetite", "branch"}) {
    auto it = meta->find(field);
    if (it == meta->end() || it->second.empty()) {
      out.push_back(Violation("metadata-table-missing-field", meta_line,
                              std::string("Metadata table is missing required field: ") + field,
                              true));
      return out;
    }
  }
  d.slug = (*meta)["slug"];
  if (FirstHeading(d, 2, "summary") == nullptr) {
    out.push_back(Violation("missing-summary",
                            d.first_h2 != nullptr ? d.first_h2->start : d.title->start,
                            "Wish is missing the `## Summary` section"));
    return out;
  }
  d.exec = FirstHeading(d, 2, "execution groups");
  if (d.exec == nullptr) {
    int stray_line = 0;
    std::string stray_text;
    bool fence = false;
    for (size_t i = 0; i < d.lines.size() && stray_line == 0; ++i) {
      if (IsFence(d.lines[i])) {
        fence = !fence;
        continue;
      }
      if (!fence && (IsAnyGroupHeader(d.lines[i]) || IsCanonicalGroupHeader(d.lines[i], true))) {
        stray_line = static_cast<int>(i) + 1;
        stray_text = std::string(Trim(d.lines[i]));
      }
    }
    std::optional<WishLintFix> fix;
    if (stray_line != 0 && IsAnyGroupHeader(d.lines[stray_line - 1])) {
      fix = WishLintFix{"insert", stray_line, 0, "## Execution Groups\n\n"};
    }
    out.push_back(Violation(
        "missing-execution-groups-header", stray_line != 0 ? stray_line : d.first_h2->start,
        stray_line != 0 ? "Wish contains a \"" + stray_text +
                              "\" header but the parent \"## Execution Groups\" header is missing"
                        : "Wish is missing the `## Execution Groups` section",
        true, fix));
    ScanStrayGroupHeaders(d, 0, d.lines.size() - 1, out);
    return out;
  }
  for (const Span* h : Children(d, *d.exec)) {
    const std::string& raw = d.lines[h->start - 1];
    if (!IsCanonicalGroupHeader(raw, true)) continue;
    const size_t colon = raw.find(':');
    // (.+?) needs one character, a space will do: "### Group 1: " parses.
    const std::string title(Trim(std::string_view(raw).substr(colon + 1)));
    if (colon + 1 >= raw.size()) {
      out.push_back(Violation("group-header-format", h->start,
                              "Execution group header not in canonical \"### Group N: Title\" "
                              "form: " + std::string(Trim(raw)),
                              true));
      return out;
    }
    Scan sc{raw};
    sc.Eat("###", false);
    sc.Spaces();
    sc.Eat("group");
    sc.Spaces();
    d.groups.push_back({ParseNumber(sc.Digits()), title, h->start, h->end});
  }
  if (d.groups.empty()) {
    out.push_back(Violation("missing-execution-group", d.exec->start,
                            "Wish contains `## Execution Groups` but no `### Group N: …` "
                            "subsections"));
    return out;
  }
  return std::nullopt;
}

// A group's body: lines start+1 .. end (1-based), as 0-based indexes.
std::pair<size_t, size_t> Body(const Group& g) {
  return {static_cast<size_t>(g.start), static_cast<size_t>(g.end)};
}

std::string GroupName(const Group& g) {
  return "Group " + std::to_string(g.number) + " (" + g.title + ")";
}

// The parser's value of a labelled field: the text after the label and the
// lines up to the next label or "---", blank tail dropped, trimmed.
std::string FieldValue(const Doc& d, const Group& g, std::string_view label) {
  const auto [from, to] = Body(g);
  for (size_t i = from; i < to; ++i) {
    std::optional<std::string_view> rest = AfterLabel(d.lines[i], label, false);
    if (!rest) continue;
    std::vector<std::string> parts{std::string(Trim(*rest))};
    for (size_t k = i + 1; k < to; ++k) {
      const std::string& line = d.lines[k];
      if (IsAnyFieldLabel(line)) break;
      Scan sc{line};
      if (sc.Eat("---", false) && (sc.Spaces(), sc.Rest().empty())) break;
      parts.push_back(line);
    }
    while (parts.size() > 1 && Trim(parts.back()).empty()) parts.pop_back();
    std::string joined;
    for (size_t k = 0; k < parts.size(); ++k) joined += (k ? "\n" : "") + parts[k];
    return std::string(Trim(joined));
  }
  return "";
}

bool HasLabel(const Doc& d, const Group& g, std::string_view label) {
  const auto [from, to] = Body(g);
  for (size_t i = from; i < to; ++i) {
    if (AfterLabel(d.lines[i], label, true)) return true;
  }
  return false;
}

constexpr struct {
  std::string_view name, label, rule;
} kFields[] = {
    {"Goal", "**Goal:**", "missing-goal-field"},
    {"Deliverables", "**Deliverables:**", "missing-deliverables-field"},
    {"Acceptance Criteria", "**Acceptance Criteria:**", "missing-acceptance-field"},
    {"Validation", "**Validation:**", "missing-validation-field"},
    {"depends-on", "**depends-on:**", "missing-depends-on-field"},
};

// parseDependsOnValue: "none", or the list (empty means no content).
bool DependsOnHasContent(std::string value) {
  value = std::string(Trim(value));
  if (!value.empty() && value.back() == '.') value.pop_back();
  if (IEquals(value, "none")) return true;
  for (char c : value) {
    if (c != ',' && !IsWs(c)) return true;
  }
  return false;
}

void ScanFields(const Doc& d, std::vector<WishLintViolation>& out) {
  for (const Group& g : d.groups) {
    for (const auto& f : kFields) {
      if (HasLabel(d, g, f.name)) continue;
      out.push_back(Violation(std::string(f.rule), g.start,
                              GroupName(g) + " is missing the " + std::string(f.label) +
                                  " field label",
                              true,
                              WishLintFix{"insert", g.start + 1, 0,
                                          "\n" + std::string(f.label) + " <TODO>\n"}));
    }
  }
  for (const Group& g : d.groups) {
    for (const auto& f : kFields) {
      if (f.name == "Validation" || !HasLabel(d, g, f.name)) continue;
      const std::string value = FieldValue(d, g, f.name);
      bool empty = value.empty();
      if (f.name == "Acceptance Criteria") {
        empty = true;
        size_t from = 0;
        for (size_t nl; from <= value.size(); from = nl + 1) {
          nl = value.find('\n', from);
          if (nl == std::string::npos) nl = value.size();
          if (IsChecklistItem(std::string_view(value).substr(from, nl - from))) empty = false;
        }
      } else if (f.name == "depends-on") {
        empty = !DependsOnHasContent(value);
      }
      if (empty) {
        out.push_back(Violation(std::string(f.rule), g.start,
                                GroupName(g) + " has the " + std::string(f.name) +
                                    " label but no content"));
      }
    }
  }
}

// /^\s*```(\S*)\s*$/: the tag.
std::optional<std::string> FenceOpen(std::string_view line) {
  Scan sc{line};
  sc.Spaces();
  if (!sc.Eat("```", false)) return std::nullopt;
  const size_t from = sc.i;
  while (sc.i < line.size() && !IsWs(line[sc.i])) ++sc.i;
  const std::string tag(line.substr(from, sc.i - from));
  sc.Spaces();
  if (!sc.Rest().empty()) return std::nullopt;
  return tag;
}

void ScanValidation(const Doc& d, std::vector<WishLintViolation>& out) {
  for (const Group& g : d.groups) {
    const auto [from, to] = Body(g);
    size_t label = to;
    for (size_t i = from; i < to && label == to; ++i) {
      if (AfterLabel(d.lines[i], "Validation", true)) label = i;
    }
    if (label == to) continue;
    auto boundary = [&](const std::string& line) {
      for (std::string_view name : {"Goal", "Deliverables", "Acceptance Criteria", "depends-on"}) {
        if (AfterLabel(line, name, true)) return true;
      }
      return false;
    };
    size_t fence = to;
    std::string tag;
    for (size_t i = label + 1; i < to && !boundary(d.lines[i]); ++i) {
      if (std::optional<std::string> t = FenceOpen(d.lines[i])) {
        fence = i;
        tag = *t;
        break;
      }
    }
    const int label_line = static_cast<int>(label) + 1;
    if (fence == to) {
      std::vector<std::string> prose;
      for (size_t i = label + 1; i < to && !boundary(d.lines[i]); ++i) prose.push_back(d.lines[i]);
      while (!prose.empty() && Trim(prose.back()).empty()) prose.pop_back();
      if (prose.empty()) {
        out.push_back(Violation("missing-validation-command", label_line,
                                "Validation block is empty \u2014 add a fenced `bash` block with "
                                "the verification command"));
        continue;
      }
      std::string content = "```bash";
      for (const std::string& p : prose) content += "\n" + p;
      content += "\n```";
      out.push_back(Violation("validation-not-fenced-bash", label_line,
                              "Validation block is not wrapped in a ```bash fenced code block", true,
                              WishLintFix{"rewrite", label_line + 1,
                                          label_line + static_cast<int>(prose.size()), content}));
      continue;
    }
    const int fence_line = static_cast<int>(fence) + 1;
    if (tag != "bash") {
      out.push_back(Violation("validation-not-fenced-bash", fence_line,
                              "Validation fence has tag \"" + tag + "\" \u2014 expected `bash`",
                              true, WishLintFix{"rewrite", fence_line, fence_line, "```bash"}));
    }
    bool blank = true;
    for (size_t i = fence + 1; i < to && !boundary(d.lines[i]); ++i) {
      Scan sc{d.lines[i]};
      sc.Spaces();
      if (sc.Eat("```", false) && (sc.Spaces(), sc.Rest().empty())) {
        if (blank) {
          out.push_back(Violation("missing-validation-command", fence_line,
                                  "Validation bash block is empty \u2014 add a command that "
                                  "verifies this group"));
        }
        break;
      }
      if (!Trim(d.lines[i]).empty()) blank = false;
    }
  }
}

// /^##\s+WORD\b/i-style tests for the scope section.
bool IsH2Named(std::string_view line, std::string_view word) {  // /^##\s+Scope\s*$/i
  Scan sc{line};
  if (!sc.Eat("##", false) || sc.Spaces() == 0 || !sc.Eat(word)) return false;
  sc.Spaces();
  return sc.Rest().empty();
}
bool IsAnyH2(std::string_view line) {  // /^##\s+/
  Scan sc{line};
  return sc.Eat("##", false) && sc.Spaces() > 0;
}
bool IsH3Word(std::string_view line, std::string_view word) {  // /^###\s+WORD\b/i
  Scan sc{line};
  if (!sc.Eat("###", false) || sc.Spaces() == 0 || !sc.Eat(word)) return false;
  return sc.i == line.size() || !(IsAlpha(line[sc.i]) || IsDigit(line[sc.i]) || line[sc.i] == '_');
}

// The parser's OUT bullets: in each H3 of the Scope H2 titled /^out\b/i.
size_t OutBullets(const Doc& d) {
  if (d.scope == nullptr) return 0;
  size_t bullets = 0;
  for (const Span* h : Children(d, *d.scope)) {
    const std::string& t = h->title;
    const bool out = t.size() >= 3 && IEquals(std::string_view(t).substr(0, 3), "out") &&
                     (t.size() == 3 || !(IsAlpha(t[3]) || IsDigit(t[3]) || t[3] == '_'));
    if (!out) continue;
    // The span's lines, fences included: Genie counts a bullet in a fence.
    for (int line = h->start + 1; line <= h->end; ++line) {
      if (Bullet(d.lines[line - 1])) ++bullets;
    }
  }
  return bullets;
}

void ScanScope(const Doc& d, std::vector<WishLintViolation>& out) {
  size_t header = d.lines.size();
  bool fence = false;
  for (size_t i = 0; i < d.lines.size() && header == d.lines.size(); ++i) {
    if (IsFence(d.lines[i])) {
      fence = !fence;
      continue;
    }
    if (!fence && IsH2Named(d.lines[i], "Scope")) header = i;
  }
  if (header == d.lines.size()) {
    out.push_back(Violation("scope-section-missing", 1, "Wish is missing the `## Scope` section"));
    return;
  }
  size_t end = d.lines.size() - 1;
  for (size_t i = header + 1; i < d.lines.size(); ++i) {
    if (IsAnyH2(d.lines[i])) {
      end = i - 1;
      break;
    }
  }
  size_t in = 0, out_line = 0;
  for (size_t i = header + 1; i <= end; ++i) {
    if (in == 0 && IsH3Word(d.lines[i], "IN")) in = i + 1;
    if (out_line == 0 && IsH3Word(d.lines[i], "OUT")) out_line = i + 1;
  }
  const int line = static_cast<int>(header) + 1;
  if (in == 0 && out_line == 0) {
    out.push_back(Violation("scope-section-missing", line,
                            "`## Scope` section has no `### IN` or `### OUT` subsections"));
    return;
  }
  if (out_line == 0) {
    out.push_back(Violation("scope-section-missing", line,
                            "`## Scope` is missing the `### OUT` subsection", true,
                            WishLintFix{"insert", static_cast<int>(end) + 2, 0,
                                        "### OUT\n\n- <TODO>\n\n"}));
  }
  if (in == 0) {
    out.push_back(Violation("scope-section-missing", line,
                            "`## Scope` is missing the `### IN` subsection", true,
                            WishLintFix{"insert", line + 1, 0, "\n### IN\n\n- <TODO>\n"}));
  }
  if (out_line != 0 && OutBullets(d) == 0) {
    out.push_back(Violation("empty-out-scope", static_cast<int>(out_line),
                            "`### OUT` scope has no bullets \u2014 list at least one explicit "
                            "exclusion"));
  }
}

bool IsIdent(std::string_view s) {  // [A-Za-z][A-Za-z0-9_-]*
  if (s.empty() || !IsAlpha(s[0])) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlpha(c) || IsDigit(c) || c == '_' || c == '-'; });
}
bool IsGroupRef(std::string_view s) {  // Group\s+\d+ (icase)
  Scan sc{s};
  return sc.Eat("group") && sc.Spaces() > 0 && !sc.Digits().empty() && sc.Rest().empty();
}

// Genie's DEPENDS_REF_PATTERN: "Group N", a name, a slug path, or "slug#N".
bool IsDependsRef(std::string_view s) {
  if (IsGroupRef(s)) return true;
  if (const size_t hash = s.find('#'); hash != std::string_view::npos) {
    const std::string_view n = s.substr(hash + 1);
    return IsIdent(s.substr(0, hash)) && !n.empty() &&
           std::all_of(n.begin(), n.end(), IsDigit);
  }
  size_t from = 0;
  bool first = true;
  for (;;) {
    const size_t slash = s.find('/', from);
    const std::string_view part = s.substr(from, slash == std::string_view::npos ? s.npos : slash - from);
    if (!(IsIdent(part) || (!first && IsGroupRef(part)))) return false;
    if (slash == std::string_view::npos) return true;
    from = slash + 1;
    first = false;
  }
}

void ScanDependsOn(const Doc& d, std::vector<WishLintViolation>& out) {
  std::set<int64_t> numbers;
  for (const Group& g : d.groups) numbers.insert(g.number);
  for (const Group& g : d.groups) {
    const auto [from, to] = Body(g);
    size_t at = to;
    std::string raw;
    for (size_t i = from; i < to && at == to; ++i) {
      if (std::optional<std::string_view> rest = AfterLabel(d.lines[i], "depends-on", true)) {
        at = i;
        raw = std::string(Trim(*rest));
      }
    }
    if (at == to || raw.empty()) continue;
    std::string value = raw;
    if (value.back() == '.') value.pop_back();
    if (IEquals(value, "none")) continue;
    std::vector<std::string> canonical;
    bool malformed = false;
    size_t from_part = 0;
    for (;;) {
      const size_t comma = value.find(',', from_part);
      std::string_view part = Trim(std::string_view(value).substr(
          from_part, comma == std::string::npos ? std::string::npos : comma - from_part));
      if (const size_t paren = part.find('('); paren != std::string_view::npos) {
        part = Trim(part.substr(0, paren));
      }
      if (!part.empty()) {
        if (IsDependsRef(part)) {
          Scan sc{part};
          std::string kept(part);
          if (sc.Eat("group") && sc.Spaces() > 0) kept = "Group " + std::string(sc.Rest());
          canonical.push_back(kept);
        } else {
          malformed = true;
          bool digits = false;
          for (size_t i = 0; i < part.size();) {
            if (!IsDigit(part[i])) {
              ++i;
              continue;
            }
            size_t j = i;
            while (j < part.size() && IsDigit(part[j])) ++j;
            canonical.push_back("Group " + std::to_string(ParseNumber(part.substr(i, j - i))));
            digits = true;
            i = j;
          }
          if (!digits) canonical.emplace_back(part);
        }
      }
      if (comma == std::string::npos) break;
      from_part = comma + 1;
    }
    const int line = static_cast<int>(at) + 1;
    std::vector<int64_t> refs;
    for (const std::string& c : canonical) {
      if (IsGroupRef(c)) {
        Scan sc{c};
        sc.Eat("group");
        sc.Spaces();
        refs.push_back(ParseNumber(sc.Digits()));
      }
    }
    if (malformed) {
      const bool fixable = !refs.empty() && std::all_of(refs.begin(), refs.end(), [&](int64_t n) {
        return numbers.contains(n);
      });
      std::string joined;
      for (const std::string& c : canonical) joined += (joined.empty() ? "" : ", ") + c;
      out.push_back(
          fixable ? Violation("depends-on-malformed", line,
                              "depends-on value \"" + raw +
                                  "\" is not in canonical \"Group N, Group M\" form",
                              true, WishLintFix{"rewrite", line, line, "**depends-on:** " + joined})
                  : Violation("depends-on-malformed", line,
                              "depends-on value \"" + raw +
                                  "\" cannot be parsed \u2014 expected \"none\", \"Group N\", a "
                                  "descriptive name, or a slug/group reference"));
    }
    for (int64_t n : refs) {
      if (numbers.contains(n)) continue;
      out.push_back(Violation("depends-on-dangling", line,
                              "Group " + std::to_string(g.number) +
                                  " depends-on references non-existent Group " + std::to_string(n)));
    }
  }
}

void ScanTodoPlaceholders(const Doc& d, std::vector<WishLintViolation>& out) {
  bool fence = false;
  for (size_t i = 0; i < d.lines.size(); ++i) {
    const std::string& line = d.lines[i];
    if (IsFence(line)) {
      fence = !fence;
      continue;
    }
    if (fence) continue;
    std::string blanked = line;  // inline code is not prose
    for (size_t open = blanked.find('`'); open != std::string::npos;) {
      const size_t close = blanked.find('`', open + 1);
      if (close == std::string::npos) break;
      std::fill(blanked.begin() + static_cast<std::ptrdiff_t>(open),
                blanked.begin() + static_cast<std::ptrdiff_t>(close) + 1, ' ');
      open = blanked.find('`', close + 1);
    }
    const size_t at = blanked.find("<TODO");
    if (at == std::string::npos) continue;
    const size_t end = blanked.find('>', at);
    if (end == std::string::npos) continue;
    const std::string placeholder = line.substr(at, end - at + 1);
    out.push_back(Violation("todo-placeholder-remaining", static_cast<int>(i) + 1,
                            "Placeholder \"" + placeholder +
                                "\" still present \u2014 replace with real content before dispatch",
                            false, std::nullopt, Utf16Column(line, at)));
  }
}

// finalize: dedupe on rule, position and message; stable sort by position
// and rule.
void Finalize(std::vector<WishLintViolation>& v) {
  std::set<std::tuple<std::string, int, int, std::string>> seen;
  std::vector<WishLintViolation> unique;
  for (WishLintViolation& x : v) {
    if (seen.insert({x.rule, x.line, x.column, x.message}).second) unique.push_back(std::move(x));
  }
  std::stable_sort(unique.begin(), unique.end(), [](const auto& a, const auto& b) {
    return std::tie(a.line, a.column, a.rule) < std::tie(b.line, b.column, b.rule);
  });
  v = std::move(unique);
}

std::vector<std::string> ContentLines(const std::string& content, bool drop_trailing_empty) {
  std::vector<std::string> lines = SplitLines(content);
  if (drop_trailing_empty && !lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

}  // namespace

WishLintReport LintWishMarkdown(std::string_view markdown, WishLintOptions options) {
  Doc d;
  d.lines = SplitLines(markdown);
  FindHeadings(d);
  WishLintReport report;
  if (std::optional<std::vector<WishLintViolation>> error = ParseError(d)) {
    report.violations = std::move(*error);
    Finalize(report.violations);
    return report;
  }
  report.slug = d.slug;
  d.scope = FirstHeading(d, 2, "scope");
  std::vector<WishLintViolation>& out = report.violations;
  const size_t exec_from = static_cast<size_t>(d.exec->start);  // the line after the header
  size_t exec_to = d.lines.size() - 1;
  {
    // findExecGroupsRange: from the header to before the next "## " line.
    bool fence = false;
    size_t start = d.lines.size();
    for (size_t i = 0; i < d.lines.size(); ++i) {
      if (IsFence(d.lines[i])) {
        fence = !fence;
        continue;
      }
      if (fence) continue;
      if (IsH2Named(d.lines[i], "Execution Groups")) {
        start = i;
        continue;
      }
      if (start != d.lines.size() && IsAnyH2(d.lines[i])) {
        exec_to = i - 1;
        break;
      }
    }
    if (start != d.lines.size()) {
      ScanStrayGroupHeaders(d, start + 1, exec_to, out);
    } else {
      ScanStrayGroupHeaders(d, exec_from, exec_to, out);
    }
  }
  ScanFields(d, out);
  ScanValidation(d, out);
  ScanScope(d, out);
  ScanDependsOn(d, out);
  if (!options.allow_todo_placeholders) ScanTodoPlaceholders(d, out);
  Finalize(out);
  return report;
}

std::string ApplyWishFixes(std::string_view markdown, const WishLintReport& report) {
  const std::vector<std::string> lines = SplitLines(markdown);
  std::vector<const WishLintFix*> fixes;
  for (const WishLintViolation& v : report.violations) {
    if (v.fixable && v.fix) fixes.push_back(&*v.fix);
  }
  // Genie splices bottom up, ties in report order. Fixes never overlap, so
  // each lands in a slot of the original lines: an insert goes on top of
  // its line's slot, a rewrite replaces its lines; one pass, not a splice
  // per fix.
  std::stable_sort(fixes.begin(), fixes.end(),
                   [](const WishLintFix* a, const WishLintFix* b) { return a->line > b->line; });
  std::vector<std::vector<std::string>> slots(lines.size() + 1);  // the last: after the end
  for (size_t i = 0; i < lines.size(); ++i) slots[i] = {lines[i]};
  for (const WishLintFix* f : fixes) {
    const size_t at = static_cast<size_t>(std::clamp<int64_t>(f->line - 1, 0, static_cast<int64_t>(lines.size())));
    if (f->kind == "insert") {
      std::vector<std::string> add = ContentLines(f->content, true);
      slots[at].insert(slots[at].begin(), add.begin(), add.end());
      continue;
    }
    const size_t last = static_cast<size_t>(
        std::clamp<int64_t>(f->end_line - 1, static_cast<int64_t>(at), static_cast<int64_t>(lines.size()) - 1));
    for (size_t i = at; i <= last && i < lines.size(); ++i) slots[i].clear();
    slots[at] = ContentLines(f->content, false);
  }
  std::string out;
  bool first = true;
  for (const std::vector<std::string>& slot : slots) {
    for (const std::string& line : slot) {
      if (!first) out += '\n';
      out += line;
      first = false;
    }
  }
  return out;
}

Json WishLintJson(const WishLintReport& report) {
  Json violations = Json::array();
  int fixable = 0;
  for (const WishLintViolation& v : report.violations) {
    Json fix;
    if (v.fix) {
      fix = {{"kind", v.fix->kind}, {"at", {{"line", v.fix->line}}}, {"content", v.fix->content}};
      if (v.fix->kind == "rewrite") fix["range"] = {{"endLine", v.fix->end_line}};
    }
    violations.push_back({{"rule", v.rule},
                          {"severity", v.severity},
                          {"line", v.line},
                          {"column", v.column},
                          {"message", v.message},
                          {"fixable", v.fixable},
                          {"fix", fix}});
    fixable += v.fixable ? 1 : 0;
  }
  const int total = static_cast<int>(report.violations.size());
  return {{"violations", violations},
          {"summary", {{"total", total}, {"fixable", fixable}, {"unfixable", total - fixable}}}};
}

}  // namespace baton
