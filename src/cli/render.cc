// Text rendering of operation results for `--output text` (the default).
// Lists become tables of their most useful columns; single entities become
// "key: value" lines; anything else is pretty JSON.

#include <algorithm>
#include <sstream>

#include "cli/cli.h"
#include "cli/verbs.h"

namespace baton {
namespace {

struct ListView {
  const char* key;                   // the array in the result
  std::vector<const char*> columns;  // fields to show, in order
};

const ListView kListViews[] = {
    {"runs", {"id", "profile", "status", "version", "title"}},
    {"tasks", {"id", "kind", "status", "priority", "assignee", "title"}},
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

std::string Cell(const Json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("id") && v.contains("role")) {
    return v["id"].get<std::string>() + "(" + v["role"].get<std::string>() + ")";
  }
  if (v.is_array()) {
    std::string out;
    for (const Json& item : v) out += (out.empty() ? "" : ",") + Cell(item);
    return out;
  }
  return DumpJson(v);
}

// Cuts "s" to at most "bytes" bytes without splitting a UTF-8 character.
std::string Truncate(const std::string& s, size_t bytes) {
  size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end) + "…";
}

std::string Table(const Json& rows, const std::vector<const char*>& columns) {
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width;
  for (const char* c : columns) width.push_back(std::string(c).size());
  for (const Json& row : rows) {
    std::vector<std::string> line;
    for (size_t i = 0; i < columns.size(); ++i) {
      std::string cell = row.contains(columns[i]) ? Cell(row[columns[i]]) : "";
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
    for (size_t i = 0; i < line.size(); ++i) {
      out << line[i];
      if (i + 1 < line.size()) out << std::string(width[i] - line[i].size() + 2, ' ');
    }
    out << "\n";
  };
  std::vector<std::string> header;
  for (const char* c : columns) {
    std::string h = c;
    std::transform(h.begin(), h.end(), h.begin(), ::toupper);
    header.push_back(h);
  }
  print(header);
  for (const auto& line : cells) print(line);
  if (rows.empty()) out << "(none)\n";
  return out.str();
}

std::string KeyValues(const Json& obj) {
  std::ostringstream out;
  size_t width = 0;
  for (auto it = obj.begin(); it != obj.end(); ++it) width = std::max(width, it.key().size());
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    out << it.key() << ":" << std::string(width - it.key().size() + 1, ' ');
    const Json& v = it.value();
    if (v.is_string()) {
      out << v.get<std::string>() << "\n";
    } else if ((v.is_array() || v.is_object()) && !v.empty() && v.dump().size() > 60) {
      std::string pretty = v.dump(2);
      std::string indented;
      for (char c : pretty) {
        indented += c;
        if (c == '\n') indented += "  ";
      }
      out << "\n  " << indented << "\n";
    } else {
      out << Cell(v) << "\n";
    }
  }
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
      out << "  " << q.value("id", "") << "  " << (q["run_id"].is_string() ? q["run_id"].get<std::string>() : "-")
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

std::string RenderText(const std::string& op, const Json& result) {
  // An operation's own rendering comes first (graph.mermaid, stigmergy.next).
  const Operation* operation = CommandEnv::StaticRegistry().Find(op);
  if (operation != nullptr && operation->render_text) return operation->render_text(result);
  if (op == "store.status") return StatusText(result);
  if (op == "question.list") return QuestionsText(result);
  if (op == "board.show") return BoardText(result);
  if (op == "run.usage") return UsageText(result);
  if (op == "machine.show") return result.value("text", "");
  if (op == "ledger.verify") {
    std::string text = "ledger OK: " + std::to_string(result.value("events", 0)) +
                       " events verified, head " + result.value("head_hash", "") + "\n" +
                       "database structure OK (SQLite integrity_check, foreign_key_check)\n";
    if (result.value("deep", false)) {
      text += "state OK: " + std::to_string(result.value("rows_checked", 0)) +
              " run, task, agent and token rows agree with the ledger\n";
    }
    return text;
  }
  for (const ListView& view : kListViews) {
    if (result.is_object() && result.size() == 1 && result.contains(view.key)) {
      return Table(result[view.key], view.columns);
    }
  }
  if (result.is_object()) return KeyValues(result);
  return result.dump(2) + "\n";
}

}  // namespace baton
