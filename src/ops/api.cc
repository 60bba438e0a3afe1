#include "ops/api.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "engine/core/agents.h"
#include "engine/ledger/witness.h"
#include "model/json_schema.h"
#include "ops/schemas.h"
#include "util/atomic_file.h"
#include "util/store_location.h"
#include "store/tables/idempotency_table.h"
#include "util/clock.h"
#include "util/scoped_path.h"
#include "util/sha256.h"

namespace baton {
namespace {

// Idle read connections kept for the next call. On PostgreSQL a new one is a
// new server process (a fork, authentication, catalog caches): with 8 kept,
// 32 clients over HTTP opened ~18 connections a second and claims ran at 60%
// of the rate they reach with 32 kept (bench/postgres.cc). Peak use is bounded
// by the HTTP workers either way; this bounds only what is kept idle.
constexpr size_t kMaxIdleReaders = 32;

OpContext MakeContext(Txn& txn, const Actor& actor, const MachineSet& machines,
                      const Operation& op, const StoreInfo* info, const PathScope& paths,
                      const TimeSource& time, const EngineHooks& hooks) {
  const int64_t now = time.NowMillis();
  OpContext ctx{txn, actor, machines, op.name, FormatTime(now), now, info};
  ctx.paths = &paths;
  ctx.hooks = &hooks;
  return ctx;
}

std::string DefaultMachinesDir(const StoreOptions& store) {
  if (HasNoStoreFile(store.location)) return "";
  std::filesystem::path p(store.location);
  return (p.parent_path() / "machines").string();
}

// The stored request fingerprint: the input without the key itself.
std::string RequestHash(const Operation& op, const Json& input) {
  Json copy = input;
  copy.erase("idempotency_key");
  return Sha256Hex(op.name + "\n" + CanonicalJson(copy));
}

}  // namespace

bool ApiOptions::DefaultValidateOutput() {
#ifndef NDEBUG
  return true;
#else
  const char* env = std::getenv("BATON_CHECK_OUTPUT");
  return env != nullptr && std::string(env) == "1";
#endif
}

Result<std::unique_ptr<Api>> Api::Open(const ApiOptions& options) {
  std::unique_ptr<Api> api(new Api());
  if (options.registry) {
    api->registry_ = options.registry;
  } else {
    auto registry = std::make_shared<Registry>();
    RETURN_IF_ERROR(RegisterCoreOps(*registry));
    api->registry_ = std::move(registry);
  }
  const std::string dir =
      options.machines_dir.empty() ? DefaultMachinesDir(options.store) : options.machines_dir;
  ASSIGN_OR_RETURN(api->machines_, MachineSet::Load(dir));
  ASSIGN_OR_RETURN(api->paths_, PathScope::Make(options.roots, options.store.location));
  api->options_ = options;
  if (options.mirror_delay_ms > 0) {
    Api* raw = api.get();
    api->mirror_queue_ = std::make_unique<MirrorQueue>(
        std::chrono::milliseconds(options.mirror_delay_ms),
        [raw](const MirrorTarget& m) { raw->WriteQueuedMirror(m); });
  }
  return api;
}

// mirror_queue_, declared last, is destroyed first: its thread writes what
// is still due while the rest of the Api stands.
Api::~Api() { Shutdown(); }

Status Api::EnsureStore() {
  ASSIGN_OR_RETURN(OpenStore open, Opened());
  return open.writer_error;
}

Result<Api::OpenStore> Api::Opened(bool with_writer) {
  MutexLock lock(&open_mu_);
  if (shut_down_) return UnavailableError("baton is shutting down; retry the call");
  if (!store_) {
    ASSIGN_OR_RETURN(std::unique_ptr<Store> opened, Store::Open(options_.store));
    store_ = options_.wrap_store ? options_.wrap_store(std::move(opened)) : std::move(opened);
    info_ = store_->info();
  }
  if (!writer_ && with_writer) {
    // A new connection (a new file descriptor: after a failed fsync the old
    // one's next fsync may "succeed" over lost pages). The writer's own
    // check runs here: the chain's tail and the witness. A failure to open
    // it refuses writes only; reads go on through the store.
    Result<std::unique_ptr<Connection>> conn = store_->Connect();
    if (!conn.ok()) return OpenStore{store_, nullptr, &info_, conn.status()};
    // Each seed-file mirror carries the head it was written at: a store
    // behind one has lost acknowledged commits (engine/ledger/witness.h).
    // Read on the writer's connection before it has one: a one-shot command
    // opens no second connection for it.
    std::vector<Witness> witnesses = MirrorWitnesses(**conn);
    auto writer = std::make_shared<Writer>(std::move(*conn), options_.max_batch);
    if (options_.group_commit) writer->StartGroupCommit();
    writer->AddWitnesses(std::move(witnesses));
    writer_ = std::move(writer);
    if (mirror_queue_) {
      // What cannot be read now is found at the run's next commit.
      Result<std::vector<MirrorTarget>> behind = MirrorsBehindIn(*store_);
      if (behind.ok()) mirror_queue_->Add(*behind);
    }
  }
  return OpenStore{store_, writer_, &info_, Status()};
}

void Api::DropFailedWriter(const Writer* failed) {
  MutexLock lock(&open_mu_);
  if (writer_.get() != failed) return;  // another call did already
  writer_->Stop();
  writer_.reset();
}

void Api::Shutdown() {
  // While writes still run: a failing mirror is reported in the ledger.
  if (mirror_queue_) mirror_queue_->Flush();
  MutexLock lock(&open_mu_);
  shut_down_ = true;
  if (writer_) writer_->Stop();
}

WriterStats Api::writer_stats() const {
  // Any thread may ask, also while another opens the store.
  MutexLock lock(&open_mu_);
  return writer_ ? writer_->stats() : WriterStats{};
}

MirrorStats Api::mirror_stats() const {
  if (mirror_queue_) return mirror_queue_->stats();
  return MirrorStats{.due = mirrors_due_.load(), .written = mirrors_written_.load()};
}

namespace {

// How many times a call that met a lost database connection runs again.
constexpr int kLostConnectionRetries = 3;

// A failure on a connection the server dropped, before anything committed:
// the connection's own (store.h), or a writer's latch with that cause.
bool RanNothingOnALostConnection(const Status& s) {
  if (IsStoreDisconnected(s)) return true;
  const Json& d = s.details();
  if (!d.is_object() || d.value("reason", "") != kStoreFailedReason) return false;
  const Json cause = d.value("cause", Json::object());
  const Json cause_details = cause.is_object() ? cause.value("details", Json::object()) : Json();
  return cause.value("code", "") == "Unavailable" && cause_details.is_object() &&
         cause_details.value("reason", "") == kStoreDisconnectedReason;
}

}  // namespace

Result<Json> Api::Call(std::string_view name, const Json& input, const Actor& actor) {
  return Call(name, input, actor, ProgressFn());
}

Result<Json> Api::Call(std::string_view name, const Json& input, const Actor& actor,
                       const ProgressFn& progress) {
  const Operation* op = registry_->Find(name);
  if (op == nullptr) {
    // An operation of a family whose schemas did not check is missing: said
    // as that, not as a name nobody defined.
    RETURN_IF_ERROR(registry_->Complete());
    return NotFoundError("unknown operation \"" + std::string(name) +
                         "\"; `baton ops` lists them");
  }
  RETURN_IF_ERROR(CheckRole(actor.role));
  RETURN_IF_ERROR(CheckOpRole(*op, actor.role));
  Status valid = ValidateJson(op->input_schema, input);
  if (!valid.ok()) {
    return Status(valid.code(), op->name + ": invalid input: " + valid.message(),
                  valid.details());
  }
  Result<Json> result = InternalError("not run");
  if (op->procedure) {
    result = RunProcedure(*op, input, actor, progress);
  } else if (!op->uses_store) {
    result = RunWithoutStore(*op, input, actor);
  } else {
    // A database server that dropped our connections (a restart, a
    // failover) before anything committed: the call runs again on new ones,
    // after 0.1, 0.4 and 1.6 s. A commit whose answer was lost is in doubt
    // (Unknown), never this, and is never run twice. A store that never
    // opened (a wrong password, a mistyped host) is said at once.
    for (int attempt = 0;; ++attempt) {
      Result<OpenStore> open = Opened(/*with_writer=*/op->mutating);
      if (open.ok()) {
        result = op->mutating ? RunWrite(*open, *op, input, actor)
                              : RunRead(*open, *op, input, actor);
      } else if (attempt == 0) {
        return open.status();
      } else {
        result = open.status();
      }
      if (attempt == kLostConnectionRetries || result.ok() ||
          !RanNothingOnALostConnection(result.status())) {
        break;
      }
      DropIdleReaders();
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << (2 * attempt)));
    }
  }
  if (!result.ok() || !options_.validate_output) return result;
  Status out = ValidateJson(op->output_schema, *result);
  if (!out.ok()) {
    // The handler broke its own contract: a defect, never the caller's fault.
    return InternalError(op->name + ": result does not match its output schema: " +
                         out.message());
  }
  return result;
}

namespace {

// Runs an operation's code, turning an exception a library throws (a JSON
// value of an unexpected type in stored data, say) into an Internal error, so
// the operation's transaction rolls back and the process keeps serving.
template <typename F>
Result<Json> Guarded(const Operation& op, F&& run) {
  try {
    return run();
  } catch (const std::exception& e) {
    return InternalError(op.name + ": " + e.what() + " (nothing was changed)");
  }
}

}  // namespace

Result<Json> Api::RunWrite(const OpenStore& open, const Operation& op, const Json& input,
                           const Actor& actor) {
  const std::string key = input.value("idempotency_key", "");
  std::vector<MirrorTarget> mirrors;
  std::set<std::string> hand_off;  // paths a background flush may write
  if (!open.writer) return open.writer_error;
  Result<Json> result = open.writer->Submit([&](Txn& txn) -> Result<Json> {
    hand_off.clear();
    OpContext ctx =
        MakeContext(txn, actor, *machines_, op, open.info, paths_, time(), registry_->hooks());
    // Keys are scoped by caller so that two agents cannot collide.
    const std::string scoped = actor.id + "\n" + key;
    std::string request_hash;
    if (!key.empty()) {
      request_hash = RequestHash(op, input);
      ASSIGN_OR_RETURN(std::optional<IdempotentCall> seen, FindIdempotentCall(txn, scoped));
      if (seen) {
        if (seen->op != op.name || seen->request_hash != request_hash) {
          return InvalidArgumentError(
              "idempotency_key: \"" + key + "\" was already used for a different request (" +
              seen->op + "); use a new key for a new request");
        }
        return ParseJson(seen->result, "stored result");
      }
    }
    // Agents without ceremony: the caller's first write registers it.
    if (op.name != "agent.register" && MayRegisterOnFirstCall(actor)) {
      RETURN_IF_ERROR(RegisterOnFirstCall(ctx));
    }
    ASSIGN_OR_RETURN(Json result, Guarded(op, [&] { return op.handler(ctx, input); }));
    if (!ctx.touched_runs.empty()) {
      ASSIGN_OR_RETURN(mirrors, MirrorsOf(txn, {ctx.touched_runs.begin(), ctx.touched_runs.end()}));
      if (!mirror_queue_ && options_.start_background_flush) {
        hand_off = LargeMirrorsToHandOff(txn, mirrors, ctx.touched_runs_without_event);
      }
    }
    if (!key.empty()) {
      RETURN_IF_ERROR(InsertIdempotentCall(txn, {.key = scoped,
                                                 .op = op.name,
                                                 .actor_id = actor.id,
                                                 .request_hash = request_hash,
                                                 .result = CanonicalJson(result),
                                                 .created_at = ctx.now}));
    }
    return result;
  });
  if (result.ok()) {
    NoteChange();
    if (mirror_queue_) {
      mirror_queue_->Add(mirrors);
    } else if (!mirrors.empty()) {
      auto handed = [&](const MirrorTarget& m) { return hand_off.contains(m.path); };
      if (!hand_off.empty() && options_.start_background_flush().ok()) {
        std::erase_if(mirrors, handed);
      }
      mirrors_due_ += static_cast<int64_t>(mirrors.size());
      WriteMirrors(*open.store, mirrors);
    }
  } else if (open.writer->failed()) {
    DropFailedWriter(open.writer.get());
  }
  return result;
}

std::set<std::string> Api::LargeMirrorsToHandOff(Txn& txn, const std::vector<MirrorTarget>& mirrors,
                                                 const std::set<std::string>& runs_without_event) {
  // A background flush finds what to write by MirrorsBehind: a file whose
  // head this store wrote (not a first write, not another store's file, a
  // filesystem that keeps it) against its run's newest event (so not a
  // change without one). Anything else the call writes itself.
  std::set<std::string> paths;
  for (const MirrorTarget& m : mirrors) {
    struct stat st {};
    if (runs_without_event.contains(m.run_id) || ::lstat(m.path.c_str(), &st) != 0 ||
        st.st_size < kHandOffMirrorsFromBytes) {
      continue;
    }
    Result<bool> ours = MirrorHeadIsOurs(txn, m.path);
    if (ours.ok() && *ours) paths.insert(m.path);
  }
  return paths;
}

void Api::WriteQueuedMirror(const MirrorTarget& mirror) {
  std::shared_ptr<Store> store;
  {
    // Also after Shutdown: the queue's last flush writes from the store
    // still open (a failure it cannot report is mended at the next open).
    MutexLock lock(&open_mu_);
    store = store_;
  }
  if (store) WriteMirrors(*store, {mirror});
}

void Api::WriteMirrors(Store& store, const std::vector<MirrorTarget>& mirrors) {
  for (const MirrorTarget& m : mirrors) (void)WriteReportedMirror(store, m);
}

Status Api::WriteReportedMirror(Store& store, const MirrorTarget& m) {
  if (options_.mirror_delay_ms <= 0) ++mirrors_written_;
  // The error the store holds, read again with the run: a queued target's
  // may predate a report made since.
  std::string last_error = m.last_error;
  Result<bool> written = InternalError("not written");
  try {
    written = WriteMirror(store, m, &last_error);
  } catch (const std::exception& e) {
    // A library's exception on odd stored data: the commit stands.
    written = InternalError("writing mirror " + m.path + ": " + e.what());
  }
  if (written.ok() && !*written) return Status();  // unbound or rebound meanwhile
  const std::string error = written.ok() ? "" : written.status().message();
  if (error != last_error) {
    // Reporting can fail only as any write can (the store is gone); the
    // mirror is then retried at the run's next commit.
    (void)Call("mirror.report",
               Json{{"path", m.path}, {"run", m.run_id}, {"format", m.format}, {"error", error}},
               SystemActor());
  }
  return written.status();
}

Result<bool> Api::WriteMirror(Store& store, const MirrorTarget& m, std::string* last_error) {
  // The path was resolved and checked when it was bound; what it names now
  // is checked again: a folder swapped for a symlink since, or a store file
  // linked in its place, must not let the rename land on the store.
  ASSIGN_OR_RETURN(std::string now, ResolveScopedPath(paths_, {.field = "path",
                                                              .path = m.path,
                                                              .may_leave_roots = true}));
  if (now != m.path) {
    return FailedPreconditionError("path: " + m.path + " now leads to " + now +
                                   " (a symlink on the way); bind the mirror again");
  }
  const std::filesystem::path target(m.path);
  const std::string folder = target.parent_path().string();
  ASSIGN_OR_RETURN(int dir_fd, OpenFolderNoFollow(folder));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{dir_fd};
  // Writers of one folder take turns, across processes, and each renders
  // the run afresh under the lock: the last to write writes the newest state.
  ASSIGN_OR_RETURN(FolderLock lock, FolderLock::Acquire(folder));
  RemoveStaleTemporaries(m.path);
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, AcquireReader(store));
  Result<FormatOutput> out = InternalError("not rendered");
  Result<LedgerHead> head = LedgerHead{};
  bool still_bound = false;
  {
    ASSIGN_OR_RETURN(std::unique_ptr<Txn> txn, conn->Begin(TxnMode::kRead));
    // The binding is read again in the same snapshot as the run: a path
    // unbound or bound to another run since the commit is not written.
    ASSIGN_OR_RETURN(std::optional<MirrorTarget> bound, FindMirror(*txn, m.path));
    still_bound = bound && bound->run_id == m.run_id && bound->format == m.format;
    if (still_bound) *last_error = bound->last_error;
    if (still_bound) out = RenderRun(*txn, m.run_id, m.format);
    // The head this mirror saw: rendered after the commit, never ahead of it.
    if (still_bound) head = LedgerHeadNow(*txn);
  }
  ReleaseReader(std::move(conn));
  if (!still_bound) return false;
  if (!out.ok()) return out.status();
  const std::string name = target.filename().string();
  RETURN_IF_ERROR(CheckWriteTarget(paths_, dir_fd, name, m.path));
  RETURN_IF_ERROR(WriteFileAtomicallyAt(dir_fd, name, out->text, m.path));
  if (head.ok()) {
    const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      WriteMirrorHead(fd, *head);
      ::close(fd);
    }
  }
  return true;
}

Result<Json> Api::FlushMirrors(bool background) {
  ASSIGN_OR_RETURN(OpenStore open, Opened(/*with_writer=*/false));
  // Byte 0: the one waiting for its turn; byte 1: the one writing. Only a
  // file store has a place beside it for the lock: on a database server
  // each call writes in turn per folder all the same (WriteMirror).
  std::optional<ByteLock> writing;
  if (!HasNoStoreFile(options_.store.location)) {
    std::error_code ec;
    const std::string lock_path =
        std::filesystem::weakly_canonical(info_.location, ec).string() + ".mirrors.lock";
    std::optional<ByteLock> waiting;
    if (background) {
      ASSIGN_OR_RETURN(std::optional<ByteLock> free, ByteLock::TryAcquire(lock_path, 0));
      if (!free) return Json{{"written", Json::array()}, {"failed", Json::array()}};
      waiting.emplace(std::move(*free));
    }
    ASSIGN_OR_RETURN(ByteLock turn, ByteLock::Acquire(lock_path, 1));
    writing.emplace(std::move(turn));
  }
  // From here on (the wait is over), what is behind is read afresh.
  ASSIGN_OR_RETURN(std::vector<MirrorTarget> behind, MirrorsBehindIn(*open.store));
  Json written = Json::array();
  Json failed = Json::array();
  for (const MirrorTarget& m : behind) {
    Status s = WriteReportedMirror(*open.store, m);
    if (s.ok()) {
      written.push_back(m.path);
    } else {
      failed.push_back({{"path", m.path}, {"error", s.message()}});
    }
  }
  return Json{{"written", std::move(written)}, {"failed", std::move(failed)}};
}

Result<std::vector<MirrorTarget>> Api::MirrorsBehindIn(Store& store) {
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, AcquireReader(store));
  Result<std::vector<MirrorTarget>> behind = std::vector<MirrorTarget>();
  {
    Result<std::unique_ptr<Txn>> txn = conn->Begin(TxnMode::kRead);
    behind = txn.ok() ? MirrorsBehind(**txn) : Result<std::vector<MirrorTarget>>(txn.status());
  }
  ReleaseReader(std::move(conn));
  return behind;
}

std::vector<Witness> Api::MirrorWitnesses(Connection& conn) {
  std::vector<Witness> witnesses;
  std::vector<std::string> paths;
  {
    Result<std::unique_ptr<Txn>> txn = conn.Begin(TxnMode::kRead);
    if (txn.ok()) {
      Result<std::vector<std::string>> bound = MirrorPaths(**txn);
      if (bound.ok()) paths = std::move(*bound);
    }
  }
  for (const std::string& path : paths) {
    if (std::optional<Witness> w = ReadMirrorHead(path)) witnesses.push_back(std::move(*w));
  }
  return witnesses;
}

Result<Json> Api::RunRead(const OpenStore& open, const Operation& op, const Json& input,
                          const Actor& actor) {
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, AcquireReader(*open.store));
  Result<Json> result = InternalError("not run");
  {
    Result<std::unique_ptr<Txn>> txn = conn->Begin(TxnMode::kRead);
    if (!txn.ok()) return txn.status();
    OpContext ctx =
        MakeContext(**txn, actor, *machines_, op, open.info, paths_, time(), registry_->hooks());
    result = Guarded(op, [&] { return op.handler(ctx, input); });
  }  // the read transaction ends here, before the connection goes back
  ReleaseReader(std::move(conn));
  return result;
}

namespace {

// The transaction given to operations that declare they never use the store.
class NoStoreTxn final : public Txn {
 public:
  Result<std::vector<Row>> Query(std::string_view, SqlParams) override { return Misuse(); }
  Result<int64_t> Exec(std::string_view, SqlParams) override { return Misuse(); }
  Status Savepoint(std::string_view) override { return Misuse(); }
  Status RollbackTo(std::string_view) override { return Misuse(); }
  Status Release(std::string_view) override { return Misuse(); }
  Status Commit() override { return Misuse(); }

 private:
  static Status Misuse() {
    return InternalError("operation declared uses_store = false but used the store");
  }
};

}  // namespace

Result<Json> Api::RunWithoutStore(const Operation& op, const Json& input, const Actor& actor) {
  NoStoreTxn txn;
  OpContext ctx =
      MakeContext(txn, actor, *machines_, op, nullptr, paths_, time(), registry_->hooks());
  return Guarded(op, [&] { return op.handler(ctx, input); });
}

class Api::Runner final : public OpRunner {
 public:
  Runner(Api& api, const Actor& actor, const ProgressFn& progress)
      : api_(api), actor_(actor), progress_(progress) {}

  Result<Json> Call(std::string_view op, const Json& input) override {
    return api_.Call(op, input, actor_);
  }
  Result<Json> CallAsSystem(std::string_view op, const Json& input) override {
    return api_.Call(op, input, SystemActor());
  }
  bool WaitForChange(int64_t deadline_ms) override {
    return api_.WaitForChange(&seen_, deadline_ms);
  }
  const Actor& actor() const override { return actor_; }
  void Progress(const std::string& line) override {
    if (progress_) progress_(line);
  }
  const PathScope* paths() const override { return &api_.paths_; }
  const TimeSource& time() const override { return api_.time(); }

 private:
  Api& api_;
  const Actor& actor_;
  const ProgressFn& progress_;
  uint64_t seen_ = 0;
};

bool Api::MayRegisterOnFirstCall(const Actor& actor) const {
  if (actor.role != "agent" && actor.role != "coordinator") return false;
  // Only an id agent.register would take (its "id" is a schema::Id): no
  // "*", no control characters. Checked against the rule itself, so a
  // command does not build agent.* for it.
  static const Json* const kId = new Json(schema::Id("agent id"));
  return ValidateJson(*kId, Json(actor.id)).ok();
}

Result<Json> Api::RunProcedure(const Operation& op, const Json& input, const Actor& actor,
                               const ProgressFn& progress) {
  Runner runner(*this, actor, progress);
  runner.WaitForChange(0);  // records the current change count
  return Guarded(op, [&] { return op.procedure(runner, input); });
}

void Api::NoteChange() {
  Wake();
  if (Doorbell* bell = Bell()) bell->Committed();
}

Doorbell* Api::Bell() {
  if (Doorbell* bell = doorbell_.load(std::memory_order_acquire)) return bell;
  if (no_bell_.load(std::memory_order_acquire)) return nullptr;
  MutexLock lock(&open_mu_);
  if (doorbell_owner_ == nullptr) {
    if (store_ == nullptr) return nullptr;  // not opened yet: asked again later
    if (!store_->has_change_bell()) {
      no_bell_.store(true, std::memory_order_release);
      return nullptr;
    }
    // Other servers on the same database ring when they commit.
    doorbell_owner_ = std::make_unique<Doorbell>(store_, [this](int64_t) { Wake(); });
    doorbell_.store(doorbell_owner_.get(), std::memory_order_release);
  }
  return doorbell_owner_.get();
}

void Api::Wake() {
  {
    MutexLock lock(&change_mu_);
    ++change_seq_;
  }
  change_cv_.SignalAll();
}

int64_t Api::change_poll_millis() {
  if (options_.change_poll_ms > 0) return options_.change_poll_ms;
  const Doorbell* bell = Bell();
  return bell != nullptr && bell->listening() ? 1000 : 250;
}

Result<bool> Api::HoldLead() {
  ASSIGN_OR_RETURN(OpenStore open, Opened());
  MutexLock lock(&lead_mu_);
  if (lead_ == nullptr) {
    ASSIGN_OR_RETURN(lead_, open.store->OpenLead());
  }
  return lead_->Hold();
}

Status Api::HearOtherServers() {
  RETURN_IF_ERROR(Opened().status());
  (void)Bell();
  return Status();
}

DoorbellStats Api::doorbell_stats() const {
  const Doorbell* bell = doorbell_.load(std::memory_order_acquire);
  return bell != nullptr ? bell->stats() : DoorbellStats{};
}

int Api::waiters() const {
  MutexLock lock(&change_mu_);
  return waiters_;
}

bool Api::WaitForChange(uint64_t* seen, int64_t deadline_ms) {
  // Other processes' writes may come unannounced (a SQLite file, a lost
  // ring), so never sleep longer than the poll interval: the caller
  // re-reads the store after each wake-up.
  const int64_t poll = change_poll_millis();
  const int64_t now = NowMillis();
  if (now >= deadline_ms) {
    MutexLock lock(&change_mu_);
    *seen = change_seq_;
    return false;
  }
  MutexLock lock(&change_mu_);
  ++waiters_;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(std::min(poll, deadline_ms - now));
  while (change_seq_ == *seen && change_cv_.WaitUntil(&change_mu_, until)) {
  }
  --waiters_;
  *seen = change_seq_;
  return NowMillis() < deadline_ms;
}

void Api::DropIdleReaders() {
  std::vector<std::unique_ptr<Connection>> dropped;
  MutexLock lock(&pool_mu_);
  dropped.swap(readers_);
}

Result<std::unique_ptr<Connection>> Api::AcquireReader(Store& store) {
  {
    MutexLock lock(&pool_mu_);
    if (!readers_.empty()) {
      std::unique_ptr<Connection> conn = std::move(readers_.back());
      readers_.pop_back();
      return conn;
    }
  }
  return store.Connect();
}

void Api::ReleaseReader(std::unique_ptr<Connection> conn) {
  if (conn->broken()) return;  // its server dropped it: never reused
  MutexLock lock(&pool_mu_);
  if (readers_.size() < kMaxIdleReaders) readers_.push_back(std::move(conn));
}

}  // namespace baton
