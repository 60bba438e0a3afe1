#include "store/tables/run_table.h"

#include <map>
#include <utility>

#include "store/tables/graph_context_table.h"
#include "store/tables/graph_message_table.h"
#include "store/tables/row_values.h"
#include "util/json_util.h"

namespace baton {
namespace {

constexpr char kConversationKey[] = "conversationHistory";

bool HasConversation(const Run& run) { return run.profile == "graph"; }

// A graph run's initial context, as its meta carries it (meta.graph.initial);
// null when it carries none.
const Json* InitialOf(const Run& run) {
  if (!HasConversation(run) || !run.meta.is_object()) return nullptr;
  auto graph = run.meta.find("graph");
  if (graph == run.meta.end() || !graph->is_object()) return nullptr;
  auto initial = graph->find("initial");
  return initial == graph->end() ? nullptr : &*initial;
}

// The meta column's text: a graph run's without its conversation, which
// graph_messages holds, nor its initial context, which graph_initials holds.
// (A conversationHistory that is not an array is no conversation: it stays
// in meta, as migration 10 left such a one.)
std::string MetaText(const Run& run) {
  if (!HasConversation(run) || !run.meta.is_object()) return CanonicalJson(run.meta);
  auto conversation = run.meta.find(kConversationKey);
  const bool moved = conversation != run.meta.end() && conversation->is_array();
  if (!moved && InitialOf(run) == nullptr) return CanonicalJson(run.meta);
  Json meta = Json::object();
  for (auto it = run.meta.begin(); it != run.meta.end(); ++it) {
    if (moved && it == conversation) continue;
    meta[it.key()] = it.value();
  }
  if (InitialOf(run) != nullptr) meta["graph"].erase("initial");
  return CanonicalJson(meta);
}

// Keeps a graph run's initial context in graph_initials when its meta
// carries one (a run loaded without it leaves the stored one as it is).
Status StoreInitial(Txn& txn, const Run& run) {
  const Json* initial = InitialOf(run);
  if (initial == nullptr) return Status();
  return txn
      .Exec("INSERT INTO graph_initials (run_id, context) VALUES (?, ?) "
            "ON CONFLICT (run_id) DO UPDATE SET context = excluded.context",
            {SqlText(run.id), SqlText(CanonicalJson(*initial))})
      .status();
}

// Puts graph runs' initial contexts back into their meta (meta.graph.initial),
// unless a meta carries its own (written before migration 14).
Status LoadInitials(Txn& txn, std::vector<Run*> runs) {
  Json ids = Json::array();
  std::map<std::string, Run*> by_id;
  for (Run* run : runs) {
    if (!HasConversation(*run) || !run->meta.is_object() || InitialOf(*run) != nullptr) continue;
    auto graph = run->meta.find("graph");
    if (graph == run->meta.end() || !graph->is_object()) continue;
    ids.push_back(run->id);
    by_id[run->id] = run;
  }
  if (ids.empty()) return Status();
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT run_id, context FROM graph_initials WHERE "
                                         "run_id IN (") +
                                 JsonArrayElementsSql(txn.dialect()) + ")",
                             {SqlText(CanonicalJson(ids))}));
  for (const Row& r : rows) by_id[r.Str(0)]->meta["graph"]["initial"] = JsonOr(r, 1, Json::object());
  return Status();
}

// "run"'s context as stored: the context column's text and, for a graph
// run, its large values apart from the row.
struct StoredContext {
  std::string row;
  std::map<std::string, std::string> apart;
};

StoredContext StoredContextOf(const Run& run) {
  if (!HasConversation(run)) return {.row = CanonicalJson(run.context)};
  SplitContext split = SplitGraphContext(run.context);
  return {.row = CanonicalJson(split.in_row), .apart = std::move(split.apart)};
}

// What a graph run's row and graph_context_values hold beside it, written
// whole: a new run, a run stored whole, an import.
Status StoreGraphParts(Txn& txn, const Run& run, const StoredContext& context) {
  if (!HasConversation(run)) return Status();
  RETURN_IF_ERROR(StoreInitial(txn, run));
  return ReplaceGraphContextValues(txn, run.id, context.apart);
}

// Puts graph runs' large context values back into their context.
Status LoadContextValues(Txn& txn, const std::vector<Run*>& runs) {
  std::vector<std::string> ids;
  for (const Run* run : runs) {
    if (HasConversation(*run)) ids.push_back(run->id);
  }
  if (ids.empty()) return Status();
  ASSIGN_OR_RETURN(auto values, LoadGraphContextValues(txn, ids));
  for (Run* run : runs) {
    auto it = values.find(run->id);
    if (it == values.end() || !run->context.is_object()) continue;
    for (auto& [key, value] : it->second.items()) run->context[key] = std::move(value);
  }
  return Status();
}

// Whether json_set and json_remove can name "key" by a path, $."key": the
// path is compared with the stored text as it is spelled, so a key that
// JSON spells differently (escapes, non-ASCII text we may have repaired)
// or that the path cannot quote ('"') cannot, nor can an empty one.
bool NameableKey(const std::string& key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

// Sets the keys of "set" and removes those named in "unset" in run "id"'s
// JSON column "column" — in its member "member" when that is not empty —
// leaving the rest of the stored text to SQLite's json_set and json_remove:
// we neither read nor serialise it. Keys that cannot be named by a path, or
// a stored value that is not JSON or not an object there (json_set would
// change nothing, or fail), make it a read, merge and write of the column,
// as it always is on PostgreSQL (its jsonb would rewrite the whole text in
// its own form).
Status PatchRunJson(Txn& txn, const std::string& id, const std::string& column,
                    const std::string& member, const Json& set, const Json& unset) {
  if (set.empty() && unset.empty()) return Status();
  // SQLite's json_set takes at most 127 arguments: a node that sets more
  // keys than fit is read, merged and written.
  bool by_path = txn.dialect() == SqlDialect::kSqlite && set.size() + unset.size() <= 60;
  for (auto it = set.begin(); it != set.end(); ++it) by_path = by_path && NameableKey(it.key());
  for (const Json& key : unset) by_path = by_path && NameableKey(key.get<std::string>());
  if (by_path) {
    const std::string object = member.empty() ? "$" : "$." + member;
    const std::string prefix = object + ".";
    std::string edit = column;
    std::vector<SqlValue> params;
    if (!set.empty()) {
      edit = "json_set(" + edit;
      for (auto it = set.begin(); it != set.end(); ++it) {
        edit += ", ?, json(?)";
        params.push_back(SqlText(prefix + "\"" + it.key() + "\""));
        params.push_back(SqlText(CanonicalJson(it.value())));
      }
      edit += ")";
    }
    if (!unset.empty()) {
      edit = "json_remove(" + edit;
      for (const Json& key : unset) {
        edit += ", ?";
        params.push_back(SqlText(prefix + "\"" + key.get<std::string>() + "\""));
      }
      edit += ")";
    }
    params.push_back(SqlText(id));
    params.push_back(SqlText(object));
    // CASE: json_type raises an error on text that is not JSON.
    ASSIGN_OR_RETURN(int64_t changed,
                     txn.Exec("UPDATE runs SET " + column + " = " + edit + " WHERE id = ? AND " +
                                  "CASE WHEN json_valid(" + column + ") THEN json_type(" + column +
                                  ", ?) END = 'object'",
                              params));
    if (changed > 0) return Status();
  }
  ASSIGN_OR_RETURN(Row r, txn.QueryOne("SELECT " + column + " FROM runs WHERE id = ?",
                                       {SqlText(id)}, "run " + id));
  Json doc = JsonOr(r, 0, Json::object());
  if (!doc.is_object()) doc = Json::object();
  Json& object = member.empty() ? doc : doc[member];
  if (!object.is_object()) object = Json::object();
  for (auto it = set.begin(); it != set.end(); ++it) object[it.key()] = it.value();
  for (const Json& key : unset) object.erase(key.get<std::string>());
  return txn
      .Exec("UPDATE runs SET " + column + " = ? WHERE id = ?",
            {SqlText(CanonicalJson(doc)), SqlText(id)})
      .status();
}

// A graph run's conversation as its meta carries it: [] when it has none.
const Json& ConversationOf(const Run& run) {
  static const Json kNone = Json::array();
  if (!run.meta.is_object()) return kNone;
  auto it = run.meta.find(kConversationKey);
  return it != run.meta.end() && it->is_array() ? *it : kNone;
}

// Puts "messages" back where a graph run's readers find its conversation
// (unless its meta holds a conversationHistory that is no array, or is no
// object: those are shown as they are).
void SetConversation(Run& run, Json messages) {
  if (!run.meta.is_object() || run.meta.contains(kConversationKey)) return;
  run.meta[kConversationKey] = std::move(messages);
}

// "SELECT <columns> FROM runs WHERE ..." with every filter but the status,
// its parameters appended to "params". Words match without regard to case,
// as SQLite's LIKE does (ASCII letters); PostgreSQL's LIKE minds case.
std::string SelectFilteredRuns(SqlDialect dialect, const RunFilter& filter,
                               std::vector<SqlValue>& params) {
  std::string sql = std::string("SELECT ") + kRunColumns + " FROM runs WHERE 1 = 1";
  if (filter.project_id) {
    sql += " AND project_id = ?";
    params.push_back(SqlText(*filter.project_id));
  }
  if (filter.profile) {
    sql += " AND profile = ?";
    params.push_back(SqlText(*filter.profile));
  }
  if (filter.text) {
    std::string pattern;
    for (char c : *filter.text) {
      if (c == '%' || c == '_' || c == '\\') pattern += '\\';
      pattern += c;
    }
    const std::string like = dialect == SqlDialect::kPostgres ? " ILIKE " : " LIKE ";
    sql += " AND (id" + like + "? ESCAPE '\\' OR title" + like + "? ESCAPE '\\')";
    params.push_back(SqlText("%" + pattern + "%"));
    params.push_back(SqlText("%" + pattern + "%"));
  }
  return sql;
}

}  // namespace

const char kRunColumns[] =
    "id, project_id, profile, machine, status, title, cursor, cursor_index, "
    "context, meta, version, created_at, updated_at";

Run RunFromRow(const Row& r) {
  Run run;
  run.id = r.Str(0);
  run.project_id = TextOrNone(r, 1);
  run.profile = r.Str(2);
  run.machine = r.Str(3);
  run.status = r.Str(4);
  run.title = r.Str(5);
  run.cursor = TextOrNone(r, 6);
  if (!r.IsNull(7)) run.cursor_index = r.Int(7);
  run.context = JsonOr(r, 8, Json::object());
  run.meta = JsonOr(r, 9, Json::object());
  run.version = r.Int(10);
  run.created_at = r.Str(11);
  run.updated_at = r.Str(12);
  return run;
}

Result<Run> LoadRunRow(Txn& txn, const std::string& id, RunConversation conversation) {
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query(std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?", {SqlText(id)}));
  if (rows.empty()) return NotFoundError("run: no run with id \"" + id + "\"");
  Run run = RunFromRow(rows[0]);
  if (HasConversation(run) && conversation == RunConversation::kWith) {
    ASSIGN_OR_RETURN(Json messages, LoadGraphMessages(txn, id));
    SetConversation(run, std::move(messages));
  }
  RETURN_IF_ERROR(LoadInitials(txn, {&run}));
  RETURN_IF_ERROR(LoadContextValues(txn, {&run}));
  return run;
}

Result<Run> LoadRunRowWithoutState(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, project_id, profile, machine, status, title, cursor, "
                             "cursor_index, '{}', meta, version, created_at, updated_at "
                             "FROM runs WHERE id = ?",
                             {SqlText(id)}));
  if (rows.empty()) return NotFoundError("run: no run with id \"" + id + "\"");
  return RunFromRow(rows[0]);
}

Status InsertRunRow(Txn& txn, const Run& run) {
  const StoredContext context = StoredContextOf(run);
  RETURN_IF_ERROR(txn
      .Exec(
          "INSERT INTO runs (id, project_id, profile, machine, status, title, cursor, "
          "cursor_index, context, meta, version, created_at, updated_at) VALUES "
          "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
          {SqlText(run.id), SqlNullable(run.project_id),
           SqlText(run.profile), SqlText(run.machine), SqlText(run.status), SqlText(run.title),
           SqlNullable(run.cursor),
           SqlNullable(run.cursor_index),
           SqlText(context.row), SqlText(MetaText(run)),
           SqlText(run.created_at), SqlText(run.updated_at)})
      .status());
  if (!HasConversation(run)) return Status();
  RETURN_IF_ERROR(StoreGraphParts(txn, run, context));
  return ReplaceGraphMessages(txn, run.id, ConversationOf(run));
}

Status StoreRunRow(Txn& txn, const Run& run, const std::string& now) {
  const StoredContext context = StoredContextOf(run);
  RETURN_IF_ERROR(txn
      .Exec(
          "UPDATE runs SET status = ?, context = ?, meta = ?, "
          "version = version + 1, updated_at = ? WHERE id = ?",
          {SqlText(run.status), SqlText(context.row), SqlText(MetaText(run)),
           SqlText(now), SqlText(run.id)})
      .status());
  return StoreGraphParts(txn, run, context);
}

Result<std::optional<int64_t>> BumpRunVersion(Txn& txn, const std::string& id,
                                              const std::string& now,
                                              std::optional<int64_t> expect_version) {
  std::string sql = "UPDATE runs SET version = version + 1, updated_at = ? WHERE id = ?";
  std::vector<SqlValue> params = {SqlText(now), SqlText(id)};
  if (expect_version) {
    sql += " AND version = ?";
    params.push_back(SqlInt(*expect_version));
  }
  sql += " RETURNING version";
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  if (rows.empty()) return std::optional<int64_t>();
  return std::optional<int64_t>(rows[0].Int(0));
}

Result<std::vector<Run>> ListRunRows(Txn& txn, const RunFilter& filter) {
  std::vector<SqlValue> params;
  std::string sql = SelectFilteredRuns(txn.dialect(), filter, params);
  if (filter.status) {
    sql += " AND status = ?";
    params.push_back(SqlText(*filter.status));
  }
  // Times are milliseconds: changes within one are told apart by version.
  sql += filter.by_activity ? " ORDER BY updated_at DESC, version DESC, created_at DESC, id LIMIT ?"
                            : " ORDER BY created_at, id LIMIT ?";
  params.push_back(SqlInt(filter.limit));
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(sql, params));
  std::vector<Run> runs;
  runs.reserve(rows.size());
  std::vector<std::string> graph_runs;
  for (const Row& r : rows) {
    runs.push_back(RunFromRow(r));
    if (HasConversation(runs.back())) graph_runs.push_back(runs.back().id);
  }
  if (graph_runs.empty()) return runs;
  ASSIGN_OR_RETURN(auto conversations, LoadGraphMessagesOfRuns(txn, graph_runs));
  std::vector<Run*> graphs;
  for (Run& run : runs) {
    if (!HasConversation(run)) continue;
    auto it = conversations.find(run.id);
    SetConversation(run, it != conversations.end() ? std::move(it->second) : Json::array());
    graphs.push_back(&run);
  }
  RETURN_IF_ERROR(LoadInitials(txn, graphs));
  RETURN_IF_ERROR(LoadContextValues(txn, graphs));
  return runs;
}

Result<std::map<std::string, int64_t>> CountRunsByStatus(Txn& txn, const RunFilter& filter) {
  std::vector<SqlValue> params;
  const std::string sql = SelectFilteredRuns(txn.dialect(), filter, params);
  ASSIGN_OR_RETURN(
      std::vector<Row> rows,
      txn.Query("SELECT status, COUNT(*) FROM (" + sql + ") AS filtered GROUP BY status", params));
  std::map<std::string, int64_t> counts;
  for (const Row& r : rows) counts[r.Str(0)] = r.Int(1);
  return counts;
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

std::string InboxScopeSql(const InboxScope& scope, const std::string& alias,
                          std::vector<SqlValue>& params) {
  std::string sql;
  if (!scope.project_id.empty()) {
    sql += " AND " + alias + ".project_id = ?";
    params.push_back(SqlText(scope.project_id));
  }
  if (!scope.run_id.empty()) {
    sql += " AND " + alias + ".id = ?";
    params.push_back(SqlText(scope.run_id));
  }
  return sql;
}

std::optional<RunLabel> RunLabelAt(const Row& r, size_t at) {
  if (r.IsNull(at)) return std::nullopt;
  return RunLabel{.id = r.Str(at), .title = r.Str(at + 1), .profile = r.Str(at + 2)};
}

Status UpdateImportedRun(Txn& txn, const Run& run) {
  const StoredContext context = StoredContextOf(run);
  RETURN_IF_ERROR(txn
      .Exec(
          "UPDATE runs SET status = ?, title = ?, cursor = ?, cursor_index = ?, context = ?, "
          "meta = ?, version = version + 1, updated_at = ? WHERE id = ?",
          {SqlText(run.status), SqlText(run.title), SqlNullable(run.cursor),
           SqlNullable(run.cursor_index),
           SqlText(context.row), SqlText(MetaText(run)),
           SqlText(run.updated_at), SqlText(run.id)})
      .status());
  if (!HasConversation(run)) return Status();
  RETURN_IF_ERROR(StoreGraphParts(txn, run, context));
  return ReplaceGraphMessages(txn, run.id, ConversationOf(run));
}

Result<std::vector<ExecutionReadyRun>> ListRunsReadyForExecutionForInbox(Txn& txn,
                                                                         const InboxScope& scope) {
  std::vector<SqlValue> params;
  const std::string where = InboxScopeSql(scope, "r", params);
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT r.id, r.title, r.profile, r.updated_at, r.meta, "
                             "r.status, r.version FROM runs r WHERE r.profile = "
                             "'stigmergy' AND r.status = 'READY_FOR_EXECUTION'" +
                                 where + " ORDER BY r.updated_at",
                             params));
  std::vector<ExecutionReadyRun> runs;
  runs.reserve(rows.size());
  for (const Row& r : rows) {
    runs.push_back({.id = r.Str(0),
                    .title = r.Str(1),
                    .profile = r.Str(2),
                    .updated_at = r.Str(3),
                    .meta = JsonOr(r, 4, Json::object()),
                    .status = r.Str(5),
                    .version = r.Int(6)});
  }
  return runs;
}

Result<int64_t> CountAllRunRows(Txn& txn) {
  // Kept by triggers (migration 12), not counted.
  ASSIGN_OR_RETURN(Row r, txn.QueryOne("SELECT n FROM row_counts WHERE name = 'runs'", {},
                                       "row count of runs"));
  return r.Int(0);
}

Result<std::vector<OverviewRun>> ListRecentRunsForOverview(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, profile, machine, status, title, updated_at "
                             "FROM runs ORDER BY updated_at DESC LIMIT 200",
                             {}));
  std::vector<OverviewRun> runs;
  runs.reserve(rows.size());
  for (const Row& r : rows) {
    runs.push_back({.id = r.Str(0),
                    .profile = r.Str(1),
                    .machine = r.Str(2),
                    .status = r.Str(3),
                    .title = r.Str(4),
                    .updated_at = r.Str(5)});
  }
  return runs;
}

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

Result<std::vector<RunStatusForReplay>> ListRunStatusesForReplay(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT id, status FROM runs ORDER BY id", {}));
  std::vector<RunStatusForReplay> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Str(0), r.Str(1)});
  return out;
}

Status SetSinfoniaRunCursor(Txn& txn, const std::string& run_id, const std::string& step_key,
                            int64_t index, const std::string& now) {
  return txn
      .Exec(
          "UPDATE runs SET cursor = ?, cursor_index = ?, version = version + 1, "
          "updated_at = ? WHERE id = ?",
          {SqlTextOrNull(step_key), SqlInt(index), SqlText(now), SqlText(run_id)})
      .status();
}

// ---- What engine/graph asks ----

Status StoreGraphRunRow(Txn& txn, const Run& run, const std::string& now) {
  RETURN_IF_ERROR(txn
      .Exec("UPDATE runs SET status = ?, cursor = ?, cursor_index = ?, meta = ?, "
            "version = version + 1, updated_at = ? WHERE id = ?",
            {SqlText(run.status), SqlNullable(run.cursor), SqlNullable(run.cursor_index),
             SqlText(MetaText(run)), SqlText(now), SqlText(run.id)})
      .status());
  return StoreInitial(txn, run);
}

Status StoreGraphContextRow(Txn& txn, const std::string& id, const Json& context) {
  const SplitContext split = SplitGraphContext(context);
  RETURN_IF_ERROR(txn
      .Exec("UPDATE runs SET context = ? WHERE id = ?",
            {SqlText(CanonicalJson(split.in_row)), SqlText(id)})
      .status());
  return ReplaceGraphContextValues(txn, id, split.apart);
}

Status PatchGraphContextRow(Txn& txn, const std::string& id, const Json& set, const Json& unset) {
  // A key goes to the row or apart by its new value's size, and leaves the
  // other place (where an earlier value of another size may be). A key
  // both set and removed is removed, as json_remove(json_set(...)) and the
  // checkpoint's delta have it.
  Json kept = set;
  for (const Json& key : unset) kept.erase(key.get<std::string>());
  const SplitContext split = SplitGraphContext(kept);
  Json row_unset = unset;
  for (const auto& [key, text] : split.apart) row_unset.push_back(key);
  std::vector<std::string> drop;
  for (auto it = split.in_row.begin(); it != split.in_row.end(); ++it) drop.push_back(it.key());
  for (const Json& key : unset) drop.push_back(key.get<std::string>());
  RETURN_IF_ERROR(PatchRunJson(txn, id, "context", "", split.in_row, row_unset));
  return PatchGraphContextValues(txn, id, split.apart, drop);
}

Status StoreGraphStepRow(Txn& txn, const Run& run, const Json& graph_set, const Json& graph_unset,
                         const std::string& now) {
  RETURN_IF_ERROR(txn.Exec("UPDATE runs SET cursor = ?, cursor_index = ?, "
                           "version = version + 1, updated_at = ? WHERE id = ?",
                           {SqlNullable(run.cursor), SqlNullable(run.cursor_index), SqlText(now),
                            SqlText(run.id)})
                      .status());
  // The status only when it changed: a column named in SET rewrites its
  // index entry (runs_status) even to the same value, a page in the WAL at
  // every node.
  RETURN_IF_ERROR(txn.Exec("UPDATE runs SET status = ? WHERE id = ? AND status <> ?",
                           {SqlText(run.status), SqlText(run.id), SqlText(run.status)})
                      .status());
  return PatchRunJson(txn, run.id, "meta", "graph", graph_set, graph_unset);
}

Result<std::vector<std::string>> ListGraphForkMetaTexts(Txn& txn, const std::string& run_id) {
  // A run's meta is written as canonical JSON, and a patch (PatchRunJson)
  // leaves the members it does not name as they were written, so a fork's
  // meta contains this text; "_" in an id matches any character, which only widens.
  // PostgreSQL's LIKE reads '\' as an escape unless told otherwise (a JSON
  // text has them); SQLite's has none.
  const char* sql = txn.dialect() == SqlDialect::kPostgres
                        ? "SELECT meta FROM runs WHERE profile = 'graph' AND meta LIKE ? ESCAPE ''"
                        : "SELECT meta FROM runs WHERE profile = 'graph' AND meta LIKE ?";
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(sql,
                             {SqlText("%\"forked_from\":{\"run\":" + CanonicalJson(run_id) +
                                      ",%")}));
  return FirstColumn(rows);
}

Result<std::vector<RunMachineStatus>> ListRunMachineStatuses(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query("SELECT id, machine, status FROM runs", {}));
  std::vector<RunMachineStatus> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Str(0), r.Str(1), r.Str(2)});
  return out;
}

}  // namespace baton
