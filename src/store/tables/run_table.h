// File: run_table.h
//
// The runs table, typed (model/run.h): the columns, a row as a Run, one run
// by id, the filtered list run.list shows and its counts by status, a new
// run, a loaded run written back, and the version bump a progress note
// makes; then, section by section, what each room of the engine asks of
// runs (imports, the inbox, baton status, replay, Sinfonia's cursor, the
// graph runner's write-back). Every statement on runs is here. Portable SQL
// (? placeholders), so a second backend runs it as is.

#ifndef BATON_SRC_STORE_TABLES_RUN_TABLE_H_
#define BATON_SRC_STORE_TABLES_RUN_TABLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/run.h"
#include "store/store.h"
#include "util/json_util.h"

namespace baton {

// The columns RunFromRow reads, in its order, for "SELECT <columns> FROM runs".
extern const char kRunColumns[];

// A graph run's conversation (meta.conversationHistory) is not in its row
// but in graph_messages (graph_message_table.h), where a node appends to it.
// The functions here hide that: a graph run loaded has it in its meta (but
// for RunFromRow, which sees one row), a run inserted or imported puts it
// there, and a run's meta written back leaves it out — only the graph
// room's appends and resets change a conversation once it is stored. Its
// initial context (meta.graph.initial) is kept the same way, in the
// graph_initials table (migration 14): loaded back into the meta, written
// there whenever a meta that carries it is written (a run stored before
// migration 14 keeps it in its meta until then). And its context's large
// values (kSplitContextBytes and up) are kept one per row in
// graph_context_values (graph_context_table.h, migration 15): put back into
// the context when the run is loaded, written there when a context is
// (a run stored before keeps them in its row until then).

// The row alone: a graph run's meta has no conversation.
Run RunFromRow(const Row& row);

// Whether a graph run is loaded with its conversation: a caller that only
// checks the run or changes its other columns saves reading it.
enum class RunConversation { kWith, kWithout };

// NotFound "run: no run with id ..." when there is none.
Result<Run> LoadRunRow(Txn& txn, const std::string& id,
                       RunConversation conversation = RunConversation::kWith);

// The same without the context (left {}), the conversation or the initial
// context (meta.graph.initial, kept in graph_initials): for a caller that
// writes none of them whole — a graph node's commit patches what the node
// changed, and a large state is not read (nor parsed) at every node.
Result<Run> LoadRunRowWithoutState(Txn& txn, const std::string& id);

// Inserts "run" at version 1 (its version is not written): run.create's
// new run, and run.import's run read from a file. AlreadyExists, as the
// store reports it, when the id is taken.
Status InsertRunRow(Txn& txn, const Run& run);

// Writes run "run.id"'s status, context and meta, bumps its version and
// sets updated_at to "now".
Status StoreRunRow(Txn& txn, const Run& run, const std::string& now);

// Bumps run "id"'s version and sets updated_at to "now" — only while the
// version is "expect_version" when that is given. The new version, or none
// when no row matched (no such run, or it moved).
Result<std::optional<int64_t>> BumpRunVersion(Txn& txn, const std::string& id,
                                              const std::string& now,
                                              std::optional<int64_t> expect_version);

// run.list: the runs matching every filter that is set. "text" is matched,
// case aside, as words in the id or the title (LIKE's wildcards in it are
// taken literally). Ordered by creation then id, or with "by_activity" by
// the newest change first; at most "limit".
struct RunFilter {
  std::optional<std::string> project_id;
  std::optional<std::string> profile;
  std::optional<std::string> text;
  std::optional<std::string> status;
  bool by_activity = false;
  int64_t limit = 1000;
};
Result<std::vector<Run>> ListRunRows(Txn& txn, const RunFilter& filter);

// How many runs match every filter of "filter" but its status (and its
// order and limit), by status.
Result<std::map<std::string, int64_t>> CountRunsByStatus(Txn& txn, const RunFilter& filter);

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

// The part of the inbox's reads that a scope narrows: runs of one project,
// or one run ("" for every project or run).
struct InboxScope {
  std::string project_id;
  std::string run_id;
};
// " AND <alias>.project_id = ? AND <alias>.id = ?" for what "scope" sets,
// "alias" naming runs in the caller's statement; appends the values to
// "params".
std::string InboxScopeSql(const InboxScope& scope, const std::string& alias,
                          std::vector<SqlValue>& params);

// A run as an inbox item shows it, read from a statement's columns "at",
// "at" + 1 and "at" + 2 (id, title, profile): none when the id is NULL.
struct RunLabel {
  std::string id;
  std::string title;
  std::string profile;
};
std::optional<RunLabel> RunLabelAt(const Row& row, size_t at);

// run.import over a stored run: overwrites run "run.id"'s status, title,
// cursor, cursor_index, context, meta and updated_at with what a file says,
// and bumps its version (project, profile, machine and created_at are kept).
Status UpdateImportedRun(Txn& txn, const Run& run);

// inbox.list: supervised Stigmergy projects waiting to execute — the runs
// of profile stigmergy in READY_FOR_EXECUTION within "scope", oldest
// update first.
struct ExecutionReadyRun {
  std::string id;
  std::string title;
  std::string profile;
  std::string updated_at;
  Json meta;  // {} when unset
  std::string status;
  int64_t version = 0;
};
Result<std::vector<ExecutionReadyRun>> ListRunsReadyForExecutionForInbox(Txn& txn,
                                                                         const InboxScope& scope);

// baton status: how many runs the store holds.
Result<int64_t> CountAllRunRows(Txn& txn);

// baton status: the 200 runs updated last, latest first.
struct OverviewRun {
  std::string id;
  std::string profile;
  std::string machine;
  std::string status;
  std::string title;
  std::string updated_at;
};
Result<std::vector<OverviewRun>> ListRecentRunsForOverview(Txn& txn);

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

// A run's id and status, as `baton verify --deep` compares them with the
// status its events imply (engine/ledger/ledger_replay.h).
struct RunStatusForReplay {
  std::string id;
  std::string status;
};
// Every run, by id.
Result<std::vector<RunStatusForReplay>> ListRunStatusesForReplay(Txn& txn);

// A run's id, machine and status, as `baton ledger archive` asks which runs
// are still open (engine/ledger/archive.h).
struct RunMachineStatus {
  std::string id;
  std::string machine;
  std::string status;
};
// Every run.
Result<std::vector<RunMachineStatus>> ListRunMachineStatuses(Txn& txn);

// Sinfonia's cursor: run "run_id"'s current step is "step_key" (NULL when
// "" — no current step) at "index"; the version is bumped.
Status SetSinfoniaRunCursor(Txn& txn, const std::string& run_id, const std::string& step_key,
                            int64_t index, const std::string& now);

// ---- What engine/graph asks ----

// What the graph runner writes back after each step: run "run.id"'s
// status, cursor and cursor_index (none: NULL) and meta — not its context,
// which only StoreGraphContextRow and PatchGraphContextRow write; the version is
// bumped and updated_at set to "now".
Status StoreGraphRunRow(Txn& txn, const Run& run, const std::string& now);

// What a graph node's commit writes of the run itself: its status, cursor
// and cursor_index (none: NULL), and in meta.graph the keys of
// "graph_set" set and those named in "graph_unset" removed, the rest of the
// meta (the initial context, the definition, a fork's origin) not
// rewritten; the version is bumped and updated_at set to "now".
Status StoreGraphStepRow(Txn& txn, const Run& run, const Json& graph_set, const Json& graph_unset,
                         const std::string& now);

// Graph run "id"'s whole context (a reset).
Status StoreGraphContextRow(Txn& txn, const std::string& id, const Json& context);

// What a graph node changed in graph run "id"'s context, written as that:
// the keys of "set" (an object) take its values, the keys named in "unset"
// (an array of strings) go; a large value goes to its own row. The rest of
// the stored context is not rewritten by us: the storage engine edits the
// row's text, which holds no large value (SQLite's json_set and
// json_remove, the one statement here that is not portable as written;
// PostgreSQL says it as (context::jsonb - keys) || set). Keys the path syntax
// cannot name (empty, escaped in JSON, non-ASCII) make it a read, merge
// and write.
Status PatchGraphContextRow(Txn& txn, const std::string& id, const Json& set, const Json& unset);

// The stored meta of the graph runs whose meta may name "run_id" as the run
// they were forked from: the text narrows, the caller parses and decides.
Result<std::vector<std::string>> ListGraphForkMetaTexts(Txn& txn, const std::string& run_id);

}  // namespace baton

#endif  // BATON_SRC_STORE_TABLES_RUN_TABLE_H_
