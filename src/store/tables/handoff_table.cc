#include "store/tables/handoff_table.h"
#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {

Result<bool> HandoffExists(Txn& txn, const std::string& run_id, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT 1 FROM handoffs WHERE run_id = ? AND id = ?",
                             {SqlText(run_id), SqlText(id)}));
  return !rows.empty();
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

Result<std::vector<ExportedHandoff>> ExportRunHandoffRows(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT h.id, h.session_id, h.sequence, h.source, h.target, h.type, h.status, "
                "t.kind, t.key, h.step_id, h.body, h.meta, h.created_at, h.updated_at "
                "FROM handoffs h LEFT JOIN tasks t ON t.id = h.step_id "
                "WHERE h.run_id = ? ORDER BY h.sequence",
                {SqlText(run_id)}));
  std::vector<ExportedHandoff> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0),
                   .session_id = TextOrNone(r, 1),
                   .sequence = r.Int(2),
                   .source = r.Str(3),
                   .target = r.Str(4),
                   .type = r.Str(5),
                   .status = r.Str(6),
                   .step_kind = r.Str(7),
                   .step_key = TextOrNone(r, 8),
                   .step_id = TextOrNone(r, 9),
                   .body = r.Str(10),
                   .meta = JsonOr(r, 11, Json::object()),
                   .created_at = r.Str(12),
                   .updated_at = r.Str(13)});
  }
  return out;
}

Result<bool> InsertImportedHandoff(Txn& txn, const HandoffRow& h) {
  ASSIGN_OR_RETURN(
      int64_t n,
      txn.Exec("INSERT INTO handoffs (id, run_id, session_id, sequence, source, target, type, "
               "status, step_id, body, meta, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, "
               "?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
               {SqlText(h.id), SqlText(h.run_id), SqlNullable(h.session_id),
                SqlInt(h.sequence), SqlText(h.source), SqlText(h.target), SqlText(h.type),
                SqlText(h.status), SqlNullable(h.step_id), SqlText(h.body),
                SqlText(CanonicalJson(h.meta)), SqlText(h.created_at), SqlText(h.updated_at)}));
  return n != 0;
}

Result<std::vector<ReturnedStep>> ListReturnedStepsForInbox(Txn& txn, const InboxScope& scope) {
  std::vector<SqlValue> params;
  const std::string where = InboxScopeSql(scope, "r", params);
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT h.id, h.source, h.target, h.body, h.created_at, h.run_id, r.title, "
                "r.profile, COALESCE(t.key, r.cursor, '') FROM handoffs h JOIN runs r ON "
                "r.id = h.run_id LEFT JOIN tasks t ON t.id = h.step_id WHERE h.type = "
                "'return' AND h.status = 'pending' AND r.status IN ('created', 'in-progress')" +
                    where + " ORDER BY h.created_at, h.id",
                params));
  std::vector<ReturnedStep> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    out.push_back({.id = r.Str(0),
                   .source = r.Str(1),
                   .target = r.Str(2),
                   .body = r.Str(3),
                   .created_at = r.Str(4),
                   .run = RunLabelAt(r, 5),
                   .step = r.Str(8)});
  }
  return out;
}

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

Result<std::optional<HandoffRow>> LoadSinfoniaHandoff(Txn& txn, const std::string& run_id,
                                                              const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, run_id, session_id, sequence, source, target, type, "
                             "status, step_id, body, meta, created_at, updated_at "
                             "FROM handoffs WHERE run_id = ? AND id = ?",
                             {SqlText(run_id), SqlText(id)}));
  if (rows.empty()) return std::optional<HandoffRow>();
  const Row& r = rows[0];
  return std::optional<HandoffRow>(HandoffRow{.id = r.Str(0),
                                                              .run_id = r.Str(1),
                                                              .session_id = TextOrNone(r, 2),
                                                              .sequence = r.Int(3),
                                                              .source = r.Str(4),
                                                              .target = r.Str(5),
                                                              .type = r.Str(6),
                                                              .status = r.Str(7),
                                                              .step_id = TextOrNone(r, 8),
                                                              .body = r.Str(9),
                                                              .meta = JsonOr(r, 10, Json::object()),
                                                              .created_at = r.Str(11),
                                                              .updated_at = r.Str(12)});
}

Result<int64_t> NextSinfoniaHandoffSequence(Txn& txn, const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT COALESCE(MAX(sequence), 0) + 1 FROM handoffs "
                             "WHERE run_id = ?",
                             {SqlText(run_id)}));
  return rows.at(0).Int(0);
}

Status InsertSinfoniaHandoff(Txn& txn, const HandoffRow& h) {
  return txn
      .Exec(
          "INSERT INTO handoffs (id, run_id, session_id, sequence, source, "
          "target, type, status, step_id, body, meta, created_at, updated_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)",
          {SqlText(h.id), SqlText(h.run_id), SqlNullable(h.session_id),
           SqlInt(h.sequence), SqlText(h.source), SqlText(h.target), SqlText(h.type),
           SqlNullable(h.step_id), SqlText(h.body),
           SqlText(CanonicalJson(h.meta)), SqlText(h.created_at), SqlText(h.created_at)})
      .status();
}

Status StampSinfoniaHandoff(Txn& txn, const std::string& id, const std::string& status,
                            const Json& meta, const std::string& now) {
  return txn
      .Exec("UPDATE handoffs SET status = ?, meta = ?, updated_at = ? WHERE id = ?",
            {SqlText(status), SqlText(CanonicalJson(meta)), SqlText(now), SqlText(id)})
      .status();
}

Result<std::optional<SinfoniaStepHandoff>> FurthestSinfoniaStepHandoff(Txn& txn,
                                                                       const std::string& run_id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT h.id, t.position FROM handoffs h JOIN tasks t "
                             "ON t.id = h.step_id WHERE h.run_id = ? "
                             "ORDER BY t.position DESC, h.sequence DESC LIMIT 1",
                             {SqlText(run_id)}));
  if (rows.empty()) return std::optional<SinfoniaStepHandoff>();
  return std::optional<SinfoniaStepHandoff>(SinfoniaStepHandoff{rows[0].Str(0), rows[0].Int(1)});
}

}  // namespace baton
