#include "engine/coord/boards.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "engine/coord/board_columns.h"
#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "model/board.h"
#include "model/embedded.h"
#include "model/task.h"
#include "store/tables/board_table.h"
#include "store/tables/board_template_table.h"
#include "store/tables/task_table.h"
#include "util/clock.h"
#include "util/json_or_null.h"

namespace baton {

namespace {

using namespace boards_internal;  // NOLINT: the service's own helpers

// ---- Boards -----------------------------------------------------------------

Result<Board> LoadBoard(Txn& txn, const std::string& id) { return LoadBoardRow(txn, id); }

// The stored board as the operations answer it, for an operation's result.
Result<Json> AnswerBoard(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(Board board, LoadBoard(txn, id));
  return BoardToJson(board);
}

// The board "in.board" names (id, or name within "in.project" if given).
Result<Board> ResolveBoard(Txn& txn, const Json& in) {
  const std::string key = in.at("board").get<std::string>();
  std::optional<std::string> project_key;
  std::string scope;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(std::string pid, ResolveProjectId(txn, in["project"].get<std::string>()));
    project_key = pid;
    scope = " in project " + pid;
  }
  ASSIGN_OR_RETURN(std::vector<Board> rows, FindBoardRows(txn, key, project_key));
  for (const Board& b : rows) {
    if (b.id == key) return b;
  }
  if (rows.size() == 1) return rows[0];
  if (rows.empty()) return NotFoundError("board: no board with id or name " + Quote(key) + scope);
  std::vector<std::string> projects;
  projects.reserve(rows.size());
  for (const Board& b : rows) projects.push_back(b.project_id.value_or("(none)"));
  return InvalidArgumentError("board: several boards are named " + Quote(key) + " (projects: " +
                              JoinNames(projects) + "); pass project, or the board id");
}

// The column "ref" names (its id, else its name) on "board".
Result<Json> ColumnOf(const Board& board, const std::string& ref, const char* field) {
  for (const Json& c : board.columns) {
    if (c["id"] == ref) return c;
  }
  for (const Json& c : board.columns) {
    if (c["name"] == ref) return c;
  }
  return InvalidArgumentError(std::string(field) + ": board " + Quote(board.name) +
                              " has no column " + Quote(ref) +
                              " (columns: " + ColumnNames(board.columns) + ")");
}

const Json* ColumnById(const Board& board, const std::string& id) {
  for (const Json& c : board.columns) {
    if (c["id"] == id) return &c;
  }
  return nullptr;
}

Json BoardRef(const Board& board) { return Json{{"id", board.id}, {"name", board.name}}; }

std::string ProjectLabel(const std::optional<std::string>& project_id) {
  return project_id ? "project " + *project_id : "no project";
}

Status SetPlacement(OpContext& ctx, const std::string& task_id, const std::string& board_id,
                    const std::string& column_id) {
  return SetTaskBoardPlacement(ctx.txn, task_id, board_id, column_id, ctx.now);
}

Result<Board> InsertBoard(OpContext& ctx, const std::string& name, const std::string& project_id,
                          const std::string& description, const Json& template_name,
                          const Json& columns, Json payload) {
  ASSIGN_OR_RETURN(std::optional<std::string> taken,
                   FindBoardIdByName(ctx.txn, project_id, name));
  if (taken) {
    return AlreadyExistsError("name: " +
                              (project_id.empty()
                                   ? std::string("a board without a project")
                                   : "project " + project_id + " already has a board") +
                              " named " + Quote(name) + " (" + *taken + ")" +
                              (project_id.empty() ? " already exists" : ""));
  }
  const std::string id = NewId("board");
  RETURN_IF_ERROR(InsertBoardRow(
      ctx.txn,
      {.id = id,
       .name = name,
       .project_id = project_id,
       .description = description,
       .template_name = template_name.is_string()
                            ? std::optional<std::string>(template_name.get<std::string>())
                            : std::nullopt,
       .columns = columns,
       .now = ctx.now}));
  Json names = Json::array();
  for (const Json& c : columns) names.push_back(c["name"]);
  payload.update({{"board_id", id},
                  {"name", name},
                  {"project_id", project_id.empty() ? Json() : Json(project_id)},
                  {"template", template_name},
                  {"columns", names}});
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "board.created",
                                    .summary = "board " + name + " created with columns " +
                                               ColumnNames(columns),
                                    .payload = payload})
                      .status());
  return LoadBoard(ctx.txn, id);
}

// The board a task is on; FailedPrecondition when it is on none.
Result<Board> BoardOfTask(Txn& txn, const Task& task) {
  if (!task.board_id) {
    return FailedPreconditionError("task: task " + task.id +
                                   " is not on a board; board.add_task puts it on one");
  }
  return LoadBoard(txn, *task.board_id);
}

// A human gate waits for a human. An agent gate lets agents move the card on
// without one, and the human partner keeps the last word everywhere.
bool GateAllows(const std::string& gate, const std::string& role) {
  if (role == "admin" || role == "human" || gate == "human+agent") return true;
  if (gate == "human") return false;
  if (gate == "agent") return role == "agent" || role == "coordinator";
  return false;
}

Status CheckGate(const Board& board, const Json& from, const Actor& actor) {
  const std::string gate = JsonText(from, "gate");
  if (GateAllows(gate, actor.role)) return Status();
  const std::string who = gate == "human" ? "a human" : "an agent or coordinator";
  return Status(
      StatusCode::kPermissionDenied,
      "column: column " + Quote(JsonText(from, "name")) + " of board " + Quote(board.name) +
          " has gate " + gate + ": only " + who +
          " may move a card out of it (caller's role: " + actor.role + ")",
      Json{{"board", board.name}, {"column", from["name"]}, {"gate", gate}, {"role", actor.role}});
}

Status CheckTransition(const Board& board, const Json& from, const Json& to) {
  const Json& transitions = from["transitions"];
  if (transitions.empty()) return Status();
  Json allowed = Json::array();
  for (const Json& t : transitions) {
    if (t["target"] == to["name"]) return Status();
    allowed.push_back(t["target"]);
  }
  std::vector<std::string> names;
  for (const Json& a : allowed) names.push_back(a.get<std::string>());
  return Status(
      StatusCode::kFailedPrecondition,
      "column: column " + Quote(JsonText(from, "name")) + " of board " + Quote(board.name) +
          " allows moves only to " + JoinNames(names) + " (its transitions), not to " +
          Quote(JsonText(to, "name")),
      Json{
          {"board", board.name}, {"from", from["name"]}, {"to", to["name"]}, {"allowed", allowed}});
}

Status DoMove(OpContext& ctx, const Task& task, const Board& board, const Json& from,
              const Json& to, const std::string& note) {
  RETURN_IF_ERROR(SetPlacement(ctx, task.id, board.id, JsonText(to, "id")));
  return AppendEvent(ctx, {.run_id = task.run_id.value_or(""),
                           .kind = "board.moved",
                           .summary = "task " + task.id + " moved from " + JsonText(from, "name") +
                                      " to " + JsonText(to, "name") + " on board " + board.name +
                                      (note.empty() ? "" : ": " + note),
                           .payload = {{"task_id", task.id},
                                       {"board_id", board.id},
                                       {"board", board.name},
                                       {"from", from["name"]},
                                       {"to", to["name"]},
                                       {"from_column_id", from["id"]},
                                       {"to_column_id", to["id"]},
                                       {"note", note}}})
      .status();
}

// Per column id, the tasks on "board" in that column; orphans under "".
Result<std::map<std::string, Json>> TasksByColumn(Txn& txn, const Board& board) {
  ASSIGN_OR_RETURN(std::vector<BoardCard> cards, ListBoardCards(txn, board.id));
  std::map<std::string, Json> out;
  for (const BoardCard& c : cards) {
    const std::string col = c.board_column.value_or("");
    Json card = {{"id", c.id}, {"title", c.title}, {"status", c.status}};
    const std::string key = ColumnById(board, col) != nullptr ? col : "";
    if (key.empty()) card["column"] = OrNull(c.board_column);
    out[key].push_back(std::move(card));
  }
  return out;
}

}  // namespace

// ---- Templates ----------------------------------------------------------------

Result<Json> ListBoardTemplates(OpContext& ctx, const Json&) {
  ASSIGN_OR_RETURN(Json all, AllTemplates(ctx.txn));
  return Json{{"templates", all}};
}

Result<Json> ShowBoardTemplate(OpContext& ctx, const Json& in) {
  return FindTemplate(ctx.txn, in.at("name").get<std::string>(), "name");
}

Result<Json> CreateBoardTemplate(OpContext& ctx, const Json& in) {
  const std::string name = in.at("name").get<std::string>();
  RETURN_IF_ERROR(Builtins().status);
  for (const Json& t : Builtins().list) {
    if (t["name"] == name) {
      return AlreadyExistsError("name: " + Quote(name) + " is a built-in board template");
    }
  }
  ASSIGN_OR_RETURN(Json columns, NormalizeColumns(in.at("columns"), IndexedField("columns"),
                                                  IdMode::kDrop, "columns"));
  const std::string icon = in.value("icon", "");
  Status inserted = InsertBoardTemplateRow(
      ctx.txn,
      {.name = name,
       .description = in.value("description", ""),
       .icon = icon.empty() ? std::nullopt : std::optional<std::string>(icon),
       .columns = columns},
      ctx.now);
  if (inserted.code() == StatusCode::kAlreadyExists) {
    return AlreadyExistsError("name: a board template named " + Quote(name) + " already exists");
  }
  RETURN_IF_ERROR(inserted);
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "board.template_created",
                                    .summary = "board template " + name + " created with columns " +
                                               ColumnNames(columns),
                                    .payload = {{"name", name}, {"columns", columns}}})
                      .status());
  return FindTemplate(ctx.txn, name, "name");
}

// ---- Boards -------------------------------------------------------------------

Result<Json> CreateBoard(OpContext& ctx, const Json& in) {
  const std::string name = in.at("name").get<std::string>();
  std::string project_id;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  if (in.contains("template") == in.contains("columns")) {
    return InvalidArgumentError(in.contains("template")
                                    ? "columns: give either template or columns, not both"
                                    : "template: give a template name or columns");
  }
  Json columns;
  Json template_name;
  if (in.contains("template")) {
    template_name = in["template"];
    ASSIGN_OR_RETURN(Json tmpl,
                     FindTemplate(ctx.txn, template_name.get<std::string>(), "template"));
    ASSIGN_OR_RETURN(columns, NormalizeColumns(tmpl["columns"], IndexedField("template.columns"),
                                               IdMode::kNew, "template.columns"));
  } else {
    ASSIGN_OR_RETURN(
        columns, NormalizeColumns(in["columns"], IndexedField("columns"), IdMode::kNew, "columns"));
  }
  ASSIGN_OR_RETURN(Board board, InsertBoard(ctx, name, project_id, in.value("description", ""),
                                            template_name, columns, Json::object()));
  return BoardToJson(board);
}

Result<Json> ShowBoard(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Board board, ResolveBoard(ctx.txn, in));
  ASSIGN_OR_RETURN(auto cards, TasksByColumn(ctx.txn, board));
  Json shown = BoardToJson(board);
  for (Json& c : shown["columns"]) {
    auto it = cards.find(JsonText(c, "id"));
    c["tasks"] = it == cards.end() ? Json::array() : it->second;
  }
  auto orphans = cards.find("");
  shown["orphaned"] = orphans == cards.end() ? Json::array() : orphans->second;
  return shown;
}

Result<Json> ListBoards(OpContext& ctx, const Json& in) {
  std::optional<std::string> project_key;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(project_key, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  }
  ASSIGN_OR_RETURN(std::vector<BoardListing> rows, ListBoardRows(ctx.txn, project_key));
  Json list = Json::array();
  for (const BoardListing& r : rows) {
    Json b = BoardToJson(r.board);
    b["task_count"] = r.task_count;
    list.push_back(std::move(b));
  }
  return Json{{"boards", list}};
}

Result<Json> AddTaskToBoard(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Board board, ResolveBoard(ctx.txn, in));
  const std::string task_id = in.at("task").get<std::string>();
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, task_id));
  RETURN_IF_ERROR(CheckExpectedVersion(in, "task", task_id, task.version));
  if (board.project_id && task.project_id != board.project_id) {
    return FailedPreconditionError("task: task " + task_id + " belongs to " +
                                   ProjectLabel(task.project_id) + ", board " + board.name +
                                   " to " + ProjectLabel(board.project_id));
  }
  if (task.board_id) {
    const bool same = *task.board_id == board.id;
    return FailedPreconditionError(
        "task: task " + task_id + " is already on board " + *task.board_id +
        (same ? "; board.move moves it between columns"
              : "; a task is on one board at a time: board.remove_task takes it off first"));
  }
  Json column = board.columns[0];
  if (in.contains("column")) {
    ASSIGN_OR_RETURN(column, ColumnOf(board, in["column"].get<std::string>(), "column"));
  }
  RETURN_IF_ERROR(SetPlacement(ctx, task_id, board.id, JsonText(column, "id")));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = task.run_id.value_or(""),
                                    .kind = "board.task_added",
                                    .summary = "task " + task_id + " put on board " + board.name +
                                               " in " + JsonText(column, "name"),
                                    .payload = {{"task_id", task_id},
                                                {"board_id", board.id},
                                                {"board", board.name},
                                                {"column", column["name"]},
                                                {"column_id", column["id"]}}})
                      .status());
  ASSIGN_OR_RETURN(Json placed, AnswerTask(ctx.txn, task_id));
  return Json{{"task", placed}, {"board", BoardRef(board)}, {"column", column["name"]}};
}

Result<Json> RemoveTaskFromBoard(OpContext& ctx, const Json& in) {
  const std::string task_id = in.at("task").get<std::string>();
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, task_id));
  RETURN_IF_ERROR(CheckExpectedVersion(in, "task", task_id, task.version));
  ASSIGN_OR_RETURN(Board board, BoardOfTask(ctx.txn, task));
  const Json* column = ColumnById(board, task.board_column.value_or(""));
  const Json column_name = column != nullptr ? (*column)["name"] : OrNull(task.board_column);
  RETURN_IF_ERROR(SetPlacement(ctx, task_id, "", ""));
  RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = task.run_id.value_or(""),
                                    .kind = "board.task_removed",
                                    .summary = "task " + task_id + " taken off board " + board.name,
                                    .payload = {{"task_id", task_id},
                                                {"board_id", board.id},
                                                {"board", board.name},
                                                {"column", column_name}}})
                      .status());
  ASSIGN_OR_RETURN(Json removed, AnswerTask(ctx.txn, task_id));
  return Json{{"task", removed}, {"board", BoardRef(board)}, {"column", column_name}};
}

Result<Json> MoveBoardTask(OpContext& ctx, const Json& in) {
  const std::string task_id = in.at("task").get<std::string>();
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, task_id));
  RETURN_IF_ERROR(CheckExpectedVersion(in, "task", task_id, task.version));
  ASSIGN_OR_RETURN(Board board, BoardOfTask(ctx.txn, task));
  const Json* from = ColumnById(board, task.board_column.value_or(""));
  if (from == nullptr) {
    return FailedPreconditionError(
        "task: task " + task_id + " is in column " + DumpJson(OrNull(task.board_column)) +
        ", which board " + board.name + " does not have; board.reconcile puts it back on a column");
  }
  ASSIGN_OR_RETURN(Json to, ColumnOf(board, in.at("column").get<std::string>(), "column"));
  const bool moved = (*from)["id"] != to["id"];
  Json answer;
  if (moved) {
    RETURN_IF_ERROR(CheckGate(board, *from, ctx.actor));
    RETURN_IF_ERROR(CheckTransition(board, *from, to));
    RETURN_IF_ERROR(DoMove(ctx, task, board, *from, to, in.value("note", "")));
    ASSIGN_OR_RETURN(answer, AnswerTask(ctx.txn, task_id));
  } else {
    answer = TaskToJson(task);
  }
  return Json{{"task", answer},
              {"board", BoardRef(board)},
              {"from", (*from)["name"]},
              {"to", to["name"]},
              {"moved", moved}};
}

Result<Json> ReconcileBoard(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Board board, ResolveBoard(ctx.txn, in));
  ASSIGN_OR_RETURN(std::vector<BoardPlacement> rows, ListBoardPlacements(ctx.txn, board.id));
  Json repaired = Json::array();
  for (const BoardPlacement& r : rows) {
    if (ColumnById(board, r.board_column.value_or("")) != nullptr) continue;
    Json to = board.columns[0];
    std::string reason = "first column";
    for (const Json& c : board.columns) {
      if (r.board_column && c["name"] == *r.board_column) {
        to = c;
        reason = "matched by name";
        break;
      }
    }
    RETURN_IF_ERROR(SetPlacement(ctx, r.id, board.id, JsonText(to, "id")));
    Json entry = {{"task", r.id},
                  {"from", OrNull(r.board_column)},
                  {"to", to["name"]},
                  {"column_id", to["id"]},
                  {"reason", reason}};
    RETURN_IF_ERROR(AppendEvent(ctx, {.run_id = r.run_id.value_or(""),
                                      .kind = "board.repaired",
                                      .summary = "task " + r.id + " on board " + board.name +
                                                 " had no valid column; "
                                                 "put in " +
                                                 JsonText(to, "name") + " (" + reason + ")",
                                      .payload = {{"task_id", r.id},
                                                  {"board_id", board.id},
                                                  {"board", board.name},
                                                  {"from", entry["from"]},
                                                  {"to", to["name"]},
                                                  {"to_column_id", to["id"]},
                                                  {"reason", reason}}})
                        .status());
    repaired.push_back(std::move(entry));
  }
  return Json{{"board", BoardRef(board)}, {"repaired", repaired}};
}

namespace {

constexpr const char* kEditableKeys[] = {"name",         "label",       "gate",  "action",
                                         "auto_advance", "transitions", "roles", "color",
                                         "parallel",     "on_fail"};

// Applies the edit of column "index" to "columns": the given fields, a
// rename carried into the other columns' references, and a new position.
Json ApplyColumnEdit(Json columns, size_t index, const Json& in, Json* changes) {
  const std::string old_name = JsonText(columns[index], "name");
  for (const char* key : kEditableKeys) {
    if (!in.contains(key)) continue;
    columns[index][key] = in[key];
    (*changes)[key] = in[key];
  }
  const std::string new_name = JsonText(columns[index], "name");
  if (new_name != old_name) {
    for (Json& c : columns) {
      for (Json& t : c["transitions"]) {
        if (t["target"] == old_name) t["target"] = new_name;
      }
      if (c["on_fail"] == old_name) c["on_fail"] = new_name;
    }
  }
  if (in.contains("position")) {
    (*changes)["position"] = in["position"];
    Json moved = columns[index];
    columns.erase(columns.begin() + static_cast<std::ptrdiff_t>(index));
    const size_t to = std::min<size_t>(in["position"].get<size_t>(), columns.size());
    columns.insert(columns.begin() + static_cast<std::ptrdiff_t>(to), moved);
  }
  for (size_t i = 0; i < columns.size(); ++i) columns[i]["position"] = static_cast<int64_t>(i);
  return columns;
}

}  // namespace

Result<Json> EditBoardColumn(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Board board, ResolveBoard(ctx.txn, in));
  const std::string board_id = board.id;
  RETURN_IF_ERROR(CheckExpectedVersion(in, "board", board_id, board.version));
  ASSIGN_OR_RETURN(Json column, ColumnOf(board, in.at("column").get<std::string>(), "column"));
  const Json& stored = board.columns;
  if (in.contains("name") && in["name"] != column["name"]) {
    for (const Json& c : stored) {
      if (c["name"] == in["name"]) {
        return InvalidArgumentError("name: board " + Quote(board.name) +
                                    " already has a column named " +
                                    Quote(in["name"].get<std::string>()));
      }
    }
  }
  const size_t index =
      static_cast<size_t>(std::find(stored.begin(), stored.end(), column) - stored.begin());
  Json changes = Json::object();
  Json edited = ApplyColumnEdit(stored, index, in, &changes);
  if (changes.empty()) {
    return InvalidArgumentError(
        "column: nothing to change; give at least one of name, label, gate, action, "
        "auto_advance, transitions, roles, color, parallel, on_fail, position");
  }
  // The edited column's fields are the input's top-level fields; name them so.
  const std::string column_id = JsonText(column, "id");
  ASSIGN_OR_RETURN(Json columns, NormalizeColumns(
                                     edited,
                                     [&](size_t i) {
                                       return edited[i]["id"] == column_id
                                                  ? std::string()
                                                  : "columns[" + std::to_string(i) + "]";
                                     },
                                     IdMode::kKeep, "columns"));
  RETURN_IF_ERROR(UpdateBoardColumns(ctx.txn, board_id, columns, ctx.now));
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "board.column_edited",
                                    .summary = "column " + JsonText(column, "name") + " of board " +
                                               board.name + " edited",
                                    .payload = {{"board_id", board_id},
                                                {"board", board.name},
                                                {"column_id", column_id},
                                                {"column", column["name"]},
                                                {"changes", changes}}})
                      .status());
  return AnswerBoard(ctx.txn, board_id);
}

Result<Json> DeleteBoard(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Board board, ResolveBoard(ctx.txn, in));
  const std::string board_id = board.id;
  RETURN_IF_ERROR(CheckExpectedVersion(in, "board", board_id, board.version));
  ASSIGN_OR_RETURN(std::vector<std::string> ids, ListBoardTaskIds(ctx.txn, board_id));
  const Json cleared = ids;
  const size_t on_board = ids.size();
  if (!ids.empty() && !in.value("force", false)) {
    if (ids.size() > 5) ids.resize(5);
    return FailedPreconditionError(
        "board: board " + board.name + " still has " + std::to_string(on_board) + " task(s) (" +
        JoinNames(ids) + (on_board > 5 ? ", ..." : "") +
        "); take them off with board.remove_task, or pass force to clear them");
  }
  RETURN_IF_ERROR(ClearBoardOfTasks(ctx.txn, board_id, ctx.now));
  RETURN_IF_ERROR(DeleteBoardRow(ctx.txn, board_id));
  RETURN_IF_ERROR(AppendEvent(ctx, {.kind = "board.deleted",
                                    .summary = "board " + board.name + " deleted" +
                                               (cleared.empty() ? "" : ", its tasks taken off"),
                                    .payload = {{"board_id", board_id},
                                                {"name", board.name},
                                                {"project_id", OrNull(board.project_id)},
                                                {"cleared_tasks", cleared}}})
                      .status());
  return Json{{"deleted", BoardRef(board)}, {"cleared_tasks", cleared}};
}

Result<Json> ExportBoard(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(Board board, ResolveBoard(ctx.txn, in));
  ASSIGN_OR_RETURN(std::vector<BoardCard> cards, ListBoardCards(ctx.txn, board.id));
  Json tasks = Json::array();
  for (const BoardCard& c : cards) {
    const Json* column = ColumnById(board, c.board_column.value_or(""));
    tasks.push_back({{"id", c.id},
                     {"title", c.title},
                     {"status", c.status},
                     {"column", column != nullptr ? (*column)["name"] : Json()},
                     {"column_id", OrNull(c.board_column)}});
  }
  return Json{{"schemaVersion", 1}, {"board", BoardToJson(board)}, {"tasks", tasks}};
}

// Tasks are deliberately not imported. A task is on at most one board, and
// the exported cards are the source board's: in the same store, placing them
// would silently take them off that board (and past its gates); in another
// store their ids mean nothing. board.add_task places tasks afterwards. The
// result says how many were left out ("tasks_not_imported").
Result<Json> ImportBoard(OpContext& ctx, const Json& in) {
  if (in.at("schemaVersion").get<int64_t>() != 1) {
    return InvalidArgumentError("schemaVersion: this baton reads board exports of version 1 (got " +
                                DumpJson(in["schemaVersion"]) + ")");
  }
  const Json& board = in.at("board");
  const std::string name = in.contains("name") ? in["name"].get<std::string>() : JsonText(board, "name");
  if (!ValidName(name)) {
    return Invalid(in.contains("name") ? "name" : "board.name",
                   "a board name of letters, digits and . _ -",
                   in.contains("name") ? in["name"] : board.value("name", Json()));
  }
  // The given project; else the exported one when it exists in this store.
  std::string project_id;
  if (in.contains("project")) {
    ASSIGN_OR_RETURN(project_id, ResolveProjectId(ctx.txn, in["project"].get<std::string>()));
  } else if (board.contains("project_id") && board["project_id"].is_string()) {
    Result<std::string> pid = ResolveProjectId(ctx.txn, board["project_id"].get<std::string>());
    if (pid.ok()) project_id = *pid;
  }
  for (const char* key : {"description", "template"}) {
    if (board.contains(key) && !board[key].is_null() && !board[key].is_string()) {
      return Invalid(std::string("board.") + key, "a string", board[key]);
    }
  }
  ASSIGN_OR_RETURN(Json columns,
                   NormalizeColumns(board.value("columns", Json()), IndexedField("board.columns"),
                                    IdMode::kNew, "board.columns"));
  const Json template_name = board.value("template", Json());
  ASSIGN_OR_RETURN(Board created,
                   InsertBoard(ctx, name, project_id, JsonText(board, "description"), template_name,
                               columns, Json{{"imported_from", board.value("id", Json())}}));
  Json answer = BoardToJson(created);
  answer["tasks_not_imported"] = in.value("tasks", Json::array()).size();
  return answer;
}

Status AdvanceOnCompletion(OpContext& ctx, const std::string& task_id) {
  ASSIGN_OR_RETURN(Task task, LoadTask(ctx.txn, task_id));
  if (!task.board_id) return Status();
  ASSIGN_OR_RETURN(Board board, LoadBoard(ctx.txn, *task.board_id));
  const Json* from = ColumnById(board, task.board_column.value_or(""));
  if (from == nullptr || !(*from)["auto_advance"].get<bool>()) return Status();
  const int64_t next = (*from)["position"].get<int64_t>() + 1;
  for (const Json& to : board.columns) {
    if (to["position"] != next) continue;
    if (!CheckTransition(board, *from, to).ok()) return Status();
    return DoMove(ctx, task, board, *from, to, "auto-advance");
  }
  return Status();
}

}  // namespace baton
