#include "engine/inbox/overview.h"

#include "engine/ledger/ledger.h"
#include "engine/ledger/witness.h"
#include "store/tables/event_table.h"
#include "store/tables/ledger_head_table.h"
#include "store/tables/mirror_table.h"
#include "store/tables/project_table.h"
#include "store/tables/question_table.h"
#include "store/tables/run_table.h"
#include "store/tables/task_table.h"
#include "util/json_or_null.h"

namespace baton {
namespace {

// "events": the ledger's head seq, as its chain has no gaps.
Result<Json> Counts(Txn& txn, int64_t head_seq) {
  Json counts = Json::object();
  ASSIGN_OR_RETURN(counts["projects"], CountAllProjectRows(txn));
  ASSIGN_OR_RETURN(counts["runs"], CountAllRunRows(txn));
  ASSIGN_OR_RETURN(counts["tasks"], CountAllTaskRows(txn));
  counts["events"] = head_seq;
  return counts;
}

Result<Json> ActiveRuns(OpContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<OverviewRun> runs, ListRecentRunsForOverview(ctx.txn));
  Json active = Json::array();
  for (const OverviewRun& r : runs) {
    const Machine* m = ctx.machines.Find(r.machine);
    if (m != nullptr && m->IsTerminal(r.status)) continue;
    active.push_back({{"id", r.id},
                      {"profile", r.profile},
                      {"status", r.status},
                      {"title", r.title},
                      {"updated_at", r.updated_at}});
  }
  return active;
}

Result<Json> OpenQuestions(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<OverviewQuestion> open, ListOpenQuestionsForOverview(txn));
  Json questions = Json::array();
  for (const OverviewQuestion& q : open) {
    const Json& items = q.questions;
    const bool has_text = items.is_array() && !items.empty() && items[0].contains("question");
    questions.push_back({{"id", q.id},
                         {"run_id", OrNull(q.run_id)},
                         {"asked_by", q.asked_by},
                         {"question", has_text ? items[0]["question"] : Json("")},
                         {"created_at", q.created_at}});
  }
  return questions;
}

Result<Json> Mirrors(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<MirrorRow> mirrors,
                   ListMirrorRows(txn, std::nullopt, /*limit=*/200));
  Json list = Json::array();
  for (const MirrorRow& m : mirrors) {
    list.push_back({{"path", m.path},
                    {"run_id", m.run_id},
                    {"format", m.format},
                    {"ok", !m.last_error.has_value()},
                    {"last_error", OrNull(m.last_error)},
                    {"failed_at", OrNull(m.failed_at)}});
  }
  return list;
}

}  // namespace

Result<Json> StoreOverview(OpContext& ctx) {
  Json out = Json::object();
  ASSIGN_OR_RETURN(std::optional<LedgerHeadRow> head, LoadLedgerHeadRow(ctx.txn));
  ASSIGN_OR_RETURN(out["counts"], Counts(ctx.txn, head ? head->seq : 0));
  out["ledger"] = {{"head_seq", head ? head->seq : 0},
                   {"head_hash", head ? head->hash : std::string(kGenesisHash)}};
  ASSIGN_OR_RETURN(out["active_runs"], ActiveRuns(ctx));
  // What waits for the human.
  ASSIGN_OR_RETURN(out["open_questions"], OpenQuestions(ctx.txn));
  // Seed-file mirrors, failing ones with their error.
  ASSIGN_OR_RETURN(out["mirrors"], Mirrors(ctx.txn));
  return out;
}

}  // namespace baton
