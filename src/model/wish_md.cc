#include "model/wish_md.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>
#include <utility>

namespace baton {
namespace {

constexpr size_t kMaxWishBytes = size_t{1} << 20;
constexpr size_t kMaxCycleNames = 12;
constexpr std::string_view kDependsLabel = "**depends-on:**";

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

bool IStartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && ToLower(s.substr(0, prefix.size())) == prefix;
}

// Length of the well-formed UTF-8 sequence at "i", or 0. Overlong forms,
// surrogates and code points past U+10FFFF are refused, as RFC 3629 says.
size_t Utf8Length(std::string_view s, size_t i) {
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n = c >= 0xF8 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  bool bad = cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF);
  return bad ? 0 : n;
}

Status CheckIsText(std::string_view text) {
  if (text.size() > kMaxWishBytes) {
    return InvalidArgumentError("WISH.md is " + std::to_string(text.size()) +
                                " bytes; the limit is 1048576 (1 MiB)");
  }
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < text.size();) {
    size_t n = text[i] == '\0' ? 0 : Utf8Length(text, i);
    if (n == 0) {
      return InvalidArgumentError(
          "WISH.md line " + std::to_string(line) + ", column " +
          std::to_string(i - line_start + 1) + " (byte " + std::to_string(i) +
          "): " + (text[i] == '\0' ? "NUL byte" : "invalid UTF-8") + "; a wish must be UTF-8 text");
    }
    if (text[i] == '\n') ++line, line_start = i + 1;
    i += n;
  }
  return Status::Ok();
}

// Column of byte "index" in "line", counted in code points.
int ColumnOf(std::string_view line, size_t index) {
  int column = 1;
  for (size_t i = 0; i < index && i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++column;
  }
  return column;
}

// Lines of "text" without their "\n"; "a\n" gives {"a", ""}, so joining
// with "\n" gives the text back.
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0, end = 0; end != std::string_view::npos; start = end + 1) {
    end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
  }
  return lines;
}

bool IsFence(std::string_view line) { return Trim(line).starts_with("```"); }

// Level 1-6 for "## Title" (with "text" = "Title"), 0 when not a heading.
int HeadingLevel(std::string_view line, std::string_view* text) {
  size_t level = 0;
  while (level < line.size() && line[level] == '#') ++level;
  if (level == 0 || level > 6 || level == line.size() || !IsBlank(line[level])) return 0;
  *text = Trim(line.substr(level));
  return static_cast<int>(level);
}

bool IsName(std::string_view s) {
  if (s.empty() || !IsAlnum(s[0])) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '_' || c == '-' || c == '.'; });
}

// "007" -> "7", so "Group 07" and "Group 7" are the same group, as in Genie.
std::string NormalizeName(std::string_view s) {
  bool digits = std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) return std::string(s);
  size_t zeros = 0;
  while (zeros + 1 < s.size() && s[zeros] == '0') ++zeros;
  return std::string(s.substr(zeros));
}

std::string NameKey(std::string_view name) { return ToLower(NormalizeName(name)); }

struct GroupHeader {
  std::string keyword;  // "Group" / "grupo" as written
  std::string name;
  std::string separator;  // ":", "-", "—", "–" or ""
  std::string title;
};

// Parses the text of a level-3 heading: "Group 1: Title", "Grupo 2 — Título",
// "Group A - Title". A name without a separator must be a number, so headings
// like "### Group Policy" are not taken for groups.
std::optional<GroupHeader> ParseGroupHeader(std::string_view text) {
  GroupHeader h;
  size_t i = 0;
  while (i < text.size() && IsAlnum(text[i])) ++i;
  h.keyword = text.substr(0, i);
  if (ToLower(h.keyword) != "group" && ToLower(h.keyword) != "grupo") return std::nullopt;
  std::string_view rest = Trim(text.substr(i));
  if (rest.size() == text.size() - i) return std::nullopt;  // no blank after the keyword
  size_t n = 0;
  while (n < rest.size() && (IsAlnum(rest[n]) || rest[n] == '_' || rest[n] == '.' ||
                             (rest[n] == '-' && n + 1 < rest.size() && IsAlnum(rest[n + 1])))) {
    ++n;
  }
  h.name = NormalizeName(rest.substr(0, n));
  if (!IsName(h.name)) return std::nullopt;
  rest = Trim(rest.substr(n));
  for (std::string_view sep : {":", "-", "\xE2\x80\x94", "\xE2\x80\x93"}) {
    if (rest.starts_with(sep)) {
      h.separator = sep;
      rest = Trim(rest.substr(sep.size()));
      break;
    }
  }
  bool numeric = h.name.find_first_not_of("0123456789") == std::string::npos;
  if (h.separator.empty() && !numeric) return std::nullopt;
  h.title = rest;
  return h;
}

// A reference to a group of another wish ("slug#2", "slug/Group 1"); Genie
// accepts these and leaves them unchecked, and so does baton.
bool IsExternalRef(std::string_view s) {
  return !s.empty() && IsAlnum(s[0]) && s.find_first_of("#/") != std::string_view::npos &&
         s.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-#/ ") ==
             std::string_view::npos;
}

struct DependsPart {
  std::string raw;
  std::vector<std::string> refs;  // group names this part names or, if malformed, implies
  bool external = false;
  bool malformed = false;
};

// Splits "Group 1, Group 2 (parser)." into parts the way Genie does: drop a
// trailing period, split on commas, drop a parenthesised note.
std::vector<DependsPart> SplitDepends(std::string_view value) {
  if (value.ends_with('.')) value.remove_suffix(1);
  std::vector<DependsPart> parts;
  while (!value.empty() || parts.empty()) {
    size_t comma = value.find(',');
    std::string_view part = Trim(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    if (size_t paren = part.find('('); paren != std::string_view::npos) {
      part = Trim(part.substr(0, paren));
    }
    if (!part.empty()) parts.push_back(DependsPart{std::string(part)});
    if (comma == std::string_view::npos) break;
  }
  return parts;
}

void ClassifyPart(DependsPart* p) {
  std::string_view s = p->raw;
  if (IStartsWith(s, "group") && s.size() > 5 && IsBlank(s[5]) && IsName(Trim(s.substr(5)))) {
    p->refs.push_back(NormalizeName(Trim(s.substr(5))));
  } else if (IsName(s) && ToLower(s) != "none") {
    p->refs.push_back(NormalizeName(s));
  } else if (IsExternalRef(s)) {
    p->external = true;
  } else {
    // "Groups 1 and 2": keep the numbers, so the repair and the graph checks can use them.
    p->malformed = true;
    for (size_t i = 0; i < s.size();) {
      size_t j = i;
      while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
      if (j > i) p->refs.push_back(NormalizeName(s.substr(i, j - i)));
      i = j > i ? j : i + 1;
    }
  }
}

struct Heading {
  int index;  // 0-based line
  int level;
  std::string_view text;
};

class WishParser {
 public:
  explicit WishParser(std::string_view text);
  WishDocument Parse();

 private:
  void ParseTitleAndMetadata();
  void ParseMetadataRow(std::string_view row);
  void FindGroups(size_t section);
  void CheckGroup(size_t g, int body_end);
  void CheckDependsValue(size_t g, std::string_view value);
  void CheckCycles();
  void ScanPlaceholders();
  void Add(std::string rule, int line, int column, std::string message,
           std::optional<WishEdit> fix = std::nullopt);
  std::string Describe(size_t g) const;
  // Index of the first group declared with "name", or -1.
  int Resolve(const std::string& name) const;

  std::vector<std::string_view> lines_;  // without "\n" or a trailing "\r"
  std::vector<bool> fenced_;             // inside a ``` block, or one of its fences
  std::vector<Heading> headings_;        // outside fences
  std::map<std::string, size_t> first_by_key_;
  WishDocument doc_;
};

WishParser::WishParser(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // BOM
  bool in_fence = false;
  for (std::string_view line : SplitLines(text)) {
    if (line.ends_with('\r')) line.remove_suffix(1);
    bool fence = IsFence(line);
    fenced_.push_back(in_fence || fence);
    if (fence) in_fence = !in_fence;
    std::string_view heading;
    int level = fenced_.back() ? 0 : HeadingLevel(line, &heading);
    if (level > 0) headings_.push_back({static_cast<int>(lines_.size()), level, heading});
    lines_.push_back(line);
  }
}

WishDocument WishParser::Parse() {
  ParseTitleAndMetadata();
  std::optional<size_t> section;
  for (size_t h = 0; h < headings_.size() && !section; ++h) {
    if (headings_[h].level == 2 && ToLower(headings_[h].text) == "execution groups") section = h;
  }
  if (section) {
    FindGroups(*section);
  } else {
    // Point at a stray group header when there is one: inserting the section
    // header above it is then an unambiguous repair (Genie does the same).
    for (const Heading& h : headings_) {
      if (h.level != 3 || !ParseGroupHeader(h.text)) continue;
      Add("missing-execution-groups-header", h.index + 1, 1,
          "\"" + std::string(lines_[h.index]) +
              "\" is a group header but the \"## Execution Groups\" section is missing",
          WishEdit{h.index + 1, 0, {"## Execution Groups", ""}});
      break;
    }
    if (doc_.violations.empty()) {
      Add("missing-execution-groups-header", 1, 1,
          "the wish has no \"## Execution Groups\" section, so it has nothing to execute");
    }
  }
  CheckCycles();
  ScanPlaceholders();
  auto key = [](const WishViolation& v) { return std::tie(v.line, v.column, v.rule, v.message); };
  std::stable_sort(doc_.violations.begin(), doc_.violations.end(),
                   [&](const WishViolation& a, const WishViolation& b) { return key(a) < key(b); });
  auto dup =
      std::unique(doc_.violations.begin(), doc_.violations.end(),
                  [&](const WishViolation& a, const WishViolation& b) { return key(a) == key(b); });
  doc_.violations.erase(dup, doc_.violations.end());
  return std::move(doc_);
}

void WishParser::ParseTitleAndMetadata() {
  int title_index = -1, end = static_cast<int>(lines_.size());
  for (const Heading& h : headings_) {
    if (h.level == 1 && title_index < 0) {
      title_index = h.index;
      std::string_view t = h.text;
      doc_.title = IStartsWith(t, "wish:") ? Trim(t.substr(5)) : t;
    } else if (h.level == 2 && title_index >= 0) {
      end = h.index;
      break;
    }
  }
  if (title_index < 0) return;
  // Genie's table: the first "|" row is the header, the second the divider,
  // and the table ends at the first line that is not a row.
  int row = 0;
  for (int i = title_index + 1; i < end; ++i) {
    std::string_view line = Trim(lines_[i]);
    if (!line.starts_with('|')) {
      if (row > 0) break;
      continue;
    }
    if (++row > 2) ParseMetadataRow(line);
  }
  for (const auto& [field, value] : doc_.fields) {
    if (ToLower(field) == "slug") doc_.slug = value;
  }
}

void WishParser::ParseMetadataRow(std::string_view row) {
  std::vector<std::string_view> cells;
  row.remove_prefix(1);
  for (size_t bar; (bar = row.find('|')) != std::string_view::npos; row.remove_prefix(bar + 1)) {
    cells.push_back(Trim(row.substr(0, bar)));
  }
  if (cells.size() < 2) return;
  auto strip = [](std::string_view s, char c) {
    while (!s.empty() && s.front() == c) s.remove_prefix(1);
    while (!s.empty() && s.back() == c) s.remove_suffix(1);
    return Trim(s);
  };
  std::string key(strip(cells[0], '*'));
  if (!key.empty()) doc_.fields[key] = std::string(strip(cells[1], '`'));
}

void WishParser::FindGroups(size_t section) {
  const Heading& sh = headings_[section];
  size_t h = section + 1;
  std::vector<int> body_ends;
  for (; h < headings_.size() && headings_[h].level > 2; ++h) {
    std::optional<GroupHeader> header;
    if (headings_[h].level != 3 || !(header = ParseGroupHeader(headings_[h].text))) continue;
    int line = headings_[h].index + 1;
    if (header->keyword != "Group" || header->separator != ":" || header->title.empty()) {
      std::string fixed = "### Group " + header->name + ": " +
                          (header->title.empty() ? "<TODO title>" : header->title);
      Add("group-header-format", line, 1,
          "group header \"" + std::string(Trim(lines_[line - 1])) +
              "\" is not in the canonical \"### Group N: Title\" form",
          WishEdit{line, 1, {fixed}});
    }
    doc_.groups.push_back(WishGroup{header->name, header->title, {}, false, line, 0});
    size_t next = h + 1;
    while (next < headings_.size() && headings_[next].level > 3) ++next;
    body_ends.push_back(next < headings_.size() ? headings_[next].index
                                                : static_cast<int>(lines_.size()));
  }
  if (doc_.groups.empty()) {
    Add("missing-execution-group", sh.index + 1, 1,
        "\"## Execution Groups\" has no \"### Group N: Title\" subsections");
    return;
  }
  for (size_t g = 0; g < doc_.groups.size(); ++g) {
    auto [it, inserted] = first_by_key_.emplace(NameKey(doc_.groups[g].name), g);
    if (!inserted) {
      Add("duplicate-group", doc_.groups[g].line, 1,
          Describe(g) + " is declared again; the first declaration is on line " +
              std::to_string(doc_.groups[it->second].line));
    }
  }
  for (size_t g = 0; g < doc_.groups.size(); ++g) CheckGroup(g, body_ends[g]);
}

void WishParser::CheckGroup(size_t g, int body_end) {
  WishGroup& group = doc_.groups[g];
  for (int i = group.line; i < body_end; ++i) {
    std::string_view line = Trim(lines_[i]);
    if (fenced_[i] || !IStartsWith(line, "**depends-on")) continue;
    std::string_view rest = Trim(line.substr(12));
    if (!rest.starts_with(":**")) continue;
    group.has_depends_on_field = true;
    group.depends_on_line = i + 1;
    CheckDependsValue(g, Trim(rest.substr(3)));
    return;
  }
  // Inserted after the header, as Genie's fixer does: a blank line, then the label.
  Add("missing-depends-on-field", group.line, 1,
      Describe(g) + " is missing the " + std::string(kDependsLabel) + " field label",
      WishEdit{group.line + 1, 0, {"", std::string(kDependsLabel) + " <TODO>"}});
}

void WishParser::CheckDependsValue(size_t g, std::string_view value) {
  WishGroup& group = doc_.groups[g];
  const int line = group.depends_on_line;
  std::string_view bare = value.ends_with('.') ? value.substr(0, value.size() - 1) : value;
  if (value.empty()) {
    Add("missing-depends-on-field", group.line, 1,
        Describe(g) + " has the " + std::string(kDependsLabel) + " label but no value");
    return;
  }
  // "<TODO>" is reported once, as todo-placeholder-remaining.
  if (ToLower(bare) == "none" || (bare.starts_with("<TODO") && bare.ends_with('>'))) return;
  std::vector<DependsPart> parts = SplitDepends(value);
  bool malformed = false, repairable = true;
  std::vector<std::string> canonical;
  for (DependsPart& p : parts) {
    ClassifyPart(&p);
    malformed |= p.malformed;
    if (p.malformed && p.refs.empty()) repairable = false;
    if (p.external) canonical.push_back(p.raw);
    for (const std::string& ref : p.refs) {
      group.depends_on.push_back(ref);
      canonical.push_back("Group " + ref);
      if (Resolve(ref) < 0) repairable = false;
    }
  }
  if (malformed) {
    std::string msg = Describe(g) + " depends-on value \"" + std::string(value) + "\" ";
    std::optional<WishEdit> fix;
    if (repairable) {
      std::string joined;
      for (const std::string& c : canonical) joined += (joined.empty() ? "" : ", ") + c;
      fix = WishEdit{line, 1, {std::string(kDependsLabel) + " " + joined}};
      msg += "is not in the canonical \"Group N, Group M\" form";
    } else {
      msg += "cannot be parsed; expected \"none\", \"Group X, Group Y\" or \"X, Y\"";
    }
    Add("depends-on-malformed", line, 1, msg, std::move(fix));
  }
  for (const std::string& ref : group.depends_on) {
    int target = Resolve(ref);
    if (target < 0) {
      Add("depends-on-dangling", line, 1,
          Describe(g) + " depends-on references non-existent Group " + ref);
    } else if (NameKey(ref) == NameKey(group.name)) {
      Add("depends-on-self", line, 1, Describe(g) + " depends on itself");
    }
  }
}

// Iterative DFS (a 1 MiB wish can hold a dependency chain deep enough to
// overflow the stack with recursion). Each back edge closes one cycle; a cycle
// is reported once, at the depends-on line of its first group in the document.
void WishParser::CheckCycles() {
  size_t n = doc_.groups.size();
  std::vector<std::vector<size_t>> edges(n);
  for (const auto& [key, g] : first_by_key_) {
    for (const std::string& ref : doc_.groups[g].depends_on) {
      int target = Resolve(ref);
      if (target >= 0 && static_cast<size_t>(target) != g) edges[g].push_back(target);
    }
  }
  std::vector<int> state(n, 0);  // 0 unseen, 1 on the stack, 2 done
  std::set<std::vector<size_t>> reported;
  for (size_t root = 0; root < n; ++root) {
    if (state[root] != 0) continue;
    std::vector<std::pair<size_t, size_t>> stack = {{root, 0}};  // node, next edge
    state[root] = 1;
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      if (next == edges[u].size()) {
        state[u] = 2;
        stack.pop_back();
        continue;
      }
      size_t v = edges[u][next++];
      if (state[v] == 0) {
        state[v] = 1;
        stack.push_back({v, 0});  // invalidates "u" and "next"; the loop re-reads them
        continue;
      }
      if (state[v] != 1) continue;
      std::vector<size_t> cycle;
      auto from = std::find_if(stack.begin(), stack.end(), [&](auto& e) { return e.first == v; });
      for (auto it = from; it != stack.end(); ++it) cycle.push_back(it->first);
      std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
      if (!reported.insert(cycle).second) continue;
      // A long cycle is cut so the message stays readable.
      std::string path;
      for (size_t i = 0; i < cycle.size() && i < kMaxCycleNames; ++i) {
        path += doc_.groups[cycle[i]].name + " -> ";
      }
      if (cycle.size() > kMaxCycleNames) {
        path += "... (" + std::to_string(cycle.size()) + " groups) -> ";
      }
      path += doc_.groups[cycle[0]].name;
      Add("depends-on-cycle", doc_.groups[cycle[0]].depends_on_line, 1,
          Describe(cycle[0]) + " is in a dependency cycle: " + path);
    }
  }
}

void WishParser::ScanPlaceholders() {
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (fenced_[i]) continue;
    // Blank out `inline code` so a documented "<TODO>" is not taken for one.
    std::string line(lines_[i]);
    for (size_t open = line.find('`'); open != std::string::npos; open = line.find('`', open)) {
      size_t close = line.find('`', open + 1);
      if (close == std::string::npos) break;
      std::fill(line.begin() + open, line.begin() + close + 1, ' ');
      open = close + 1;
    }
    size_t at = line.find("<TODO");
    size_t end = at == std::string::npos ? at : line.find('>', at);
    if (end == std::string::npos) continue;
    Add("todo-placeholder-remaining", static_cast<int>(i) + 1, ColumnOf(lines_[i], at),
        "placeholder \"" + line.substr(at, end - at + 1) +
            "\" is still present; replace it with real content before dispatch");
  }
}

void WishParser::Add(std::string rule, int line, int column, std::string message,
                     std::optional<WishEdit> fix) {
  bool fixable = fix.has_value();
  doc_.violations.push_back(WishViolation{std::move(rule), "error", line, column, fixable,
                                          std::move(message), std::move(fix)});
}

std::string WishParser::Describe(size_t g) const {
  const WishGroup& group = doc_.groups[g];
  return "Group " + group.name + (group.title.empty() ? "" : " (" + group.title + ")");
}

int WishParser::Resolve(const std::string& name) const {
  auto it = first_by_key_.find(NameKey(name));
  return it == first_by_key_.end() ? -1 : static_cast<int>(it->second);
}

}  // namespace

Result<WishDocument> ParseWishMarkdown(std::string_view text) {
  RETURN_IF_ERROR(CheckIsText(text));
  return WishParser(text).Parse();
}

Json WishViolationReport(const WishDocument& doc) {
  Json violations = Json::array();
  int fixable = 0;
  for (const WishViolation& v : doc.violations) {
    fixable += v.fixable ? 1 : 0;
    violations.push_back({{"rule", v.rule},
                          {"severity", v.severity},
                          {"line", v.line},
                          {"column", v.column},
                          {"fixable", v.fixable},
                          {"message", v.message}});
  }
  int total = static_cast<int>(doc.violations.size());
  return {{"summary", {{"total", total}, {"fixable", fixable}, {"unfixable", total - fixable}}},
          {"violations", std::move(violations)}};
}

}  // namespace baton
