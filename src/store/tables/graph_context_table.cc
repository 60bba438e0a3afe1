#include "store/tables/graph_context_table.h"

#include <utility>

#include "store/tables/row_values.h"

namespace baton {
namespace {

// A key as stored: its JSON text (a string literal), which any key JSON can
// spell fits — a NUL, bytes that are not UTF-8 (repaired as the context's
// own text repairs them) — on both backends, and which the drop list below
// carries through json_each unchanged.
std::string KeyText(const std::string& key) { return CanonicalJson(Json(key)); }

Status InsertValues(Txn& txn, const std::string& run_id,
                    const std::map<std::string, std::string>& values) {
  for (const auto& [key, text] : values) {
    RETURN_IF_ERROR(txn.Exec("INSERT INTO graph_context_values (run_id, key, value) "
                             "VALUES (?, ?, ?) ON CONFLICT (run_id, key) "
                             "DO UPDATE SET value = excluded.value",
                             {SqlText(run_id), SqlText(KeyText(key)), SqlText(text)})
                        .status());
  }
  return Status();
}

}  // namespace

SplitContext SplitGraphContext(const Json& context) {
  SplitContext out;
  if (!context.is_object()) {
    out.in_row = context;
    return out;
  }
  for (auto it = context.begin(); it != context.end(); ++it) {
    std::string text = CanonicalJson(it.value());
    if (text.size() >= kSplitContextBytes) {
      out.apart.emplace(it.key(), std::move(text));
    } else {
      out.in_row[it.key()] = it.value();
    }
  }
  return out;
}

Status ReplaceGraphContextValues(Txn& txn, const std::string& run_id,
                                 const std::map<std::string, std::string>& apart) {
  RETURN_IF_ERROR(
      txn.Exec("DELETE FROM graph_context_values WHERE run_id = ?", {SqlText(run_id)}).status());
  return InsertValues(txn, run_id, apart);
}

Status PatchGraphContextValues(Txn& txn, const std::string& run_id,
                               const std::map<std::string, std::string>& set,
                               const std::vector<std::string>& drop) {
  if (!drop.empty()) {
    Json keys = Json::array();
    for (const std::string& key : drop) keys.push_back(KeyText(key));
    RETURN_IF_ERROR(txn.Exec(std::string("DELETE FROM graph_context_values WHERE run_id = ? "
                                         "AND key IN (") +
                                 JsonArrayElementsSql(txn.dialect()) + ")",
                             {SqlText(run_id), SqlText(CanonicalJson(keys))})
                        .status());
  }
  return InsertValues(txn, run_id, set);
}

Result<std::map<std::string, Json>> LoadGraphContextValues(
    Txn& txn, const std::vector<std::string>& run_ids) {
  std::map<std::string, Json> out;
  if (run_ids.empty()) return out;
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT run_id, key, value FROM graph_context_values "
                                         "WHERE run_id IN (") +
                                 JsonArrayElementsSql(txn.dialect()) + ")",
                             {SqlText(CanonicalJson(Json(run_ids)))}));
  for (const Row& r : rows) {
    const Json key = Json::parse(r.Str(1), nullptr, /*allow_exceptions=*/false);
    Json value = Json::parse(r.Str(2), nullptr, /*allow_exceptions=*/false);
    if (!key.is_string() || value.is_discarded()) {
      return DataLossError("graph_context_values: the value of key " + r.Str(1) + " of run " +
                           r.Str(0) + " is not JSON");
    }
    out[r.Str(0)][key.get<std::string>()] = std::move(value);
  }
  return out;
}

}  // namespace baton
