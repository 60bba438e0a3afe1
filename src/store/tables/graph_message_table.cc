#include "store/tables/graph_message_table.h"

#include <utility>

#include "store/tables/row_values.h"

namespace baton {
namespace {

Result<Json> ParseMessage(const Row& r, size_t at, const std::string& run_id) {
  Json message = Json::parse(r.Str(at), nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) {
    return DataLossError("graph_messages: message " + std::to_string(r.Int(at - 1)) + " of run " +
                         run_id + " is not JSON");
  }
  return message;
}

Status InsertMessages(Txn& txn, const std::string& run_id, int64_t first_idx, const Json& messages) {
  int64_t idx = first_idx;
  for (const Json& m : messages) {
    RETURN_IF_ERROR(txn.Exec("INSERT INTO graph_messages (run_id, idx, message) VALUES (?, ?, ?)",
                             {SqlText(run_id), SqlInt(idx++), SqlText(CanonicalJson(m))})
                        .status());
  }
  return Status();
}

}  // namespace

Result<Json> LoadGraphMessages(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT idx, message FROM graph_messages WHERE run_id = ? ORDER BY idx",
                             {SqlText(run_id)}));
  Json messages = Json::array();
  for (const Row& r : rows) {
    ASSIGN_OR_RETURN(Json m, ParseMessage(r, 1, run_id));
    messages.push_back(std::move(m));
  }
  return messages;
}

Result<std::map<std::string, Json>> LoadGraphMessagesOfRuns(Txn& txn,
                                                            const std::vector<std::string>& run_ids) {
  // The ids travel as one JSON array: one statement for any number of runs
  // (run.list lists up to 100,000; a statement's parameters are bounded).
  std::map<std::string, Json> out;
  if (run_ids.empty()) return out;
  const char* ids = JsonArrayElementsSql(txn.dialect());
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT run_id, idx, message FROM graph_messages "
                                         "WHERE run_id IN (") +
                                 ids + ") ORDER BY run_id, idx",
                             {SqlText(CanonicalJson(Json(run_ids)))}));
  for (const Row& r : rows) {
    const std::string run_id = r.Str(0);
    ASSIGN_OR_RETURN(Json m, ParseMessage(r, 2, run_id));
    Json& messages = out[run_id];
    if (!messages.is_array()) messages = Json::array();
    messages.push_back(std::move(m));
  }
  return out;
}

Result<int64_t> CountGraphMessages(Txn& txn, const std::string& run_id) {
  // idx counts from 0 without gaps, so the next one is the count.
  ASSIGN_OR_RETURN(Row r, txn.QueryOne("SELECT COALESCE(MAX(idx) + 1, 0) FROM graph_messages "
                                       "WHERE run_id = ?",
                                       {SqlText(run_id)}, "graph_messages"));
  return r.Int(0);
}

Status AppendGraphMessages(Txn& txn, const std::string& run_id, const Json& messages) {
  if (messages.empty()) return Status();
  ASSIGN_OR_RETURN(int64_t next, CountGraphMessages(txn, run_id));
  return InsertMessages(txn, run_id, next, messages);
}

Status ReplaceGraphMessages(Txn& txn, const std::string& run_id, const Json& messages) {
  RETURN_IF_ERROR(
      txn.Exec("DELETE FROM graph_messages WHERE run_id = ?", {SqlText(run_id)}).status());
  return InsertMessages(txn, run_id, 0, messages);
}

}  // namespace baton
