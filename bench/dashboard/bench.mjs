#!/usr/bin/env node
// The dashboard's benchmark (issue 16 "Benchmark"; not part of the test
// suite). Prints a markdown table:
//   1. Server time for Needs you with 200 open items (the page's requests:
//      GET /, then POST /v1/ops/inbox.list with the session cookie and the
//      Origin), and for a run detail with 1,000 tasks (with dependencies) and
//      10,000 ledger events (the requests view_run.js makes), each beside the
//      same read operations through POST /v1/ops with a bearer token, in the
//      same run, with the ratio.
//   2. The browser's time to first render of each page (playwright-core and
//      Debian's Chromium; median of --renders).
//   3. Event delivery latency p50/p99 to --streams plain Node http clients on
//      GET /v1/events while --writers agents write run.add_progress, beside
//      the latency of the same write through POST /v1/ops alone (ratio).
// The server runs with --threads 320 --max-event-streams 128. Everything is
// on 127.0.0.1, bounded in count, and stops by itself.
//
//   node bench/dashboard/bench.mjs [--iterations 30] [--renders 5] [--streams 100]
//                                  [--writers 4] [--writes 100] [--skip-browser]
// Env: BATON_BIN (default build/baton), BATON_CHROMIUM (default /usr/bin/chromium).

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const BATON = process.env.BATON_BIN || path.join(root, 'build/baton');
const CHROMIUM = process.env.BATON_CHROMIUM || '/usr/bin/chromium';

const { values: opt } = parseArgs({
  options: {
    iterations: { type: 'string', default: '30' },
    renders: { type: 'string', default: '5' },
    streams: { type: 'string', default: '100' },
    writers: { type: 'string', default: '4' },
    writes: { type: 'string', default: '100' },
    'skip-browser': { type: 'boolean', default: false },
  },
});
const N = Number(opt.iterations);
const RENDERS = Number(opt.renders);
const STREAMS = Number(opt.streams);
const WRITERS = Number(opt.writers);
const WRITES = Number(opt.writes);

const log = (...a) => console.error('#', ...a);

// ---- statistics ---------------------------------------------------------------------------

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const median = (xs) => pct(xs, 50);
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

// ---- the server ---------------------------------------------------------------------------

function cli(store, args, { role, agent } = {}) {
  const g = ['--store', store, '--output', 'json'];
  if (agent) g.push('--agent', agent);
  if (role) g.push('--role', role);
  return JSON.parse(execFileSync(BATON, [...g, ...args], { encoding: 'utf8' }));
}

function serve(store) {
  return new Promise((resolve, reject) => {
    const child = spawn(BATON, ['--store', store, 'serve', '--listen', '127.0.0.1:0',
      '--threads', '320', '--max-event-streams', '128'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[0-9.]+:(\d+))\s*\n\s*dashboard:\s*(\S+)/);
      if (!m) return;
      const exited = new Promise((r) => child.once('exit', r));
      resolve({
        url: m[1], port: Number(m[2]), link: m[3], secret: new URL(m[3]).hash.replace(/^#token=/, ''),
        stop: async () => { child.kill('SIGTERM'); await exited; },
      });
    });
    child.once('exit', (code) => reject(new Error(`baton serve exited ${code}: ${err}`)));
  });
}

// One keep-alive agent for the request timings, so each sample is one
// request on a warm connection (as a browser tab has).
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers,
        body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body); else req.end();
  });
}

async function op(server, name, input, auth) {
  const r = await request(`${server.url}/v1/ops/${name}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...auth }, body: JSON.stringify(input),
  });
  if (r.status !== 200) throw new Error(`${name} -> ${r.status}: ${r.body.slice(0, 300)}`);
  return { ...r, json: JSON.parse(r.body) };
}

// Runs "jobs" (async functions) with "width" at once.
async function pool(jobs, width) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < jobs.length) await jobs[next++]();
  }));
}

// The session cookie as the page gets it: POST /v1/session {token}.
async function cookieAuth(server) {
  const r = await request(`${server.url}/v1/session`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Origin: server.url },
    body: JSON.stringify({ token: server.secret }),
  });
  if (r.status !== 200) throw new Error(`POST /v1/session -> ${r.status}: ${r.body}`);
  const set = [].concat(r.headers['set-cookie'] || []);
  const cookie = set.map((c) => c.split(';')[0]).find((c) => c.startsWith('baton_session'));
  if (!cookie) throw new Error(`no session cookie in ${JSON.stringify(set)}`);
  // The page sends its proof (kept in localStorage) beside the cookie.
  const proof = JSON.parse(r.body).proof;
  return { cookie, proof, headers: { Cookie: cookie, Origin: server.url, 'X-Baton-Proof': proof } };
}

// ---- data ---------------------------------------------------------------------------------

// 200 open items: 160 questions over 16 runs and 40 board cards at a human gate.
async function populateInbox(store, server, bearer, agentAuth) {
  const jobs = [];
  for (let r = 0; r < 16; r++) {
    const run = (await op(server, 'run.create', { profile: 'baton', title: `Inbox run ${r}` }, bearer)).json.id;
    await op(server, 'run.set_status', { id: run, status: 'running' }, bearer);
    for (let q = 0; q < 10; q++) {
      jobs.push(() => op(server, 'question.ask', { run, message: `Context for question ${r}.${q}`,
        questions: [{ question: `Question ${r}.${q}: which way?`, choices: ['left', 'right', 'neither'] }] }, agentAuth));
    }
  }
  const board = cli(store, ['board', 'create', '--name', 'Bench', '--template', 'software']).id;
  for (let c = 0; c < 40; c++) {
    jobs.push(async () => {
      const task = (await op(server, 'task.create', { title: `Card ${c}` }, bearer)).json.id;
      await op(server, 'board.add_task', { board, task, column: 'review' }, bearer);
    });
  }
  await pool(jobs, 8);
}

// One run with 1,000 tasks (each but the first depends on one or two earlier
// ones) and progress notes until its ledger holds 10,000 events.
async function populateRun(server, bearer) {
  const run = (await op(server, 'run.create', { profile: 'baton', title: 'Big run' }, bearer)).json.id;
  await op(server, 'run.set_status', { id: run, status: 'running' }, bearer);
  const ids = [];
  for (let i = 0; i < 1000; i++) {
    const deps = [];
    if (i > 0) deps.push(ids[i - 1 - (i % 7 === 0 ? 0 : Math.min(i - 1, i % 5))]);
    if (i >= 10 && i % 3 === 0) deps.push(ids[i - 10]);
    const input = { run, title: `Task ${i}` };
    if (deps.length) input.depends_on = [...new Set(deps)];
    ids.push((await op(server, 'task.create', input, bearer)).json.id);
  }
  const count = async () => {
    let n = 0;
    let before = Number.MAX_SAFE_INTEGER;
    for (;;) {
      const evs = (await op(server, 'ledger.events', { run, before, limit: 100000 }, bearer)).json.events;
      n += evs.length;
      if (evs.length < 100000) return n;
      before = evs[0].seq;
    }
  };
  let have = await count();
  const jobs = [];
  for (let i = have; i < 10000; i++) {
    jobs.push(() => op(server, 'run.add_progress', { id: run, description: `note ${i}` }, bearer));
  }
  await pool(jobs, 8);
  have = await count();
  return { run, tasks: ids.length, events: have };
}

// ---- 1. server time -----------------------------------------------------------------------

// Times "n" rounds of "fn" (after 3 warm-up rounds); returns per-round ms.
async function rounds(n, fn) {
  for (let i = 0; i < 3; i++) await fn();
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

// The run page's reads (view_run.js refresh(), run_sections.js runLedger()).
function runPageOps(run, machine) {
  return [
    ['run.show', { id: run, progress_limit: 100 }],
    ['machine.show', { name: machine }],
    ['task.list', { run, with_dependencies: true, limit: 100000 }],
    ['question.list', { run, status: 'all' }],
    ['approval.list', { run }],
    ['mail.list', { run }],
    ['run.usage', { run }],
    ['mirror.list', { run }],
    ['chat.channels', {}],
    ['ledger.events', { run, before: Number.MAX_SAFE_INTEGER, limit: 50 }],
  ];
}

async function serverTimes(server, big, cookie, bearer) {
  const rows = [];
  const page = async () => {
    const r = await request(`${server.url}/`, { headers: { Cookie: cookie.cookie } });
    if (r.status !== 200) throw new Error(`GET / -> ${r.status}`);
  };
  const inboxCookie = () => op(server, 'inbox.list', {}, cookie.headers);
  const inboxBearer = () => op(server, 'inbox.list', {}, bearer);
  const count = (await inboxBearer()).json.count;

  // Interleaved so both paths see the same machine state.
  const t = { get: [], cookie: [], bearer: [], pageSet: [] };
  for (let i = 0; i < 3; i++) { await page(); await inboxCookie(); await inboxBearer(); }
  for (let i = 0; i < N; i++) {
    let t0 = performance.now(); await page(); const g = performance.now() - t0;
    t0 = performance.now(); await inboxCookie(); const c = performance.now() - t0;
    t0 = performance.now(); await inboxBearer(); t.bearer.push(performance.now() - t0);
    t.get.push(g); t.cookie.push(c); t.pageSet.push(g + c);
  }
  rows.push([`Needs you (${count} items): GET / + inbox.list (cookie)`, t.pageSet, t.bearer, 'inbox.list (bearer)']);
  rows.push(['  of which GET /', t.get, null, '']);
  rows.push(['  of which inbox.list (cookie)', t.cookie, t.bearer, 'inbox.list (bearer)']);

  const machine = (await op(server, 'run.show', { id: big.run }, bearer)).json.machine;
  const ops = runPageOps(big.run, machine);
  // The page sends its reads at once (Promise.all): so do both sides here.
  const all = (auth) => Promise.all(ops.map(([name, input]) => op(server, name, input, auth)));
  const r = { cookie: [], bearer: [], taskC: [], taskB: [] };
  for (let i = 0; i < 3; i++) { await all(cookie.headers); await all(bearer); }
  for (let i = 0; i < N; i++) {
    let t0 = performance.now(); await page(); await all(cookie.headers); r.cookie.push(performance.now() - t0);
    t0 = performance.now(); await all(bearer); r.bearer.push(performance.now() - t0);
    t0 = performance.now(); await op(server, 'task.list', ops[2][1], cookie.headers); r.taskC.push(performance.now() - t0);
    t0 = performance.now(); await op(server, 'task.list', ops[2][1], bearer); r.taskB.push(performance.now() - t0);
  }
  const size = (await op(server, 'task.list', ops[2][1], bearer)).body.length;
  // Each read alone (bearer, one at a time), to see where the page's time goes.
  const each = [];
  for (const [name, input] of ops) {
    const xs = await rounds(Math.min(N, 10), () => op(server, name, input, bearer));
    const bytes = (await op(server, name, input, bearer)).body.length;
    each.push([name, xs, bytes]);
  }
  rows.push([`Run detail (${big.tasks} tasks, ${big.events} events): GET / + ${ops.length} reads (cookie)`,
    r.cookie, r.bearer, `the ${ops.length} reads (bearer)`]);
  rows.push([`  of which task.list with_dependencies (${(size / 1024).toFixed(0)} KiB, cookie)`, r.taskC, r.taskB,
    'task.list (bearer)']);
  return { rows, each };
}

// ---- 2. browser time to first render -------------------------------------------------------

async function browserRenders(server, big, inboxCount, cookie) {
  if (opt['skip-browser']) return [];
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium`);
  const require = createRequire(path.join(root, 'tests/e2e/package.json'));
  const { chromium } = require('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox',
    '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'] });
  const [name, value] = cookie.cookie.split('=');
  const measure = async (hash, selector, want) => {
    const out = [];
    for (let i = 0; i < RENDERS + 1; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.addCookies([{ name, value, url: server.url }]);
      await context.addInitScript((proof) => localStorage.setItem('baton-proof', proof), cookie.proof);
      // The page's own clock: from navigation start to the moment "want"
      // elements matching "selector" are in the DOM.
      await context.addInitScript(({ selector, want }) => {
        const check = () => {
          if (window.__rendered === undefined && document.querySelectorAll(selector).length >= want) {
            window.__rendered = performance.now();
          }
        };
        new MutationObserver(check).observe(document, { childList: true, subtree: true });
      }, { selector, want });
      const page = await context.newPage();
      await page.goto(`${server.url}/${hash}`);
      await page.waitForFunction(() => window.__rendered !== undefined, null, { timeout: 60000 });
      const t = await page.evaluate(() => window.__rendered);
      if (i > 0) out.push(t); // the first load warms the server and the browser's cache of nothing
      await context.close();
    }
    return out;
  };
  const rows = [];
  rows.push([`Needs you: ${inboxCount} cards in the DOM`, await measure('#/', '[data-test=inbox-item]', inboxCount)]);
  rows.push([`Run detail: ${big.tasks} task-graph nodes in the DOM`,
    await measure(`#/runs/${big.run}`, '[data-test=task-node]', big.tasks)]);
  await browser.close();
  return rows;
}

// ---- 3. event delivery latency ------------------------------------------------------------

// Opens one plain SSE reader; calls onLedger(data, receivedAt) per ledger event.
function openStream(server, bearer, onLedger) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.url}/v1/events`, { headers: { ...bearer, Accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`GET /v1/events -> ${res.statusCode}`)); res.resume(); return; }
      res.setEncoding('utf8');
      let buf = '';
      let ready = false;
      res.on('data', (chunk) => {
        const now = performance.now();
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (!ready && /^event: *hello$/m.test(frame)) { ready = true; resolve({ close: () => req.destroy() }); }
          if (/^event: *ledger$/m.test(frame)) {
            const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
            try { onLedger(JSON.parse(data), now); } catch { /* not JSON: ignore */ }
          }
        }
      });
      res.on('error', () => {});
    });
    req.on('error', (e) => { if (e.code !== 'ECONNRESET') reject(e); });
  });
}

async function deliveryLatency(server, bearer) {
  const runs = [];
  for (let w = 0; w < WRITERS; w++) {
    const id = (await op(server, 'run.create', { profile: 'baton', title: `Writer ${w}` }, bearer)).json.id;
    await op(server, 'run.set_status', { id, status: 'running' }, bearer);
    runs.push(id);
  }
  // Writes alone first (no stream open): the baseline.
  const write = async (w, i, tag) => {
    const t0 = performance.now();
    await op(server, 'run.add_progress', { id: runs[w], description: `${tag} ${w}.${i}` }, bearer);
    return { t0, done: performance.now() };
  };
  const alone = [];
  await Promise.all(runs.map(async (_, w) => {
    for (let i = 0; i < WRITES; i++) { const r = await write(w, i, 'alone'); alone.push(r.done - r.t0); }
  }));

  // Then the same writes with STREAMS readers open.
  const sent = new Map(); // summary -> t0
  const got = [];         // delivery latencies, one per (event, stream)
  let received = 0;
  const streams = [];
  for (let s = 0; s < STREAMS; s++) {
    streams.push(await openStream(server, bearer, (ev, at) => {
      const t0 = sent.get(ev.summary);
      if (t0 === undefined) return;
      got.push(at - t0);
      received++;
    }));
  }
  const withStreams = [];
  await Promise.all(runs.map(async (_, w) => {
    for (let i = 0; i < WRITES; i++) {
      const tag = `live ${w}.${i}`;
      const t0 = performance.now();
      sent.set(tag, t0);
      await op(server, 'run.add_progress', { id: runs[w], description: tag }, bearer);
      withStreams.push(performance.now() - t0);
    }
  }));
  const want = WRITERS * WRITES * STREAMS;
  const deadline = Date.now() + 30000;
  while (received < want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const s of streams) s.close();
  return { alone, withStreams, got, received, want };
}

// ---- main ---------------------------------------------------------------------------------

async function main() {
  if (!existsSync(BATON)) throw new Error(`no baton at ${BATON}: build it or set BATON_BIN`);
  const dir = mkdtempSync(path.join(tmpdir(), 'baton-bench-dash-'));
  const store = path.join(dir, 'baton.db');
  const started = performance.now();
  let server;
  try {
    const agentToken = cli(store, ['token', 'create', 'bench-agent', '--holder-role', 'agent']).token;
    server = await serve(store);
    const bearer = { Authorization: `Bearer ${server.secret}` };
    const agentAuth = { Authorization: `Bearer ${agentToken}` };
    log('populating: 200 inbox items');
    await populateInbox(store, server, bearer, agentAuth);
    log('populating: a run with 1,000 tasks and 10,000 events');
    const big = await populateRun(server, bearer);
    log(`populated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const cookie = await cookieAuth(server);
    const inboxCount = (await op(server, 'inbox.list', {}, bearer)).json.count;

    log('server time');
    const { rows: serverRows, each } = await serverTimes(server, big, cookie, bearer);
    log('browser first render');
    const renderRows = await browserRenders(server, big, inboxCount, cookie);
    log(`event delivery: ${STREAMS} streams, ${WRITERS} writers x ${WRITES} writes`);
    const live = await deliveryLatency(server, bearer);

    const status = (await op(server, 'store.status', {}, bearer)).json;
    const version = `baton ${status.version ?? '?'} (schema ${status.store?.schema_version ?? status.schema_version ?? '?'})`;
    const out = [];
    out.push(`Dashboard benchmark: ${version}; ${cpus().length} cores; ${N} rounds (server), ${RENDERS} loads (browser); ` +
      `serve --threads 320 --max-event-streams 128; durability full; all on 127.0.0.1.`);
    out.push('');
    out.push('| what | dashboard p50 ms | p95 ms | same reads via POST /v1/ops (bearer) p50 ms | p95 ms | ratio (p50) |');
    out.push('| --- | ---: | ---: | ---: | ---: | ---: |');
    for (const [what, a, b] of serverRows) {
      out.push(`| ${what} | ${ms(median(a))} | ${ms(pct(a, 95))} | ${b ? ms(median(b)) : '—'} | ${b ? ms(pct(b, 95)) : '—'} | ` +
        `${b ? (median(a) / median(b)).toFixed(2) : '—'} |`);
    }
    out.push('');
    out.push('| run page read alone (bearer, sequential) | p50 ms | p95 ms | response KiB |');
    out.push('| --- | ---: | ---: | ---: |');
    for (const [name, xs, bytes] of each) out.push(`| ${name} | ${ms(median(xs))} | ${ms(pct(xs, 95))} | ${(bytes / 1024).toFixed(1)} |`);
    if (renderRows.length) {
      out.push('');
      out.push('| browser (Chromium, fresh context, signed in) | first render median ms | min | max |');
      out.push('| --- | ---: | ---: | ---: |');
      for (const [what, xs] of renderRows) out.push(`| ${what} | ${ms(median(xs))} | ${ms(Math.min(...xs))} | ${ms(Math.max(...xs))} |`);
    }
    out.push('');
    out.push(`| live: ${WRITERS} writers x ${WRITES} run.add_progress | p50 ms | p99 ms | max ms | samples |`);
    out.push('| --- | ---: | ---: | ---: | ---: |');
    out.push(`| write alone (POST /v1/ops round trip, no stream open) | ${ms(median(live.alone))} | ${ms(pct(live.alone, 99))} | ` +
      `${ms(Math.max(...live.alone))} | ${live.alone.length} |`);
    out.push(`| write while ${STREAMS} streams are open (round trip) | ${ms(median(live.withStreams))} | ` +
      `${ms(pct(live.withStreams, 99))} | ${ms(Math.max(...live.withStreams))} | ${live.withStreams.length} |`);
    out.push(`| delivery to each of ${STREAMS} SSE streams (from the write's start) | ${ms(median(live.got))} | ` +
      `${ms(pct(live.got, 99))} | ${ms(Math.max(...live.got))} | ${live.received} of ${live.want} |`);
    out.push(`| ratio delivery / write alone | ${(median(live.got) / median(live.alone)).toFixed(2)} | ` +
      `${(pct(live.got, 99) / pct(live.alone, 99)).toFixed(2)} | | |`);
    out.push('');
    out.push(`Total ${((performance.now() - started) / 1000).toFixed(1)} s (data: ${big.tasks} tasks, ${big.events} events in the big run; ${inboxCount} inbox items).`);
    console.log(out.join('\n'));
    if (live.received < live.want) process.exitCode = 1;
  } finally {
    agent.destroy();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
