#include "store/tables/board_table.h"

#include <utility>

#include "store/tables/row_values.h"

namespace baton {
namespace {

constexpr char kBoardColumns[] =
    "id, name, project_id, description, template, columns, config, version, created_at, "
    "updated_at";

Board BoardFromRow(const Row& r) {
  return Board{.id = r.Str(0),
               .name = r.Str(1),
               .project_id = TextOrNone(r, 2),
               .description = r.Str(3),
               .template_name = TextOrNone(r, 4),
               .columns = JsonOr(r, 5, Json::array()),
               .config = JsonOr(r, 6, Json::object()),
               .version = r.Int(7),
               .created_at = r.Str(8),
               .updated_at = r.Str(9)};
}

}  // namespace

Result<Board> LoadBoardRow(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(
      Row row, txn.QueryOne(std::string("SELECT ") + kBoardColumns + " FROM boards WHERE id = ?",
                            {SqlText(id)}, "board " + id));
  return BoardFromRow(row);
}

Result<std::vector<Board>> FindBoardRows(Txn& txn, const std::string& key,
                                         const std::optional<std::string>& project_key) {
  std::string sql =
      std::string("SELECT ") + kBoardColumns + " FROM boards WHERE (id = ? OR name = ?)";
  std::vector<SqlValue> params = {SqlText(key), SqlText(key)};
  if (project_key) {
    sql += " AND project_key = ?";
    params.push_back(SqlText(*project_key));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql + " ORDER BY project_key", params));
  std::vector<Board> boards;
  boards.reserve(rows.size());
  for (const Row& r : rows) boards.push_back(BoardFromRow(r));
  return boards;
}

Result<std::optional<std::string>> FindBoardIdByName(Txn& txn, const std::string& project_key,
                                                     const std::string& name) {
  ASSIGN_OR_RETURN(std::vector<Row> taken,
                   txn.Query("SELECT id FROM boards WHERE project_key = ? AND name = ?",
                             {SqlText(project_key), SqlText(name)}));
  if (taken.empty()) return std::optional<std::string>();
  return std::optional<std::string>(taken[0].Str(0));
}

Result<std::vector<BoardListing>> ListBoardRows(Txn& txn,
                                                const std::optional<std::string>& project_key) {
  std::string sql = std::string("SELECT ") + kBoardColumns +
                    ", (SELECT COUNT(*) FROM tasks t WHERE t.board_id = boards.id) FROM boards";
  std::vector<SqlValue> params;
  if (project_key) {
    sql += " WHERE project_key = ?";
    params.push_back(SqlText(*project_key));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql + " ORDER BY project_key, name", params));
  std::vector<BoardListing> boards;
  boards.reserve(rows.size());
  for (const Row& r : rows) boards.push_back({.board = BoardFromRow(r), .task_count = r.Int(10)});
  return boards;
}

Status InsertBoardRow(Txn& txn, const NewBoardRow& b) {
  return txn
      .Exec(
          "INSERT INTO boards (id, name, project_key, project_id, description, "
          "template, columns, config, version, created_at, updated_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, '{}', 1, ?, ?)",
          {SqlText(b.id), SqlText(b.name), SqlText(b.project_id), SqlTextOrNull(b.project_id),
           SqlText(b.description), SqlNullable(b.template_name),
           SqlText(CanonicalJson(b.columns)), SqlText(b.now), SqlText(b.now)})
      .status();
}

Status UpdateBoardColumns(Txn& txn, const std::string& id, const Json& columns,
                          const std::string& now) {
  return txn
      .Exec(
          "UPDATE boards SET columns = ?, version = version + 1, updated_at = ? "
          "WHERE id = ?",
          {SqlText(CanonicalJson(columns)), SqlText(now), SqlText(id)})
      .status();
}

Status DeleteBoardRow(Txn& txn, const std::string& id) {
  return txn.Exec("DELETE FROM boards WHERE id = ?", {SqlText(id)}).status();
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

Result<std::vector<InboxBoard>> ListBoardsForInbox(Txn& txn, const std::string& project_id) {
  std::string where = " WHERE 1 = 1";
  std::vector<SqlValue> params;
  if (!project_id.empty()) {
    where += " AND b.project_id = ?";
    params.push_back(SqlText(project_id));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT b.id, b.name, b.columns FROM boards b" +
                                                        where + " ORDER BY b.created_at, b.id",
                                                    params));
  std::vector<InboxBoard> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0), .name = r.Str(1), .columns = JsonOr(r, 2, Json::array())});
  }
  return out;
}

}  // namespace baton
