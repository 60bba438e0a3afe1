// File: ledger_replay.h
//
// `baton verify --deep`: the ledger's events replayed to the state they
// imply, compared with the state tables. The chain check proves the events
// were not altered; this proves the rows were not altered behind the
// ledger's back (a run's status, a lease's epoch, an inserted admin token).
//
// What is compared, and from which events (docs/security-integrity.md):
//
//   runs    the row exists (run.created / run.imported); status
//           (run.created, run.status, run.imported, sgai.workflow_state;
//           any other event of the run that may move it — sgai's hand-off,
//           a question that makes the run wait, graph.* — makes the status
//           unknown until the next of these)
//   tasks   the row exists (task.created, or a run.imported of its run);
//           status (task.created, task.status, task.claimed); lease owner,
//           epoch and expiry (task.created: none and epoch 0; task.claimed;
//           task.heartbeat; task.status into or out of in_progress)
//   agents  the row exists (agent.registered); status (its machine's
//           initial state, then every agent.* event with a "to"); role
//           (when a registration names it)
//   tokens  the row exists (token.created); holder and role; revoked or not
//           (token.revoked)
//
// A field no event states is not compared: the tasks of an imported run
// until their next task.status or task.claimed (an import writes them
// directly), a lease's owner after it leaves in_progress (a success keeps
// it, a failure clears it), an agent's role when no registration named it.

#ifndef BATON_SRC_ENGINE_LEDGER_LEDGER_REPLAY_H_
#define BATON_SRC_ENGINE_LEDGER_LEDGER_REPLAY_H_

#ifndef BATON_ENGINE_ROOM_LEDGER
#error "engine/ledger/ is above this target: link baton_engine_ledger (src/engine/README.md)"
#endif

#include <cstdint>
#include <string>
#include <vector>

#include "model/machine.h"
#include "store/store.h"
#include "util/json_util.h"

namespace baton {

struct DeepReport {
  // One object per disagreement: {table, row, field, found, implied, seq,
  // message}; seq is the event that last set the field (0: no event
  // created the row).
  std::vector<Json> mismatches;
  int64_t rows_checked = 0;
  int64_t events_replayed = 0;
};

// Replays every event in seq order (in pages; memory grows with the number
// of rows, not events) — the archives the store records first, each proved
// as it is read (engine/ledger/archive.h) — and compares runs, tasks, agents
// and tokens.
Result<DeepReport> CheckStateAgainstLedger(Txn& txn, const MachineSet& machines);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_LEDGER_LEDGER_REPLAY_H_
