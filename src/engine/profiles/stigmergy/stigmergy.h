// File: stigmergy.h
//
// The Stigmergy profile: the v2.0 "sacred ledger" (.ai/state.json) of
// randy888chan/Stigmergy as a baton run. Stigmergy v2.0 had no code — agents
// edited the JSON by following prompts (saul.md, 03_Core_Principles.md); baton
// enforces those rules. docs/profiles/stigmergy.md tells each rule's source.
//
// Layout. A project is a run with profile "stigmergy" (machine
// stigmergy.project; project_status is the run's status). The run's meta holds
// schema_version "2.0", project_name, autonomy_mode (supervised | autonomous)
// and system_signal, plus signal_seq (the ledger seq of the event that left
// the signal). Epics, stories and issue_log entries are tasks of kind "epic",
// "story" and "issue" (machines stigmergy.epic / .story / .issue) whose key is
// the epic_id ("1"), the story_id ("1.1") or the issue_id ("ISS-1"); a story's
// parent_id is its epic. history is not stored anywhere: it is the run's
// ledger events of kind "stigmergy.signal" (one per agent turn, payload
// {agent_id, signal, system_signal, files_modified, ...}), and history_ref
// holds their seqs.
//
// Rules enforced (each refusal changes nothing):
//   - Every status change goes through its machine.
//   - supervised: entering EXECUTION_IN_PROGRESS (from READY_FOR_EXECUTION
//     or EXECUTION_HALTED) needs the latest decision on ("run", "execution")
//     to be an approval by a human, given after the latest (re)planning;
//     otherwise FailedPrecondition. A rejection halts an executing project.
//   - Starting a story while READY_FOR_EXECUTION moves the project to
//     EXECUTION_IN_PROGRESS through the same gate; any other story change
//     needs EXECUTION_IN_PROGRESS.
//   - An epic goes IN_PROGRESS with its first story and COMPLETE (signal
//     EPIC_COMPLETE) with its last, in the same transaction.
//   - LAW V: the second (and any later) failure of one story emits
//     ESCALATION_REQUIRED, opens an OPEN issue whose history_ref is the seqs of
//     the last two failures, and halts execution — in one transaction.
//   - PROJECT_COMPLETE only when every epic (at least one) is COMPLETE;
//     EXECUTION_HALTED -> EXECUTION_IN_PROGRESS only when no issue is
//     unresolved; NEEDS_PLANNING -> READY_FOR_EXECUTION only with a manifest
//     of at least one story.
//
// Every function runs in ctx.txn and takes the operation's validated input.
// Mutations return {run_id, project_status, system_signal, autonomy_mode,
// history_seq} plus what they changed.

#ifndef BATON_SRC_ENGINE_PROFILES_STIGMERGY_STIGMERGY_H_
#define BATON_SRC_ENGINE_PROFILES_STIGMERGY_STIGMERGY_H_

#ifndef BATON_ENGINE_ROOM_PROFILES_STIGMERGY
#error "engine/profiles/stigmergy/ is above this target: link baton_engine_stigmergy (src/engine/README.md)"
#endif

#include <span>
#include <string_view>

#include "engine/ledger/op_context.h"

namespace baton {

// INIT, STORY_CREATED, STORY_COMPLETE, EPIC_COMPLETE, ESCALATION_REQUIRED,
// MILESTONE_APPROVED (the v2.0 agents' vocabulary plus v3.0's approval).
std::span<const char* const> StigmergySignals();

// {project_name?, autonomy_mode?, run?, project?}: a new run in
// NEEDS_BRIEFING with signal INIT and the history event "Project initialized."
// Why a supervised project may not execute yet ("no decision on execution
// yet", ...), or "" when a human approved execution after the latest
// (re)planning.
Result<std::string> StigmergyExecutionGateClosed(Txn& txn, const std::string& run_id);

Result<Json> StigmergyInit(OpContext& ctx, const Json& in);
// {run, mode}. Loosening to "autonomous" is for humans (PermissionDenied for
// other roles): it removes the human gate.
Result<Json> StigmergySetAutonomy(OpContext& ctx, const Json& in);
// {run, epics[{epic_id, title, stories[{story_id, title}]}]}: get-or-create by
// id, titles updated; nothing is ever removed. InvalidArgument naming the field
// for a duplicate id or a story_id that is not "<epic_id>.<n>";
// FailedPrecondition for a new story in a COMPLETE epic.
Result<Json> StigmergyManifest(OpContext& ctx, const Json& in);
// {run, status, summary?}: project_status with the rules above.
Result<Json> StigmergySetStatus(OpContext& ctx, const Json& in);
// {run, story_id, status, summary?, files_modified?}. PENDING -> IN_PROGRESS
// emits STORY_CREATED, -> COMPLETE emits STORY_COMPLETE (EPIC_COMPLETE when the
// epic completes). FAILED is refused here: use StigmergyStoryFailed.
Result<Json> StigmergyStory(OpContext& ctx, const Json& in);
// {run, story_id, reason}: attempts += 1, story FAILED; LAW V as above.
Result<Json> StigmergyStoryFailed(OpContext& ctx, const Json& in);
// {run, signal, summary?, files_modified?}: sets system_signal. An unknown
// signal is InvalidArgument listing the vocabulary.
Result<Json> StigmergySignal(OpContext& ctx, const Json& in);
// {run, summary, history_ref?[seq]}: opens an issue (OPEN). Every seq must be a
// history event of the run.
Result<Json> StigmergyOpenIssue(OpContext& ctx, const Json& in);
// {run, issue_id, resolution?}: the issue becomes RESOLVED (dexter's
// *resolve_issue).
Result<Json> StigmergyResolveIssue(OpContext& ctx, const Json& in);

// {run}: saul's ordered dispatch list, first match wins:
//   1 an issue is OPEN -> @dexter      6 signal EPIC_COMPLETE -> @metis
//   2 NEEDS_BRIEFING -> @mary          7 signal ESCALATION_REQUIRED not yet
//   3 NEEDS_PLANNING -> @john            logged -> log an issue, @dexter
//   4 READY_FOR_EXECUTION -> @bob      8 all epics COMPLETE -> report (null)
//   5 STORY_CREATED and autonomous     9 otherwise -> wait for the user (null)
//     -> @olivia
// While the project is HUMAN_INPUT_REQUIRED (a question is open) the answer is
// rule 9. Returns {agent, rule, rule_name, action, reason, story?,
// project_status, system_signal, autonomy_mode}.
Result<Json> StigmergyNext(OpContext& ctx, const Json& in);

// {run}: the v2.0 document — schema_version, project_name, autonomy_mode,
// project_status, system_signal, project_manifest{epics[{epic_id, title,
// status, stories[{story_id, title, status}]}]}, history[{seq, timestamp,
// agent_id, signal, summary, files_modified}] (from the ledger) and
// issue_log[{issue_id, timestamp, status, summary, history_ref[seq]}].
Result<Json> StigmergyState(OpContext& ctx, const Json& in);

}  // namespace baton

#endif  // BATON_SRC_ENGINE_PROFILES_STIGMERGY_STIGMERGY_H_
