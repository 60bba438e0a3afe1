#include "store/tables/graph_definition_table.h"

namespace baton {

Status KeepGraphDefinition(Txn& txn, const std::string& hash, const std::string& text,
                           const std::string& now) {
  return txn
      .Exec("INSERT INTO graph_definitions (hash, text, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT (hash) DO NOTHING",
            {SqlText(hash), SqlText(text), SqlText(now)})
      .status();
}

Result<std::optional<std::string>> LoadGraphDefinitionText(Txn& txn, const std::string& hash) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT text FROM graph_definitions WHERE hash = ?", {SqlText(hash)}));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].Str(0));
}

}  // namespace baton
