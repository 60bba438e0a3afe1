#include "store/tables/message_table.h"

namespace baton {

// h19-ledger-profiles:

Result<std::optional<std::string>> FirstUnreadSgaiRecipient(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT recipient FROM messages WHERE run_id = ? AND read = 0 "
                             "ORDER BY seq LIMIT 1",
                             {SqlText(run_id)}));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].Str(0));
}

Result<std::vector<std::string>> ListUnreadSgaiRecipients(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT recipient FROM messages WHERE run_id = ? AND read = 0", {SqlText(run_id)}));
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(r.Str(0));
  return out;
}

Status InsertSgaiSystemMessage(Txn& txn, const SgaiSystemMessage& m) {
  return txn
      .Exec(
          "INSERT INTO messages (id, project_id, run_id, sender, recipient, addressed_to, "
          "body, source, meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'system', '{}', ?)",
          {SqlText(m.id), SqlTextOrNull(m.project_id), SqlText(m.run_id), SqlText(m.sender),
           SqlText(m.recipient), SqlText(m.recipient), SqlText(m.body), SqlText(m.created_at)})
      .status();
}

}  // namespace baton
