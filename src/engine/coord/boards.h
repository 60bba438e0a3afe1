// File: boards.h
//
// Boards (Genie's kanban boards, seed-systems.md "Tasks / boards / projects"):
// a board is a named, ordered list of columns, optionally scoped to a project
// (names are unique per project; project_key is the project id or ''). A
// task sits on at most one board, in one of its columns: tasks.board_id and
// tasks.board_column (the column's id, "col-<hex>").
//
// A column is {id, name, label, gate, action, auto_advance, transitions[],
// roles[], color, parallel, on_fail, position}:
//   gate         who may move a card OUT of the column: "human" (role human
//                only), "agent" (agents and coordinators, and the human) or
//                "human+agent" (anyone); admin always may.
//   transitions  [{event, target, condition?, action?}]; when non-empty a card
//                may only move to one of the targets (column names). Empty
//                means free movement, as in all of Genie's templates.
//   auto_advance a card whose task completes moves on to the next column by
//                position (AdvanceOnCompletion).
//   on_fail      null, or the name of a column of the same board.
//   action, roles, color, parallel are kept for the caller (Genie's skill,
//                team roles and display); baton does not interpret them.
// Columns given by the caller are validated (unique names, gate enum,
// transition targets and on_fail naming columns) and their positions
// renumbered 0..n-1, ordered by the given "position" (the array index where
// missing), ties keeping array order.
//
// Templates: Genie's five built-ins (software, sales, hiring, ops, bug) are
// compiled into the binary from src/model/board_templates.json and never
// stored; user templates live in table board_templates. A board made from a
// template copies its columns with fresh ids.
//
// Every function runs in the caller's transaction and appends its ledger
// events there (board.created, board.template_created, board.task_added,
// board.task_removed, board.moved, board.repaired, board.column_edited,
// board.deleted). Inputs are the operations' JSON, already schema-checked;
// errors name the field and the reason and change nothing.

#ifndef BATON_SRC_ENGINE_COORD_BOARDS_H_
#define BATON_SRC_ENGINE_COORD_BOARDS_H_

#ifndef BATON_ENGINE_ROOM_COORD
#error "engine/coord/ is above this target: link baton_engine_coord (src/engine/README.md)"
#endif

#include <string>

#include "engine/ledger/op_context.h"

namespace baton {

// Templates. {templates: [{name, description, icon, builtin, columns}]},
// built-ins first in Genie's order, then user templates by name.
Result<Json> ListBoardTemplates(OpContext& ctx, const Json& in);
// in: {name}. NotFound lists the known names.
Result<Json> ShowBoardTemplate(OpContext& ctx, const Json& in);
// in: {name, description?, icon?, columns}. AlreadyExists for a taken name
// (built-in or user).
Result<Json> CreateBoardTemplate(OpContext& ctx, const Json& in);

// Boards. A board is named by "board" (its id, or its name; "project"
// narrows a name to one project).
// in: {name, project?, template? | columns?, description?}: exactly one of
// template and columns. columns items are names or column objects.
Result<Json> CreateBoard(OpContext& ctx, const Json& in);
// The board with, per column, its tasks [{id, title, status}], and
// "orphaned": tasks on the board whose column is not one of its columns.
Result<Json> ShowBoard(OpContext& ctx, const Json& in);
Result<Json> ListBoards(OpContext& ctx, const Json& in);
// in: {board, task, column?}: puts a task that is on no board into "column"
// (default: the first). A board of a project takes only that project's tasks;
// a board without a project takes any task.
Result<Json> AddTaskToBoard(OpContext& ctx, const Json& in);
// in: {task}: takes a task off its board.
Result<Json> RemoveTaskFromBoard(OpContext& ctx, const Json& in);
// in: {task, column, note?}: moves a card within its board, checking the
// source column's gate (PermissionDenied) and transitions
// (FailedPrecondition). Moving to the current column changes nothing and
// returns moved = false. Returns {task, board, from, to, moved}.
Result<Json> MoveBoardTask(OpContext& ctx, const Json& in);
// in: {board}: puts every task of the board whose column is missing back on
// a column: the one whose name equals the stored value, else the first.
// Returns {board, repaired: [{task, from, to, column_id, reason}]}.
Result<Json> ReconcileBoard(OpContext& ctx, const Json& in);
// in: {board, column, name?, label?, gate?, action?, auto_advance?,
// transitions?, roles?, color?, parallel?, on_fail?, position?}. A renamed
// column is renamed in the other columns' transitions and on_fail too.
Result<Json> EditBoardColumn(OpContext& ctx, const Json& in);
// in: {board, force?}: FailedPrecondition while tasks are on it, unless
// force, which takes them off first.
Result<Json> DeleteBoard(OpContext& ctx, const Json& in);
// {schemaVersion: 1, board: {...}, tasks: [{id, title, status, column,
// column_id}]}.
Result<Json> ExportBoard(OpContext& ctx, const Json& in);
// in: an export document ({schemaVersion, board, tasks?}) plus project? and
// name?. Creates a new board with the exported columns (new ids, same names).
Result<Json> ImportBoard(OpContext& ctx, const Json& in);

// Called when task "task_id" completes: if it is on a board and its column
// has auto_advance, moves it to the next column by position (ledger
// "board.moved" with note "auto-advance"). Gates do not apply (the column
// itself asks for the move); a column whose transitions do not include the
// next column, the last column, and an orphaned column reference all leave
// the task where it is. OK when there is nothing to do.
Status AdvanceOnCompletion(OpContext& ctx, const std::string& task_id);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_COORD_BOARDS_H_
