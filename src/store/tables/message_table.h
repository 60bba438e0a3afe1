// File: message_table.h
//
// The messages table: mail between agents and the human, per project and
// run, with read state and push delivery state. Portable SQL.

#ifndef BATON_SRC_STORE_TABLES_MESSAGE_TABLE_H_
#define BATON_SRC_STORE_TABLES_MESSAGE_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "store/tables/run_table.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

// run.export: run "run_id"'s messages, in the order sent.
struct ExportedMessage {
  std::string sender;
  std::string recipient;
  std::string body;
  bool read = false;
  std::optional<std::string> read_at;
  std::optional<std::string> read_by;
  std::string created_at;  // "" when the imported file did not say
  Json meta;               // {} when unset
};
Result<std::vector<ExportedMessage>> ExportRunMessageRows(Txn& txn, const std::string& run_id);

// run.import: a message read from a file, stored as delivered, from source
// "import", addressed to its recipient; "project_id" "" stores NULL.
struct ImportedMessage {
  std::string id;
  std::string project_id;
  std::string run_id;
  std::string sender;
  std::string recipient;
  std::string body;
  Json meta;
  bool read = false;
  std::optional<std::string> read_at;
  std::optional<std::string> read_by;
  std::string created_at;
};
Status InsertImportedMessage(Txn& txn, const ImportedMessage& m);

// inbox.list: unread messages whose push delivery failed or escalated,
// in the order sent, with their run when they have one; only project
// "project_id" and run "run_id" when those are not "".
struct UndeliveredMessage {
  std::string id;
  std::string sender;
  std::string recipient;
  std::string body;
  std::string delivery_status;
  int64_t delivery_attempts = 0;
  std::optional<std::string> last_error;
  std::string created_at;
  std::optional<RunLabel> run;
};
Result<std::vector<UndeliveredMessage>> ListUndeliveredMessagesForInbox(
    Txn& txn, const std::string& project_id, const std::string& run_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_MESSAGE_TABLE_H_
