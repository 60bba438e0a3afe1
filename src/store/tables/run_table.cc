#include "store/tables/run_table.h"

namespace baton {

// h19-ledger-profiles:

Result<std::vector<RunStatusForReplay>> ListRunStatusesForReplay(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT id, status FROM runs ORDER BY id", {}));
  std::vector<RunStatusForReplay> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Str(0), r.Str(1)});
  return out;
}

Status SetSinfoniaRunCursor(Txn& txn, const std::string& run_id, const std::string& step_key,
                            int64_t index, const std::string& now) {
  return txn
      .Exec(
          "UPDATE runs SET cursor = ?, cursor_index = ?, version = version + 1, "
          "updated_at = ? WHERE id = ?",
          {SqlTextOrNull(step_key), SqlInt(index), SqlText(now), SqlText(run_id)})
      .status();
}

}  // namespace baton
