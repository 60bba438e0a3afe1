#include "store/tables/chat_message_table.h"

#include <algorithm>
#include <utility>

#include "store/tables/row_values.h"

namespace baton {
namespace {

constexpr char kChatColumns[] =
    "m.id, m.seq, m.channel, m.sender, m.body, m.project_id, m.meta, m.created_at";

ChatMessage ChatMessageFromRow(const Row& r) {
  return ChatMessage{.id = r.Str(0),
                     .seq = r.Int(1),
                     .channel = r.Str(2),
                     .sender = r.Str(3),
                     .body = r.Str(4),
                     .project_id = TextOrNone(r, 5),
                     .meta = JsonOr(r, 6, Json::object()),
                     .created_at = r.Str(7)};
}

std::vector<ChatMessage> ChatMessagesFromRows(const std::vector<Row>& rows) {
  std::vector<ChatMessage> messages;
  messages.reserve(rows.size());
  for (const Row& r : rows) messages.push_back(ChatMessageFromRow(r));
  return messages;
}

}  // namespace

Status InsertChatMessageRow(Txn& txn, const ChatMessage& m) {
  return txn
      .Exec(
          "INSERT INTO chat_messages (id, channel, project_id, sender, body, "
          "meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
          {SqlText(m.id), SqlText(m.channel), SqlNullable(m.project_id),
           SqlText(m.sender), SqlText(m.body), SqlText(CanonicalJson(m.meta)),
           SqlText(m.created_at)})
      .status();
}

Result<ChatMessage> LoadChatMessageRow(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(std::string("SELECT ") + kChatColumns +
                                                        " FROM chat_messages m WHERE m.id = ?",
                                                    {SqlText(id)}));
  if (rows.empty()) return NotFoundError("id: no chat message with id \"" + id + "\"");
  return ChatMessageFromRow(rows[0]);
}

Result<std::vector<ChatMessage>> ListChannelRows(Txn& txn, const std::string& channel,
                                                 const SeqPage& page) {
  // The mailbox's paging (message_table.cc), over chat_messages.
  const std::string sql =
      std::string("SELECT ") + kChatColumns + " FROM chat_messages m WHERE m.channel = ?" +
      " AND m.seq > ? ORDER BY m.seq " + (page.forward ? "ASC" : "DESC") + " LIMIT ?";
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(sql, {SqlText(channel), SqlInt(page.since), SqlInt(page.limit)}));
  if (!page.forward) std::reverse(rows.begin(), rows.end());
  return ChatMessagesFromRows(rows);
}

Result<std::vector<ChatChannel>> ListChatChannelRows(Txn& txn,
                                                     const std::optional<std::string>& project_id) {
  std::string sql = "SELECT channel, COUNT(*), MAX(seq), MAX(created_at) FROM chat_messages";
  std::vector<SqlValue> params;
  if (project_id) {
    sql += " WHERE project_id = ?";
    params.push_back(SqlText(*project_id));
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(sql + " GROUP BY channel ORDER BY channel", params));
  std::vector<ChatChannel> channels;
  channels.reserve(rows.size());
  for (const Row& r : rows) {
    channels.push_back(
        {.channel = r.Str(0), .messages = r.Int(1), .last_seq = r.Int(2), .last_at = r.Str(3)});
  }
  return channels;
}

}  // namespace baton
