#include "store/tables/message_table.h"

#include <algorithm>
#include <utility>

#include "store/tables/row_values.h"
#include "util/json_util.h"
#include "util/optional_text.h"

namespace baton {
namespace {

constexpr size_t kMessageColumnCount = 19;

// Completes "sql" (a SELECT over alias m ending in its WHERE clause) with
// "page" (SeqPage above).
Result<std::vector<Row>> PagedRows(Txn& txn, std::string sql, std::vector<SqlValue> params,
                                   const SeqPage& page) {
  sql +=
      std::string(" AND m.seq > ? ORDER BY m.seq ") + (page.forward ? "ASC" : "DESC") + " LIMIT ?";
  params.push_back(SqlInt(page.since));
  params.push_back(SqlInt(page.limit));
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  if (!page.forward) std::reverse(rows.begin(), rows.end());
  return rows;
}

Result<std::vector<Message>> PagedMessages(Txn& txn, const std::string& sql,
                                           std::vector<SqlValue> params, const SeqPage& page) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, PagedRows(txn, sql, std::move(params), page));
  std::vector<Message> messages;
  messages.reserve(rows.size());
  for (const Row& r : rows) messages.push_back(MessageFromRow(r));
  return messages;
}

std::string SelectMessages() { return std::string("SELECT ") + kMessageColumns; }

}  // namespace

const char kMessageColumns[] =
    "m.id, m.seq, m.sender, m.recipient, m.addressed_to, m.body, m.source, m.meta, "
    "m.run_id, m.project_id, m.read, m.read_at, m.read_by, m.delivery_status, "
    "m.delivery_attempts, m.delivered_at, m.last_error, m.next_attempt_ms, m.created_at";

Message MessageFromRow(const Row& r) {
  Message m;
  m.id = r.Str(0);
  m.seq = r.Int(1);
  m.sender = r.Str(2);
  m.recipient = r.Str(3);
  m.addressed_to = r.Str(4);
  m.body = r.Str(5);
  m.source = r.Str(6);
  m.meta = JsonOr(r, 7, Json::object());
  m.run_id = TextOrNone(r, 8);
  m.project_id = TextOrNone(r, 9);
  m.read = r.Int(10) != 0;
  m.read_at = TextOrNone(r, 11);
  m.read_by = TextOrNone(r, 12);
  m.delivery_status = r.Str(13);
  m.delivery_attempts = r.Int(14);
  m.delivered_at = TextOrNone(r, 15);
  m.last_error = TextOrNone(r, 16);
  m.next_attempt_ms = r.Int(17);
  m.created_at = r.Str(18);
  return m;
}

Result<Message> LoadMessageRow(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(SelectMessages() + " FROM messages m WHERE m.id = ?", {SqlText(id)}));
  if (rows.empty()) return NotFoundError("id: no message with id \"" + id + "\"");
  return MessageFromRow(rows[0]);
}

Status InsertMessageRow(Txn& txn, const Message& m) {
  return txn
      .Exec(
          "INSERT INTO messages (id, project_id, run_id, sender, recipient, addressed_to, "
          "body, source, meta, read, read_at, read_by, delivery_status, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {SqlText(m.id), SqlNullable(m.project_id), SqlNullable(m.run_id), SqlText(m.sender),
           SqlText(m.recipient), SqlText(m.addressed_to), SqlText(m.body), SqlText(m.source),
           SqlText(CanonicalJson(m.meta)), SqlInt(m.read ? 1 : 0), SqlNullable(m.read_at),
           SqlNullable(m.read_by), SqlText(m.delivery_status), SqlText(m.created_at)})
      .status();
}

Result<std::optional<std::string>> MarkMessageRowRead(Txn& txn, const std::string& id,
                                                      const std::string& now,
                                                      const std::string& by) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("UPDATE messages SET read = 1, read_at = ?, read_by = ? "
                             "WHERE id = ? AND read = 0 RETURNING run_id",
                             {SqlText(now), SqlText(by), SqlText(id)}));
  for (const Row& r : rows) {
    if (!r.IsNull(0)) return std::optional<std::string>(r.Str(0));
  }
  return std::optional<std::string>();
}

Result<std::vector<Message>> ListInboxRows(Txn& txn, const std::string& recipient, bool unread_only,
                                           const SeqPage& page) {
  std::string sql = SelectMessages() + " FROM messages m WHERE m.recipient = ?";
  if (unread_only) sql += " AND m.read = 0";
  return PagedMessages(txn, sql, {SqlText(recipient)}, page);
}

Result<std::vector<Message>> ListOutboxRows(Txn& txn, const std::string& sender,
                                            const std::optional<std::string>& delivery_status,
                                            const SeqPage& page) {
  std::string sql = SelectMessages() + " FROM messages m WHERE m.sender = ?";
  std::vector<SqlValue> params = {SqlText(sender)};
  if (delivery_status) {
    sql += " AND m.delivery_status = ?";
    params.push_back(SqlText(*delivery_status));
  }
  return PagedMessages(txn, sql, std::move(params), page);
}

Result<std::vector<Message>> ListMessageRows(Txn& txn, const MessageFilter& filter,
                                             const SeqPage& page) {
  std::string sql = SelectMessages() + " FROM messages m WHERE 1 = 1";
  std::vector<SqlValue> params;
  if (filter.run_id) {
    sql += " AND m.run_id = ?";
    params.push_back(SqlText(*filter.run_id));
  }
  if (filter.agent) {
    sql += " AND (m.sender = ? OR m.recipient = ?)";
    params.push_back(SqlText(*filter.agent));
    params.push_back(SqlText(*filter.agent));
  }
  if (filter.delivery_status) {
    sql += " AND m.delivery_status = ?";
    params.push_back(SqlText(*filter.delivery_status));
  }
  if (filter.unread_only) sql += " AND m.read = 0";
  return PagedMessages(txn, sql, std::move(params), page);
}

Result<std::vector<PendingDelivery>> ListPendingDeliveries(
    Txn& txn, int64_t now_ms, const std::optional<std::string>& recipient, const SeqPage& page) {
  std::string sql = SelectMessages() +
                    ", a.status, a.delivery_command FROM messages m JOIN agents a ON "
                    "a.id = m.recipient WHERE m.delivery_status IN ('pending', 'failed') AND "
                    "m.read = 0 AND m.next_attempt_ms <= ? AND a.delivery_command IS NOT NULL "
                    "AND a.delivery_command <> ''";
  std::vector<SqlValue> params = {SqlInt(now_ms)};
  if (recipient) {
    sql += " AND m.recipient = ?";
    params.push_back(SqlText(*recipient));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, PagedRows(txn, sql, std::move(params), page));
  std::vector<PendingDelivery> due;
  due.reserve(rows.size());
  for (const Row& r : rows) {
    due.push_back({.message = MessageFromRow(r),
                   .agent_status = r.Str(kMessageColumnCount),
                   .delivery_command = r.Str(kMessageColumnCount + 1)});
  }
  return due;
}

Result<bool> LeaseMessageDelivery(Txn& txn, const std::string& id, int64_t until_ms,
                                  int64_t now_ms) {
  ASSIGN_OR_RETURN(int64_t taken,
                   txn.Exec("UPDATE messages SET next_attempt_ms = ? WHERE id = ? AND "
                            "delivery_status IN ('pending', 'failed') AND read = 0 AND "
                            "next_attempt_ms <= ?",
                            {SqlInt(until_ms), SqlText(id), SqlInt(now_ms)}));
  return taken != 0;
}

Status MarkMessageDelivered(Txn& txn, const std::string& id, int64_t attempts,
                            const std::string& now) {
  return txn
      .Exec(
          "UPDATE messages SET delivery_status = 'delivered', "
          "delivery_attempts = ?, delivered_at = ?, next_attempt_ms = 0 "
          "WHERE id = ?",
          {SqlInt(attempts), SqlText(now), SqlText(id)})
      .status();
}

Status MarkMessageDeliveryFailed(Txn& txn, const std::string& id,
                                 const std::string& delivery_status, int64_t attempts,
                                 const std::string& error, int64_t next_attempt_ms) {
  return txn
      .Exec(
          "UPDATE messages SET delivery_status = ?, delivery_attempts = ?, "
          "last_error = ?, next_attempt_ms = ? WHERE id = ?",
          {SqlText(delivery_status), SqlInt(attempts), SqlText(error), SqlInt(next_attempt_ms),
           SqlText(id)})
      .status();
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

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

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

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
  return FirstColumn(rows);
}

Status InsertSgaiSystemMessage(Txn& txn, const SgaiSystemMessage& m) {
  return InsertMessageRow(txn, Message{.id = m.id,
                                       .sender = m.sender,
                                       .recipient = m.recipient,
                                       .addressed_to = m.recipient,
                                       .body = m.body,
                                       .source = "system",
                                       .run_id = m.run_id,
                                       .project_id = NoneIfEmpty(m.project_id),
                                       .delivery_status = "pending",
                                       .created_at = m.created_at});
}

}  // namespace baton
