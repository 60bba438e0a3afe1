#include "store/tables/inbox_dismissal_table.h"

#include "store/tables/row_values.h"

namespace baton {

Result<std::vector<std::string>> ListDismissedInboxItems(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT item FROM inbox_dismissals", {}));
  return FirstColumn(rows);
}

Status InsertInboxDismissal(Txn& txn, const InboxDismissal& d) {
  return txn
      .Exec(
          "INSERT INTO inbox_dismissals (item, kind, note, dismissed_by, "
          "dismissed_at) VALUES (?, ?, ?, ?, ?)",
          {SqlText(d.item), SqlText(d.kind), SqlText(d.note), SqlText(d.dismissed_by),
           SqlText(d.dismissed_at)})
      .status();
}

}  // namespace baton
