// Shared by the end-to-end suites: the built baton binary, a fresh store per
// test, `baton serve` on a free port, and CLI calls as a user makes them.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BATON = process.env.BATON_BIN || path.resolve(here, '../../build/baton');

// A fresh folder with its store, made by `baton init` as users make one;
// remove() deletes it.
export function freshStore() {
  const dir = mkdtempSync(path.join(tmpdir(), 'baton-e2e-'));
  const store = path.join(dir, 'baton.db');
  execFileSync(BATON, ['--store', store, 'init'], { encoding: 'utf8' });
  return { dir, store, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// Runs `baton --store STORE args...` and returns its parsed JSON output.
export function cli(store, args, { agent, role } = {}) {
  const globals = ['--store', store, '--output', 'json'];
  if (agent) globals.push('--agent', agent);
  if (role) globals.push('--role', role);
  const out = execFileSync(BATON, [...globals, ...args], { encoding: 'utf8' });
  return JSON.parse(out);
}

// The argv of `baton mcp` for a caller.
export function mcpArgs(store, agent, role, extra = []) {
  return ['--store', store, '--agent', agent, '--role', role, 'mcp', ...extra];
}

// A bearer token for "holder" with "role" (and "grants"), made with
// `baton token create` as a user would; "as" is the maker's role (an admin
// token needs an admin).
export function token(store, holder, role, { grants = [], as } = {}) {
  const args = ['token', 'create', holder, '--holder-role', role];
  for (const g of grants) args.push('--grant', g);
  return cli(store, args, as ? { role: as } : {}).token;
}

// Starts `baton serve` on a free port; resolves to {url, secret, stop()}:
// "secret" is the human's, from the start-up link ("" under --auth none).
export function serve(store, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(BATON, ['--store', store, 'serve', '--listen', '127.0.0.1:0', ...extra], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[0-9.:]+)\n\s*dashboard:\s*(\S+)/);
      if (m) {
        resolve({
          url: m[1],
          secret: new URL(m[2]).hash.replace(/^#token=/, ''),
          stderr: () => err,
          stop: () =>
            new Promise((done) => {
              child.once('exit', done);
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`baton serve exited ${code}: ${err}`)));
  });
}

// Waits until "predicate" holds, polling; fails after "ms".
export async function eventually(predicate, ms = 8000, what = 'condition') {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Every tool, following nextCursor; returns {tools, pages}.
export async function listAllTools(client) {
  const tools = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { tools, pages };
}

// The structured result of a tool call that must succeed.
export async function call(client, name, args = {}) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} refused: ${result.content[0].text}`);
  return result.structuredContent;
}

// One read of every operation group, with inputs that work on a store holding
// the runs made first. A group with no entry here fails callEveryGroup.
function readsByGroup(runs) {
  return {
    agent: ['agent_list', {}],
    approval: ['approval_list', {}],
    board: ['board_templates', {}],
    chat: ['chat_channels', {}],
    inbox: ['inbox_list', {}],
    session: ['session_list', {}],
    graph: ['graph_check', { text: 'id: g\nnodes:\n  - {name: A, type: eval, code: "x = 1", then: END}\n' }],
    ledger: ['ledger_events', { limit: 5 }],
    machine: ['machine_list', {}],
    mail: ['mail_outbox', {}],
    mirror: ['mirror_list', {}],
    op: ['op_list', {}],
    project: ['project_list', {}],
    question: ['question_list', {}],
    run: ['run_show', { id: runs.sinfonia }],
    sgai: ['sgai_state', { run: runs.sgai }],
    sinfonia: ['sinfonia_state', { run: runs.sinfonia }],
    stigmergy: ['stigmergy_state', { run: runs.stigmergy }],
    store: ['store_status', {}],
    task: ['task_list', {}],
    team: ['team_list', {}],
    token: ['token_list', {}],
    wish: ['wish_list', {}],
  };
}

// Calls one read of every group among "names" (the tools listed), after
// making the runs they read; the SDK checks each structuredContent against
// the tool's outputSchema.
export async function callEveryGroup(client, names) {
  const runs = {};
  for (const profile of ['sgai', 'sinfonia', 'stigmergy']) {
    runs[profile] = (await call(client, 'run_create', { profile, title: `${profile} run` })).id;
  }
  const reads = readsByGroup(runs);
  const groups = new Set(names.map((n) => n.split('_')[0]));
  for (const group of groups) {
    if (!reads[group]) throw new Error(`no read of group ${group} in the test`);
    const [name, args] = reads[group];
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${result.content[0].text}`);
    if (JSON.stringify(JSON.parse(result.content[0].text)) !== JSON.stringify(result.structuredContent)) {
      throw new Error(`${name}: the text block is not the structured result`);
    }
  }
  return groups.size;
}
