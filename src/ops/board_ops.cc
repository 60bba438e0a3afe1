// Operations on boards and board templates (Genie's kanban boards); the
// rules are in src/engine/coord/boards.h.

#include "engine/coord/boards.h"
#include "ops/api.h"
#include "ops/schemas.h"

namespace baton {
namespace {

namespace s = schema;

constexpr char kNamePattern[] = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";

// Builds a schema once per process. The registry is built more than once
// (the CLI's verbs, then the Api) and these schemas nest deeply, so building
// them for every use would add to every command's start-up.
template <typename Build>
const Json& Once(Build build) {
  static const Json* const kSchema = new Json(build());
  return *kSchema;
}

// Board, template and column names.
Json Name(std::string description) {
  return {{"type", "string"}, {"pattern", kNamePattern}, {"description", std::move(description)}};
}

Json NullableText(std::string description, int max_length) {
  return {{"type", Json::array({"string", "null"})},
          {"maxLength", max_length},
          {"description", std::move(description)}};
}

Json BoardIn() { return s::Id("board id or name"); }
Json ProjectIn() { return s::Id("project id or name (narrows a board name to one project)"); }

// ---- Column input ----

Json GateIn() {
  return s::Enum(
      "who may move a card out of the column: human, agent (agents and "
      "coordinators) or human+agent (anyone)",
      {"human", "agent", "human+agent"});
}

Json TransitionsIn() {
  Json item = s::Input({{"event", s::String("what triggers the move", 200)},
                        {"target", Name("the column moved to")},
                        {"condition", NullableText("when the move applies", 2000)},
                        {"action", NullableText("what runs on the move", 2000)}},
                       {"event", "target"});
  return {{"type", "array"},
          {"items", item},
          {"maxItems", 64},
          {"description", "allowed moves out of the column; empty = move anywhere"}};
}

Json RolesIn() {
  return {{"type", "array"},
          {"items", s::String("role", 200)},
          {"maxItems", 64},
          {"description", "team roles that work the column (Genie's; not enforced)"}};
}

// The column attributes a caller may set: {name: schema}.
const Json& ColumnFields() {
  return Once([] {
    return Json::object(
        {{"label", s::String("display name", 2000)},
         {"gate", GateIn()},
         {"action", NullableText("skill run in the column, e.g. /work", 2000)},
         {"auto_advance", s::Boolean("move a card on to the next column when its task completes")},
         {"transitions", TransitionsIn()},
         {"roles", RolesIn()},
         {"color", NullableText("display color, e.g. #3b82f6", 2000)},
         {"parallel", s::Boolean("cards in the column may be worked on in parallel")},
         {"on_fail", NullableText("column a failed card goes to", 64)},
         {"position", {{"type", "integer"}, {"minimum", 0}, {"description", "0 = first"}}}});
  });
}

const Json& ColumnsIn() {
  return Once([] {
    Json column = s::Input({{"name", Name("column name, unique on the board")}}, {"name"});
    column["properties"].update(ColumnFields());
    return Json{{"type", "array"},
                {"items", {{"anyOf", Json::array({Name("column name"), column})}}},
                {"minItems", 1},
                {"maxItems", 64},
                {"description", "the columns, in order: names or column objects"}};
  });
}

// ---- Outputs ----

Json StringType() { return {{"type", "string"}}; }
Json ArrayOf(Json item) { return {{"type", "array"}, {"items", std::move(item)}}; }

Json ColumnOut(bool with_id) {
  Json out = s::Entity({{"name", StringType()},
                        {"label", StringType()},
                        {"gate", {{"enum", {"human", "agent", "human+agent"}}}},
                        {"action", s::Nullable("string")},
                        {"auto_advance", {{"type", "boolean"}}},
                        {"transitions", {{"type", "array"}}},
                        {"roles", ArrayOf(StringType())},
                        {"color", s::Nullable("string")},
                        {"parallel", {{"type", "boolean"}}},
                        {"on_fail", s::Nullable("string")},
                        {"position", {{"type", "integer"}}}});
  if (with_id) {
    out["properties"]["id"] = StringType();
    out["required"].push_back("id");
  }
  return out;
}

Json BuildTemplateOut() {
  return s::Entity({{"name", StringType()},
                    {"description", StringType()},
                    {"icon", s::Nullable("string")},
                    {"builtin", {{"type", "boolean"}}},
                    {"columns", ArrayOf(ColumnOut(false))}});
}
const Json& TemplateOut() {
  return Once([] { return BuildTemplateOut(); });
}

Json CardOut() {
  return s::Entity({{"id", StringType()}, {"title", StringType()}, {"status", StringType()}});
}

Json BoardOutWith(Json column) {
  return s::Entity({{"id", StringType()},
                    {"name", StringType()},
                    {"project_id", s::Nullable("string")},
                    {"description", StringType()},
                    {"template", s::Nullable("string")},
                    {"columns", ArrayOf(std::move(column))},
                    {"config", {{"type", "object"}}},
                    {"version", {{"type", "integer"}}},
                    {"created_at", StringType()},
                    {"updated_at", StringType()}});
}

const Json& BoardOut() {
  return Once([] { return BoardOutWith(ColumnOut(true)); });
}

const Json& TaskOut() {
  return Once([] { return s::TaskOut(); });
}

Json With(Json entity, const char* key, Json schema) {
  entity["properties"][key] = std::move(schema);
  entity["required"].push_back(key);
  return entity;
}

Json BuildBoardShowOut() {
  Json column = With(ColumnOut(true), "tasks", ArrayOf(CardOut()));
  Json orphan = With(CardOut(), "column", s::Nullable("string"));
  return With(BoardOutWith(std::move(column)), "orphaned", ArrayOf(orphan));
}
const Json& BoardShowOut() {
  return Once([] { return BuildBoardShowOut(); });
}

Json BoardRefOut() { return s::Entity({{"id", StringType()}, {"name", StringType()}}); }

Json BuildPlacementOut() {
  return s::Entity(
      {{"task", TaskOut()}, {"board", BoardRefOut()}, {"column", s::Nullable("string")}});
}
const Json& PlacementOut() {
  return Once([] { return BuildPlacementOut(); });
}

Json BuildMoveOut() {
  return s::Entity({{"task", TaskOut()},
                    {"board", BoardRefOut()},
                    {"from", StringType()},
                    {"to", StringType()},
                    {"moved", {{"type", "boolean"}}}});
}
const Json& MoveOut() {
  return Once([] { return BuildMoveOut(); });
}

Json BuildReconcileOut() {
  Json repaired = s::Entity({{"task", StringType()},
                             {"from", s::Nullable("string")},
                             {"to", StringType()},
                             {"column_id", StringType()},
                             {"reason", {{"enum", {"matched by name", "first column"}}}}});
  return s::Entity({{"board", BoardRefOut()}, {"repaired", ArrayOf(repaired)}});
}
const Json& ReconcileOut() {
  return Once([] { return BuildReconcileOut(); });
}

Json BuildExportOut() {
  Json task = s::Entity({{"id", StringType()},
                         {"title", StringType()},
                         {"status", StringType()},
                         {"column", s::Nullable("string")},
                         {"column_id", s::Nullable("string")}});
  return s::Entity(
      {{"schemaVersion", {{"const", 1}}}, {"board", BoardOut()}, {"tasks", ArrayOf(task)}});
}
const Json& ExportOut() {
  return Once([] { return BuildExportOut(); });
}

// ---- Registration ----

Status AddTemplateOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "board.templates",
      .summary =
          "List board templates: Genie's built-ins (software, sales, hiring, ops, bug) and yours",
      .input_schema = s::Input({}),
      .output_schema = s::ListOf("templates", TemplateOut()),
      .handler = ListBoardTemplates,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "board.template_show",
      .summary = "Show one board template with its columns",
      .input_schema = s::Input({{"name", Name("template name")}}, {"name"}),
      .output_schema = TemplateOut(),
      .positional = {"name"},
      .handler = ShowBoardTemplate,
  }));
  return r.Add({
      .name = "board.template_create",
      .summary = "Create a board template from a list of columns",
      .input_schema = s::Input({{"name", Name("unique template name")},
                                {"description", s::String("what the template is for", 2000)},
                                {"icon", s::String("icon name", 200)},
                                {"columns", ColumnsIn()}},
                               {"name", "columns"}),
      .output_schema = TemplateOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .positional = {"name"},
      .handler = CreateBoardTemplate,
  });
}

Status AddBoardCrudOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "board.create",
      .summary = "Create a board from a template or from columns (names unique per project)",
      .input_schema = s::Input({{"name", Name("board name, unique in its project")},
                                {"project", s::Id("project id or name (default: none)")},
                                {"template", Name("template to copy the columns of")},
                                {"columns", ColumnsIn()},
                                {"description", s::String("what the board is for", 2000)}},
                               {"name"}),
      .output_schema = BoardOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .positional = {"name"},
      .handler = CreateBoard,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "board.show",
      .summary = "Show a board: its columns with the tasks in each",
      .input_schema = s::Input({{"board", BoardIn()}, {"project", ProjectIn()}}, {"board"}),
      .output_schema = BoardShowOut(),
      .positional = {"board"},
      .handler = ShowBoard,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "board.list",
      .summary = "List boards, optionally of one project",
      .input_schema = s::Input({{"project", s::Id("project id or name")}}),
      .output_schema = s::ListOf("boards", With(BoardOut(), "task_count", {{"type", "integer"}})),
      .handler = ListBoards,
  }));
  Json edit = s::Input({{"board", BoardIn()},
                        {"project", ProjectIn()},
                        {"column", s::Id("column id or name")},
                        {"name", Name("new column name")}},
                       {"board", "column"});
  edit["properties"].update(ColumnFields());
  RETURN_IF_ERROR(r.Add({
      .name = "board.edit_column",
      .summary = "Change a column of a board (name, label, gate, action, auto_advance, ...)",
      .input_schema = edit,
      .output_schema = BoardOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .versioned = true,
      .positional = {"board", "column"},
      .handler = EditBoardColumn,
  }));
  return r.Add({
      .name = "board.delete",
      .summary =
          "Delete a board; refused while tasks are on it unless force (which takes them off)",
      .input_schema = s::Input({{"board", BoardIn()},
                                {"project", ProjectIn()},
                                {"force", s::Boolean("take the board's tasks off it first")}},
                               {"board"}),
      .output_schema =
          s::Entity({{"deleted", BoardRefOut()}, {"cleared_tasks", ArrayOf(StringType())}}),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .versioned = true,
      .destructive = true,
      .positional = {"board"},
      .handler = DeleteBoard,
  });
}

Status AddCardOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "board.add_task",
      .summary =
          "Put a task on a board (default: its first column); a task is on one board at a time",
      .input_schema = s::Input({{"board", BoardIn()},
                                {"project", ProjectIn()},
                                {"task", s::Id("task id")},
                                {"column", s::Id("column id or name (default: the first)")}},
                               {"board", "task"}),
      .output_schema = PlacementOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"board", "task"},
      .handler = AddTaskToBoard,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "board.remove_task",
      .summary = "Take a task off its board",
      .input_schema = s::Input({{"task", s::Id("task id")}}, {"task"}),
      .output_schema = PlacementOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .versioned = true,
      .positional = {"task"},
      .handler = RemoveTaskFromBoard,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "board.move",
      .summary =
          "Move a task to another column of its board, as the column's gate and transitions allow",
      .input_schema = s::Input({{"task", s::Id("task id")},
                                {"column", s::Id("target column id or name")},
                                {"note", s::String("why, for the ledger", 2000)}},
                               {"task", "column"}),
      .output_schema = MoveOut(),
      .mutating = true,
      .versioned = true,
      .positional = {"task", "column"},
      .handler = MoveBoardTask,
  }));
  return r.Add({
      .name = "board.reconcile",
      .summary = "Put tasks whose column is missing from their board back on a column",
      .input_schema = s::Input({{"board", BoardIn()}, {"project", ProjectIn()}}, {"board"}),
      .output_schema = ReconcileOut(),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .idempotent = true,
      .positional = {"board"},
      .handler = ReconcileBoard,
  });
}

Status AddTransferOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "board.export",
      .summary = "Export a board with its columns and tasks as JSON (schemaVersion 1)",
      .input_schema = s::Input({{"board", BoardIn()}, {"project", ProjectIn()}}, {"board"}),
      .output_schema = ExportOut(),
      .positional = {"board"},
      .handler = ExportBoard,
  }));
  return r.Add({
      .name = "board.import",
      .summary =
          "Create a board from a board.export document (new column ids; tasks are not placed)",
      .input_schema = s::Input(
          {{"schemaVersion", {{"type", "integer"}, {"description", "the export's version (1)"}}},
           {"board", s::Object("the exported board, with its columns")},
           {"tasks", {{"type", "array"}, {"description", "the exported tasks (not imported)"}}},
           {"project", s::Id("project of the new board (default: the exported one, if it exists)")},
           {"name", Name("name of the new board (default: the exported name)")}},
          {"schemaVersion", "board"}),
      .output_schema = With(BoardOut(), "tasks_not_imported", {{"type", "integer"}}),
      .roles = {"human", "coordinator"},
      .mutating = true,
      .handler = ImportBoard,
  });
}

}  // namespace

void AddBoardHooks(EngineHooks& hooks) {
  // A card in an auto-advancing column moves on when its task succeeds.
  hooks.task_succeeded.push_back(AdvanceOnCompletion);
}

Status RegisterBoardOps(Registry& registry) {
  RETURN_IF_ERROR(AddTemplateOps(registry));
  RETURN_IF_ERROR(AddBoardCrudOps(registry));
  RETURN_IF_ERROR(AddCardOps(registry));
  return AddTransferOps(registry);
}

}  // namespace baton
