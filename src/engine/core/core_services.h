// File: core_services.h
//
// The core services behind the operations of DESIGN.md §3: projects, runs and
// tasks. Each function runs inside the caller's transaction (ctx.txn), checks
// every status change with the entity's machine, bumps the row's version, and
// appends its ledger events — so a change and its events commit together or
// not at all. An operation (CreateRun, ShowTask, ...) takes its JSON input,
// already validated against its schema, and answers JSON (docs/impl.md
// "Schema"); the rooms pass the rows themselves typed (model/run.h,
// model/task.h): LoadRun, StoreRun, MakeTask, ...
//
// Errors: NotFound for unknown ids, Aborted when "expect_version" is given and
// the row has moved, FailedPrecondition / PermissionDenied / InvalidArgument
// from the machine checker, AlreadyExists for a taken id or name.

#ifndef BATON_SRC_ENGINE_CORE_CORE_SERVICES_H_
#define BATON_SRC_ENGINE_CORE_CORE_SERVICES_H_

#ifndef BATON_ENGINE_ROOM_CORE
#error "engine/core/ is above this target: link baton_engine_core (src/engine/README.md)"
#endif

#include "engine/ledger/op_context.h"
#include "model/run.h"
#include "model/task.h"

namespace baton {

// Projects.
Result<Json> CreateProject(OpContext& ctx, const Json& in);
Result<Json> ListProjects(OpContext& ctx, const Json& in);
Result<Json> ShowProject(OpContext& ctx, const Json& in);
// Resolves a project id or name to its id.
Result<std::string> ResolveProjectId(Txn& txn, const std::string& id_or_name);

// Runs. MakeRun creates one from run.create's input and returns it as
// stored; CreateRun answers it as JSON (RunToJson).
Result<Run> MakeRun(OpContext& ctx, const Json& in);
Result<Json> CreateRun(OpContext& ctx, const Json& in);
Result<Json> ShowRun(OpContext& ctx, const Json& in);
Result<Json> ListRuns(OpContext& ctx, const Json& in);
// run.usage {run}: cost and tokens per agent and model ({rows, total}).
Result<Json> RunUsage(OpContext& ctx, const Json& in);
Result<Json> SetRunStatus(OpContext& ctx, const Json& in);
Result<Json> PatchRunContext(OpContext& ctx, const Json& in);
Result<Json> AddRunProgress(OpContext& ctx, const Json& in);
// The run; NotFound naming the id.
Result<Run> LoadRun(Txn& txn, const std::string& id);
// Writes a loaded run's status, context and meta back and bumps its version.
// The caller has checked any status change with the run's machine and
// appends the events.
Status StoreRun(OpContext& ctx, const Run& run);
// Moves a loaded "run" to status "to" in memory — checked with its machine
// for ctx's transition, with the run.status event — for the caller to store.
Status MoveRunStatus(OpContext& ctx, Run& run, const std::string& to, const std::string& reason);

// Tasks. MakeTask creates one from task.create's input and returns it as
// stored (its readiness evaluated); CreateTask answers it as JSON.
Result<Task> MakeTask(OpContext& ctx, const Json& in);
Result<Json> CreateTask(OpContext& ctx, const Json& in);
Result<Json> ShowTask(OpContext& ctx, const Json& in);
Result<Json> ListTasks(OpContext& ctx, const Json& in);
Result<Json> SetTaskStatus(OpContext& ctx, const Json& in);
// The task; NotFound naming the id.
Result<Task> LoadTask(Txn& txn, const std::string& id);
// Every task of a run, by position, then creation.
Result<std::vector<Task>> LoadRunTasks(Txn& txn, const std::string& run_id);

// The stored run and task as every operation answers them (RunToJson,
// TaskToJson) — for an operation's result only.
Result<Json> AnswerRun(Txn& txn, const std::string& id);
Result<Json> AnswerTask(Txn& txn, const std::string& id);


// Aborted unless "in" has no expect_version or it equals "version".
Status CheckExpectedVersion(const Json& in, std::string_view what,
                            const std::string& id, int64_t version);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_CORE_CORE_SERVICES_H_
