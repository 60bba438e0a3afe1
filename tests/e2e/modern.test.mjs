// Protocol version 2026-07-28 (stateless) through the v2 client pinned to it,
// over stdio and over HTTP; and Genie's tool set.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BATON, call, cli, eventually, freshStore, mcpArgs, serve, token } from './helpers.mjs';

const pinned = () =>
  new ModernClient({ name: 'e2e-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });

async function exercise(client, store) {
  assert.equal(client.getProtocolEra(), 'modern');
  assert.ok(client.getDiscoverResult().supportedVersions.includes('2026-07-28'));
  const page = await client.listTools();
  assert.ok(page.tools.some((t) => t.name === 'run_create'));
  const run = await call(client, 'run_create', { profile: 'sinfonia', title: 'stateless' });
  const refused = await client.callTool({ name: 'run_set_status', arguments: { id: run.id, status: 'complete' } });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /allowed next states/);
  const read = await client.readResource({ uri: `baton://runs/${run.id}` });
  assert.equal(JSON.parse(read.contents[0].text).id, run.id);
  assert.equal(cli(store, ['run', 'show', run.id]).title, 'stateless');
  return run;
}

test('2026-07-28 over stdio: discover, tools, resources, and a listen stream', async () => {
  const s = freshStore();
  const client = pinned();
  await client.connect(new ModernStdio({ command: BATON, args: mcpArgs(s.store, 'coord', 'coordinator'), stderr: 'pipe' }));
  try {
    const run = await exercise(client, s.store);
    const updated = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => updated.push(n.params.uri));
    const sub = await client.listen({ resourceSubscriptions: [`baton://runs/${run.id}`] });
    assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [`baton://runs/${run.id}`]);
    cli(s.store, ['run', 'set-status', run.id, 'in-progress']);
    await eventually(() => updated.includes(`baton://runs/${run.id}`), 8000, 'resources/updated on the listen stream');
    await sub.close();
  } finally {
    await client.close();
    s.remove();
  }
});

test('2026-07-28 over HTTP: stateless requests to baton serve', async () => {
  const s = freshStore();
  const coord = token(s.store, 'coord', 'coordinator');
  const server = await serve(s.store);
  const client = pinned();
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`),
    { requestInit: { headers: { Authorization: `Bearer ${coord}` } } }));
  try {
    await exercise(client, s.store);
  } finally {
    await client.close();
    await server.stop();
    s.remove();
  }
});

test("genie tools: Genie's names over baton's task graph, leases fenced", async () => {
  const s = freshStore();
  for (const agent of ['ann', 'bob']) cli(s.store, ['agent', 'register', agent]);
  const run = cli(s.store, ['run', 'create', '--profile', 'genie', '--title', 'wish']);
  const connect = async (agent) => {
    const client = new Client({ name: `genie-${agent}`, version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: BATON, args: mcpArgs(s.store, agent, 'agent', ['--tools', 'genie']) }));
    return client;
  };
  const ann = await connect('ann');
  const bob = await connect('bob');
  try {
    const names = (await ann.listTools()).tools.map((t) => t.name);
    for (const name of ['genie_task_checkout', 'genie_task_done', 'genie_task_block', 'genie_board', 'genie_active']) {
      assert.ok(names.includes(name), name);
    }
    assert.ok(!names.includes('run_create'), 'only the genie set');
    const created = await call(ann, 'genie_task_create', { title: 'login form', run: run.id });
    const id = created.task.id;
    assert.equal(created.task.status, 'ready');
    const out = await call(ann, 'genie_task_checkout', { id });
    assert.equal(out.task.claimedBy, 'ann');
    const taken = await bob.callTool({ name: 'genie_task_checkout', arguments: { id } });
    assert.equal(taken.isError, true, 'a claimed task is not claimable');
    const notHis = await bob.callTool({ name: 'genie_task_done', arguments: { id } });
    assert.equal(notHis.isError, true, 'only the holder completes');
    assert.match(notHis.content[0].text, /held by ann/);
    assert.equal((await call(ann, 'genie_active')).tasks.length, 1);
    const done = await call(ann, 'genie_task_done', { id });
    assert.equal(done.task.status, 'done');
    const board = await call(bob, 'genie_board', {});
    assert.equal(board.counts.done, 1);
    assert.equal(board.counts.total, 1);
  } finally {
    await Promise.all([ann.close(), bob.close()]);
    s.remove();
  }
});
