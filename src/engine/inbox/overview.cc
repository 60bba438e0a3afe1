#include "engine/inbox/overview.h"

#include "engine/ledger/ledger.h"
#include "engine/ledger/witness.h"

namespace baton {

Result<Json> StoreOverview(OpContext& ctx) {
  Json out = Json::object();
  Json counts = Json::object();
  for (const char* table : {"projects", "runs", "tasks", "events"}) {
    ASSIGN_OR_RETURN(Row r, ctx.txn.QueryOne(std::string("SELECT COUNT(*) FROM ") + table, {},
                                             table));
    counts[table] = r.Int(0);
  }
  out["counts"] = counts;
  ASSIGN_OR_RETURN(std::vector<Row> head,
                   ctx.txn.Query("SELECT seq, hash FROM ledger_head WHERE id = 1", {}));
  out["ledger"] = {{"head_seq", head.empty() ? 0 : head[0].Int(0)},
                   {"head_hash", head.empty() ? std::string(kGenesisHash) : head[0].Str(1)}};
  ASSIGN_OR_RETURN(std::vector<Row> runs,
                   ctx.txn.Query("SELECT id, profile, machine, status, title, updated_at "
                                 "FROM runs ORDER BY updated_at DESC LIMIT 200", {}));
  Json active = Json::array();
  for (const Row& r : runs) {
    const Machine* m = ctx.machines.Find(r.Str(2));
    if (m != nullptr && m->IsTerminal(r.Str(3))) continue;
    active.push_back({{"id", r.Str(0)}, {"profile", r.Str(1)}, {"status", r.Str(3)},
                      {"title", r.Str(4)}, {"updated_at", r.Str(5)}});
  }
  out["active_runs"] = active;
  // What waits for the human.
  ASSIGN_OR_RETURN(std::vector<Row> open,
                   ctx.txn.Query("SELECT id, run_id, asked_by, questions, created_at FROM questions "
                                 "WHERE status = 'open' ORDER BY seq LIMIT 200", {}));
  Json questions = Json::array();
  for (const Row& r : open) {
    Json items = Json::parse(r.Str(3), nullptr, /*allow_exceptions=*/false);
    const bool has_text = items.is_array() && !items.empty() && items[0].contains("question");
    questions.push_back({{"id", r.Str(0)},
                         {"run_id", r.IsNull(1) ? Json() : Json(r.Str(1))},
                         {"asked_by", r.Str(2)},
                         {"question", has_text ? items[0]["question"] : Json("")},
                         {"created_at", r.Str(4)}});
  }
  out["open_questions"] = questions;
  // Seed-file mirrors, failing ones with their error.
  ASSIGN_OR_RETURN(std::vector<Row> mirrors,
                   ctx.txn.Query("SELECT path, run_id, format, last_error, failed_at FROM mirrors "
                                 "ORDER BY created_at, path LIMIT 200", {}));
  Json list = Json::array();
  for (const Row& r : mirrors) {
    list.push_back({{"path", r.Str(0)},
                    {"run_id", r.Str(1)},
                    {"format", r.Str(2)},
                    {"ok", r.IsNull(3)},
                    {"last_error", r.IsNull(3) ? Json() : Json(r.Str(3))},
                    {"failed_at", r.IsNull(4) ? Json() : Json(r.Str(4))}});
  }
  out["mirrors"] = list;
  return out;
}

}  // namespace baton
