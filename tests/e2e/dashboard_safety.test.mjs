// The dashboard's safety in headless Chromium (issue 16 "Must show" 4 and 6):
// what agents wrote shows as text and never runs; with --auth token a page
// without the link shows nothing, a wrong token is refused, and a form posted
// from another Origin is refused and changes nothing.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { cli, freshStore } from './helpers.mjs';
import { launch, op, opRaw, open, signIn, startServer } from './browser.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const IMG = '<img src=x onerror=alert(1)>';
const SCRIPT = '<script>window.__pwned=1;alert(2)</script>';

// Nothing from the payloads became an element, nothing ran.
async function assertInert(page, seen, where) {
  assert.equal(await page.locator('img').count(), 0, `${where}: no <img> element`);
  const scripts = await page.locator('script').evaluateAll((els) => els.map((e) => e.getAttribute('src')));
  assert.deepEqual(scripts.filter((src) => !src || !src.startsWith('/assets/')), [], `${where}: only our own scripts`);
  assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined', `${where}: the sentinel is untouched`);
  assert.deepEqual(seen.dialogs, [], `${where}: no dialog`);
  assert.deepEqual(seen.csp, [], `${where}: no CSP violation`);
  assert.deepEqual(seen.errors, [], `${where}: no page error`);
}

// The literal payload is on the page, as text someone can read.
async function assertShown(page, text, where) {
  const shown = page.getByText(text, { exact: false }).filter({ visible: true }).first();
  await shown.waitFor({ timeout: 5000 });
  assert.ok(await shown.isVisible(), `${where}: ${text} is visible`);
}

test('titles, messages and questions holding HTML and <script> show as text; no element from them, nothing runs', async () => {
  const s = freshStore();
  const agent = { agent: 'coder', role: 'agent' };
  const run = cli(s.store, ['run', 'create', '--profile', 'baton', '--title', `Run ${IMG}`]).id;
  cli(s.store, ['run', 'set-status', '--id', run, '--status', 'running']);
  for (const a of ['coder', 'reviewer']) cli(s.store, ['agent', 'register', a]);
  const t1 = cli(s.store, ['task', 'create', '--run', run, '--title', `Task ${IMG} ${SCRIPT}`, '--body', SCRIPT]).id;
  cli(s.store, ['task', 'create', '--run', run, '--title', `Next ${SCRIPT}`, '--depends-on', t1]);
  cli(s.store, ['mail', 'send', '--run', run, '--to', 'reviewer', '--body', `Message ${SCRIPT} ${IMG}`], agent);
  cli(s.store, ['run', 'add-progress', '--id', run, '--description', `Progress ${IMG}`], agent);
  cli(s.store, ['question', 'ask', '--run', run, '--message', `Context ${SCRIPT}`,
    '--questions', JSON.stringify([{ question: `Question ${IMG}`, choices: [SCRIPT, 'plain'] }])], agent);
  const server = await startServer(s.store);
  const { page, seen, close } = await open(browser);
  try {
    const res = await fetch(`${server.url}/`);
    const csp = res.headers.get('content-security-policy') || '';
    assert.match(csp, /script-src 'self'(;|$)/, `CSP: ${csp}`);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, `CSP: ${csp}`);

    await signIn(page, server);
    await page.locator('[data-test=inbox-item]').first().waitFor({ timeout: 5000 });
    await assertShown(page, `Question ${IMG}`, 'Needs you');
    await assertShown(page, `Context ${SCRIPT}`, 'Needs you');
    await assertShown(page, SCRIPT, 'Needs you: a choice');
    await assertShown(page, `Run ${IMG}`, 'Needs you: the run title');
    await assertInert(page, seen, 'Needs you');

    await page.goto(`${server.url}/#/runs`);
    await page.locator('[data-test=run-row]').first().waitFor({ timeout: 5000 });
    await assertShown(page, `Run ${IMG}`, 'Runs');
    await assertInert(page, seen, 'Runs');

    await page.goto(`${server.url}/#/runs/${run}`);
    await page.locator(`[data-test=task-row][data-id="${t1}"]`).waitFor({ timeout: 5000 });
    await page.locator('[data-test=message]').first().waitFor({ timeout: 5000 });
    await assertShown(page, `Task ${IMG} ${SCRIPT}`, 'run detail: task');
    await assertShown(page, `Message ${SCRIPT} ${IMG}`, 'run detail: message');
    await assertShown(page, `Progress ${IMG}`, 'run detail: progress');
    // The task graph draws the title as SVG text, never as markup.
    const svgText = await page.locator(`[data-test=task-node][data-id="${t1}"]`).textContent();
    assert.match(svgText, /<img src=x/, 'the SVG node holds the title as text');
    assert.equal(await page.locator('svg image, svg script, svg foreignObject').count(), 0);
    await assertInert(page, seen, 'run detail');

    await page.goto(`${server.url}/#/ledger`);
    await page.locator('[data-test=ledger-row]').first().waitFor({ timeout: 5000 });
    await assertInert(page, seen, 'Ledger');
    assert.deepEqual(seen.console, [], 'no console error at all');
  } finally {
    await close();
    await server.stop();
    s.remove();
  }
});

// A page on another port of the same host: same site (the cookie goes along
// with credentials: 'include'), another Origin.
function evilSite() {
  return new Promise((resolve) => {
    const srv = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>elsewhere</title><p>another site</p>');
    });
    srv.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${srv.address().port}`, close: () => srv.close() }));
  });
}

test('--auth token: no link, no data; a wrong token is refused; a POST from another Origin is refused and changes nothing', async () => {
  const s = freshStore();
  const run = cli(s.store, ['run', 'create', '--profile', 'baton', '--title', 'secret project']).id;
  cli(s.store, ['run', 'set-status', '--id', run, '--status', 'running']);
  cli(s.store, ['question', 'ask', '--run', run, '--questions', JSON.stringify([{ question: 'Merge the secret branch?', choices: ['yes', 'no'] }])],
    { agent: 'coder', role: 'agent' });
  const server = await startServer(s.store, { extra: ['--auth', 'token'] });
  assert.ok(server.secret, 'the banner prints the link with a token');
  const evil = await evilSite();
  const { context, page, seen, close } = await open(browser);
  try {
    // No link: the login form and nothing else.
    await page.goto(`${server.url}/`);
    await page.locator('[data-test=login]').waitFor({ timeout: 5000 });
    await page.waitForTimeout(300);  // let any stray fetch land
    const body = await page.locator('body').innerText();
    assert.doesNotMatch(body, /secret project|Merge the secret/, 'no data without a session');
    assert.equal(await page.locator('[data-test=inbox-item], [data-test=live], nav a').count(), 0, 'only the login form');
    const anon = await page.evaluate(async () => {
      const r = await fetch('/v1/ops/inbox.list', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      const ev = await fetch('/v1/events');
      return { ops: r.status, text: await r.text(), events: ev.status };
    });
    assert.equal(anon.ops, 401);
    assert.doesNotMatch(anon.text, /secret project|Merge the secret/);
    assert.equal(anon.events, 401);

    // A wrong token is refused with a message; still no data, no cookie.
    await page.locator('[data-test=login-token]').fill(`baton_${'0'.repeat(64)}`);
    await page.locator('[data-test=login-submit]').click();
    await page.locator('[data-test=login-error]').filter({ hasText: /\S/ }).waitFor({ timeout: 5000 });
    assert.doesNotMatch(await page.locator('body').innerText(), /secret project|Merge the secret/);
    assert.deepEqual((await context.cookies()).filter((c) => c.name.startsWith('baton_session')), []);

    // The right token in the form signs in; the cookie is HttpOnly, Strict.
    await page.locator('[data-test=login-token]').fill(server.secret);
    await page.locator('[data-test=login-submit]').click();
    await page.locator('[data-test=live][data-state=open]').waitFor({ timeout: 10000 });
    await page.locator('[data-test=inbox-item]').first().waitFor({ timeout: 5000 });
    assert.doesNotMatch(page.url(), /token=/, 'the token is dropped from the address');
    const cookie = (await context.cookies()).find((c) => c.name === `baton_session_${server.port}`);
    assert.ok(cookie, JSON.stringify(await context.cookies()));
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(await page.evaluate(() => document.cookie.includes('baton_session')), false);
    assert.ok(!cookie.value.includes(server.secret), 'the cookie never holds the secret');
    // The cookie alone is nothing (it goes to every port of the host): the
    // page's proof, in storage of this origin alone, must come with it.
    const proof = await page.evaluate(() => localStorage.getItem('baton-proof'));
    assert.ok(proof, 'the page keeps its proof');
    const bare = await page.evaluate(async () =>
      (await fetch('/v1/ops/inbox.list', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).status);
    assert.equal(bare, 401, 'the cookie without the proof');
    const same = await page.evaluate(async (p) =>
      (await fetch('/v1/ops/inbox.list', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Baton-Proof': p }, body: '{}' })).status, proof);
    assert.equal(same, 200, 'the page itself may post');

    const itemId = (await op(server, 'inbox.list', {})).items[0].id;
    const head = async () => (await op(server, 'ledger.events', { limit: 1000 })).events.at(-1).seq;
    const headBefore = await head();
    const unchanged = async (what) => {
      assert.ok((await op(server, 'inbox.list', {})).items.some((i) => i.id === itemId), `${what}: the item is still there`);
      assert.equal(await head(), headBefore, `${what}: nothing written`);
    };

    // From a page on another port (same site, so the cookie goes along).
    const other = await context.newPage();
    await other.goto(evil.url);
    const target = `${server.url}/v1/ops/inbox.dismiss`;
    const tried = await other.evaluate(async ({ target, item }) => {
      const out = {};
      // A "simple" request: no preflight, the cookie is sent, the answer is opaque.
      await fetch(target, { method: 'POST', mode: 'no-cors', credentials: 'include',
        headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ item, idempotency_key: 'evil-1' }) });
      try {
        const r = await fetch(target, { method: 'POST', credentials: 'include',
          headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ item, idempotency_key: 'evil-2' }) });
        out.cors = r.status;
      } catch (e) {
        out.cors = 'blocked';
      }
      return out;
    }, { target, item: itemId });
    assert.equal(tried.cors, 'blocked', 'no CORS grant for another Origin');
    await unchanged('a cross-origin fetch');

    // The same cookie by hand: another Origin or none is 403; ours is 200.
    const jar = `${cookie.name}=${cookie.value}`;
    const post = (origin, name, input, withProof = true) => fetch(`${server.url}/v1/ops/${name}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Cookie: jar, ...(withProof ? { 'X-Baton-Proof': proof } : {}),
        ...(origin ? { Origin: origin } : {}) },
      body: JSON.stringify(input),
    });
    assert.equal((await post(server.url, 'inbox.list', {})).status, 200, 'the cookie is valid');
    const leaked = await post(server.url, 'inbox.dismiss', { item: itemId, idempotency_key: 'evil-2b' }, false);
    assert.equal(leaked.status, 401, 'a cookie another port received, used without the proof');
    const fromEvil = await post('http://evil.example', 'inbox.dismiss', { item: itemId, idempotency_key: 'evil-3' });
    assert.equal(fromEvil.status, 403, await fromEvil.text());
    const fromPort = await post(evil.url, 'inbox.dismiss', { item: itemId, idempotency_key: 'evil-4' });
    assert.equal(fromPort.status, 403, await fromPort.text());
    const noOrigin = await post('', 'inbox.dismiss', { item: itemId, idempotency_key: 'evil-5' });
    assert.equal(noOrigin.status, 403, await noOrigin.text());
    await unchanged('a forged request');

    // Without the cookie a bearer request from elsewhere is not a session: a
    // wrong bearer is 401.
    const wrong = await opRaw({ url: server.url, secret: `baton_${'1'.repeat(64)}` }, 'inbox.list');
    assert.equal(wrong.status, 401);
    assert.deepEqual(seen.errors, []);
  } finally {
    await close();
    evil.close();
    await server.stop();
    s.remove();
  }
});

test('the link pasted into a tab that shows the login form signs in and leaves the address', async () => {
  const s = freshStore();
  const server = await startServer(s.store, { extra: ['--auth', 'token'] });
  const { page, close } = await open(browser);
  try {
    await page.goto(`${server.url}/`);
    await page.locator('[data-test=login]').waitFor({ timeout: 5000 });
    await page.goto(server.link);  // only the fragment changes: no new document
    await page.locator('[data-test=live][data-state=open]').waitFor({ timeout: 5000 });
    assert.doesNotMatch(page.url(), /token=/, 'the token is dropped from the address');
  } finally {
    await close();
    await server.stop();
    s.remove();
  }
});
