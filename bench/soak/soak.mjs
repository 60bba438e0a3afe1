// A mixed-load soak of `baton serve` (not in CI): agents over HTTP with their
// own tokens claim, heartbeat and complete tasks, send and read mail, add
// progress and ask questions that a human loop answers; slow and idle
// connections are held open all along. The server's resident memory is
// sampled every 10 s; the report says whether it levelled off.
//
//   node bench/soak/soak.mjs --minutes 30 [--agents 16] [--slow 200] [--bin build/baton]
//
// Memory "levels off" when the peak RSS of the last third of the run is
// within 10 % of the peak of the middle third (the first third is warm-up:
// caches, pools and SQLite's page cache fill there).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const minutes = Number(args.minutes ?? 30);
const agents = Number(args.agents ?? 16);
const slowCount = Number(args.slow ?? 200);
const bin = path.resolve(args.bin ?? 'build/baton');
const dir = mkdtempSync(path.join(os.tmpdir(), 'baton-soak-'));
const store = path.join(dir, '.baton', 'baton.db');

function cli(...argv) {
  return JSON.parse(execFileSync(bin, ['--store', store, '--output', 'json', ...argv], { encoding: 'utf8' }));
}

// The store, its run and one token per agent, made by the human at the terminal.
const run = cli('run', 'create', '--title', 'soak');
const tokens = [];
for (let i = 0; i < agents; ++i) {
  tokens.push(cli('token', 'create', `agent-${i}`, '--holder-role', i === 0 ? 'coordinator' : 'agent').token);
}

const server = spawn(bin, ['--store', store, 'serve', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
let stderr = '';
server.stderr.on('data', (d) => { stderr += d; if (stderr.length > 1e6) stderr = stderr.slice(-1e5); });
const base = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/listening on (http:\/\/[^\s]+)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', (code) => reject(new Error(`baton serve exited ${code}: ${stderr}`)));
});

const counts = { ok: 0, refused: 0, failed: 0 };
const latencies = [];
async function call(token, op, input) {
  const start = performance.now();
  try {
    const res = await fetch(`${base}/v1/ops/${op}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify(input),
    });
    const body = await res.json();
    latencies.push(performance.now() - start);
    if (res.ok) ++counts.ok; else if (res.status < 500) ++counts.refused; else ++counts.failed;
    return res.ok ? body : null;
  } catch {
    ++counts.failed;
    return null;
  }
}

const deadline = Date.now() + minutes * 60_000;
async function agentLoop(i) {
  const token = tokens[i];
  const me = `agent-${i}`;
  await call(token, 'agent.register', {});
  for (let n = 0; Date.now() < deadline; ++n) {
    if (i === 0) {
      await call(token, 'task.create', { run: run.id, title: `work ${n}` });
      await call(token, 'task.create', { run: run.id, title: `more ${n}` });
      if (n % 50 === 0) await call(token, 'question.ask', { run: run.id, message: 'go on?', questions: [{ question: `round ${n}?`, choices: ['yes', 'no'] }] });
      continue;
    }
    const claim = await call(token, 'task.claim', { run: run.id, lease_ms: 30000 });
    const task = claim?.task;
    if (task && claim.lease) {
      const epoch = claim.lease.epoch;
      await call(token, 'task.heartbeat', { task: task.id, epoch });
      await call(token, 'run.add_progress', { id: run.id, description: `${me} on ${task.id}` });
      await call(token, 'task.complete', { task: task.id, epoch, result: { by: me } });
    }
    await call(token, 'mail.send', { to: `agent-${1 + (i % (agents - 1))}`, body: `note ${n} from ${me}` });
    await call(token, 'mail.inbox', {});
    if (n % 20 === 0) await call(token, 'ledger.events', { limit: 50 });
  }
}

// The human answers what waits, through the CLI on the same store.
async function humanLoop() {
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5000));
    try {
      const open = cli('question', 'list');
      for (const q of open.questions ?? []) cli('question', 'answer', q.id, '--choices', 'yes');
    } catch { /* a busy store: next round */ }
  }
}

// Slow clients: each sends one header line every few seconds, forever.
const slow = [];
function slowClient(k) {
  const s = net.connect({ host: '127.0.0.1', port: Number(new URL(base).port), localAddress: `127.0.0.${2 + (k % 8)}` });
  s.on('error', () => {});
  s.on('close', () => { if (Date.now() < deadline) setTimeout(() => slowClient(k), 1000); });
  s.write('POST /v1/ops/run.list HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  const timer = setInterval(() => s.write(`X-Slow-${k}: ${Date.now()}\r\n`), 3000);
  s.on('close', () => clearInterval(timer));
  slow.push(s);
}
for (let k = 0; k < slowCount; ++k) slowClient(k);

const samples = [];
function rssKiB() {
  const m = readFileSync(`/proc/${server.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
  return m ? Number(m[1]) : 0;
}
const sampler = setInterval(() => {
  samples.push({ t: (minutes * 60_000 - (deadline - Date.now())) / 1000, rss_kib: rssKiB(), ...counts });
  const s = samples.at(-1);
  process.stderr.write(`soak: ${s.t.toFixed(0)} s  rss ${(s.rss_kib / 1024).toFixed(1)} MiB  ok ${s.ok}  refused ${s.refused}  failed ${s.failed}\n`);
}, 10_000);

await Promise.all([...tokens.map((_, i) => agentLoop(i)), humanLoop()]);
clearInterval(sampler);
for (const s of slow) s.destroy();
server.kill('SIGTERM');
await new Promise((r) => server.on('exit', r));

const third = Math.max(1, Math.floor(samples.length / 3));
const peak = (xs) => Math.max(...xs.map((s) => s.rss_kib));
const middle = peak(samples.slice(third, 2 * third));
const last = peak(samples.slice(2 * third));
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]?.toFixed(1);
const report = {
  minutes, agents, slow_connections: slowCount, requests: counts,
  p50_ms: pct(0.5), p99_ms: pct(0.99),
  rss_mib: { first: samples[0]?.rss_kib / 1024, middle_third_peak: middle / 1024, last_third_peak: last / 1024 },
  growth_last_vs_middle: `${(((last - middle) / middle) * 100).toFixed(1)} %`,
  levelled_off: last <= middle * 1.1,
  verify: execFileSync(bin, ['--store', store, 'verify'], { encoding: 'utf8' }).trim(),
};
writeFileSync(path.join(dir, 'samples.json'), JSON.stringify(samples));
console.log(JSON.stringify(report, null, 2));
console.log(`samples: ${path.join(dir, 'samples.json')}`);
process.exit(report.levelled_off && counts.failed === 0 ? 0 : 1);
