// File: inbox_dismissal_table.h
//
// The inbox_dismissals table: inbox items the human dismissed, by item id
// (engine/inbox/inbox.h: an item's id changes when its subject does, so a
// dismissal hides it until then), with who dismissed it, when and why.
// Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_INBOX_DISMISSAL_TABLE_H_
#define BATON_SRC_STORE_TABLES_INBOX_DISMISSAL_TABLE_H_

#include <string>
#include <vector>

#include "store/store.h"

namespace baton {

struct InboxDismissal {
  std::string item;
  std::string kind;
  std::string note;
  std::string dismissed_by;
  std::string dismissed_at;
};

// The ids of every dismissed item.
Result<std::vector<std::string>> ListDismissedInboxItems(Txn& txn);

// AlreadyExists when "dismissal.item" is already dismissed.
Status InsertInboxDismissal(Txn& txn, const InboxDismissal& dismissal);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_INBOX_DISMISSAL_TABLE_H_
