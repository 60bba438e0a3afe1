// The Sinfonia workflow index reader (sinfonia_format.h): Sinfonia's own
// front matter and tables, and the free-form indexes people and LLMs wrote.
// The writer is sinfonia_writer.cc; the text pieces both use are in
// sinfonia_text.cc.

#include "formats/sinfonia_internal.h"

#include <map>
#include <optional>
#include <set>

#include "formats/lifecycle.h"
#include "formats/reader.h"

namespace baton {
namespace {

using namespace sinfonia_format_internal;

struct Line {
  std::string_view text;  // without its line break and trailing CRs
  size_t number;          // 1-based
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({line, lines.size() + 1});
    start = end + 1;
  }
  return lines;
}

bool IsBlank(std::string_view line) { return Trim(line).empty(); }

// The lines as one text, without the blank lines around it.
std::string Block(const std::vector<Line>& lines) {
  size_t b = 0, e = lines.size();
  while (b < e && IsBlank(lines[b].text)) ++b;
  while (e > b && IsBlank(lines[e - 1].text)) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) {
    if (i > b) out += '\n';
    out += lines[i].text;
  }
  return out;
}

struct Section {
  std::string heading;  // the line as written
  std::string name;     // lower case
  size_t line = 0;
  std::vector<Line> lines;
  bool HasRows() const {
    for (const Line& l : lines) {
      const std::string_view t = Trim(l.text);
      if (!t.empty() && t[0] == '|') return true;
    }
    return false;
  }
};

struct Field {
  std::string value;
  size_t line = 0;
};

struct Step {
  std::string key;
  std::string title;
  std::string persona;
  std::string status;
  std::string raw_status;  // lower case, as the Pi parser compares it
  int64_t number = 0;      // the stage's N, else its place
  std::string started_at, completed_at, notes;
  size_t line = 0;
};

class IndexReader {
 public:
  IndexReader(std::string_view text, const std::string& source) : source_(source) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    lines_ = SplitLines(text);
  }

  Result<RunImage> Read();

 private:
  Status Error(size_t line, std::string_view reason) const {
    return InvalidArgumentError(source_ + ": line " + std::to_string(line) + ": " +
                                std::string(reason));
  }
  Status ReadFrontMatter();
  void SplitSections();
  const Section* Pick(std::initializer_list<std::string_view> names, bool prefer_rows);
  Result<std::vector<std::vector<std::string>>> Rows(const Section& s, const TableSpec& spec,
                                                     std::vector<size_t>* line_numbers);
  bool KeepForeignTable(const Section& s, const TableSpec& spec);
  Status ReadSteps();
  Status ReadStageList(const Section& s);
  Status ReadArtifacts();
  Status ReadDecisions();
  void ReadDecisionList(const Section& s);
  Status ReadSessions();
  Result<std::string> WorkflowStatus();
  Result<std::optional<int64_t>> FrontMatterInt(std::string_view key);
  void PlaceCursor(Json& run);
  Json Kept();
  const Field* Fm(std::string_view key) const {
    auto it = fm_.find(std::string(key));
    return it == fm_.end() ? nullptr : &it->second;
  }

  const std::string& source_;
  std::vector<Line> lines_;
  bool has_front_matter_ = false;
  std::map<std::string, Field> fm_;
  Json fm_other_ = Json::array();
  size_t body_ = 0;  // index in lines_ of the first body line
  std::vector<Line> preamble_;
  std::vector<Section> sections_;
  std::set<size_t> used_sections_;
  bool free_form_ = false;

  std::vector<Step> steps_;
  Json handoffs_ = Json::array();
  Json approvals_ = Json::array();
  Json sessions_ = Json::array();
  Json text_ = Json::object();  // kept text beside the tables
};

Status IndexReader::ReadFrontMatter() {
  if (lines_.empty() || !IsFrontMatterDelimiter(lines_[0].text)) return Status();
  size_t close = 1;
  while (close < lines_.size() && !IsFrontMatterDelimiter(lines_[close].text)) ++close;
  if (close == lines_.size()) {
    return Error(1, "the front matter opened here is never closed (no later \"---\" line)");
  }
  has_front_matter_ = true;
  body_ = close + 1;
  for (size_t i = 1; i < close; ++i) {
    auto kv = KeyValue(lines_[i].text);
    if (kv && IsOwnKey(kv->first)) {
      // The last one wins, as in Sinfonia's parser.
      fm_[std::string(kv->first)] = Field{std::string(kv->second), lines_[i].number};
    } else {
      fm_other_.push_back(std::string(lines_[i].text));
    }
  }
  return Status();
}

void IndexReader::SplitSections() {
  for (size_t i = body_; i < lines_.size(); ++i) {
    const Line& l = lines_[i];
    if (IsSectionHeading(l.text)) {
      sections_.push_back({std::string(l.text), Lower(Trim(l.text.substr(2))), l.number, {}});
    } else if (sections_.empty()) {
      preamble_.push_back(l);
    } else {
      sections_.back().lines.push_back(l);
    }
  }
}

// The section holding one part of the index: the first of those names (the
// first with table rows, when "prefer_rows"); the others are kept as they are.
const Section* IndexReader::Pick(std::initializer_list<std::string_view> names, bool prefer_rows) {
  std::optional<size_t> first, with_rows;
  for (size_t i = 0; i < sections_.size(); ++i) {
    bool named = false;
    for (std::string_view n : names) named = named || sections_[i].name == n;
    if (!named) continue;
    if (!first) first = i;
    if (!with_rows && sections_[i].HasRows()) with_rows = i;
  }
  std::optional<size_t> pick = prefer_rows && with_rows ? with_rows : first;
  if (!pick) return nullptr;
  used_sections_.insert(*pick);
  return &sections_[*pick];
}

// Splits a table row on the "|" that are not escaped; nullopt when the row
// does not end with one.
std::optional<std::vector<std::string>> SplitRow(std::string_view row) {
  std::vector<std::string> cells;
  std::string cell;
  bool closed = row.size() == 1;  // a lone "|", an empty row
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size()) {
      cell += row[i];
      cell += row[++i];
      closed = false;
    } else if (row[i] == '|') {
      cells.push_back(UnescapeCell(Trim(cell)));
      cell.clear();
      closed = true;
    } else {
      cell += row[i];
      closed = false;
    }
  }
  if (!closed) return std::nullopt;
  return cells;
}

bool IsSeparatorRow(const std::vector<std::string>& cells) {
  if (cells.empty()) return false;
  for (const std::string& c : cells) {
    std::string_view t = c;
    if (!t.empty() && t.front() == ':') t.remove_prefix(1);
    if (!t.empty() && t.back() == ':') t.remove_suffix(1);
    if (t.empty() || t.find_first_not_of('-') != std::string_view::npos) return false;
  }
  return true;
}

bool AllEmpty(const std::vector<std::string>& cells) {
  for (const std::string& c : cells) {
    if (!c.empty()) return false;
  }
  return true;
}

// The data rows of a table section (header, separator and empty rows
// dropped; every row checked for its number of cells); the section's other
// lines are kept as its text.
Result<std::vector<std::vector<std::string>>> IndexReader::Rows(const Section& s,
                                                                const TableSpec& spec,
                                                                std::vector<size_t>* line_numbers) {
  struct Raw {
    std::vector<std::string> cells;
    size_t line;
    bool separator;
  };
  std::vector<Raw> raw;
  std::vector<Line> text;
  for (const Line& l : s.lines) {
    const std::string_view t = Trim(l.text);
    if (t.empty() || t[0] != '|') {
      text.push_back(l);
      continue;
    }
    std::optional<std::vector<std::string>> cells = SplitRow(t);
    if (!cells) {
      return Error(l.number, "a row of the " + std::string(spec.section) +
                                 " table must end with \"|\" (a \"|\" inside a cell is written "
                                 "\"\\|\")");
    }
    const bool separator = IsSeparatorRow(*cells);
    raw.push_back({std::move(*cells), l.number, separator});
  }
  if (const std::string kept = Block(text); !kept.empty()) text_[spec.text_key] = kept;
  std::string header;
  for (std::string_view c : spec.columns) header += (header.empty() ? "" : " | ") + std::string(c);
  bool has_header = false;
  if (!raw.empty() && !raw[0].separator) {
    bool named = raw[0].cells.size() == spec.columns.size();
    for (size_t i = 0; named && i < spec.columns.size(); ++i) {
      named = Lower(raw[0].cells[i]) == Lower(spec.columns[i]);
    }
    has_header = named || (raw.size() > 1 && raw[1].separator);
  }
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i].separator || AllEmpty(raw[i].cells)) continue;
    if (raw[i].cells.size() != spec.columns.size()) {
      return Error(raw[i].line, "this row of the " + std::string(spec.section) + " table has " +
                                    std::to_string(raw[i].cells.size()) + " cells; the table has " +
                                    std::to_string(spec.columns.size()) + " columns (" + header +
                                    "); a \"|\" inside a cell is written \"\\|\"");
    }
    if (i == 0 && has_header) continue;
    rows.push_back(std::move(raw[i].cells));
    line_numbers->push_back(raw[i].line);
  }
  return rows;
}

// A table whose header names other columns than Sinfonia's (a hand- or
// LLM-written "| Time (UTC) | Decision | Rationale |") is not read as
// Sinfonia's table: the section is kept as written, like any other section,
// and written back the same.
bool IndexReader::KeepForeignTable(const Section& s, const TableSpec& spec) {
  std::vector<std::vector<std::string>> rows;
  for (const Line& l : s.lines) {
    const std::string_view t = Trim(l.text);
    if (t.empty() || t[0] != '|') continue;
    std::optional<std::vector<std::string>> cells = SplitRow(t);
    if (!cells) return false;
    rows.push_back(std::move(*cells));
    if (rows.size() == 2) break;
  }
  if (rows.size() < 2 || IsSeparatorRow(rows[0]) || !IsSeparatorRow(rows[1])) return false;
  bool same = rows[0].size() == spec.columns.size();
  for (size_t i = 0; same && i < spec.columns.size(); ++i) {
    same = Lower(rows[0][i]) == Lower(spec.columns[i]);
  }
  if (same) return false;
  used_sections_.erase(static_cast<size_t>(&s - sections_.data()));
  return true;
}

Status IndexReader::ReadSteps() {
  const Section* s = Pick({"steps", "stages"}, /*prefer_rows=*/true);
  if (s == nullptr) return Status();
  if (!s->HasRows()) {
    free_form_ = true;
    return ReadStageList(*s);
  }
  std::vector<size_t> lines;
  ASSIGN_OR_RETURN(auto rows, Rows(*s, StepsTable(), &lines));
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string>& r = rows[i];
    if (r[0].empty()) return Error(lines[i], "a step needs a name (its Step cell is empty)");
    if (auto [it, fresh] = seen.emplace(r[0], lines[i]); !fresh) {
      return Error(lines[i], "step \"" + r[0] + "\" is already on line " +
                                 std::to_string(it->second) + "; step names are unique");
    }
    steps_.push_back({.key = r[0],
                      .title = r[0],
                      .persona = r[1],
                      .status = r[2],
                      .raw_status = Lower(r[2]),
                      .number = static_cast<int64_t>(i + 1),
                      .started_at = r[3],
                      .completed_at = r[4],
                      .notes = r[5],
                      .line = lines[i]});
  }
  return Status();
}

// A "## Stages" list as the Pi surface reads it: "N. Title" opens a stage,
// "- Status:" sets its status; its other lines become its notes.
Status IndexReader::ReadStageList(const Section& s) {
  std::vector<Line> intro;
  std::set<std::string> keys;
  std::vector<std::string> details;
  const auto finish = [&] {
    if (steps_.empty()) return;
    std::string notes;
    for (const std::string& d : details) notes += (notes.empty() ? "" : "\n") + d;
    steps_.back().notes = notes;
    details.clear();
  };
  for (const Line& l : s.lines) {
    if (std::optional<StageLine> stage = ParseStageLine(l.text)) {
      finish();
      auto [title, persona] = TitleAndPersona(stage->title);
      std::string slug = PiSlug(stage->title);
      std::string key = slug.empty() ? "step-" + std::string(stage->digits)
                                     : std::string(stage->digits) + "-" + slug;
      const std::string base = key;
      for (int n = 2; !keys.insert(key).second; ++n) key = base + "-" + std::to_string(n);
      steps_.push_back({.key = key,
                        .title = title.empty() ? key : title,
                        .persona = persona,
                        .number = SaturatingNumber(stage->digits),
                        .line = l.number});
    } else if (steps_.empty()) {
      intro.push_back(l);
    } else if (auto status = BulletField(l.text, "status"); status && !status->empty()) {
      steps_.back().raw_status = Lower(*status);
    } else if (auto persona = BulletField(l.text, "persona"); persona && !persona->empty()) {
      steps_.back().persona = Lower(*persona);
    } else if (!IsBlank(l.text)) {
      std::string_view t = Trim(l.text);
      if (t.size() >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && IsSpace(t[1])) {
        t = Trim(t.substr(2));
      }
      details.emplace_back(t);
    }
  }
  finish();
  if (const std::string kept = Block(intro); !kept.empty()) text_["steps"] = kept;
  for (Step& st : steps_) st.status = StepFromToken(st.raw_status);
  return Status();
}

std::string SessionOf(const std::string& name, const std::set<std::string>& sessions) {
  const size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 == name.size()) return "";
  for (size_t i = dash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return "";
  }
  const std::string prefix = name.substr(0, dash);
  return sessions.contains(prefix) ? prefix : "";
}

Status IndexReader::ReadArtifacts() {
  const Section* s = Pick({"artifacts"}, false);
  if (s == nullptr || KeepForeignTable(*s, ArtifactsTable())) return Status();
  std::vector<size_t> lines;
  ASSIGN_OR_RETURN(auto rows, Rows(*s, ArtifactsTable(), &lines));
  std::set<std::string> sessions;
  for (const Json& se : sessions_) sessions.insert(se["id"].get<std::string>());
  if (const Field* f = Fm("session_id"); f != nullptr && !f->value.empty()) {
    sessions.insert(f->value);
  }
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<std::string>& r = rows[i];
    if (r[0].empty()) return Error(lines[i], "an artifact needs a name (its Name cell is empty)");
    if (auto [it, fresh] = seen.emplace(r[0], lines[i]); !fresh) {
      return Error(lines[i], "artifact \"" + r[0] + "\" is already on line " +
                                 std::to_string(it->second) + "; artifact names are unique");
    }
    Json meta = Json::object();
    std::string from, to;
    const std::string& notes = r[4];
    if (const size_t arrow = notes.find(" → "); arrow != std::string::npos) {
      from = notes.substr(0, arrow);
      to = notes.substr(arrow + std::string_view(" → ").size());
    }
    if (from.empty() || to.empty()) {
      from.clear();
      to.clear();
      meta["notes"] = notes;
    }
    const std::string session = SessionOf(r[0], sessions);
    handoffs_.push_back({{"id", r[0]},
                         {"session_id", session.empty() ? Json() : Json(session)},
                         {"sequence", static_cast<int64_t>(i + 1)},
                         {"source", from},
                         {"target", to},
                         {"type", r[1]},
                         {"status", r[2]},
                         {"step", nullptr},
                         {"body", ""},
                         {"meta", meta},
                         {"created_at", r[3]},
                         {"updated_at", r[3]}});
  }
  return Status();
}

Status IndexReader::ReadDecisions() {
  const Section* s = Pick({"decisions", "decision log"}, /*prefer_rows=*/true);
  if (s == nullptr || KeepForeignTable(*s, DecisionsTable())) return Status();
  if (!s->HasRows()) {
    free_form_ = true;
    ReadDecisionList(*s);
    return Status();
  }
  std::vector<size_t> lines;
  ASSIGN_OR_RETURN(auto rows, Rows(*s, DecisionsTable(), &lines));
  std::set<std::string> steps, artifacts;
  for (const Step& st : steps_) steps.insert(st.key);
  for (const Json& h : handoffs_) artifacts.insert(h["id"].get<std::string>());
  for (const std::vector<std::string>& r : rows) {
    const std::string& subject = r[1];
    const char* kind = subject.empty() ? "run" : steps.contains(subject) ? "step" : "handoff";
    approvals_.push_back({{"subject_kind", kind},
                          {"subject", subject},
                          {"decision", r[2]},
                          {"reviewer", r[3]},
                          {"note", r[4]},
                          {"time", r[0]},
                          {"meta", Json::object()}});
  }
  return Status();
}

// A "## Decision Log" (or a listed "## Decisions"): one entry per bullet or
// number, continued by the lines under it; an entry is a decision "note" on
// the run, dated when it starts with a date.
void IndexReader::ReadDecisionList(const Section& s) {
  std::vector<Line> intro;
  std::vector<std::string> entries;
  for (const Line& l : s.lines) {
    if (std::optional<std::string_view> e = ListEntry(l.text)) {
      entries.emplace_back(*e);
    } else if (entries.empty()) {
      intro.push_back(l);
    } else if (!IsBlank(l.text)) {
      entries.back() += (entries.back().empty() ? "" : "\n") + std::string(Trim(l.text));
    }
  }
  if (const std::string kept = Block(intro); !kept.empty()) text_["decisions"] = kept;
  for (const std::string& e : entries) {
    auto [time, note] = Dated(e);
    approvals_.push_back({{"subject_kind", "run"},
                          {"subject", ""},
                          {"decision", "note"},
                          {"reviewer", ""},
                          {"note", note},
                          {"time", time},
                          {"meta", Json::object()}});
  }
}

Status IndexReader::ReadSessions() {
  const Section* s = Pick({"sessions"}, false);
  if (s == nullptr || KeepForeignTable(*s, SessionsTable())) return Status();
  std::vector<size_t> lines;
  ASSIGN_OR_RETURN(auto rows, Rows(*s, SessionsTable(), &lines));
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<std::string>& r = rows[i];
    if (r[0].empty())
      return Error(lines[i], "a session needs an id (its Session ID cell is empty)");
    if (auto [it, fresh] = seen.emplace(r[0], lines[i]); !fresh) {
      return Error(lines[i], "session \"" + r[0] + "\" is already on line " +
                                 std::to_string(it->second) + "; session ids are unique");
    }
    sessions_.push_back({{"id", r[0]},
                         {"status", r[3]},
                         {"started_at", r[1]},
                         {"last_active_at", r[2]},
                         {"meta", Json::object()}});
  }
  return Status();
}

// Sinfonia's coercion (parseScalar): digits are a number, an empty value 0
// (Number("")); anything else is refused, or ignored in a free-form index
// as the Pi surface ignores it.
Result<std::optional<int64_t>> IndexReader::FrontMatterInt(std::string_view key) {
  const Field* f = Fm(key);
  if (f == nullptr) return std::optional<int64_t>();
  std::string_view v = f->value;
  if (v.empty()) return std::optional<int64_t>(0);
  const bool negative = v[0] == '-';
  if (negative) v.remove_prefix(1);
  bool digits = !v.empty() && v.size() <= 18;
  for (char c : v) digits = digits && c >= '0' && c <= '9';
  if (!digits) {
    if (free_form_) return std::optional<int64_t>();
    return Error(f->line, std::string(key) + ": must be an integer, not \"" + f->value + "\"");
  }
  const int64_t n = SaturatingNumber(v);
  return std::optional<int64_t>(negative ? -n : n);
}

Result<std::string> IndexReader::WorkflowStatus() {
  if (const Field* f = Fm("workflow_status")) {
    if (OneOf(kWorkflowStatuses, f->value)) return f->value;
    if (free_form_) return WorkflowFromToken(f->value);
    return Error(f->line, "workflow_status \"" + f->value +
                              "\" is not a sinfonia.workflow status (allowed: " +
                              Allowed(kWorkflowStatuses) + ")");
  }
  for (size_t i = body_; i < lines_.size(); ++i) {
    const std::string_view line = lines_[i].text;
    if (const size_t at = LabelValueAt(line, "overall status"); at != std::string_view::npos) {
      if (!Trim(line.substr(at)).empty()) return WorkflowFromToken(line.substr(at));
    }
  }
  // No status written anywhere: what the steps say.
  if (steps_.empty()) return std::string("created");
  bool all_done = true, all_pending = true, failed = false, blocked = false;
  for (const Step& s : steps_) {
    all_done = all_done && s.status == "completed";
    all_pending = all_pending && s.status == "pending";
    failed = failed || s.status == "failed";
    blocked = blocked || s.status == "blocked";
  }
  if (all_done) return std::string("complete");
  if (failed) return std::string("failed");
  if (blocked) return std::string("blocked");
  return std::string(all_pending ? "created" : "in-progress");
}

// The current step: the front matter's; without it, in a free-form index,
// the Pi surface's choice (the first stage that is active or not terminal,
// else "- Current Stage: Phase N", else the last stage); else Sinfonia's
// default, index 1.
void IndexReader::PlaceCursor(Json& run) {
  Result<std::optional<int64_t>> fm_index = FrontMatterInt("current_step_index");
  std::optional<int64_t> index = fm_index.ok() ? *fm_index : std::nullopt;
  const Field* fm_step = Fm("current_step");
  const auto position_of = [&](const std::string& key) -> std::optional<int64_t> {
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (steps_[i].key == key) return static_cast<int64_t>(i + 1);
    }
    return std::nullopt;
  };
  if (!index && fm_step != nullptr) index = position_of(fm_step->value).value_or(1);
  if (!index && free_form_) {
    int64_t number = 0;
    for (const Step& s : steps_) {
      if (!s.raw_status.empty() && (PiActive(s.raw_status) || !PiTerminal(s.raw_status))) {
        number = s.number;
        break;
      }
    }
    for (size_t i = body_; number == 0 && i < lines_.size(); ++i) {
      const std::string_view line = lines_[i].text;
      const size_t at = LabelValueAt(line, "current stage");
      if (at == std::string_view::npos) continue;
      const std::string value = Lower(line.substr(at));
      for (size_t p = value.find("phase"); p != std::string::npos; p = value.find("phase", p + 1)) {
        size_t d = p + 5, spaces = d;
        while (d < value.size() && IsSpace(value[d])) ++d;
        const size_t start = d;
        while (d < value.size() && value[d] >= '0' && value[d] <= '9') ++d;
        if (d > start && start > spaces) number = SaturatingNumber(value.substr(start, d - start));
      }
      break;
    }
    if (number == 0 && !steps_.empty()) number = steps_.back().number;
    if (!steps_.empty()) index = std::min<int64_t>(number, static_cast<int64_t>(steps_.size()));
    if (steps_.empty()) index = number;
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (steps_[i].number == number) {
        index = static_cast<int64_t>(i + 1);
        break;
      }
    }
  }
  const int64_t at = index.value_or(1);
  run["cursor_index"] = at;
  if (fm_step != nullptr) {
    run["cursor"] = fm_step->value.empty() ? Json() : Json(fm_step->value);
  } else if (at >= 1 && at <= static_cast<int64_t>(steps_.size())) {
    run["cursor"] = steps_[at - 1].key;
  } else {
    run["cursor"] = nullptr;
  }
}

Json IndexReader::Kept() {
  Json kept = Json::object();
  if (!fm_other_.empty()) kept["front_matter"] = fm_other_;
  if (const std::string p = Block(preamble_); !p.empty()) kept["preamble"] = p;
  Json sections = Json::array();
  for (size_t i = 0; i < sections_.size(); ++i) {
    if (used_sections_.contains(i)) continue;
    sections.push_back({{"heading", sections_[i].heading}, {"text", Block(sections_[i].lines)}});
  }
  if (!sections.empty()) kept["sections"] = sections;
  if (!text_.empty()) kept["text"] = text_;
  return kept;
}

Result<RunImage> IndexReader::Read() {
  RETURN_IF_ERROR(ReadFrontMatter());
  SplitSections();
  const Section* goal = Pick({"goal"}, false);
  const Section* context = Pick({"context"}, false);
  RETURN_IF_ERROR(ReadSteps());
  RETURN_IF_ERROR(ReadSessions());
  RETURN_IF_ERROR(ReadArtifacts());
  RETURN_IF_ERROR(ReadDecisions());
  free_form_ = free_form_ || !has_front_matter_;
  if (!free_form_) {
    for (const Step& s : steps_) {
      if (!OneOf(kStepStatuses, s.status)) {
        return Error(s.line, "step \"" + s.key + "\": status \"" + s.status +
                                 "\" is not a sinfonia.step status (allowed: " +
                                 Allowed(kStepStatuses) + ")");
      }
    }
  } else {
    for (Step& s : steps_) s.status = StepFromToken(s.raw_status);
  }
  ASSIGN_OR_RETURN(const std::string status, WorkflowStatus());
  ASSIGN_OR_RETURN(const std::optional<int64_t> total, FrontMatterInt("total_steps"));
  RETURN_IF_ERROR(FrontMatterInt("current_step_index").status());

  const auto fm = [&](std::string_view key) {
    const Field* f = Fm(key);
    return f == nullptr ? std::string() : f->value;
  };
  const std::string workflow_id = fm("workflow_id");
  std::string title = workflow_id;
  for (const Line& l : preamble_) {
    if (l.text.substr(0, 2) == "# ") {
      title = std::string(Trim(l.text.substr(2)));
      break;
    }
  }
  Json meta = {{"workflow_id", workflow_id},
               {"goal", goal == nullptr ? "" : UnescapeBlock(Trim(Block(goal->lines)))},
               {"context", context == nullptr ? "" : UnescapeBlock(Trim(Block(context->lines)))}};
  Json kept = Kept();
  if (total && *total != static_cast<int64_t>(steps_.size())) kept["total_steps"] = *total;

  // The session the index belongs to: one the Sessions table lacks when it is
  // empty; kept when the table names another (sinfonia.state's rule picks the
  // last active session, else the first).
  const std::string session = fm("session_id");
  std::string by_rule;
  for (const Json& s : sessions_) {
    if (s["status"] == "active" || by_rule.empty()) by_rule = s["id"].get<std::string>();
  }
  if (sessions_.empty() && !session.empty()) {
    const std::string created = fm("created_at");
    const std::string updated = fm("updated_at");
    sessions_.push_back({{"id", session},
                         {"status", "active"},
                         {"started_at", created},
                         {"last_active_at", updated.empty() ? created : updated},
                         {"meta", Json::object()}});
  } else if (Fm("session_id") != nullptr && session != by_rule) {
    kept["session_id"] = session;
  }
  if (!kept.empty()) meta["kept"] = {{"sinfonia", kept}};

  Json run = {{"profile", "sinfonia"},
              {"machine", std::string(kWorkflowMachine)},
              {"status", status},
              {"title", title},
              {"context", Json::object()},
              {"meta", meta},
              {"created_at", fm("created_at")},
              {"updated_at", fm("updated_at")}};
  PlaceCursor(run);

  Json tasks = Json::array();
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    tasks.push_back(
        {{"ref", "step:" + s.key},
         {"key", s.key},
         {"kind", "step"},
         {"parent", nullptr},
         {"depends_on", Json::array()},
         {"title", s.title},
         {"body", ""},
         {"status", s.status},
         {"priority", 0},
         {"position", static_cast<int64_t>(i + 1)},
         {"assignee", s.persona.empty() ? Json() : Json(s.persona)},
         {"attempts", 0},
         {"board_column", nullptr},
         {"result", nullptr},
         {"meta",
          {{"started_at", s.started_at}, {"completed_at", s.completed_at}, {"notes", s.notes}}}});
  }
  return RunImage{{"image", 1},
                  {"source", {{"format", "sinfonia"}, {"name", source_}}},
                  {"run", run},
                  {"tasks", tasks},
                  {"approvals", approvals_},
                  {"sessions", sessions_},
                  {"handoffs", handoffs_}};
}

}  // namespace

Result<RunImage> ReadSinfoniaIndex(std::string_view text, const std::string& source) {
  if (text.size() > kMaxFormatInputBytes) {
    return ResourceExhaustedError(source + ": " + std::to_string(text.size()) + " bytes; at most " +
                                  std::to_string(kMaxFormatInputBytes) + " are read");
  }
  RETURN_IF_ERROR(CheckUtf8(text, source));
  if (Trim(text).empty()) {
    return InvalidArgumentError(source + ": the file is empty; a workflow index was expected");
  }
  IndexReader reader(text, source);
  return reader.Read();
}

}  // namespace baton
