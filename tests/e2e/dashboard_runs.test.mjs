// Runs, boards and the screenshots in headless Chromium (issue 16 "Must
// show" 5 and 7): a graph run's checkpoints on its run page and a fork made
// from the page; Needs you, a run detail and a board photographed at
// 1280x800 (light), Needs you at 360 px (dark). With BATON_SCREENSHOTS=1
// they are written to docs/screenshots/, otherwise to a temporary folder.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli, freshStore } from './helpers.mjs';
import { launch, op, open, screenshotPath, sgaiRun, signIn, sinfoniaReview, startServer } from './browser.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const GRAPH = `id: counter
description: Count to three, one node at a time.
initialContext:
  n: 0
nodes:
  - name: ONE
    type: eval
    code: "context.n = context.n + 1"
    then: TWO
  - name: TWO
    type: eval
    code: "context.n = context.n + 1"
    then: THREE
  - name: THREE
    type: eval
    code: "context.n = context.n + 1"
    then: END
`;

test("a graph run's checkpoints and path are on its run page; a fork made from the page exists afterwards", async () => {
  const s = freshStore();
  const file = path.join(s.dir, 'counter.yaml');
  writeFileSync(file, GRAPH);
  const ran = cli(s.store, ['graph', 'run', file, '--title', 'counter']);
  assert.equal(ran.status, 'completed');
  const cps = cli(s.store, ['graph', 'checkpoints', ran.run]).checkpoints;
  assert.ok(cps.length >= 4, JSON.stringify(cps));
  const server = await startServer(s.store);
  const { page, seen, close } = await open(browser);
  try {
    await signIn(page, server);
    await page.goto(`${server.url}/#/runs/${ran.run}`);
    const rows = page.locator('[data-test=checkpoint]');
    await rows.first().waitFor({ timeout: 5000 });
    const shown = await rows.evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));
    assert.deepEqual([...shown].sort((a, b) => a - b), cps.map((c) => c.seq), 'every checkpoint, once');
    const pathText = await page.locator('[data-test=graph-path]').innerText();
    assert.match(pathText, /ONE[\s\S]*TWO[\s\S]*THREE/, `the path in order: ${pathText}`);

    // The state at the checkpoint after TWO, then a fork from it.
    const afterTwo = cps.find((c) => c.node === 'TWO');
    assert.ok(afterTwo, JSON.stringify(cps));
    await page.locator(`[data-test=checkpoint][data-seq="${afterTwo.seq}"] [data-test=checkpoint-show]`).click();
    await page.locator('[data-test=checkpoint-state]').filter({ hasText: /"n": 2/ }).waitFor({ timeout: 5000 });
    await page.locator('[data-test=fork]').click();
    await page.waitForURL((u) => /#\/runs\/[^/?]+$/.test(u.hash) && !u.hash.endsWith(`/${ran.run}`), { timeout: 5000 });
    const forked = decodeURIComponent(new URL(page.url()).hash.replace('#/runs/', ''));
    assert.notEqual(forked, ran.run);

    const forkCps = cli(s.store, ['graph', 'checkpoints', forked]);
    assert.equal(forkCps.run, forked, JSON.stringify(forkCps));
    assert.ok(forkCps.checkpoints.length >= 1, 'the fork has its own checkpoints');
    const fork = cli(s.store, ['run', 'show', forked]);
    assert.deepEqual(fork.meta.graph.forked_from, { ...fork.meta.graph.forked_from, run: ran.run, seq: afterTwo.seq },
      'forked from the checkpoint chosen in the page');
    assert.equal(fork.context.n, 2, 'the fork goes on from the state after TWO');
    assert.equal(fork.cursor, 'THREE');
    assert.equal(cli(s.store, ['graph', 'checkpoints', ran.run]).checkpoints.length, cps.length, 'the original is not touched');
    // The new run's page is the fork's.
    await page.locator('[data-test=checkpoint]').first().waitFor({ timeout: 5000 });
    assert.deepEqual(seen.errors, []);
    assert.deepEqual(seen.csp, []);
  } finally {
    await close();
    await server.stop();
    s.remove();
  }
});

// A store with a bit of everything: an sgai question, a Sinfonia step back
// for review, cards at a board's human gates, an agent whose lease ran out
// while it holds a task, and a run with a task graph, progress and messages.
function populate(s) {
  const agent = (id) => ({ agent: id, role: 'agent' });
  for (const a of ['coder', 'reviewer', 'builder']) cli(s.store, ['agent', 'register', a]);

  const sgai = sgaiRun(s, 'Add a login page.');
  cli(s.store, ['question', 'ask', '--run', sgai, '--message', 'The login form needs a session store.',
    '--questions', JSON.stringify([{ question: 'Where should sessions live?', choices: ['SQLite', 'Redis', 'In memory'] }])],
  { agent: 'coordinator', role: 'coordinator' });

  const sin = sinfoniaReview(s, {
    steps: ['step-01-draft-prd.md', 'step-02-validate.md'],
    body: 'The PRD draft covers CSV and JSON exports; the API section is open.',
  });

  const board = cli(s.store, ['board', 'create', '--name', 'Website', '--template', 'software']).id;
  const cards = {};
  for (const [title, column] of [['Fix the signup email', 'triage'], ['Pricing page copy', 'draft'],
    ['Dark mode toggle', 'build'], ['Cache headers', 'build'], ['Release notes 2.1', 'review'], ['Search box', 'qa']]) {
    const id = cli(s.store, ['task', 'create', '--title', title]).id;
    cli(s.store, ['board', 'add-task', '--board', board, '--task', id, '--column', column]);
    cards[title] = id;
  }

  const run = cli(s.store, ['run', 'create', '--profile', 'baton', '--title', 'Checkout service']).id;
  cli(s.store, ['run', 'set-status', '--id', run, '--status', 'running']);
  const task = (title, deps = []) => {
    const args = ['task', 'create', '--run', run, '--title', title];
    for (const d of deps) args.push('--depends-on', d);
    return cli(s.store, args).id;
  };
  const schema = task('Design the schema');
  const api = task('Write the API', [schema]);
  const ui = task('Build the cart UI', [schema]);
  const pay = task('Payment provider', [api]);
  const tests = task('End-to-end tests', [api, ui]);
  task('Ship', [tests, pay]);
  const claim = (t, a, extra = []) => cli(s.store, ['task', 'claim', '--task', t, ...extra], agent(a));
  const c1 = claim(schema, 'coder');
  cli(s.store, ['task', 'complete', '--task', schema, '--epoch', String(c1.epoch ?? c1.lease_epoch ?? 1)], agent('coder'));
  claim(api, 'coder');
  claim(ui, 'builder', ['--lease-ms', '1']);  // builder's lease runs out at once: a lost agent holding a task
  cli(s.store, ['run', 'add-progress', '--id', run, '--description', 'Schema merged; API and UI in progress.'], agent('coder'));
  cli(s.store, ['mail', 'send', '--run', run, '--to', 'reviewer', '--body', 'The API is ready for a first look.'], agent('coder'));
  cli(s.store, ['mail', 'send', '--run', run, '--to', 'coder', '--body', 'Looks good; add rate limits.'], agent('reviewer'));
  return { sgai, sin: sin.run, board, run };
}

// A PNG's width and height from its IHDR.
function pngSize(file) {
  const b = readFileSync(file);
  assert.equal(b.toString('ascii', 1, 4), 'PNG', `${file} is a PNG`);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

test('screenshots: Needs you with items of several kinds, a run detail and a board (1280x800, light); Needs you at 360 px (dark)', async () => {
  const s = freshStore();
  const ids = populate(s);
  const server = await startServer(s.store);
  try {
    const inbox = await op(server, 'inbox.list', {});
    const kinds = Object.keys(inbox.by_kind).sort();
    assert.ok(kinds.length >= 3, `several kinds: ${JSON.stringify(inbox.by_kind)}`);

    const light = await open(browser);
    try {
      const { page, seen } = light;
      await signIn(page, server);
      await page.locator('[data-test=inbox-item]').nth(inbox.count - 1).waitFor({ timeout: 5000 });
      const shownKinds = await page.locator('[data-test=inbox-item]').evaluateAll((els) => [...new Set(els.map((e) => e.dataset.kind))].sort());
      assert.deepEqual(shownKinds, kinds, 'every kind is on the page');
      assert.equal(await page.locator('[data-test=inbox-item]').count(), inbox.count);
      assert.equal(await page.title(), `(${inbox.count}) baton`);
      await page.mouse.move(0, 0);
      const needs = screenshotPath('needs-you.png');
      await page.screenshot({ path: needs });
      assert.deepEqual(pngSize(needs), { width: 1280, height: 800 });

      await page.goto(`${server.url}/#/runs/${ids.run}`);
      await page.locator('[data-test=task-node]').nth(5).waitFor({ timeout: 5000 });
      await page.locator('[data-test=machine-svg]').waitFor({ timeout: 5000 });
      await page.locator('[data-test=message]').first().waitFor({ timeout: 5000 });
      assert.equal(await page.locator('[data-test=task-graph] path.edge').count(), 7, 'every dependency drawn');
      const detail = screenshotPath('run-detail.png');
      await page.screenshot({ path: detail });
      assert.deepEqual(pngSize(detail), { width: 1280, height: 800 });

      await page.goto(`${server.url}/#/boards/${ids.board}`);
      await page.locator('[data-test=board-card]').nth(5).waitFor({ timeout: 5000 });
      assert.ok(await page.locator('[data-test=gate-human]').count() >= 1, 'human gates are marked');
      const board = screenshotPath('board.png');
      await page.screenshot({ path: board });
      assert.deepEqual(pngSize(board), { width: 1280, height: 800 });
      assert.deepEqual(seen.errors, []);
      assert.deepEqual(seen.csp, []);
    } finally {
      await light.close();
    }

    const phone = await open(browser, { viewport: { width: 360, height: 780 }, colorScheme: 'dark' });
    try {
      const { page, seen } = phone;
      await signIn(page, server);
      await page.locator('[data-test=inbox-item]').nth(inbox.count - 1).waitFor({ timeout: 5000 });
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 360, `no horizontal page scroll at 360 px (scrollWidth ${width})`);
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const [r, g, b] = bg.match(/\d+/g).map(Number);
      assert.ok(r + g + b < 3 * 100, `dark mode follows the system: body background ${bg}`);
      const shot = screenshotPath('needs-you-phone.png');
      await page.screenshot({ path: shot });
      assert.equal(pngSize(shot).width, 360);
      assert.deepEqual(seen.errors, []);
    } finally {
      await phone.close();
    }
  } finally {
    await server.stop();
    s.remove();
  }
});
