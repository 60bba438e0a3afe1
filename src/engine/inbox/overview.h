// File: overview.h
//
// What `baton status` shows of a store's contents (ops/system_ops.cc adds
// the store's own description): row counts, the ledger's head, the runs not
// in a final status, the open questions and the seed-file mirrors. It reads
// across the rooms below, as the inbox does.

#ifndef BATON_SRC_ENGINE_INBOX_OVERVIEW_H_
#define BATON_SRC_ENGINE_INBOX_OVERVIEW_H_

#ifndef BATON_ENGINE_ROOM_INBOX
#error "engine/inbox/ is above this target: link baton_engine_inbox (src/engine/README.md)"
#endif

#include "engine/ledger/op_context.h"

namespace baton {

// {counts: {projects, runs, tasks, events}, ledger: {head_seq, head_hash},
//  active_runs: [...], open_questions: [...], mirrors: [...]}, each list at
// most 200 long.
Result<Json> StoreOverview(OpContext& ctx);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_INBOX_OVERVIEW_H_
