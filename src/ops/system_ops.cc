// Operations about baton itself: the ledger, machines, operations and store.

#include <filesystem>

#include "engine/ledger/archive.h"
#include "engine/ledger/ledger.h"
#include "engine/ledger/ledger_replay.h"
#include "engine/inbox/overview.h"
#include "engine/ledger/witness.h"
#include "ops/api.h"
#include "ops/schemas.h"
#include "store/copy_store.h"
#include "util/clock.h"
#include "util/store_location.h"

namespace baton {
namespace {

namespace s = schema;

// An event as ledger.events lists it: whole, or its summary alone.
Json SummaryOrWholeEvent() {
  Json e = s::EventOut();
  e["required"] = {"seq", "time", "run_id", "actor", "kind", "summary"};
  return e;
}

// store.migrate: a whole SQLite store into an empty PostgreSQL database, in
// one transaction that commits only when every table's count matches and
// the copied chain walks to the source's head.
Result<Json> StoreMigrate(OpContext& ctx, const Json& in) {
  const std::string to = in.at("to").get<std::string>();
  if (!IsPostgresLocation(to)) {
    return InvalidArgumentError(
        "to: a PostgreSQL URL (postgresql://...) or connection string (\"host=... dbname=...\") "
        "is needed; a SQLite store is copied with the file itself");
  }
  // The store this baton was started on may be named (read, never
  // written); any other file goes through the path rules. Either way the
  // path is whole (no NUL, which the filesystem would cut it at) and
  // absolute (the CLI makes it so).
  const std::string given = in.at("from").get<std::string>();
  RETURN_IF_ERROR(CheckNoControlCharacters("from", given));
  std::error_code ec;
  const std::string canonical = std::filesystem::weakly_canonical(given, ec).string();
  std::string from;
  if (!ec && !given.empty() && given[0] == '/' && ctx.paths != nullptr &&
      !ctx.paths->store_file.empty() && canonical == ctx.paths->store_file) {
    from = canonical;
  } else {
    ASSIGN_OR_RETURN(from, ctx.ScopedPath("from", given));
  }
  StoreOptions source_options{.location = from, .create_if_missing = false, .read_only = true};
  Result<std::unique_ptr<Store>> source = Store::Open(source_options);
  if (!source.ok()) return source.status().WithPrefix("from");
  Result<std::unique_ptr<Store>> target = Store::Open({.location = to});
  if (!target.ok()) return target.status().WithPrefix("to");
  VerifyReport walked;
  ASSIGN_OR_RETURN(
      CopyReport copied,
      CopyStore(**source, **target, [&walked](Txn& source_txn, Txn& target_txn) -> Status {
        ASSIGN_OR_RETURN(VerifyReport before, VerifyLedger(source_txn));
        if (!before.ok) {
          return FailedPreconditionError("from: the ledger breaks at seq " +
                                         std::to_string(before.first_broken_seq) + " (" +
                                         before.reason + "); `baton verify` says more");
        }
        ASSIGN_OR_RETURN(walked, VerifyLedger(target_txn));
        if (!walked.ok || walked.events != before.events || walked.head_hash != before.head_hash) {
          return DataLossError("the copied ledger does not walk to the source's head (seq " +
                               std::to_string(walked.first_broken_seq) + ": " + walked.reason +
                               "); nothing was kept");
        }
        return Status();
      }));
  Json tables = Json::array();
  for (const CopiedTable& t : copied.tables) tables.push_back({{"name", t.name}, {"rows", t.rows}});
  return Json{{"from", from},
              {"to", RedactedLocation(to)},
              {"tables", tables},
              {"rows", copied.rows},
              {"ledger", {{"ok", true}, {"events", walked.events}, {"head_hash", walked.head_hash}}}};
}

Result<Json> LedgerEvents(OpContext& ctx, const Json& in) {
  EventFilter f;
  f.run_id = in.value("run", "");
  f.kind = in.value("kind", "");
  f.since_seq = in.value("since", int64_t{0});
  f.limit = in.value("limit", int64_t{1000});
  f.actor_id = in.value("actor", "");
  f.before_seq = in.value("before", int64_t{0});
  f.with_payload = !in.value("summary_only", false);
  ASSIGN_OR_RETURN(Json events, ListEvents(ctx.txn, f));
  return Json{{"events", events}};
}

// The witness file of the store the operation runs on ("" in memory).
std::string StoreWitnessPath(const OpContext& ctx) {
  if (ctx.store == nullptr || ctx.store->location.rfind("file:", 0) == 0) return "";
  return WitnessPath(ctx.store->location);
}

// The witness file's head, when there is one and it can be read; else what
// went wrong, in "problem".
std::vector<Witness> FileWitnesses(const OpContext& ctx, std::string* problem) {
  const std::string path = StoreWitnessPath(ctx);
  if (path.empty()) return {};
  Result<std::optional<Witness>> w = ReadWitnessFile(path);
  if (!w.ok()) {
    *problem = w.status().message();
    return {};
  }
  if (!w->has_value()) return {};
  return {**w};
}

// Each check of `baton verify`, in order; the first lines of each failure
// go into one message, all of it into the details.
// The file "field" names, when it is an archive the store records (the
// store's own files are not a caller's to name otherwise) or a path the
// caller may name.
Result<std::string> ArchivePath(OpContext& ctx, std::string_view field, const std::string& given) {
  RETURN_IF_ERROR(CheckNoControlCharacters(field, given));
  std::error_code ec;
  const std::string canonical = std::filesystem::weakly_canonical(given, ec).string();
  ASSIGN_OR_RETURN(std::vector<LedgerArchiveRow> archives, ListLedgerArchiveRows(ctx.txn));
  for (const LedgerArchiveRow& a : archives) {
    if (!ec && !given.empty() && given[0] == '/' && a.file == canonical) return canonical;
  }
  return ctx.ScopedPath(field, given);
}

// verify --archive: the archive file alone, against the store's record.
Result<Json> VerifyArchive(OpContext& ctx, const Json& in) {
  if (in.value("deep", false) || in.contains("since")) {
    return InvalidArgumentError("archive: proves one archive file; deep and since check the store "
                                "(run them without archive)");
  }
  ASSIGN_OR_RETURN(const std::string file,
                   ArchivePath(ctx, "archive", in["archive"].get<std::string>()));
  ASSIGN_OR_RETURN(ArchiveReport r, VerifyArchiveFile(ctx.txn, file));
  if (!r.ok) {
    return Status(StatusCode::kDataLoss,
                  "archive " + file + ": verification failed at seq " +
                      std::to_string(r.first_broken_seq) + ": " + r.reason,
                  {{"file", file}, {"first_broken_seq", r.first_broken_seq},
                   {"reason", r.reason}, {"verified_events", r.events}});
  }
  return Json{{"ok", true},
              {"events", r.events},
              {"head_hash", r.through_hash},
              {"archive",
               {{"file", file},
                {"first_seq", r.first_seq},
                {"through_seq", r.through_seq},
                {"through_hash", r.through_hash},
                {"sha256_matches", r.sha256_matches}}}};
}

Result<Json> LedgerVerify(OpContext& ctx, const Json& in) {
  if (in.contains("archive")) return VerifyArchive(ctx, in);
  // The witness before the first read: the read transaction's snapshot is
  // taken at its first statement, so the witness cannot be ahead of it
  // unless events were lost.
  std::string witness_problem;
  const std::vector<Witness> witnesses = FileWitnesses(ctx, &witness_problem);
  const bool deep = in.value("deep", false);
  const int64_t since = in.value("since", int64_t{0});
  // A checkpoint is a seq and the hash verified there: a seq alone would
  // trust whatever chain now leads to it.
  if (since > 0 && !in.contains("since_hash")) {
    return InvalidArgumentError(
        "since_hash: required with since (the head_hash of the verify that counted those events)");
  }
  if (since == 0 && in.contains("since_hash")) {
    return InvalidArgumentError("since_hash: only with since (the seq it was verified at)");
  }
  if (in.contains("since_hash")) {
    const std::string hash = in["since_hash"].get<std::string>();
    if (hash.size() != 64 || hash.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return InvalidArgumentError(
          "since_hash: must be the 64 lowercase hex digits of a head_hash verify answered");
    }
  }
  std::vector<std::string> failures;
  Json details = Json::object();

  // From a checkpoint only the chain after it is walked: the database's own
  // check reads every page, whatever was verified before.
  std::vector<std::string> structure;
  if (since == 0) {
    ASSIGN_OR_RETURN(structure, ctx.txn.CheckStructure(/*thorough=*/deep));
  }
  if (!structure.empty()) {
    details["structure"] = structure;
    std::string first = structure[0];
    if (structure.size() > 1) first += " (and " + std::to_string(structure.size() - 1) + " more)";
    failures.push_back("database structure: " + ctx.txn.structure_check(deep) + " reports: " +
                       first);
  }
  std::string anchor;
  Result<VerifyReport> chain = VerifyLedgerSince(ctx.txn, since, &anchor);
  if (chain.ok() && in.contains("since_hash") && in["since_hash"] != anchor) {
    // The checkpoint's event is not the one verified then.
    details["first_broken_seq"] = since;
    failures.push_back("ledger verification failed at seq " + std::to_string(since) +
                       ": its hash is " + anchor + ", not the since_hash verified before (" +
                       in["since_hash"].get<std::string>() + ")");
  }
  // A wrong question (a seq past the end, or archived) is no broken store.
  if (!chain.ok() && (chain.status().code() == StatusCode::kNotFound ||
                      chain.status().code() == StatusCode::kFailedPrecondition)) {
    return chain.status();
  }
  if (!chain.ok()) {
    failures.push_back("ledger: cannot be read: " + chain.status().message());
  } else if (!chain->ok) {
    // A checkpoint that moved is named first: the walk breaks right after it.
    if (!details.contains("first_broken_seq")) {
      details["first_broken_seq"] = chain->first_broken_seq;
    }
    details["reason"] = chain->reason;
    details["verified_events"] = chain->events;
    failures.push_back("ledger verification failed at seq " +
                       std::to_string(chain->first_broken_seq) + ": " + chain->reason);
  }
  if (!witness_problem.empty()) failures.push_back("witness: " + witness_problem);
  if (chain.ok()) {
    Status w = CheckWitnesses(ctx.txn, witnesses);
    if (!w.ok()) {
      details["witness"] = w.details();
      failures.push_back(w.message());
    }
  }
  Json out = {{"ok", true},
              {"structure", since == 0 ? "ok" : "not checked (since)"},
              {"structure_check", since == 0 ? ctx.txn.structure_check(deep) : "none"},
              {"deep", deep}};
  if (chain.ok()) {
    out["events"] = chain->events;
    out["head_hash"] = chain->head_hash;
    ASSIGN_OR_RETURN(ChainStart start, LoadChainStart(ctx.txn));
    if (start.archived) out["archived_through"] = start.seq - 1;
  }
  if (deep) {
    Result<DeepReport> state = CheckStateAgainstLedger(ctx.txn, ctx.machines);
    if (!state.ok()) {
      failures.push_back("state: cannot be read: " + state.status().message());
    } else {
      out["rows_checked"] = state->rows_checked;
      if (!state->mismatches.empty()) {
        details["mismatches"] = state->mismatches;
        std::string first = state->mismatches[0]["message"].get<std::string>();
        for (size_t i = 1; i < state->mismatches.size() && i < 5; ++i) {
          first += "; " + state->mismatches[i]["message"].get<std::string>();
        }
        if (state->mismatches.size() > 5) {
          first += "; and " + std::to_string(state->mismatches.size() - 5) + " more";
        }
        failures.push_back(std::to_string(state->mismatches.size()) +
                           " state row field(s) disagree with the ledger: " + first);
      }
    }
  }
  if (failures.empty()) return out;
  std::string message = "verification failed: " + failures[0];
  for (size_t i = 1; i < failures.size(); ++i) message += "; " + failures[i];
  return Status(StatusCode::kDataLoss, message, details);
}

// "before" as a seq ("900000") or a time: a date ("2026-11-01", midnight
// UTC) or RFC 3339 UTC ("2026-11-01T12:00:00Z").
Status ParseBefore(const std::string& before, ArchiveRequest* request) {
  if (!before.empty() && before.size() <= 16 &&
      before.find_first_not_of("0123456789") == std::string::npos) {
    request->before_seq = std::stoll(before);
    if (request->before_seq >= 1) return Status();
  } else {
    const std::string full = before.size() == 10 ? before + "T00:00:00Z" : before;
    const int64_t ms = ParseTime(full);
    // Read back exactly as written (seconds or milliseconds): no month 13
    // rolled into the next year, nothing after the Z.
    const std::string stored = ms >= 0 ? FormatTime(ms) : "";
    if (!stored.empty() && (full == stored || full == stored.substr(0, 19) + "Z")) {
      request->before_time = stored;
      return Status();
    }
  }
  return InvalidArgumentError("before: \"" + before +
                              "\" is neither a seq (900000) nor a UTC date (2026-11-01 or "
                              "2026-11-01T12:00:00Z)");
}

Result<Json> LedgerArchive(OpContext& ctx, const Json& in) {
  ArchiveRequest request;
  RETURN_IF_ERROR(ParseBefore(in.at("before").get<std::string>(), &request));
  if (in.contains("file")) {
    ASSIGN_OR_RETURN(request.file, ctx.ScopedPath("file", in["file"].get<std::string>()));
  } else {
    const std::string store = ctx.paths != nullptr ? ctx.paths->store_file : "";
    if (store.empty()) {
      return InvalidArgumentError("file: a store in memory has no folder to archive beside; "
                                  "name the file");
    }
    // Beside the store, named after it and the range: a caller's path may
    // not name it.
    request.beside = store;
  }
  ASSIGN_OR_RETURN(ArchiveResult r, ArchiveLedger(ctx, request));
  Json out = {{"file", r.archive.file},
              {"first_seq", r.archive.first_seq},
              {"through_seq", r.archive.through_seq},
              {"events", r.events},
              {"bytes", r.bytes},
              {"through_hash", r.archive.through_hash},
              {"file_sha256", r.archive.file_sha256},
              {"event_seq", r.archive.event_seq}};
  if (!r.held_by.empty()) out["held_by"] = r.held_by;
  return out;
}

Result<Json> StoreAcceptLoss(OpContext& ctx, const Json& in) {
  std::string problem;
  std::vector<Witness> witnesses = FileWitnesses(ctx, &problem);
  if (!problem.empty()) {
    return FailedPreconditionError("witness: " + problem +
                                   "; nothing can be accepted from an unreadable witness");
  }
  return AcceptLoss(ctx, witnesses, in.value("through", int64_t{0}));
}

Json MachineSummary(const Machine& m) {
  Json states = Json::array();
  for (const MachineState& st : m.states()) states.push_back(st.name);
  return Json{{"name", m.name()},   {"system", m.system()},
              {"description", m.description()}, {"source", m.source()},
              {"initial", m.initial()}, {"states", states}};
}

Result<Json> MachineList(OpContext& ctx, const Json& in) {
  Json list = Json::array();
  for (const Machine* m : ctx.machines.All()) list.push_back(MachineSummary(*m));
  return Json{{"machines", list}};
}

Result<Json> MachineShow(OpContext& ctx, const Json& in) {
  ASSIGN_OR_RETURN(const Machine* m, ctx.machines.Get(in.at("name").get<std::string>()));
  return Json{{"name", m->name()},
              {"machine", m->ToJson()},
              {"mermaid", m->ToMermaid()},
              {"text", m->ToText()}};
}

Result<Json> StoreStatus(OpContext& ctx, const Json& in) {
  const StoreInfo& info = *ctx.store;
  Json out = {{"store",
               {{"backend", info.backend},
                {"location", info.location},
                {"durability", std::string(DurabilityName(info.durability))},
                {"schema_version", info.schema_version},
                {"detail", info.detail}}},
              {"version", BATON_VERSION}};
  ASSIGN_OR_RETURN(Json contents, StoreOverview(ctx));
  out.update(contents);
  return out;
}

}  // namespace

Status RegisterSystemOps(Registry& r) {
  RETURN_IF_ERROR(r.Add({
      .name = "ledger.events",
      .summary = "List ledger events in seq order, by run, kind (or kind prefix like \"task.\"), "
                 "actor, and since a seq (or the newest before one)",
      .input_schema = s::Input({{"run", s::Id("run id")},
                                {"kind", s::String("event kind, or a prefix ending in \".\"", 200)},
                                {"actor", s::Id("only this actor's events")},
                                {"before", s::Integer("the newest events below this seq (paging "
                                                      "back); still listed in seq order",
                                                      1, int64_t{1} << 53)},
                                {"summary_only", s::Boolean("only seq, time, run_id, actor, kind "
                                                            "and summary (no payload, files, "
                                                            "refs or hashes)")},
                                {"since", {{"type", "integer"}, {"minimum", 0}, {"description", "only events after this seq"}}},
                                {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100000}}}}),
      .output_schema = s::ListOf("events", SummaryOrWholeEvent()),
      .handler = LedgerEvents,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "ledger.verify",
      .summary = "Check the store: SQLite's page and foreign key checks, the hash chain, "
                 "the ledger head against its witness file, and with deep SQLite's full "
                 "integrity check and every run, task, lease, agent and token row against the "
                 "ledger; DataLoss naming what is wrong",
      .input_schema = s::Input(
          {{"deep", s::Boolean("also SQLite's integrity_check (every index against its table), "
                               "and replay the ledger and compare the state tables with it")},
           {"since", s::Integer("walk the chain only after this seq, from a verify that passed "
                                "(its \"events\"); skips the database's own structure check",
                                0, int64_t{1} << 53)},
           {"since_hash", s::String("the head_hash that verify answered at that seq: the "
                                    "event there must still have it",
                                    64)},
           {"archive", s::Path("prove this archive file (ledger.archive wrote it) instead of "
                               "the store: every event's hash and link, and that it ends on "
                               "the hash the store recorded")}}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"ok", {{"type", "boolean"}}},
                                        {"events", {{"type", "integer"}}},
                                        {"head_hash", {{"type", "string"}}},
                                        {"structure", {{"type", "string"}}},
                                        {"structure_check", {{"type", "string"}}},
                                        {"deep", {{"type", "boolean"}}},
                                        {"rows_checked", {{"type", "integer"}}},
                                        {"archived_through", {{"type", "integer"}}},
                                        {"archive", {{"type", "object"}}}}},
                        {"required", {"ok", "events"}}},
      .handler = LedgerVerify,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "ledger.archive",
      .summary = "Move the ledger's oldest events to a compressed, self-verifying archive file "
                 "(never the events of a run not finished or with an open question); the store "
                 "keeps the anchor verify walks from",
      .input_schema = s::Input(
          {{"before", s::String("archive the events below this seq (900000), or before this UTC "
                                "date (2026-11-01, 2026-11-01T12:00:00Z)",
                                40)},
           {"file", s::Path("the archive to write (gzip of JSON lines; never written over); "
                            "default: beside the store, named after it and the range "
                            "(baton.db.archive-1-900000.jsonl.gz)")}},
          {"before"}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"file", {{"type", "string"}}},
                                        {"first_seq", {{"type", "integer"}}},
                                        {"through_seq", {{"type", "integer"}}},
                                        {"events", {{"type", "integer"}}},
                                        {"bytes", {{"type", "integer"}}},
                                        {"through_hash", {{"type", "string"}}},
                                        {"file_sha256", {{"type", "string"}}},
                                        {"event_seq", {{"type", "integer"}}},
                                        {"held_by", {{"type", "string"}}}}},
                        {"required", {"file", "first_seq", "through_seq", "events", "bytes",
                                      "through_hash", "file_sha256", "event_seq"}}},
      // History leaves the store: the human's call (over HTTP only the
      // human's own credential carries the role).
      .roles = {"human"},
      .mutating = true,
      .destructive = true,
      .handler = LedgerArchive,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "store.accept_loss",
      .summary = "Accept that acknowledged events the witness file records are gone (a "
                 "truncated WAL, an older copy): records the loss in the ledger and lets "
                 "writes resume",
      .input_schema = s::Input({{"through", s::Integer("also accept the loss up to this seq "
                                                       "(default: what the witness records)",
                                                       1, int64_t{1} << 53)}}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"from", {{"type", "integer"}}},
                                        {"to", {{"type", "integer"}}},
                                        {"seq", {{"type", "integer"}}},
                                        {"witness_seq", {{"type", "integer"}}},
                                        {"witness_hash", {{"type", "string"}}},
                                        {"source", {{"type", "string"}}}}},
                        {"required", {"from", "to", "seq"}}},
      // The human at the CLI and admins: over HTTP only the human's own
      // credential carries the human role.
      .roles = {"human"},
      .mutating = true,
      .destructive = true,
      .handler = StoreAcceptLoss,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "store.migrate",
      .summary = "Copy a whole SQLite store into an empty PostgreSQL database, in one "
                 "transaction, then check every table's count and the copied ledger's chain",
      .input_schema = s::Input(
          {{"from", s::Path("the SQLite store file to copy (stop the servers on it first)")},
           {"to", {{"type", "string"},
                   {"minLength", 1},
                   {"description", "the PostgreSQL database: a URL or a libpq connection string"}}}},
          {"from", "to"}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"from", {{"type", "string"}}},
                                        {"to", {{"type", "string"}}},
                                        {"tables", {{"type", "array"}}},
                                        {"rows", {{"type", "integer"}}},
                                        {"ledger", {{"type", "object"}}}}},
                        {"required", {"from", "to", "tables", "rows", "ledger"}}},
      // Over HTTP only the human's own credential carries the human role.
      .roles = {"human"},
      .mutating = true,
      .handler = StoreMigrate,
      .uses_store = false,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "machine.list",
      .summary = "List the state machines (built-in and the user's)",
      .input_schema = s::Input({}),
      .output_schema = s::ListOf("machines", s::AnyObject()),
      .handler = MachineList,
      .uses_store = false,
  }));
  RETURN_IF_ERROR(r.Add({
      .name = "machine.show",
      .summary = "Show one state machine as JSON, Mermaid and text",
      .input_schema = s::Input({{"name", s::Id("machine name, e.g. sgai.run")}}, {"name"}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"name", {{"type", "string"}}},
                                        {"machine", {{"type", "object"}}},
                                        {"mermaid", {{"type", "string"}}},
                                        {"text", {{"type", "string"}}}}},
                        {"required", {"name", "machine", "mermaid", "text"}}},
      .positional = {"name"},
      .handler = MachineShow,
      .uses_store = false,
  }));
  const Registry* registry = &r;
  RETURN_IF_ERROR(r.Add({
      .name = "op.list",
      .summary = "List operations with their schemas (or one, by name)",
      .input_schema = s::Input({{"name", s::Id("operation name")}}),
      .output_schema = s::ListOf("operations", s::AnyObject()),
      .positional = {"name"},
      .handler = [registry](OpContext&, const Json& in) -> Result<Json> {
        Json list = Json::array();
        const std::string name = in.value("name", "");
        for (const Operation* op : registry->All()) {
          if (name.empty() || op->name == name) list.push_back(Registry::Describe(*op));
        }
        if (!name.empty() && list.empty()) {
          return NotFoundError("unknown operation \"" + name + "\"; `baton ops` lists them");
        }
        return Json{{"operations", list}};
      },
      .uses_store = false,
  }));
  return r.Add({
      .name = "store.status",
      .summary = "Show the store (backend, path, durability), counts, ledger head, active runs "
                 "and the questions waiting for a human",
      .input_schema = s::Input({}),
      .output_schema = {{"type", "object"},
                        {"properties", {{"store", {{"type", "object"}}},
                                        {"counts", {{"type", "object"}}},
                                        {"ledger", {{"type", "object"}}},
                                        {"active_runs", {{"type", "array"}}},
                                        {"open_questions", {{"type", "array"}}},
                                        {"mirrors", {{"type", "array"}}},
                                        {"version", {{"type", "string"}}}}},
                        {"required", {"store", "counts", "ledger", "active_runs", "open_questions",
                                      "mirrors"}}},
      .handler = StoreStatus,
  });
}

}  // namespace baton
