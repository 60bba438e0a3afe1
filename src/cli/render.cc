// Text rendering of operation results for `--output text` (the default).
// Known lists become tables of their most useful columns; anything else is
// an outline: "key: value" lines, nested objects indented under their key,
// lists of objects as tables of their scalar fields. No line is JSON
// (--output json is for that; tests/cli/cli_text_test.cc checks every operation).

#include <algorithm>
#include <sstream>

#include "cli/cli.h"
#include "cli/verbs.h"

namespace baton {
namespace {

struct ListView {
  const char* key;                   // the array in the result
  std::vector<std::string> columns;  // fields to show, in order
};

// A column is a field, "label=path.to.field" for a nested one.
const ListView kListViews[] = {
    {"runs", {"id", "profile", "status", "version", "title"}},
    {"tasks", {"id", "kind", "status", "priority", "holder=lease.owner",
               "lease_until=lease.expires_at", "title"}},
    {"projects", {"id", "name", "autonomy_mode", "repo_path"}},
    {"events", {"seq", "time", "actor", "kind", "summary"}},
    {"machines", {"name", "initial", "states", "description"}},
    {"operations", {"name", "roles", "mutating", "summary"}},
    {"agents", {"id", "role", "status", "model", "last_heartbeat_at"}},
    {"boards", {"id", "name", "task_count", "template"}},
    {"messages", {"seq", "from", "to", "delivery_status", "read", "body"}},
    {"decisions", {"run_id", "subject_kind", "subject", "decision", "reviewer", "note"}},
    {"mirrors", {"path", "format", "run_id", "ok", "last_error"}},
    {"sessions", {"id", "agent", "role", "credential", "created_at", "expires_at"}},
};

bool IsScalar(const Json& v) { return !v.is_object() && !v.is_array(); }


// One value on one line: objects as "key=value" pairs, lists joined by ",".
std::string Cell(const Json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("id") && v.contains("role") && v.size() == 2) {
    return Cell(v["id"]) + "(" + Cell(v["role"]) + ")";
  }
  if (v.is_array()) {
    std::string out;
    for (const Json& item : v) out += (out.empty() ? "" : ",") + Cell(item);
    return out.empty() ? "-" : out;
  }
  if (v.is_object()) {
    std::string out;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out += (out.empty() ? "" : " ") + it.key() + "=" + Cell(it.value());
    }
    return out.empty() ? "-" : out;
  }
  return v.dump();  // a number or a boolean
}

// "label=a.b" -> {"label", "a.b"}; "field" -> {"field", "field"}.
std::pair<std::string, std::string> Column(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos) return {spec, spec};
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

const Json* Field(const Json& row, const std::string& path) {
  const Json* v = &row;
  size_t start = 0;
  for (;;) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!v->is_object() || !v->contains(key)) return nullptr;
    v = &(*v)[key];
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

// Cuts "s" to at most "bytes" bytes without splitting a UTF-8 character.
std::string Truncate(const std::string& s, size_t bytes) {
  size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end) + "…";
}

std::string Table(const Json& rows, const std::vector<std::string>& columns,
                  const std::string& indent = "") {
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width;
  for (const std::string& c : columns) width.push_back(Column(c).first.size());
  for (const Json& row : rows) {
    std::vector<std::string> line;
    for (size_t i = 0; i < columns.size(); ++i) {
      const Json* field = row.is_object() ? Field(row, Column(columns[i]).second) : &row;
      std::string cell = field != nullptr ? Cell(*field) : "";
      std::replace(cell.begin(), cell.end(), '\n', ' ');
      // The last column may be long; the others are kept readable.
      if (i + 1 < columns.size() && cell.size() > 40) cell = Truncate(cell, 39);
      width[i] = std::max(width[i], cell.size());
      line.push_back(std::move(cell));
    }
    cells.push_back(std::move(line));
  }
  std::ostringstream out;
  auto print = [&](const std::vector<std::string>& line) {
    out << indent;
    for (size_t i = 0; i < line.size(); ++i) {
      out << line[i];
      if (i + 1 < line.size()) out << std::string(width[i] - line[i].size() + 2, ' ');
    }
    out << "\n";
  };
  std::vector<std::string> header;
  for (const std::string& c : columns) {
    std::string h = Column(c).first;
    std::transform(h.begin(), h.end(), h.begin(), ::toupper);
    header.push_back(h);
  }
  print(header);
  for (const auto& line : cells) print(line);
  if (rows.empty()) out << indent << "(none)\n";
  return out.str();
}

// A record's keys as people read them: what names it (id, name, title,
// status) first, the rest in the result's order (alphabetical).
std::vector<std::string> RecordKeys(const Json& obj) {
  static constexpr const char* kLead[] = {"id", "run_id", "name", "title", "status"};
  std::vector<std::string> keys;
  for (const char* lead : kLead) {
    if (obj.contains(lead)) keys.push_back(lead);
  }
  const auto is_lead = [](const std::string& key) {
    return std::find(std::begin(kLead), std::end(kLead), key) != std::end(kLead);
  };
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!is_lead(it.key())) keys.push_back(it.key());
  }
  return keys;
}

// The columns of a list of objects: their fields in first-seen order, those
// holding objects or lists last (they read worse in a cell).
std::vector<std::string> ColumnsOf(const Json& rows) {
  std::vector<std::string> plain, nested;
  for (const Json& row : rows) {
    for (const std::string& key : RecordKeys(row)) {
      std::vector<std::string>& into = IsScalar(row[key]) ? plain : nested;
      if (std::find(plain.begin(), plain.end(), key) == plain.end() &&
          std::find(nested.begin(), nested.end(), key) == nested.end()) {
        into.push_back(key);
      }
    }
  }
  plain.insert(plain.end(), nested.begin(), nested.end());
  return plain;
}

bool AllObjects(const Json& list) {
  return !list.empty() &&
         std::all_of(list.begin(), list.end(), [](const Json& v) { return v.is_object(); });
}

// "obj" as an outline at "indent": a scalar (or a short list of them) on
// its key's line, an object under its key, a list of objects as a table.
void Outline(std::ostringstream& out, const Json& obj, const std::string& indent) {
  size_t width = 0;
  for (auto it = obj.begin(); it != obj.end(); ++it) width = std::max(width, it.key().size());
  for (const std::string& key : RecordKeys(obj)) {
    const Json& v = obj[key];
    out << indent << key << ":";
    if (v.is_object() && !v.empty()) {
      out << "\n";
      Outline(out, v, indent + "  ");
    } else if (v.is_array() && AllObjects(v)) {
      out << "\n" << Table(v, ColumnsOf(v), indent + "  ");
    } else if (v.is_array() && !v.empty() &&
               (!std::all_of(v.begin(), v.end(), IsScalar) || Cell(v).size() > 72)) {
      // Lists of records, and long lists (an import's notes), an item a line.
      out << "\n";
      for (const Json& item : v) out << indent << "  - " << Cell(item) << "\n";
    } else {
      std::string cell = Cell(v);
      std::string text;
      for (char c : cell) text += c == '\n' ? "\n" + indent + std::string(width + 2, ' ') : std::string(1, c);
      out << std::string(width - key.size() + 1, ' ') << text << "\n";
    }
  }
}

std::string KeyValues(const Json& obj) {
  std::ostringstream out;
  Outline(out, obj, "");
  return out.str();
}

std::string StatusText(const Json& r) {
  std::ostringstream out;
  const Json& st = r["store"];
  out << "store:       " << st.value("location", "") << " (" << st.value("backend", "") << ", schema v"
      << st.value("schema_version", 0) << ")\n";
  out << "durability:  " << st.value("durability", "") << "  [" << st.value("detail", "") << "]\n";
  const Json& c = r["counts"];
  out << "contents:    " << c.value("projects", 0) << " projects, " << c.value("runs", 0)
      << " runs, " << c.value("tasks", 0) << " tasks, " << c.value("events", 0) << " events\n";
  out << "ledger head: seq " << r["ledger"].value("head_seq", 0) << " "
      << r["ledger"].value("head_hash", "") << "\n";
  out << "active runs:\n";
  if (r["active_runs"].empty()) out << "  (none)\n";
  for (const Json& run : r["active_runs"]) {
    out << "  " << run.value("id", "") << "  " << run.value("profile", "") << "  "
        << run.value("status", "") << "  " << run.value("title", "") << "\n";
  }
  if (!r.value("open_questions", Json::array()).empty()) {
    out << "open questions:\n";
    for (const Json& q : r["open_questions"]) {
      const Json run_id = q.value("run_id", Json());
      out << "  " << q.value("id", "") << "  " << (run_id.is_string() ? run_id.get<std::string>() : "-")
          << "  " << q.value("asked_by", "") << ": " << q.value("question", "") << "\n";
    }
  }
  if (!r.value("mirrors", Json::array()).empty()) {
    out << "mirrors:\n";
    for (const Json& m : r["mirrors"]) {
      out << "  " << m.value("path", "") << "  " << m.value("format", "") << "  "
          << m.value("run_id", "");
      if (m.value("ok", true)) {
        out << "  ok\n";
      } else {
        out << "  FAILED since " << m["failed_at"].get<std::string>() << ": "
            << m["last_error"].get<std::string>() << "\n";
      }
    }
  }
  return out.str();
}

// question.list: the first question's words stand for each question.
std::string QuestionsText(const Json& r) {
  Json rows = Json::array();
  for (Json q : r["questions"]) {
    const Json& parts = q["questions"];
    q["question"] = parts.is_array() && !parts.empty() && parts[0].is_object()
                        ? parts[0].value("question", "")
                        : q.value("message", "");
    if (q["question"] == "") q["question"] = q.value("message", "");
    rows.push_back(std::move(q));
  }
  return Table(rows, {"id", "run_id", "status", "asked_by", "question"});
}

// board.show: each column with its gate and the tasks in it.
std::string BoardText(const Json& r) {
  std::ostringstream out;
  out << "board " << r.value("name", "") << " (" << r.value("id", "") << ")\n";
  for (const Json& col : r["columns"]) {
    out << "\n" << col.value("name", "") << "  [gate " << col.value("gate", "") << "]  "
        << col["tasks"].size() << " task(s)\n";
    for (const Json& t : col["tasks"]) {
      out << "  " << t.value("id", "") << "  " << t.value("status", "") << "  "
          << t.value("title", "") << "\n";
    }
  }
  if (!r.value("orphaned", Json::array()).empty()) {
    out << "\norphaned (their column is gone):\n" << Table(r["orphaned"], {"id", "status", "title"});
  }
  return out.str();
}

// run.usage: one row per agent and model, then the total.
std::string UsageText(const Json& r) {
  Json total = r["total"];
  total["agent"] = "TOTAL";
  total["model"] = "";
  Json rows = r["rows"];
  rows.push_back(total);
  return Table(rows, {"agent", "model", "steps", "cost", "input_tokens", "output_tokens",
                      "reasoning_tokens"});
}

}  // namespace

// "s" safe for a terminal: control characters (C0 but newline and tab, DEL,
// C1) become "?", so a title cannot move the cursor, clear the screen or
// set the clipboard of the human reading it.
std::string Printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      out += '?';  // a C1 control, UTF-8 encoded
      ++i;
    } else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      out += '?';
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string RenderText(const std::string& op, const Json& result) {
  // An operation's own rendering comes first (graph.mermaid, stigmergy.next).
  const Operation* operation = CommandEnv::StaticRegistry().Find(op);
  if (operation != nullptr && operation->render_text) return operation->render_text(result);
  if (op == "store.status") return StatusText(result);
  if (op == "question.list") return QuestionsText(result);
  if (op == "board.show") return BoardText(result);
  if (op == "run.usage") return UsageText(result);
  if (op == "machine.show") return result.value("text", "");
  if (op == "ledger.verify" && result.contains("archive")) {
    const Json& a = result["archive"];
    std::string text = "archive OK: " + a.value("file", "") + " holds events " +
                       std::to_string(a.value("first_seq", 0)) + ".." +
                       std::to_string(a.value("through_seq", 0)) +
                       ", every hash and link verified, ending on the hash the store recorded (" +
                       a.value("through_hash", "") + ")\n";
    if (!a.value("sha256_matches", false)) {
      text += "note: the file's bytes are not the ones archived (recompressed?), though every "
              "event in it is\n";
    }
    return text;
  }
  if (op == "ledger.verify") {
    const int64_t archived = result.value("archived_through", int64_t{0});
    std::string text =
        archived > 0 ? "ledger OK: events " + std::to_string(archived + 1) + ".." +
                           std::to_string(result.value("events", 0)) + " verified (1.." +
                           std::to_string(archived) + " archived, from the anchor on), head " +
                           result.value("head_hash", "") + "\n"
                     : "ledger OK: " + std::to_string(result.value("events", 0)) +
                           " events verified, head " + result.value("head_hash", "") + "\n";
    if (result.value("structure", "") == "ok") {
      text += "database structure OK (" + result.value("structure_check", "") + ")\n";
    } else {
      text += "database structure " + result.value("structure", "") + "\n";
    }
    if (result.value("deep", false)) {
      text += "state OK: " + std::to_string(result.value("rows_checked", 0)) +
              " run, task, agent and token rows agree with the ledger\n";
    }
    return text;
  }
  for (const ListView& view : kListViews) {
    if (result.is_object() && result.contains(view.key) && result[view.key].is_array()) {
      // The list as a table, then what else the result says (a cursor, counts).
      Json rest = result;
      rest.erase(view.key);
      return Table(result[view.key], view.columns) + KeyValues(rest);
    }
  }
  if (result.is_object()) return KeyValues(result);
  if (result.is_array() && AllObjects(result)) return Table(result, ColumnsOf(result));
  if (result.is_array()) return Cell(result) + "\n";
  return Cell(result) + "\n";
}

}  // namespace baton
