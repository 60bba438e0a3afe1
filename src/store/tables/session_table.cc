#include "store/tables/session_table.h"

#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

Result<std::vector<ExportedSession>> ExportRunSessionRows(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, status, started_at, last_active_at, meta FROM sessions "
                             "WHERE run_id = ? ORDER BY started_at, id",
                             {SqlText(run_id)}));
  std::vector<ExportedSession> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0),
                   .status = r.Str(1),
                   .started_at = r.Str(2),
                   .last_active_at = r.Str(3),
                   .meta = JsonOr(r, 4, Json::object())});
  }
  return out;
}

Result<bool> InsertImportedSession(Txn& txn, const std::string& run_id, const ExportedSession& s) {
  ASSIGN_OR_RETURN(
      int64_t n, txn.Exec("INSERT INTO sessions (id, run_id, status, started_at, "
                          "last_active_at, meta) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                          {SqlText(s.id), SqlText(run_id), SqlText(s.status), SqlText(s.started_at),
                           SqlText(s.last_active_at), SqlText(CanonicalJson(s.meta))}));
  return n != 0;
}

}  // namespace baton
