#include "store/tables/approval_table.h"

#include <utility>

#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {
namespace {

Result<std::vector<Decision>> QueryDecisions(Txn& txn, const DecisionFilter& filter,
                                             bool newest_only) {
  std::string sql = std::string("SELECT ") + kDecisionColumns + " FROM approvals WHERE 1 = 1";
  std::vector<SqlValue> params;
  const std::pair<const char*, const std::string*> filters[] = {
      {"run_id", &filter.run_id},
      {"subject_kind", &filter.subject_kind},
      {"subject", &filter.subject}};
  for (const auto& [column, value] : filters) {
    if (value->empty()) continue;
    sql += std::string(" AND ") + column + " = ?";
    params.push_back(SqlText(*value));
  }
  sql += newest_only ? " ORDER BY seq DESC LIMIT 1" : " ORDER BY seq";
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  std::vector<Decision> decisions;
  decisions.reserve(rows.size());
  for (const Row& r : rows) decisions.push_back(DecisionFromRow(r));
  return decisions;
}

}  // namespace

const char kDecisionColumns[] =
    "id, run_id, subject_kind, subject, decision, reviewer, note, event_seq, "
    "meta, created_at";

Decision DecisionFromRow(const Row& r) {
  return Decision{.id = r.Str(0),
                  .run_id = TextOrNone(r, 1),
                  .subject_kind = r.Str(2),
                  .subject = r.Str(3),
                  .decision = r.Str(4),
                  .reviewer = r.Str(5),
                  .note = r.Str(6),
                  .event_seq = r.Int(7),
                  .meta = JsonOr(r, 8, Json::object()),
                  .created_at = r.Str(9)};
}

Status InsertDecisionRow(Txn& txn, const Decision& d) {
  return txn
      .Exec(
          "INSERT INTO approvals (id, run_id, subject_kind, subject, decision, "
          "reviewer, note, event_seq, meta, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {SqlText(d.id), SqlNullable(d.run_id), SqlText(d.subject_kind),
           SqlText(d.subject), SqlText(d.decision), SqlText(d.reviewer), SqlText(d.note),
           SqlInt(d.event_seq), SqlText(CanonicalJson(d.meta)), SqlText(d.created_at)})
      .status();
}

Result<std::vector<Decision>> ListDecisionRows(Txn& txn, const DecisionFilter& filter) {
  return QueryDecisions(txn, filter, /*newest_only=*/false);
}

Result<std::optional<Decision>> LatestDecisionRow(Txn& txn, const DecisionFilter& filter) {
  ASSIGN_OR_RETURN(std::vector<Decision> found, QueryDecisions(txn, filter, /*newest_only=*/true));
  if (found.empty()) return std::optional<Decision>();
  return std::optional<Decision>(std::move(found[0]));
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

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
