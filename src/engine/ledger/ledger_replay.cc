#include "engine/ledger/ledger_replay.h"

#include <map>
#include <optional>

#include "engine/ledger/archive.h"
#include "store/tables/agent_table.h"
#include "store/tables/event_table.h"
#include "store/tables/run_table.h"
#include "store/tables/task_table.h"
#include "store/tables/token_table.h"
#include "util/clock.h"
#include "util/json_or_null.h"

namespace baton {
namespace {

constexpr int64_t kPage = 2000;
constexpr char kInProgress[] = "in_progress";

// What the ledger says about one field: its value (JSON) and the event that
// set it; unknown while no event has stated it.
struct Implied {
  std::optional<Json> value;
  int64_t seq = 0;
  void Set(Json v, int64_t at) {
    value = std::move(v);
    seq = at;
  }
  void Forget(int64_t at) {
    value.reset();
    seq = at;
  }
};

struct RowState {
  int64_t created_seq = 0;  // 0: no event created it
  std::string run_id;       // tasks: the run they belong to
  std::map<std::string, Implied> fields;
};

using Table = std::map<std::string, RowState>;

struct Replay {
  Table runs, tasks, agents, tokens;
  std::map<std::string, int64_t> imported_runs;  // run id -> seq of its last import
};


bool Starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Events about a run that never change its status.
bool KeepsRunStatus(const std::string& kind) {
  for (const char* prefix :
       {"task.", "message.", "chat.", "mirror.", "board.", "agent.", "token."}) {
    if (Starts(kind, prefix)) return true;
  }
  for (const char* exact :
       {"run.progress", "run.context", "question.delivered", "sgai.todos", "sgai.usage"}) {
    if (kind == exact) return true;
  }
  return false;
}

void ApplyRun(Replay& r, int64_t seq, const std::string& run, const std::string& kind,
              const Json& p) {
  RowState& row = r.runs[run];
  if (kind == "run.created") {
    row.created_seq = seq;
    row.fields["status"].Set(p.value("status", Json()), seq);
  } else if (kind == "run.status") {
    row.fields["status"].Set(p.value("to", Json()), seq);
  } else if (kind == "sgai.workflow_state") {
    // sgai moves its run's status with its own event; "to" is what it stored.
    row.fields["status"].Set(p.value("to", Json()), seq);
  } else if (kind == "run.imported") {
    if (p.value("created", false) || row.created_seq == 0) row.created_seq = seq;
    row.fields["status"].Set(p.value("status", Json()), seq);
    // An import writes its run's tasks directly: their fields are unknown
    // until an event states them again.
    r.imported_runs[run] = seq;
    for (auto& [id, task] : r.tasks) {
      if (task.run_id == run) {
        for (const char* f : {"status", "lease_owner", "lease_epoch", "lease_expires_at"}) {
          task.fields[f].Forget(seq);
        }
      }
    }
  } else if (!KeepsRunStatus(kind)) {
    // A profile's own event may move the run (sgai's hand-off, a question
    // that makes it wait): the status is unknown until the next event that
    // states it.
    row.fields["status"].Forget(seq);
  }
}

void ApplyTask(Replay& r, int64_t seq, const std::string& run, const std::string& kind,
               const Json& p) {
  const std::string id = JsonText(p, "task_id");
  if (id.empty()) return;
  RowState& row = r.tasks[id];
  auto& f = row.fields;
  if (kind == "task.created") {
    row.created_seq = seq;
    row.run_id = run;
    f["status"].Set(p.value("status", Json()), seq);
    f["lease_owner"].Set(Json(), seq);
    f["lease_epoch"].Set(Json(int64_t{0}), seq);
    f["lease_expires_at"].Set(Json(), seq);
  } else if (kind == "task.status") {
    const std::string from = JsonText(p, "from");
    const std::string to = JsonText(p, "to");
    f["status"].Set(to, seq);
    if (to == kInProgress) {
      f["lease_owner"].Set(Json(), seq);
      f["lease_expires_at"].Set(Json(), seq);
    } else if (from == kInProgress) {
      f["lease_expires_at"].Set(Json(), seq);
      f["lease_owner"].Forget(seq);  // kept on success, cleared otherwise
    }
  } else if (kind == "task.claimed") {
    f["status"].Set(kInProgress, seq);
    f["lease_owner"].Set(p.value("agent", Json()), seq);
    f["lease_epoch"].Set(p.value("epoch", Json()), seq);
    f["lease_expires_at"].Set(p.value("expires_at", Json()), seq);
  } else if (kind == "task.heartbeat") {
    f["lease_expires_at"].Set(p.value("expires_at", Json()), seq);
  }
}

void ApplyAgent(Replay& r, const MachineSet& machines, int64_t seq, const std::string& kind,
                const Json& p) {
  const std::string id = JsonText(p, "agent");
  if (id.empty()) return;
  if (kind == "agent.registered") {
    RowState& row = r.agents[id];
    const Json input = p.value("input", Json::object());
    if (row.created_seq == 0) {
      row.created_seq = seq;
      const Machine* m = machines.Find("genie.agent");
      if (m != nullptr) row.fields["status"].Set(m->initial(), seq);
      row.fields["role"].Set(input.is_object() ? input.value("role", Json("agent")) : Json("agent"),
                             seq);
    } else if (input.is_object() && input.contains("role")) {
      row.fields["role"].Set(input["role"], seq);
    }
  } else if (p.contains("to") && p["to"].is_string() && r.agents.contains(id)) {
    r.agents[id].fields["status"].Set(p["to"], seq);
  }
}

void ApplyToken(Replay& r, int64_t seq, const std::string& kind, const Json& p) {
  const std::string id = JsonText(p, "token_id");
  if (id.empty()) return;
  RowState& row = r.tokens[id];
  if (kind == "token.created") {
    row.created_seq = seq;
    row.fields["agent_id"].Set(p.value("agent", Json()), seq);
    row.fields["role"].Set(p.value("role", Json()), seq);
    row.fields["revoked"].Set(Json(int64_t{0}), seq);
  } else if (kind == "token.revoked") {
    row.fields["revoked"].Set(Json(int64_t{1}), seq);
  }
}

void ApplyEvent(Replay& r, const MachineSet& machines, int64_t seq,
                const std::optional<std::string>& run_id, const std::string& kind,
                const std::string& payload) {
  Json p = Json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!p.is_object()) return;  // the chain check reports altered payloads
  if (run_id) ApplyRun(r, seq, *run_id, kind, p);
  if (Starts(kind, "task.")) {
    ApplyTask(r, seq, run_id.value_or(""), kind, p);
  } else if (Starts(kind, "agent.")) {
    ApplyAgent(r, machines, seq, kind, p);
  } else if (Starts(kind, "token.")) {
    ApplyToken(r, seq, kind, p);
  }
}

// The archived events first, from the files the store records (each proved
// as it is read), then the store's own.
Status ReplayEvents(Txn& txn, const MachineSet& machines, Replay& r, int64_t* count) {
  ASSIGN_OR_RETURN(std::vector<LedgerArchiveRow> archives, ListLedgerArchiveRows(txn));
  for (const LedgerArchiveRow& a : archives) {
    Result<ArchiveReport> read = VerifyArchiveFile(txn, a.file, [&](const EventRow& e) {
      ++*count;
      ApplyEvent(r, machines, e.seq, e.run_id, e.kind, e.payload);
    });
    if (!read.ok()) {
      return read.status().WithPrefix("the archive of events " + std::to_string(a.first_seq) +
                                      ".." + std::to_string(a.through_seq) +
                                      " (the replay starts at seq 1)");
    }
    if (!read->ok) {
      return DataLossError("archive " + a.file + ": seq " +
                           std::to_string(read->first_broken_seq) + ": " + read->reason);
    }
  }
  int64_t after = archives.empty() ? 0 : archives.back().through_seq;
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<EventBrief> rows, LoadEventBriefsAfter(txn, after, kPage));
    for (const EventBrief& e : rows) {
      after = e.seq;
      ++*count;
      ApplyEvent(r, machines, e.seq, e.run_id, e.kind, e.payload);
    }
    if (static_cast<int64_t>(rows.size()) < kPage) return Status();
  }
}

std::string Show(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

Json Mismatch(const std::string& table, const std::string& row, const std::string& field,
              const Json& found, const Json& implied, int64_t seq) {
  std::string msg = table + " row " + row + ": " + field + " is " + Show(found) +
                    " but the ledger implies " + Show(implied);
  msg += seq > 0 ? " (set by seq " + std::to_string(seq) + ")" : " (no event created it)";
  return Json{{"table", table},     {"row", row}, {"field", field}, {"found", found},
              {"implied", implied}, {"seq", seq}, {"message", msg}};
}

// A state row as compared: its id, then its fields in the order of the
// columns compared, as found (null, an integer, or text), and the run it
// belongs to ("" for none).
struct Found {
  std::string id;
  std::vector<Json> values;
  std::string run;
};

// A stored value as JSON: NULL is null, an integer a number, anything else
// its text (a real as printed by std::to_string).
Json AsFound(const SqlValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return Json();
  if (const auto* n = std::get_if<int64_t>(&v)) return Json(*n);
  if (const auto* d = std::get_if<double>(&v)) return Json(std::to_string(*d));
  return Json(std::get<std::string>(v));
}


// Compares the rows of "table" (their "values" in "columns" order) with
// "implied".
Status Compare(const std::string& table, const std::vector<Found>& rows,
               const std::vector<std::string>& columns, Table& implied,
               const std::map<std::string, int64_t>* imported_runs, DeepReport& out) {
  std::map<std::string, bool> seen;
  for (const Found& r : rows) {
    ++out.rows_checked;
    const std::string& id = r.id;
    seen[id] = true;
    auto it = implied.find(id);
    const bool created = it != implied.end() && it->second.created_seq > 0;
    // The tasks of an imported run are written by the import itself.
    const std::string& run = r.run;
    const bool imported = imported_runs != nullptr && !run.empty() && imported_runs->contains(run);
    if (!created && !imported) {
      out.mismatches.push_back(Mismatch(table, id, "(row)", "present", "absent", 0));
      continue;
    }
    if (it == implied.end()) continue;
    for (size_t i = 0; i < columns.size(); ++i) {
      auto f = it->second.fields.find(columns[i]);
      if (f == it->second.fields.end() || !f->second.value) continue;
      Json found = r.values[i];
      // Stored in milliseconds; the events state it as a time.
      if (columns[i] == "lease_expires_at" && found.is_number_integer()) {
        found = FormatTime(found.get<int64_t>());
      }
      if (found != *f->second.value) {
        out.mismatches.push_back(
            Mismatch(table, id, columns[i], found, *f->second.value, f->second.seq));
      }
    }
  }
  for (const auto& [id, state] : implied) {
    if (state.created_seq > 0 && !seen.contains(id)) {
      out.mismatches.push_back(
          Mismatch(table, id, "(row)", "absent", "present", state.created_seq));
    }
  }
  return Status();
}

Result<std::vector<Found>> FoundRuns(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<RunStatusForReplay> rows, ListRunStatusesForReplay(txn));
  std::vector<Found> found;
  for (const RunStatusForReplay& r : rows) found.push_back({r.id, {Json(r.status)}, ""});
  return found;
}

Result<std::vector<Found>> FoundTasks(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<TaskLeaseForReplay> rows, ListTaskLeasesForReplay(txn));
  std::vector<Found> found;
  for (const TaskLeaseForReplay& r : rows) {
    found.push_back({r.id,
                     {Json(r.status), OrNull(r.lease_owner), AsFound(r.lease_epoch),
                      AsFound(r.lease_expires_at), OrNull(r.run_id)},
                     r.run_id.value_or("")});
  }
  return found;
}

Result<std::vector<Found>> FoundAgents(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<AgentRoleForReplay> rows, ListAgentRolesForReplay(txn));
  std::vector<Found> found;
  for (const AgentRoleForReplay& r : rows) {
    found.push_back({r.id, {Json(r.status), Json(r.role)}, ""});
  }
  return found;
}

Result<std::vector<Found>> FoundTokens(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<TokenStateForReplay> rows, ListTokenStatesForReplay(txn));
  std::vector<Found> found;
  for (const TokenStateForReplay& r : rows) {
    found.push_back({r.id, {Json(r.agent_id), Json(r.role), Json(int64_t{r.revoked ? 1 : 0})}, ""});
  }
  return found;
}

}  // namespace

Result<DeepReport> CheckStateAgainstLedger(Txn& txn, const MachineSet& machines) {
  Replay r;
  DeepReport out;
  RETURN_IF_ERROR(ReplayEvents(txn, machines, r, &out.events_replayed));
  ASSIGN_OR_RETURN(std::vector<Found> runs, FoundRuns(txn));
  RETURN_IF_ERROR(Compare("runs", runs, {"status"}, r.runs, nullptr, out));
  ASSIGN_OR_RETURN(std::vector<Found> tasks, FoundTasks(txn));
  RETURN_IF_ERROR(Compare("tasks", tasks,
                          {"status", "lease_owner", "lease_epoch", "lease_expires_at", "run_id"},
                          r.tasks, &r.imported_runs, out));
  ASSIGN_OR_RETURN(std::vector<Found> agents, FoundAgents(txn));
  RETURN_IF_ERROR(Compare("agents", agents, {"status", "role"}, r.agents, nullptr, out));
  ASSIGN_OR_RETURN(std::vector<Found> tokens, FoundTokens(txn));
  RETURN_IF_ERROR(
      Compare("tokens", tokens, {"agent_id", "role", "revoked"}, r.tokens, nullptr, out));
  return out;
}

}  // namespace baton
