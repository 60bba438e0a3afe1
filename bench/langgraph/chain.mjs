// LangGraph.js reference runner for baton's graph benchmark.
//
// Builds a linear StateGraph n0 -> n1 -> ... -> n(N-1) -> END, checkpointed by
// SqliteSaver on a fresh file, invokes it R times (fresh thread_id each) and
// prints ONE JSON line on stdout. The C++ bench runs, from this folder:
//   node chain.mjs --mode noop|history|bigstate --nodes N --db PATH [--repeat R] [--durability async|sync|exit]
// and parses that line. Setup once: `npm ci --no-audit --no-fund --loglevel=error`.
//
// What SqliteSaver does (read from node_modules, versions pinned in package.json):
// * @langchain/langgraph-checkpoint-sqlite/dist/index.js, setup(): the only
//   pragma it sets is `journal_mode=WAL`. It never sets `synchronous`, so the
//   better-sqlite3 build default applies: better-sqlite3/deps/defines.gypi
//   compiles SQLite with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1, i.e. synchronous=NORMAL
//   in WAL mode: commits are NOT fsynced (the WAL is synced only at checkpoint),
//   so a power loss can drop the last commits; a process crash cannot.
// * Per superstep (one node per step in a chain) the Pregel loop
//   (@langchain/langgraph/dist/pregel/loop.js) calls
//     - putWrites(): one explicit transaction (db.transaction) with one
//       `INSERT OR IGNORE/REPLACE INTO writes` per channel write of the task;
//     - put(): one autocommit `INSERT OR REPLACE INTO checkpoints` holding the
//       whole serialized checkpoint (JSON of the full state, so in "history"
//       mode the full, growing messages list is rewritten every step).
//   => 2 SQLite transactions per node; per run N+2 checkpoint rows (input step
//   -1, __start__ step 0, one per node). Statements are re-prepared on every
//   call (db.prepare in put/putWrites). Each checkpoint also carries
//   channel_versions / versions_seen for every node already reached (one
//   "branch:to:nX" channel per node), so even in "noop" mode a checkpoint grows
//   with N (about 50 KB at step 1000) and the per-step cost grows with N.
// * Default durability is "async" (pregel/index.js): the step's put() is
//   chained as a promise and not awaited before the next step runs, but
//   invoke() awaits all pending saves before returning, so they are timed.
//   better-sqlite3 is synchronous, so the SQL runs on the main thread anyway.
import { existsSync, rmSync, statSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";

const { values: args } = parseArgs({
  options: {
    mode: { type: "string", default: "noop" },
    nodes: { type: "string", default: "1000" },
    db: { type: "string", default: "/tmp/lg.db" },
    repeat: { type: "string", default: "1" },
    durability: { type: "string" }, // unset = LangGraph's default ("async")
  },
});
const mode = args.mode;
const nodes = Number(args.nodes);
const repeat = Number(args.repeat);
const dbPath = args.db;
if (!["noop", "history", "bigstate"].includes(mode) || !(nodes > 0) || !(repeat > 0)) {
  console.error("usage: node chain.mjs --mode noop|history|bigstate --nodes N --db PATH [--repeat R]");
  process.exit(2);
}

const FILLER = "x".repeat(200);
// bigstate: a 100 KB value carried through every node, which changes only a
// counter beside it.
const BLOB = "y".repeat(100 * 1024);
const State =
  mode === "noop"
    ? Annotation.Root({ count: Annotation() }) // last-value channel
    : mode === "bigstate"
      ? Annotation.Root({ blob: Annotation(), count: Annotation() })
      : Annotation.Root({
          messages: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
        });
// When each node ran (ms since its invoke began): the first 100 nodes
// against the last 100 show whether a node's cost grows with the run.
const nodeStarts = [];
let invokeStart = 0;
const stamp = () => nodeStarts.push(performance.now() - invokeStart);
// noop: returning {} is accepted by LangGraph (no channel update, only the edge trigger).
const makeNode = (i) =>
  mode === "noop"
    ? () => (stamp(), {})
    : mode === "bigstate"
      ? () => (stamp(), { count: i + 1 })
      : () => (
          stamp(),
          {
            messages: [
              { type: "assistant", content: `message ${i} ${FILLER}`, timestamp: new Date().toISOString() },
            ],
          }
        );

for (const p of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) rmSync(p, { force: true });
const saver = SqliteSaver.fromConnString(dbPath);
saver.setup(); // creates tables + sets WAL outside the timed region
const db = saver.db;
const journalMode = db.pragma("journal_mode", { simple: true });
const synchronous = ["OFF", "NORMAL", "FULL", "EXTRA"][db.pragma("synchronous", { simple: true })];

const builder = new StateGraph(State);
for (let i = 0; i < nodes; i++) builder.addNode(`n${i}`, makeNode(i));
builder.addEdge(START, "n0");
for (let i = 1; i < nodes; i++) builder.addEdge(`n${i - 1}`, `n${i}`);
builder.addEdge(`n${nodes - 1}`, END);
const graph = builder.compile({ checkpointer: saver });

const input =
  mode === "noop" ? { count: 0 } : mode === "bigstate" ? { blob: BLOB, count: 0 } : { messages: [] };
let ns = 0n;
for (let r = 0; r < repeat; r++) {
  const config = { configurable: { thread_id: randomUUID() }, recursionLimit: nodes + 10 };
  if (args.durability) config.durability = args.durability;
  nodeStarts.length = 0;
  invokeStart = performance.now();
  const t0 = process.hrtime.bigint();
  const out = await graph.invoke(input, config);
  ns += process.hrtime.bigint() - t0;
  nodeStarts.push(performance.now() - invokeStart); // the end: all saves awaited
  if (mode === "history" && out.messages.length !== nodes) throw new Error("chain did not run to the end");
}

const count = (table) => db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get();
const checkpoints = count("checkpoints");
const writes = count("writes");
db.pragma("wal_checkpoint(TRUNCATE)");
db.close();
const size = (p) => (existsSync(p) ? statSync(p).size : 0);
const seconds = Number(ns) / 1e9;
console.log(
  JSON.stringify({
    mode,
    nodes,
    repeat,
    seconds,
    nodes_per_second: (nodes * repeat) / seconds,
    db_bytes: size(dbPath) + size(`${dbPath}-wal`),
    checkpoints,
    writes,
    journal_mode: journalMode,
    synchronous,
    durability: args.durability ?? "async (default)",
    // The last invoke's node start times, then its end (ms).
    node_ms: nodeStarts,
  }),
);
