#include "store/tables/message_table.h"

#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

Result<std::vector<ExportedMessage>> ExportRunMessageRows(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT sender, recipient, body, read, read_at, read_by, created_at, "
                             "meta FROM messages WHERE run_id = ? ORDER BY seq",
                             {SqlText(run_id)}));
  std::vector<ExportedMessage> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.sender = r.Str(0),
                   .recipient = r.Str(1),
                   .body = r.Str(2),
                   .read = r.Int(3) != 0,
                   .read_at = TextOrNone(r, 4),
                   .read_by = TextOrNone(r, 5),
                   .created_at = r.Str(6),
                   .meta = JsonOr(r, 7, Json::object())});
  }
  return out;
}

Status InsertImportedMessage(Txn& txn, const ImportedMessage& m) {
  return txn
      .Exec(
          "INSERT INTO messages (id, project_id, run_id, sender, recipient, addressed_to, "
          "body, source, meta, read, read_at, read_by, delivery_status, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, 'import', ?, ?, ?, ?, 'delivered', ?)",
          {SqlText(m.id), SqlTextOrNull(m.project_id), SqlText(m.run_id), SqlText(m.sender),
           SqlText(m.recipient), SqlText(m.recipient), SqlText(m.body),
           SqlText(CanonicalJson(m.meta)), SqlInt(m.read ? 1 : 0),
           m.read_at ? SqlText(*m.read_at) : SqlNull(), m.read_by ? SqlText(*m.read_by) : SqlNull(),
           SqlText(m.created_at)})
      .status();
}

Result<std::vector<UndeliveredMessage>> ListUndeliveredMessagesForInbox(
    Txn& txn, const std::string& project_id, const std::string& run_id) {
  std::vector<SqlValue> params;
  std::string sql =
      "SELECT m.id, m.sender, m.recipient, m.body, m.delivery_status, m.delivery_attempts, "
      "m.last_error, m.created_at, m.run_id, r.title, r.profile FROM messages m LEFT JOIN runs r "
      "ON r.id = m.run_id WHERE m.delivery_status IN ('escalated', 'failed') AND m.read = 0";
  if (!project_id.empty()) {
    sql += " AND m.project_id = ?";
    params.push_back(SqlText(project_id));
  }
  if (!run_id.empty()) {
    sql += " AND m.run_id = ?";
    params.push_back(SqlText(run_id));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql + " ORDER BY m.seq", params));
  std::vector<UndeliveredMessage> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0),
                   .sender = r.Str(1),
                   .recipient = r.Str(2),
                   .body = r.Str(3),
                   .delivery_status = r.Str(4),
                   .delivery_attempts = r.Int(5),
                   .last_error = TextOrNone(r, 6),
                   .created_at = r.Str(7),
                   .run = RunLabelAt(r, 8)});
  }
  return out;
}

}  // namespace baton
