// Browser helpers for the dashboard suites: Debian's Chromium driven by
// npm's playwright-core (never a downloaded browser), `baton serve` on a
// chosen port that a test may SIGKILL and start again on the same port, the
// ops API with a bearer token, and where screenshots go.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { BATON, cli } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const CHROMIUM = process.env.BATON_CHROMIUM || '/usr/bin/chromium';

// Only for developing the page: BATON_UI_DIR=src/http/dashboard serves the
// files from disk. The suites' default tests the files compiled into baton.
const UI_DIR = process.env.BATON_UI_DIR || '';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// Launches Chromium; a missing browser fails the suite (a skipped browser
// test would pass without testing anything).
export async function launch() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium ` +
      "(the README's test command installs it), or point BATON_CHROMIUM at one");
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

// A fresh context and page that records what should never happen: page
// errors, console errors (a CSP violation is one), and dialogs (alert()
// from an injected payload). Dialogs are dismissed so nothing blocks.
export async function open(browser, { viewport = { width: 1280, height: 800 }, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport, colorScheme });
  const seen = { errors: [], console: [], dialogs: [], csp: [] };
  const watch = (page) => {
    page.on('pageerror', (e) => seen.errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      const text = m.text();
      seen.console.push(text);
      if (/Content Security Policy/i.test(text)) seen.csp.push(text);
    });
    page.on('dialog', (d) => {
      seen.dialogs.push(`${d.type()}: ${d.message()}`);
      d.dismiss().catch(() => {});
    });
  };
  context.on('page', watch);
  const page = await context.newPage();
  return { context, page, seen, close: () => context.close() };
}

// Starts `baton --store STORE serve --listen LISTEN ...` and resolves once
// its banner is out: {url, port, secret, link, child, kill(sig), stop()}.
// Unlike helpers.serve, the port is the caller's choice, so a test can kill
// the server and start it again where the page expects it.
export function startServer(store, { listen = '127.0.0.1:0', extra = [] } = {}) {
  const args = ['--store', store, 'serve', '--listen', listen, ...extra];
  if (UI_DIR && !extra.includes('--ui-dir')) args.push('--ui-dir', path.resolve(here, '../..', UI_DIR));
  return new Promise((resolve, reject) => {
    const child = spawn(BATON, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let done = false;
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[0-9.]+:(\d+))\s*\n\s*dashboard:\s*(\S+)/);
      if (!m || done) return;
      done = true;
      const exited = new Promise((r) => child.once('exit', r));
      resolve({
        url: m[1],
        port: Number(m[2]),
        link: m[3],
        secret: new URL(m[3]).hash.replace(/^#token=/, ''),
        child,
        stderr: () => err,
        kill: async (signal = 'SIGKILL') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
    child.once('exit', (code) => {
      if (!done) reject(new Error(`baton serve exited ${code}: ${err}`));
    });
  });
}

// Starts the server again on "port", retrying while the old socket is
// still being released.
export async function restartServer(store, port, extra = []) {
  const deadline = Date.now() + 10000;
  for (;;) {
    try {
      return await startServer(store, { listen: `127.0.0.1:${port}`, extra });
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

// POST /v1/ops/NAME with a bearer secret; resolves to {status, body}.
export async function opRaw(server, name, input = {}, headers = {}) {
  const auth = server.secret ? { Authorization: `Bearer ${server.secret}` } : {};
  const res = await fetch(`${server.url}/v1/ops/${name}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...auth, ...headers },
    body: JSON.stringify(input),
  });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

// The result of an operation that must succeed.
export async function op(server, name, input = {}, headers = {}) {
  const { status, body } = await opRaw(server, name, input, headers);
  if (status !== 200) throw new Error(`${name} -> ${status}: ${JSON.stringify(body)}`);
  return body;
}

// Opens the start-up link (signs the page in) and waits for the live stream.
export async function signIn(page, server, hash = '') {
  await page.goto(server.link);
  await page.locator('[data-test=live][data-state=open]').waitFor({ timeout: 10000 });
  if (hash) await page.goto(`${server.url}/${hash}`);
}

// Where a screenshot goes: docs/screenshots/ with BATON_SCREENSHOTS=1,
// otherwise a temporary folder (the tests still take it, so the pages'
// rendering at those sizes is exercised every run).
let shotDir;
export function screenshotPath(name) {
  if (process.env.BATON_SCREENSHOTS === '1') {
    shotDir = path.resolve(here, '../../docs/screenshots');
    mkdirSync(shotDir, { recursive: true });
  } else if (!shotDir) {
    shotDir = mkdtempSync(path.join(tmpdir(), 'baton-shots-'));
  }
  return path.join(shotDir, name);
}

// Waits "ms" milliseconds.
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A Sinfonia workflow of two steps ("steps": the step files), just started,
// whose first step came back for review ("body": the return envelope's), so
// Needs you shows an approval. Returns {run, ret}: the run and the envelope.
export function sinfoniaReview(s, { steps = ['step-01-draft.md', 'step-02-review.md'], body = 'The PRD draft is ready.' } = {}) {
  const wf = path.join(s.dir, 'wf');
  mkdirSync(path.join(wf, 'steps'), { recursive: true });
  writeFileSync(path.join(wf, 'workflow.md'), '# Workflow: exports\n\nWrite the PRD for exports.\n');
  for (const step of steps) writeFileSync(path.join(wf, 'steps', step), `# ${step}\n`);
  const coord = { agent: 'maestro', role: 'coordinator' };
  const run = cli(s.store, ['sinfonia', 'start', '--json', JSON.stringify({ workflow_dir: wf, goal: 'PRD', title: 'Exports PRD' })], coord).run_id;
  const handoff = (type, source, target, text) =>
    cli(s.store, ['sinfonia', 'handoff', '--json', JSON.stringify({ run, type, source, target, body: text })], coord);
  handoff('dispatch', 'maestro', 'libretto', 'Draft the PRD.');
  const ret = handoff('return', 'libretto', 'maestro', body);
  return { run, ret: ret.id };
}

// An sgai run started from a GOAL.md whose body is "goal" (the agents of the
// tests work in it); returns its id.
export function sgaiRun(s, goal = 'Ship the dashboard.') {
  const ws = path.join(s.dir, 'ws');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'GOAL.md'), `---\nflow: |\n  "coordinator" -> "coder"\n---\n# Goal\n${goal}\n`);
  const started = cli(s.store, ['sgai', 'start', path.join(ws, 'GOAL.md')], { role: 'coordinator', agent: 'coordinator' });
  return started.run ? started.run.id : started.id;
}
