#include "store/tables/inbox_dismissal_table.h"

namespace baton {

Result<std::vector<std::string>> ListDismissedInboxItems(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT item FROM inbox_dismissals", {}));
  std::vector<std::string> items;
  items.reserve(rows.size());
  for (const Row& r : rows) items.push_back(r.Str(0));
  return items;
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
