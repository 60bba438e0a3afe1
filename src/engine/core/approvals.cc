#include "engine/core/approvals.h"

#include "engine/core/core_services.h"
#include "engine/ledger/ledger.h"
#include "util/clock.h"

namespace baton {
namespace {

constexpr char kDecisionColumns[] =
    "id, run_id, subject_kind, subject, decision, reviewer, note, event_seq, "
    "meta, created_at";

Json DecisionRowToJson(const Row& r) {
  return Json{{"id", r.Str(0)},           {"run_id", RowTextOrNull(r, 1)},
              {"subject_kind", r.Str(2)}, {"subject", r.Str(3)},
              {"decision", r.Str(4)},     {"reviewer", r.Str(5)},
              {"note", r.Str(6)},         {"event_seq", r.Int(7)},
              {"meta", RowJsonOr(r, 8, Json::object())},
              {"created_at", r.Str(9)}};
}

Result<Json> QueryDecisions(Txn& txn, const std::string& run_id,
                            const std::string& subject_kind,
                            const std::string& subject, bool newest_only) {
  std::string sql = std::string("SELECT ") + kDecisionColumns + " FROM approvals WHERE 1 = 1";
  std::vector<SqlValue> params;
  const std::pair<const char*, const std::string*> filters[] = {
      {"run_id", &run_id}, {"subject_kind", &subject_kind}, {"subject", &subject}};
  for (const auto& [column, value] : filters) {
    if (value->empty()) continue;
    sql += std::string(" AND ") + column + " = ?";
    params.push_back(SqlText(*value));
  }
  sql += newest_only ? " ORDER BY seq DESC LIMIT 1" : " ORDER BY seq";
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  Json list = Json::array();
  for (const Row& r : rows) list.push_back(DecisionRowToJson(r));
  return list;
}

}  // namespace

Result<Json> RecordDecision(OpContext& ctx, const DecisionInput& in) {
  const std::string reviewer = in.reviewer.empty() ? ctx.actor.id : in.reviewer;
  const std::string id = NewId("dec");
  std::string summary = in.decision + " " + in.subject_kind + " " + in.subject + " by " + reviewer;
  if (!in.note.empty()) summary += ": " + in.note;
  ASSIGN_OR_RETURN(int64_t seq,
                   AppendEvent(ctx, {.run_id = in.run_id,
                                     .kind = "decision",
                                     .summary = summary,
                                     .payload = {{"decision_id", id},
                                                 {"subject_kind", in.subject_kind},
                                                 {"subject", in.subject},
                                                 {"decision", in.decision},
                                                 {"reviewer", reviewer},
                                                 {"note", in.note},
                                                 {"meta", in.meta}}}));
  RETURN_IF_ERROR(
      ctx.txn
          .Exec("INSERT INTO approvals (id, run_id, subject_kind, subject, decision, "
                "reviewer, note, event_seq, meta, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                {SqlText(id), SqlTextOrNull(in.run_id), SqlText(in.subject_kind),
                 SqlText(in.subject), SqlText(in.decision), SqlText(reviewer),
                 SqlText(in.note), SqlInt(seq), SqlText(CanonicalJson(in.meta)),
                 SqlText(ctx.now)})
          .status());
  return Json{{"id", id},
              {"run_id", in.run_id.empty() ? Json() : Json(in.run_id)},
              {"subject_kind", in.subject_kind},
              {"subject", in.subject},
              {"decision", in.decision},
              {"reviewer", reviewer},
              {"note", in.note},
              {"event_seq", seq},
              {"meta", in.meta},
              {"created_at", ctx.now}};
}

Result<Json> ListDecisions(Txn& txn, const std::string& run_id,
                           const std::string& subject_kind,
                           const std::string& subject) {
  return QueryDecisions(txn, run_id, subject_kind, subject, /*newest_only=*/false);
}

Result<Json> LatestDecision(Txn& txn, const std::string& run_id,
                            const std::string& subject_kind,
                            const std::string& subject) {
  ASSIGN_OR_RETURN(Json rows, QueryDecisions(txn, run_id, subject_kind, subject,
                                             /*newest_only=*/true));
  return rows.empty() ? Json() : rows[0];
}

}  // namespace baton
