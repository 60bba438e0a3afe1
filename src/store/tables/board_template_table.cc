#include "store/tables/board_template_table.h"

#include "store/tables/row_values.h"

namespace baton {

Result<std::vector<BoardTemplateRow>> ListBoardTemplateRows(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT name, description, icon, columns FROM board_templates "
                             "ORDER BY name",
                             {}));
  std::vector<BoardTemplateRow> templates;
  templates.reserve(rows.size());
  for (const Row& r : rows) {
    templates.push_back({.name = r.Str(0),
                         .description = r.Str(1),
                         .icon = TextOrNone(r, 2),
                         .columns = JsonOr(r, 3, Json::array())});
  }
  return templates;
}

Status InsertBoardTemplateRow(Txn& txn, const BoardTemplateRow& t, const std::string& created_at) {
  return txn
      .Exec(
          "INSERT INTO board_templates (name, description, icon, columns, "
          "created_at) VALUES (?, ?, ?, ?, ?)",
          {SqlText(t.name), SqlText(t.description), SqlNullable(t.icon),
           SqlText(CanonicalJson(t.columns)), SqlText(created_at)})
      .status();
}

}  // namespace baton
