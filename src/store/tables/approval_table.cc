#include "store/tables/approval_table.h"

#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {

// h19-interchange:

Result<std::vector<ExportedApproval>> ExportRunApprovalRows(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT subject_kind, subject, decision, reviewer, note, created_at, "
                             "meta FROM approvals WHERE run_id = ? ORDER BY seq",
                             {SqlText(run_id)}));
  std::vector<ExportedApproval> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.subject_kind = r.Str(0),
                   .subject = r.Str(1),
                   .decision = r.Str(2),
                   .reviewer = r.Str(3),
                   .note = r.Str(4),
                   .created_at = r.Str(5),
                   .meta = JsonOr(r, 6, Json::object())});
  }
  return out;
}

Status InsertImportedApproval(Txn& txn, const std::string& id, const std::string& run_id,
                              int64_t event_seq, const ExportedApproval& a) {
  return txn
      .Exec(
          "INSERT INTO approvals (id, run_id, subject_kind, subject, decision, reviewer, "
          "note, event_seq, meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {SqlText(id), SqlText(run_id), SqlText(a.subject_kind), SqlText(a.subject),
           SqlText(a.decision), SqlText(a.reviewer), SqlText(a.note), SqlInt(event_seq),
           SqlText(CanonicalJson(a.meta)), SqlText(a.created_at)})
      .status();
}

}  // namespace baton
