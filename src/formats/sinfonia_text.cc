// The pieces of a Sinfonia workflow index's text that the reader
// (sinfonia_format.cc) and the writer (sinfonia_writer.cc) share: table
// cells, free text blocks, front matter lines, and the free-form lines and
// status words of indexes written by hand or by an LLM.

#include <string>
#include <vector>

#include "formats/sinfonia_internal.h"

namespace baton {
namespace sinfonia_format_internal {

const TableSpec& StepsTable() {
  static const TableSpec kSpec{
      "Steps", {"Step", "Persona", "Status", "Started At", "Completed At", "Notes"}, "steps"};
  return kSpec;
}
const TableSpec& ArtifactsTable() {
  static const TableSpec kSpec{
      "Artifacts", {"Name", "Type", "Status", "Updated At", "Notes"}, "artifacts"};
  return kSpec;
}
const TableSpec& DecisionsTable() {
  static const TableSpec kSpec{
      "Decisions", {"Timestamp", "Handoff ID", "Decision", "Reviewer", "Note"}, "decisions"};
  return kSpec;
}
const TableSpec& SessionsTable() {
  static const TableSpec kSpec{
      "Sessions", {"Session ID", "Started At", "Last Active At", "Status"}, "sessions"};
  return kSpec;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

namespace {

// The length of "<br>", "<br/>" or "<br />" (any case) at text[i], else 0.
size_t BreakAt(std::string_view text, size_t i) {
  for (std::string_view form : {"<br>", "<br/>", "<br />"}) {
    if (text.size() - i >= form.size() && Lower(text.substr(i, form.size())) == form) {
      return form.size();
    }
  }
  return 0;
}

bool IsKeyChar(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

}  // namespace

std::string EscapeCell(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c == '\\' || c == '|') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "<br>";
    } else if (c == '<' && BreakAt(value, i) > 0) {
      out += "\\<";
    } else {
      out += c;
    }
  }
  return out;
}

std::string UnescapeCell(std::string_view cell) {
  std::string out;
  out.reserve(cell.size());
  for (size_t i = 0; i < cell.size();) {
    if (cell[i] == '\\' && i + 1 < cell.size() &&
        (cell[i + 1] == '\\' || cell[i + 1] == '|' || cell[i + 1] == '<')) {
      out += cell[i + 1];
      i += 2;
    } else if (const size_t n = BreakAt(cell, i); n > 0) {
      out += '\n';
      i += n;
    } else {
      out += cell[i++];
    }
  }
  return out;
}

bool IsSectionHeading(std::string_view line) {
  return line.size() >= 2 && line[0] == '#' && line[1] == '#' &&
         (line.size() == 2 || IsSpace(line[2]));
}

namespace {

// Applies "change" to each line of "text" ("\n"-separated).
template <typename F>
std::string EachLine(std::string_view text, F change) {
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? end : end - start);
    out += change(line);
    if (end == std::string_view::npos) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

size_t LeadingBackslashes(std::string_view line) {
  size_t k = 0;
  while (k < line.size() && line[k] == '\\') ++k;
  return k;
}

}  // namespace

std::string EscapeBlock(std::string_view text) {
  return EachLine(text, [](std::string_view line) {
    return IsSectionHeading(line.substr(LeadingBackslashes(line))) ? "\\" + std::string(line)
                                                                   : std::string(line);
  });
}

std::string UnescapeBlock(std::string_view text) {
  return EachLine(text, [](std::string_view line) {
    const size_t k = LeadingBackslashes(line);
    return k > 0 && IsSectionHeading(line.substr(k)) ? std::string(line.substr(1))
                                                     : std::string(line);
  });
}

bool IsFrontMatterDelimiter(std::string_view line) {
  while (!line.empty() && IsSpace(line.back())) line.remove_suffix(1);
  return line == "---";
}

namespace {

constexpr std::string_view kOwnKeys[] = {"workflow_id",        "workflow_status", "current_step",
                                         "current_step_index", "total_steps",     "session_id",
                                         "created_at",         "updated_at"};

}  // namespace

// index-manager.ts parseFrontmatter: /^([a-z_]+):\s*(.*)$/i, value trimmed.
std::optional<std::pair<std::string_view, std::string_view>> KeyValue(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && IsKeyChar(line[i])) ++i;
  if (i == 0 || i >= line.size() || line[i] != ':') return std::nullopt;
  return std::make_pair(line.substr(0, i), Trim(line.substr(i + 1)));
}

bool IsOwnKey(std::string_view key) {
  for (std::string_view k : kOwnKeys) {
    if (k == key) return true;
  }
  return false;
}

bool IsOwnFrontMatterLine(std::string_view line) {
  auto kv = KeyValue(line);
  return kv.has_value() && IsOwnKey(kv->first);
}

size_t LabelValueAt(std::string_view line, std::string_view label) {
  const std::string lower = Lower(line);
  const std::string want = std::string(label) + ":";
  for (size_t pos = lower.find(want); pos != std::string::npos; pos = lower.find(want, pos + 1)) {
    size_t j = pos;
    while (j > 0 && IsSpace(line[j - 1])) --j;
    if (j > 0 && line[j - 1] == '-') return pos + want.size();
  }
  return std::string_view::npos;
}

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// workflow-state.ts ACTIVE_STATUS_TOKENS and TERMINAL_STATUS_TOKENS, matched
// as it matches them: anywhere in the lower-cased status.
bool PiActive(std::string_view s) {
  for (std::string_view t : {"in-progress", "pending", "blocked", "active"}) {
    if (Contains(s, t)) return true;
  }
  return false;
}
bool PiTerminal(std::string_view s) {
  for (std::string_view t : {"approved", "completed", "done", "queued", "skipped"}) {
    if (Contains(s, t)) return true;
  }
  return false;
}

// A free-form step status in sinfonia.step terms. The Pi surface only asks
// "active or terminal?"; the step machine needs one status, so its active
// tokens are tested first (as the Pi parser tests them), then its terminal
// ones. Where the machine has a better word the token gets it: "queued"
// (terminal for Pi, which only means "not current") is pending, "complete"
// (the workflow's word) completed, "failed…" failed. Anything else is what
// the Pi parser makes of it: not terminal, so in progress.
std::string StepFromToken(std::string_view raw) {
  const std::string s = Lower(Trim(raw));
  if (OneOf(kStepStatuses, s)) return s;
  if (s.empty()) return "pending";
  if (Contains(s, "in-progress") || Contains(s, "in progress")) return "in-progress";
  if (Contains(s, "pending")) return "pending";
  if (Contains(s, "blocked")) return "blocked";
  if (Contains(s, "active")) return "in-progress";
  for (std::string_view t : {"approved", "completed", "done", "skipped"}) {
    if (Contains(s, t)) return "completed";
  }
  if (Contains(s, "queued")) return "pending";
  if (Contains(s, "incomplete")) return "in-progress";
  if (Contains(s, "complete")) return "completed";
  if (Contains(s, "fail")) return "failed";
  return "in-progress";
}

// A free-form "Overall Status" in sinfonia.workflow terms, by the same rule.
std::string WorkflowFromToken(std::string_view raw) {
  const std::string s = Lower(Trim(raw));
  if (OneOf(kWorkflowStatuses, s)) return s;
  if (Contains(s, "in-progress") || Contains(s, "in progress") || Contains(s, "active") ||
      Contains(s, "incomplete")) {
    return "in-progress";
  }
  if (Contains(s, "blocked")) return "blocked";
  if (Contains(s, "fail") || Contains(s, "abort")) return "failed";
  for (std::string_view t : {"complete", "done", "approved", "finished"}) {
    if (Contains(s, t)) return "complete";
  }
  for (std::string_view t : {"pending", "created", "not started", "queued"}) {
    if (Contains(s, t)) return "created";
  }
  return "in-progress";
}

// "N. Title" (workflow-state.ts parseStages: /^\s*(\d+)\.\s+(.+)$/).
std::optional<StageLine> ParseStageLine(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  const size_t d = i;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  // "\s+(.+)": a blank, then at least one more character.
  if (i == d || i + 3 > line.size() || line[i] != '.' || !IsSpace(line[i + 1])) {
    return std::nullopt;
  }
  return StageLine{line.substr(d, i - d), Trim(line.substr(i + 2))};
}

// "- Key: value" (any case, any spacing around "-"): the value, else nullopt.
std::optional<std::string_view> BulletField(std::string_view line, std::string_view key) {
  std::string_view t = Trim(line);
  if (t.empty() || t[0] != '-') return std::nullopt;
  t = Trim(t.substr(1));
  if (t.size() <= key.size() || t[key.size()] != ':' || Lower(t.substr(0, key.size())) != key) {
    return std::nullopt;
  }
  return Trim(t.substr(key.size() + 1));
}

// A list entry ("- x", "* x", "+ x", "12. x"): its text, else nullopt.
std::optional<std::string_view> ListEntry(std::string_view line) {
  if (auto stage = ParseStageLine(line)) return stage->title;
  std::string_view t = Trim(line);
  if (t.size() >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && IsSpace(t[1])) {
    return Trim(t.substr(2));
  }
  if (t.size() == 1 && (t[0] == '-' || t[0] == '*' || t[0] == '+')) return std::string_view();
  return std::nullopt;
}

int64_t SaturatingNumber(std::string_view digits) {
  int64_t n = 0;
  for (char c : digits) {
    if (n > (INT64_MAX - 9) / 10) return INT64_MAX;
    n = n * 10 + (c - '0');
  }
  return n;
}

// workflow-state.ts's slug: lower case, parentheticals dropped, runs of
// anything but [a-z0-9] as "-", dashes trimmed, at most 40 characters.
std::string PiSlug(std::string_view title) {
  std::string s = Lower(title);
  std::string dropped;
  bool closes = true;  // false once no ")" is left to close a "("
  for (size_t i = 0; i < s.size();) {
    const size_t close = s[i] == '(' && closes ? s.find(')', i) : std::string::npos;
    if (s[i] == '(' && close == std::string::npos) closes = false;
    if (close == std::string::npos) {
      dropped += s[i++];
      continue;
    }
    while (!dropped.empty() && IsSpace(dropped.back())) dropped.pop_back();
    i = close + 1;
    while (i < s.size() && IsSpace(s[i])) ++i;
  }
  std::string slug;
  for (char c : dropped) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (keep) {
      slug += c;
    } else if (slug.empty() || slug.back() != '-') {
      slug += '-';
    }
  }
  size_t b = 0, e = slug.size();
  while (b < e && slug[b] == '-') ++b;
  while (e > b && slug[e - 1] == '-') --e;
  return slug.substr(b, std::min<size_t>(e - b, 40));
}

// "Title (Persona)" → persona "persona" when the parenthetical is one word.
std::pair<std::string, std::string> TitleAndPersona(std::string_view title) {
  if (title.size() < 3 || title.back() != ')') return {std::string(title), ""};
  const size_t open = title.rfind('(');
  if (open == std::string_view::npos) return {std::string(title), ""};
  const std::string_view word = title.substr(open + 1, title.size() - open - 2);
  if (word.empty()) return {std::string(title), ""};
  for (char c : word) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return {std::string(title), ""};
  }
  const std::string_view rest = Trim(title.substr(0, open));
  if (rest.empty()) return {std::string(title), ""};
  return {std::string(rest), Lower(word)};
}

// "`2026-03-05`: text" or "2026-03-05T10:00:00Z — text": the time and the
// text; no time when the entry does not start with a date.
std::pair<std::string, std::string> Dated(std::string_view entry) {
  std::string_view t = entry;
  const bool tick = !t.empty() && t[0] == '`';
  if (tick) t.remove_prefix(1);
  const auto digit = [&](size_t i) { return i < t.size() && t[i] >= '0' && t[i] <= '9'; };
  const bool date = digit(0) && digit(1) && digit(2) && digit(3) && t.size() > 4 && t[4] == '-' &&
                    digit(5) && digit(6) && t.size() > 7 && t[7] == '-' && digit(8) && digit(9);
  if (!date) return {"", std::string(entry)};
  size_t end = 10;
  if (end < t.size() && (t[end] == 'T' || t[end] == 't')) {
    while (end < t.size() &&
           std::string_view("0123456789Tt:.Z+-").find(t[end]) != std::string_view::npos) {
      ++end;
    }
    while (end > 10 && t[end - 1] == ':') --end;  // the separator, not the time's
  }
  const std::string time(t.substr(0, end));
  std::string_view rest = t.substr(end);
  if (tick) {
    if (rest.empty() || rest[0] != '`') return {"", std::string(entry)};
    rest.remove_prefix(1);
  }
  rest = Trim(rest);
  for (std::string_view sep : {":", "—", "–", "-"}) {
    if (rest.substr(0, sep.size()) == sep)
      return {time, std::string(Trim(rest.substr(sep.size())))};
  }
  return {"", std::string(entry)};
}

}  // namespace sinfonia_format_internal
}  // namespace baton
