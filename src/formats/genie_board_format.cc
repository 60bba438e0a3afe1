// File: genie_board_format.cc
//
// Genie's task export, `genie task export` / .genie/roadmap.json of genie-V5
// (genie_format.h says how it maps onto a genie run). schemaVersion 1 lists
// each row's columns in the database's order; from schemaVersion 2 Genie
// sorts every object's keys. Both are read, and written back as they came.

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "formats/genie_format.h"
#include "formats/genie_internal.h"
#include "formats/reader.h"
#include "util/clock.h"

namespace baton {
namespace {

using namespace genie_internal;  // NOLINT: the formats' own helpers

// The latest time FormatTime writes with four year digits (9999-12-31T23:59:59.999Z).
constexpr int64_t kMaxMillis = 253402300799999;

// ---- Times: Genie's epoch milliseconds <-> baton's RFC 3339 ------------------

int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The inverse of FormatTime: "2026-07-21T10:00:00.123Z" -> epoch milliseconds.
std::optional<int64_t> ParseTime(const std::string& s) {
  static constexpr char kShape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (s.size() != sizeof(kShape) - 1) return std::nullopt;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool digit = s[i] >= '0' && s[i] <= '9';
    if (kShape[i] == 'd' ? !digit : s[i] != kShape[i]) return std::nullopt;
  }
  auto num = [&](size_t at, size_t n) { return std::stoll(s.substr(at, n)); };
  const int64_t year = num(0, 4), month = num(5, 2), day = num(8, 2);
  const int64_t hour = num(11, 2), minute = num(14, 2), second = num(17, 2), ms = num(20, 3);
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > kDays[month - 1] ||
      (month == 2 && day == 29 && !leap) || hour > 23 || minute > 59 || second > 59) {
    return std::nullopt;
  }
  return ((DaysFromCivil(year, month, day) * 24 + hour) * 60 + minute) * 60000 + second * 1000 + ms;
}

// Columns of genie-V5's tasks table in the order a `task export` of a
// database grown by its migrations lists them, then the later ones.
constexpr const char* kTaskColumns[] = {
    "id",         "board_id",       "title",          "status",     "claimed_by",
    "claimed_at", "wish",           "group_name",     "created_at", "updated_at",
    "lane",       "agent_kind",     "heartbeat_at",   "blocked_by", "blocked_reason",
    "block_kind", "assigned_agent", "assigned_reason"};
constexpr std::string_view kIntColumns[] = {"claimed_at", "created_at", "updated_at",
                                            "heartbeat_at"};

bool IsTaskColumn(std::string_view c) {
  return std::find(std::begin(kTaskColumns), std::end(kTaskColumns), c) != std::end(kTaskColumns);
}
bool IsIntColumn(std::string_view c) {
  return std::find(std::begin(kIntColumns), std::end(kIntColumns), c) != std::end(kIntColumns);
}

// Row orders of the other tables in a schemaVersion 1 export (SELECT *).
using Columns = std::vector<const char*>;
const Columns kMetaRow = {"key", "value"};
const Columns kBoardRow = {"id", "name", "lanes", "created_at"};
const std::pair<const char*, Columns> kLaterTables[] = {
    {"stage_log", {"id", "task_id", "stage", "note", "created_at"}},
    {"task_events", {"id", "task_id", "kind", "note", "author_kind", "author", "created_at"}},
    {"wish_groups",
     {"wish", "name", "status", "depends_on", "assignee", "started_at", "completed_at",
      "created_at", "updated_at"}},
    {"hire_roster", {"wish", "agent_adapter_id", "profile", "worktree", "hired_at", "state"}}};

OrderedJson OrderRow(const Json& row, const Columns& order) {
  if (!row.is_object()) return OrderedJson(row);
  OrderedJson out = OrderedJson::object();
  for (const char* c : order) {
    if (const Json* v = Find(row, c)) out[c] = OrderedJson(*v);
  }
  for (const auto& [key, value] : row.items()) {
    if (!out.contains(key)) out[key] = OrderedJson(value);
  }
  return out;
}

OrderedJson OrderRows(const Json& rows, const Columns& order) {
  OrderedJson out = OrderedJson::array();
  for (const Json& row : rows) out.push_back(OrderRow(row, order));
  return out;
}

Status CheckRows(const Json& rows, const std::string& source, const std::string& pointer,
                 const Columns& strings) {
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSIGN_OR_RETURN(ObjectReader r,
                     ObjectReader::Make(rows[i], source, PointerAppend(pointer, i)));
    for (const char* c : strings) RETURN_IF_ERROR(r.String(c).status());
  }
  return Status();
}

// The columns the writer lists, in the order a schemaVersion 1 export has
// them (Json sorts its keys, so they are taken from the text). The writer
// gives every task every known column and each task its own unknown ones, so
// the order is the first task's known and own columns, then the unknown ones
// each later task adds, each group in the order the file first lists them --
// which the written file lists again, and which is a real export's order.
Json TaskColumnOrder(std::string_view text, const Json& tasks) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  const OrderedJson ordered = OrderedJson::parse(text.begin(), text.end(), nullptr, false);
  auto it = ordered.is_object() ? ordered.find("tasks") : ordered.end();
  if (it != ordered.end() && it->is_array()) {
    for (const OrderedJson& task : *it) {
      if (!task.is_object()) continue;
      for (const auto& [key, value] : task.items()) {
        if (seen.insert(key).second) order.push_back(key);
      }
    }
  }
  for (const Json& task : tasks) {
    for (const auto& [key, value] : task.items()) {
      if (seen.insert(key).second) order.push_back(key);
    }
  }
  Json columns = Json::array();
  std::set<std::string> listed;
  for (size_t i = 0; i < tasks.size(); ++i) {
    for (const std::string& c : order) {
      const bool has = i < tasks.size() && tasks[i].contains(c);
      if ((has || (i == 0 && IsTaskColumn(c))) && listed.insert(c).second) columns.push_back(c);
    }
  }
  return columns;
}

Result<Json> ReadBoardTask(const Json& value, const std::string& source, size_t index, Json& kept) {
  ASSIGN_OR_RETURN(ObjectReader r,
                   ObjectReader::Make(value, source, PointerAppend("/tasks", index)));
  ASSIGN_OR_RETURN(std::string id, r.String("id"));
  if (id.empty()) return r.Error("id", "must not be empty");
  ASSIGN_OR_RETURN(std::string title, r.String("title"));
  ASSIGN_OR_RETURN(std::string status, r.String("status"));
  if (!IsGenieStatus(status)) {
    return r.Error("status",
                   "unknown status " + Quote(status) + " (allowed: " + kAllowedStatuses + ")");
  }
  ASSIGN_OR_RETURN(std::optional<std::string> lane, r.OptString("lane"));
  Json task{{"ref", "task:" + id},
            {"key", id},
            {"kind", "task"},
            {"parent", nullptr},
            {"depends_on", Json::array()},
            {"title", title},
            {"body", ""},
            {"status", status},
            {"priority", 0},
            {"position", index},
            {"assignee", nullptr},
            {"attempts", 0},
            {"board_column", lane ? Json(*lane) : Json()},
            {"result", nullptr},
            {"meta", Json::object()}};
  for (const char* column : kTaskColumns) {
    const std::string c = column;
    if (c == "id" || c == "title" || c == "status" || c == "lane") continue;
    std::optional<int64_t> millis;
    if (IsIntColumn(c)) {
      ASSIGN_OR_RETURN(millis, r.OptInt(c));
    } else {
      RETURN_IF_ERROR(r.OptString(c).status());
    }
    std::optional<Json> raw = r.OptAny(c);
    if (!raw) continue;
    // Times baton can hold become the task's own; the rest stay as written.
    if ((c == "created_at" || c == "updated_at") && raw->is_number_integer() && millis &&
        *millis >= 0 && *millis <= kMaxMillis) {
      task[c] = FormatTime(*millis);
    } else if (!raw->is_null() || (c != "created_at" && c != "updated_at")) {
      task["meta"][c] = *raw;
    }
  }
  if (const Json* by = Find(task["meta"], "claimed_by"); by != nullptr && by->is_string()) {
    task["assignee"] = *by;
  }
  r.KeepRest(kept);
  return task;
}

// Reads task_dependencies into the tasks' depends_on; refuses edges naming
// unknown tasks, self-dependencies, repeated edges and cycles.
Status ReadDependencies(const Json& edges, const std::string& source, Json& tasks, Json& kept) {
  std::map<std::string, size_t> index;
  std::vector<std::string> ids;
  for (size_t i = 0; i < tasks.size(); ++i) {
    index[tasks[i]["key"].get<std::string>()] = i;
    ids.push_back(tasks[i]["key"].get<std::string>());
  }
  std::vector<std::vector<size_t>> deps(tasks.size());
  std::set<std::pair<size_t, size_t>> listed;
  const auto repeated = [&](const std::string& at, const std::string& from, const std::string& to) {
    return FieldError(source, at, "repeats the dependency " + from + " -> " + to);
  };
  for (size_t i = 0; i < edges.size(); ++i) {
    const std::string pointer = PointerAppend("/task_dependencies", i);
    ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Make(edges[i], source, pointer));
    ASSIGN_OR_RETURN(std::string from, r.String("task_id"));
    ASSIGN_OR_RETURN(std::string to, r.String("depends_on_id"));
    auto a = index.find(from), b = index.find(to);
    if (a == index.end()) return r.Error("task_id", "no task \"" + from + "\" in /tasks");
    if (b == index.end()) return r.Error("depends_on_id", "no task \"" + to + "\" in /tasks");
    if (a == b) return r.Error("depends_on_id", "task \"" + from + "\" depends on itself");
    if (!listed.emplace(a->second, b->second).second) return repeated(pointer, from, to);
    deps[a->second].push_back(b->second);
    tasks[a->second]["depends_on"].push_back("task:" + to);
    r.KeepRest(kept);
  }
  if (std::vector<size_t> cycle = FindCycle(deps); !cycle.empty()) {
    return FieldError(source, "/task_dependencies",
                      "the dependencies form a cycle: " + CyclePath(cycle, ids));
  }
  return Status();
}

// The value of "column" for a task the board writer lists.
Json BoardColumn(const std::string& column, const Json& task, const std::string& id,
                 const std::string& status, const Json& run) {
  const Json& meta = ObjectAt(task, "meta");
  const bool group = StrOr(task, "kind") == "group";
  if (column == "id") return id;
  if (column == "title") return StrOr(task, "title");
  if (column == "status") return status;
  if (column == "lane") return StringAt(task, "board_column");
  if (column == "created_at" || column == "updated_at") {
    if (std::optional<int64_t> ms = ParseTime(StrOr(task, column))) return *ms;
  }
  if (column == "claimed_by" && Find(task, "assignee") && task["assignee"].is_string()) {
    return task["assignee"];
  }
  if (const Json* v = Find(meta, column)) return *v;
  if (group && column == "wish") return StrOr(ObjectAt(run, "meta"), "slug");
  if (group && column == "group_name") return StrOr(task, "key");
  return nullptr;
}

}  // namespace

Result<RunImage> ReadGenieBoard(std::string_view text, const std::string& source) {
  ASSIGN_OR_RETURN(Json doc, ReadJsonObject(text, source));
  ASSIGN_OR_RETURN(ObjectReader top, ObjectReader::Make(doc, source, ""));
  ASSIGN_OR_RETURN(int64_t version, top.Int("schemaVersion"));
  ASSIGN_OR_RETURN(std::optional<Json> meta_rows, top.OptArray("meta"));
  ASSIGN_OR_RETURN(std::optional<Json> boards, top.OptArray("boards"));
  ASSIGN_OR_RETURN(std::optional<Json> tasks_json, top.OptArray("tasks"));
  if (!tasks_json) return top.Error("tasks", "is required");
  ASSIGN_OR_RETURN(std::optional<Json> edges, top.OptArray("task_dependencies"));
  if (meta_rows) RETURN_IF_ERROR(CheckRows(*meta_rows, source, "/meta", {"key"}));
  if (boards) RETURN_IF_ERROR(CheckRows(*boards, source, "/boards", {"id", "name"}));
  Json kept = Json::object();
  top.KeepRest(kept);

  Json tasks = Json::array();
  std::set<std::string> ids;
  std::vector<std::string> statuses;
  for (size_t i = 0; i < tasks_json->size(); ++i) {
    ASSIGN_OR_RETURN(Json task, ReadBoardTask((*tasks_json)[i], source, i, kept));
    if (!ids.insert(task["key"].get<std::string>()).second) {
      return FieldError(source, PointerAppend(PointerAppend("/tasks", i), "id"),
                        "task \"" + task["key"].get<std::string>() + "\" is listed twice");
    }
    statuses.push_back(task["status"].get<std::string>());
    tasks.push_back(std::move(task));
  }
  if (edges) RETURN_IF_ERROR(ReadDependencies(*edges, source, tasks, kept));

  Json board{{"schemaVersion", version}, {"task_columns", TaskColumnOrder(text, *tasks_json)}};
  if (meta_rows) board["meta"] = *meta_rows;
  if (boards) board["boards"] = *boards;
  if (edges) board["task_dependencies"] = true;
  std::vector<std::string> names;
  for (const Json& b : boards.value_or(Json::array())) names.push_back(StrOr(b, "name"));
  Json image = NewImage(kBoardFormat, source, RunStatusFor(statuses),
                        names.empty() ? "Genie tasks" : "Board: " + JoinNames(names),
                        {{"genie_board", board}});
  image["tasks"] = std::move(tasks);
  KeepInImage(image, kBoardFormat, kept);
  return image;
}

Result<FormatOutput> WriteGenieBoard(const RunImage& image) {
  ASSIGN_OR_RETURN(const Json* run, RunOf(image));
  FormatOutput out;
  const Json& board = ObjectAt(ObjectAt(*run, "meta"), "genie_board");
  const Json& kept = KeptOf(*run, kBoardFormat);
  const bool ours = board.is_object();
  const int64_t version = IntOr(board, "schemaVersion", 1);
  std::vector<std::string> columns;
  for (const Json& c : ArrayAt(board, "task_columns")) {
    if (c.is_string()) columns.push_back(c.get<std::string>());
  }
  // A run made in baton, or an export that had no tasks: every column.
  if (columns.empty()) columns.assign(std::begin(kTaskColumns), std::end(kTaskColumns));
  const std::string profile = StrOr(*run, "profile");
  if (profile != "genie" && !ArrayAt(image, "tasks").empty()) {
    out.notes.push_back("tasks: " + profile +
                        " tasks written as Genie tasks (kinds and parents are not kept)");
  }
  ASSIGN_OR_RETURN(std::vector<Picked> picked,
                   PickTasks(
                       image, *run, [](const Json&) { return true; }, out.notes));

  std::set<std::string> taken;
  std::vector<std::string> ids;
  for (const Picked& p : picked) {
    const Json& t = *p.task;
    const std::string key = StrOr(t, "key");
    ids.push_back(
        UniqueName(StrOr(t, "kind") == "task" && !key.empty() ? key : StrOr(t, "id"), t, taken));
  }
  OrderedJson tasks = OrderedJson::array();
  for (size_t i = 0; i < picked.size(); ++i) {
    OrderedJson row = OrderedJson::object();
    const std::string pointer = PointerAppend("/tasks", i);
    for (const std::string& c : columns) {
      if (IsTaskColumn(c)) {
        row[c] = OrderedJson(BoardColumn(c, *picked[i].task, ids[i], picked[i].status, *run));
      } else if (const Json* v = Find(kept, PointerAppend(pointer, c))) {
        row[c] = OrderedJson(*v);
      }
    }
    tasks.push_back(std::move(row));
  }
  std::vector<std::pair<std::string, std::string>> edges;
  for (size_t i = 0; i < picked.size(); ++i) {
    for (size_t d : picked[i].deps) edges.emplace_back(ids[i], ids[d]);
  }
  std::sort(edges.begin(), edges.end());  // Genie: ORDER BY task_id, depends_on_id

  OrderedJson doc = OrderedJson::object();
  doc["schemaVersion"] = version;
  if (!ours || Find(board, "meta")) doc["meta"] = OrderRows(ArrayAt(board, "meta"), kMetaRow);
  if (!ours || Find(board, "boards"))
    doc["boards"] = OrderRows(ArrayAt(board, "boards"), kBoardRow);
  doc["tasks"] = std::move(tasks);
  if (!ours || Find(board, "task_dependencies") || !edges.empty()) {
    doc["task_dependencies"] = OrderedJson::array();
    for (const auto& [from, to] : edges) {
      doc["task_dependencies"].push_back({{"task_id", from}, {"depends_on_id", to}});
    }
  }
  for (const auto& [table, order] : kLaterTables) {
    if (const Json* rows = Find(kept, std::string("/") + table)) {
      doc[table] = OrderRows(*rows, order);
    } else if (!ours) {
      doc[table] = OrderedJson::array();  // a complete snapshot for Genie's importer
    }
  }
  RestoreKept(kept, doc);
  NoteUnwritten(image, "a Genie task export", out.notes);
  // From schemaVersion 2 Genie writes every object's keys sorted.
  out.text = (version == 1 ? Dump(doc) : Dump(OrderedJson(Json(doc)))) + "\n";
  return out;
}

}  // namespace baton
