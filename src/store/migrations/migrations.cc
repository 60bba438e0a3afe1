#include "store/migrations/migrations.h"

#include <cctype>
#include <string>

#include "util/clock.h"

namespace baton {
namespace {

// Portable SQL only: TEXT, INTEGER, REAL; JSON is stored as TEXT.
constexpr Migration kMigrations[] = {
    {1, "core: projects, runs, tasks, dependencies, ledger, idempotency", R"SQL(
CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  repo_path TEXT,
  autonomy_mode TEXT NOT NULL DEFAULT 'autonomous',
  meta TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  project_id TEXT REFERENCES projects(id),
  profile TEXT NOT NULL,
  machine TEXT NOT NULL,
  status TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  cursor TEXT,
  cursor_index INTEGER,
  context TEXT NOT NULL DEFAULT '{}',
  meta TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX runs_project ON runs(project_id, created_at);
CREATE INDEX runs_status ON runs(status);
CREATE TABLE tasks (
  id TEXT PRIMARY KEY,
  run_id TEXT REFERENCES runs(id),
  project_id TEXT REFERENCES projects(id),
  parent_id TEXT REFERENCES tasks(id),
  kind TEXT NOT NULL,
  key TEXT,
  title TEXT NOT NULL,
  body TEXT NOT NULL DEFAULT '',
  machine TEXT NOT NULL,
  status TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  position INTEGER NOT NULL DEFAULT 0,
  assignee TEXT,
  lease_owner TEXT,
  lease_epoch INTEGER NOT NULL DEFAULT 0,
  lease_expires_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  board_column TEXT,
  result TEXT,
  meta TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (run_id, key)
);
CREATE INDEX tasks_run_status ON tasks(run_id, status);
CREATE INDEX tasks_project_status ON tasks(project_id, status, priority, position);
CREATE INDEX tasks_parent ON tasks(parent_id);
CREATE TABLE task_deps (
  task_id TEXT NOT NULL REFERENCES tasks(id),
  depends_on_id TEXT NOT NULL REFERENCES tasks(id),
  dep_type TEXT NOT NULL DEFAULT 'depends_on',
  PRIMARY KEY (task_id, depends_on_id),
  CHECK (task_id <> depends_on_id)
);
CREATE INDEX task_deps_reverse ON task_deps(depends_on_id);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY,
  time TEXT NOT NULL,
  run_id TEXT,
  actor_id TEXT NOT NULL,
  actor_role TEXT NOT NULL,
  kind TEXT NOT NULL,
  summary TEXT NOT NULL,
  payload TEXT NOT NULL,
  files TEXT NOT NULL,
  refs TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX events_run ON events(run_id, seq);
CREATE INDEX events_kind ON events(kind, seq);
CREATE TABLE ledger_head (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL
);
CREATE TABLE idempotency (
  key TEXT PRIMARY KEY,
  op TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  result TEXT NOT NULL,
  created_at TEXT NOT NULL
)
)SQL"},
    {2, "coordination: trigger rules, agents, teams, wishes, mailbox, chat, boards", R"SQL(
CREATE TABLE boards (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  project_key TEXT NOT NULL DEFAULT '',
  project_id TEXT REFERENCES projects(id),
  description TEXT NOT NULL DEFAULT '',
  template TEXT,
  columns TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_key, name)
);
CREATE TABLE board_templates (
  name TEXT PRIMARY KEY,
  description TEXT NOT NULL DEFAULT '',
  icon TEXT,
  columns TEXT NOT NULL,
  created_at TEXT NOT NULL
);
ALTER TABLE tasks ADD COLUMN trigger_rule TEXT NOT NULL DEFAULT 'all_success';
ALTER TABLE tasks ADD COLUMN blocked_reason TEXT;
ALTER TABLE tasks ADD COLUMN board_id TEXT REFERENCES boards(id);
CREATE INDEX tasks_claim ON tasks(status, priority DESC, position, created_at, id);
CREATE INDEX tasks_lease ON tasks(lease_owner);
CREATE INDEX tasks_board ON tasks(board_id, board_column);
CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  role TEXT NOT NULL DEFAULT 'agent',
  kind TEXT NOT NULL DEFAULT 'task',
  provider TEXT,
  model TEXT,
  team TEXT,
  project_id TEXT REFERENCES projects(id),
  machine TEXT NOT NULL,
  status TEXT NOT NULL,
  session_ids TEXT NOT NULL DEFAULT '[]',
  auto_resume INTEGER NOT NULL DEFAULT 1,
  delivery_command TEXT,
  last_heartbeat_ms INTEGER,
  meta TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX agents_role ON agents(role);
CREATE INDEX agents_team ON agents(team);
CREATE TABLE teams (
  name TEXT PRIMARY KEY,
  project_id TEXT REFERENCES projects(id),
  repo TEXT NOT NULL,
  base_branch TEXT NOT NULL,
  branch TEXT NOT NULL,
  worktree_path TEXT NOT NULL,
  leader TEXT,
  members TEXT NOT NULL DEFAULT '[]',
  wish_run_id TEXT REFERENCES runs(id),
  machine TEXT NOT NULL,
  status TEXT NOT NULL,
  meta TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE wishes (
  project_key TEXT NOT NULL DEFAULT '',
  slug TEXT NOT NULL,
  run_id TEXT NOT NULL UNIQUE REFERENCES runs(id),
  wish_file TEXT,
  signature TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (project_key, slug)
);
CREATE TABLE messages (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT REFERENCES projects(id),
  run_id TEXT REFERENCES runs(id),
  sender TEXT NOT NULL,
  recipient TEXT NOT NULL,
  addressed_to TEXT NOT NULL,
  body TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'agent',
  meta TEXT NOT NULL DEFAULT '{}',
  read INTEGER NOT NULL DEFAULT 0,
  read_at TEXT,
  read_by TEXT,
  delivery_status TEXT NOT NULL DEFAULT 'pending',
  delivery_attempts INTEGER NOT NULL DEFAULT 0,
  delivered_at TEXT,
  last_error TEXT,
  next_attempt_ms INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX messages_inbox ON messages(recipient, read, seq);
CREATE INDEX messages_outbox ON messages(sender, seq);
CREATE INDEX messages_delivery ON messages(delivery_status, next_attempt_ms);
CREATE TABLE chat_messages (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  channel TEXT NOT NULL,
  project_id TEXT REFERENCES projects(id),
  sender TEXT NOT NULL,
  body TEXT NOT NULL,
  meta TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);
CREATE INDEX chat_channel ON chat_messages(channel, seq)
)SQL"},
    {3, "human in the loop and profiles: questions, approvals, handoffs, sessions, usage", R"SQL(
CREATE TABLE questions (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  run_id TEXT REFERENCES runs(id),
  project_id TEXT REFERENCES projects(id),
  asked_by TEXT NOT NULL,
  asked_by_role TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT '',
  questions TEXT NOT NULL,
  work_gate INTEGER NOT NULL DEFAULT 0,
  blocks TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'open',
  status_before TEXT,
  answer TEXT,
  answered_by TEXT,
  answered_at TEXT,
  delivered_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX questions_id ON questions(id, status);
CREATE INDEX questions_run ON questions(run_id, status);
CREATE TABLE handoffs (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id),
  session_id TEXT,
  sequence INTEGER NOT NULL,
  source TEXT NOT NULL,
  target TEXT NOT NULL,
  type TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  step_id TEXT REFERENCES tasks(id),
  body TEXT NOT NULL DEFAULT '',
  meta TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (run_id, sequence)
);
CREATE TABLE approvals (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  run_id TEXT REFERENCES runs(id),
  subject_kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  decision TEXT NOT NULL,
  reviewer TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  event_seq INTEGER NOT NULL,
  meta TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);
CREATE INDEX approvals_subject ON approvals(run_id, subject_kind, subject, seq);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  run_id TEXT REFERENCES runs(id),
  status TEXT NOT NULL DEFAULT 'active',
  started_at TEXT NOT NULL,
  last_active_at TEXT NOT NULL,
  meta TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX sessions_run ON sessions(run_id, started_at);
CREATE TABLE usage (
  seq INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id),
  agent TEXT NOT NULL,
  model TEXT NOT NULL DEFAULT '',
  step_id TEXT NOT NULL DEFAULT '',
  session_id TEXT NOT NULL DEFAULT '',
  cost REAL NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX usage_run ON usage(run_id, agent, model)
)SQL"},
    {4, "seed-file mirrors", R"SQL(
CREATE TABLE mirrors (
  path TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id),
  format TEXT NOT NULL,
  last_error TEXT,
  failed_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX mirrors_run ON mirrors(run_id)
)SQL"},
    {5, "bearer tokens for HTTP callers (stored hashed)", R"SQL(
CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL,
  role TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
)
)SQL"},
    {6, "graph workflows: checkpoints (what changed after each node), definitions by hash", R"SQL(
CREATE TABLE graph_checkpoints (
  run_id TEXT NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  node TEXT NOT NULL,
  outcome TEXT NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 1,
  next_node TEXT NOT NULL,
  base TEXT,
  delta TEXT,
  folded INTEGER NOT NULL DEFAULT 0,
  duration_ms INTEGER NOT NULL DEFAULT 0,
  event_seq INTEGER,
  created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE graph_definitions (
  hash TEXT PRIMARY KEY,
  text TEXT NOT NULL,
  created_at TEXT NOT NULL
)
)SQL"},
    {7, "tokens carry grants (commands, definitions, paths) beside their role", R"SQL(
ALTER TABLE tokens ADD COLUMN grants TEXT NOT NULL DEFAULT '[]'
)SQL"},
    {8, "the dashboard: inbox items dismissed until they change, the page's sessions", R"SQL(
CREATE TABLE inbox_dismissals (
  item TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  dismissed_by TEXT NOT NULL,
  dismissed_at TEXT NOT NULL
);
CREATE TABLE web_sessions (
  id_hash TEXT PRIMARY KEY,
  proof_hash TEXT NOT NULL,
  credential TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  role TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_ms INTEGER NOT NULL
)
)SQL"},
    {9, "team.create reserves its name while git clones, outside any transaction", R"SQL(
CREATE TABLE team_reservations (
  name TEXT PRIMARY KEY,
  token TEXT NOT NULL,
  actor TEXT NOT NULL,
  repo TEXT NOT NULL,
  base_branch TEXT NOT NULL,
  path TEXT NOT NULL,
  tmp TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL
)
)SQL"},
    // A message is kept as the JSON text it was (->, with each message's
    // full key, gives the stored text: numbers keep every digit). Only an
    // array moves; a conversationHistory of another type, or a meta that is
    // not JSON, stays as it is (CASE: SQLite's JSON functions raise an
    // error on text that is not JSON, and CASE evaluates only its branch).
    {10, "a graph run's conversation is appended message by message, outside the run's row", R"SQL(
CREATE TABLE graph_messages (
  run_id TEXT NOT NULL REFERENCES runs(id),
  idx INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
);
INSERT INTO graph_messages (run_id, idx, message)
  SELECT r.id, m.key, r.meta -> m.fullkey
  FROM runs r,
       json_each(CASE WHEN (CASE WHEN json_valid(r.meta)
                            THEN json_type(r.meta, '$.conversationHistory') END) = 'array'
                 THEN r.meta ELSE '{}' END, '$.conversationHistory') m
  WHERE r.profile = 'graph';
UPDATE runs SET meta = json_remove(meta, '$.conversationHistory')
  WHERE profile = 'graph'
    AND CASE WHEN json_valid(meta) THEN json_type(meta, '$.conversationHistory') END = 'array'
)SQL",
     // No PostgreSQL store held a schema older than 10 (the backend came
     // after it): there is no conversation in a run's row to move.
     R"SQL(
CREATE TABLE graph_messages (
  run_id TEXT NOT NULL REFERENCES runs(id),
  idx INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
)
)SQL"},
    // Reads of one object cost what it holds (issue 21): one run's events of
    // one kind through that run, the newest runs and the open questions
    // without reading all of them.
    {11, "indexes for reads of one run, the newest runs and the open questions", R"SQL(
CREATE INDEX events_run_kind ON events(run_id, kind, seq);
CREATE INDEX runs_updated ON runs(updated_at);
CREATE INDEX questions_open ON questions(status, seq)
)SQL"},
    // The counts baton status shows, kept instead of counted (the events'
    // count is the ledger head's seq: the chain has no gaps). Counted and
    // kept from one transaction on, so no write between the two is missed.
    // PostgreSQL's triggers run once per statement: a copy of many rows in
    // one transaction (baton store migrate) makes one row version of the
    // count per statement, not per row. No ";" ends a line inside a
    // trigger's or a function's body: migrations are split there.
    {12, "the row counts baton status shows, kept by triggers", R"SQL(
CREATE TABLE row_counts (name TEXT PRIMARY KEY, n INTEGER NOT NULL);
INSERT INTO row_counts (name, n) SELECT 'projects', COUNT(*) FROM projects;
INSERT INTO row_counts (name, n) SELECT 'runs', COUNT(*) FROM runs;
INSERT INTO row_counts (name, n) SELECT 'tasks', COUNT(*) FROM tasks;
CREATE TRIGGER projects_added AFTER INSERT ON projects BEGIN
  UPDATE row_counts SET n = n + 1 WHERE name = 'projects'; END;
CREATE TRIGGER projects_removed AFTER DELETE ON projects BEGIN
  UPDATE row_counts SET n = n - 1 WHERE name = 'projects'; END;
CREATE TRIGGER runs_added AFTER INSERT ON runs BEGIN
  UPDATE row_counts SET n = n + 1 WHERE name = 'runs'; END;
CREATE TRIGGER runs_removed AFTER DELETE ON runs BEGIN
  UPDATE row_counts SET n = n - 1 WHERE name = 'runs'; END;
CREATE TRIGGER tasks_added AFTER INSERT ON tasks BEGIN
  UPDATE row_counts SET n = n + 1 WHERE name = 'tasks'; END;
CREATE TRIGGER tasks_removed AFTER DELETE ON tasks BEGIN
  UPDATE row_counts SET n = n - 1 WHERE name = 'tasks'; END
)SQL",
     R"SQL(
CREATE TABLE row_counts (name TEXT PRIMARY KEY, n INTEGER NOT NULL);
INSERT INTO row_counts (name, n) SELECT 'projects', COUNT(*) FROM projects;
INSERT INTO row_counts (name, n) SELECT 'runs', COUNT(*) FROM runs;
INSERT INTO row_counts (name, n) SELECT 'tasks', COUNT(*) FROM tasks;
CREATE FUNCTION baton_rows_added() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  UPDATE row_counts SET n = n + (SELECT COUNT(*) FROM added)
    WHERE name = TG_TABLE_NAME; RETURN NULL; END $$;
CREATE FUNCTION baton_rows_removed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  UPDATE row_counts SET n = n - (SELECT COUNT(*) FROM removed)
    WHERE name = TG_TABLE_NAME; RETURN NULL; END $$;
CREATE TRIGGER projects_added AFTER INSERT ON projects REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION baton_rows_added();
CREATE TRIGGER projects_removed AFTER DELETE ON projects REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION baton_rows_removed();
CREATE TRIGGER runs_added AFTER INSERT ON runs REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION baton_rows_added();
CREATE TRIGGER runs_removed AFTER DELETE ON runs REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION baton_rows_removed();
CREATE TRIGGER tasks_added AFTER INSERT ON tasks REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION baton_rows_added();
CREATE TRIGGER tasks_removed AFTER DELETE ON tasks REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION baton_rows_removed()
)SQL"},
    // Bounded growth (issue 21): `baton ledger archive` moves the oldest
    // events to a file; each archive's range, the hash it ends on and the
    // file's digest stay here, and the newest is the anchor the chain is
    // verified from (engine/ledger/archive.h).
    {13, "the archives of the ledger's oldest events", R"SQL(
CREATE TABLE ledger_archives (
  through_seq INTEGER PRIMARY KEY,
  first_seq INTEGER NOT NULL,
  prev_hash TEXT NOT NULL,
  through_hash TEXT NOT NULL,
  file TEXT NOT NULL,
  file_sha256 TEXT NOT NULL,
  event_seq INTEGER NOT NULL,
  created_at TEXT NOT NULL
)
)SQL"},
    // A graph run's initial context (what a reset goes back to) out of its
    // meta, which a node's commit reads and patches (issue 21 item 3). Runs
    // made before keep it in their meta until their row is next written
    // whole (run_table.cc moves it then).
    {14, "graph runs' initial context beside the run, not in its meta", R"SQL(
CREATE TABLE graph_initials (
  run_id TEXT PRIMARY KEY REFERENCES runs(id),
  context TEXT NOT NULL
)
)SQL"},
    // A graph run's large context values (kSplitContextBytes and up), one
    // row per key, out of the run's row, which a node's commit patches
    // (issue 21 item 3; store/tables/graph_context_table.h). Runs made
    // before keep theirs in the row until it is next written whole or the
    // node sets that key.
    {15, "graph runs' large context values beside the run, one row per key", R"SQL(
CREATE TABLE graph_context_values (
  run_id TEXT NOT NULL REFERENCES runs(id),
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
)
)SQL"},
};

// Splits a migration into statements. Migrations are ours, so a plain split
// on ";\n" is enough: no statement contains that sequence inside a string.
std::vector<std::string> Statements(const char* sql) {
  std::vector<std::string> out;
  std::string text(sql);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(";\n", start);
    if (end == std::string::npos) end = text.size();
    std::string stmt = text.substr(start, end - start);
    if (stmt.find_first_not_of(" \n\t") != std::string::npos) out.push_back(stmt);
    start = end + 2;
  }
  return out;
}

// Replaces the whole word "word" in "text" by "by".
void ReplaceWord(std::string& text, std::string_view word, std::string_view by) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos)) {
    const size_t end = pos + word.size();
    if ((pos > 0 && is_word(text[pos - 1])) || (end < text.size() && is_word(text[end]))) {
      pos = end;
      continue;
    }
    text.replace(pos, word.size(), by);
    pos += by.size();
  }
}

// SQLite's column types as PostgreSQL's: 64-bit integers (times in
// milliseconds do not fit in 32 bits), a rowid-like key as an identity, and
// text compared and ordered byte by byte, as SQLite's BINARY collation does
// (whatever the database's locale), so both list rows in one order.
std::string ForPostgres(std::string stmt) {
  ReplaceWord(stmt, "TEXT", "TEXT COLLATE \"C\"");
  ReplaceWord(stmt, "INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
  ReplaceWord(stmt, "INTEGER", "BIGINT");
  ReplaceWord(stmt, "REAL", "DOUBLE PRECISION");
  return stmt;
}

Result<int> AppliedVersion(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", {}));
  return static_cast<int>(rows.at(0).Int(0));
}

// Applies the first migration "txn"'s store lacks, under its write lock;
// the version the store has after it.
Result<int> ApplyNext(Txn& txn) {
  std::string create =
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
      "name TEXT NOT NULL, applied_at TEXT NOT NULL)";
  if (txn.dialect() == SqlDialect::kPostgres) {
    // An identity would number versions itself; they are ours.
    create = "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
             "name TEXT NOT NULL, applied_at TEXT NOT NULL)";
  }
  RETURN_IF_ERROR(txn.Exec(create, {}).status());
  ASSIGN_OR_RETURN(int applied, AppliedVersion(txn));
  if (applied > LatestSchemaVersion()) {
    return FailedPreconditionError(
        "the store has schema version " + std::to_string(applied) +
        ", newer than this baton understands (" + std::to_string(LatestSchemaVersion()) +
        "); upgrade baton");
  }
  for (const Migration& m : kMigrations) {
    if (m.version <= applied) continue;
    for (const std::string& stmt : MigrationStatements(m, txn.dialect())) {
      Status s = txn.Exec(stmt, {}).status();
      if (!s.ok()) return s.WithPrefix("migration " + std::to_string(m.version));
    }
    RETURN_IF_ERROR(txn.Exec("INSERT INTO schema_migrations (version, name, applied_at) "
                             "VALUES (?, ?, ?)",
                             {SqlInt(m.version), SqlText(m.name), SqlText(NowRfc3339())})
                        .status());
    return m.version;
  }
  return applied;
}

}  // namespace

std::span<const Migration> AllMigrations() { return kMigrations; }

int LatestSchemaVersion() { return kMigrations[std::size(kMigrations) - 1].version; }

std::vector<std::string> MigrationStatements(const Migration& m, SqlDialect dialect) {
  if (dialect == SqlDialect::kSqlite) return Statements(m.sql);
  std::vector<std::string> out;
  for (std::string& stmt : Statements(m.postgres_sql != nullptr ? m.postgres_sql : m.sql)) {
    out.push_back(ForPostgres(std::move(stmt)));
  }
  return out;
}

Result<int> Migrate(Connection& conn) {
  // Fast path: an up-to-date store needs only a read.
  {
    ASSIGN_OR_RETURN(std::unique_ptr<Txn> read, conn.Begin(TxnMode::kRead));
    Result<int> version = AppliedVersion(*read);
    if (version.ok() && *version == LatestSchemaVersion()) return *version;
  }
  // One transaction per migration. The write lock serialises racing
  // processes; the loser re-reads the version inside its own transaction
  // and finds that migration applied.
  for (;;) {
    ASSIGN_OR_RETURN(std::unique_ptr<Txn> txn, conn.Begin(TxnMode::kWrite));
    ASSIGN_OR_RETURN(int version, ApplyNext(*txn));
    RETURN_IF_ERROR(txn->Commit());
    if (version == LatestSchemaVersion()) return version;
  }
}

}  // namespace baton
