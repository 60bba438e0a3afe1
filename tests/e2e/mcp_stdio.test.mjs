// The official MCP TypeScript SDK client driving `baton mcp` over stdio, as an
// agent host would: handshake, every tool page, one operation of every group,
// structured output checked by the SDK against each tool's outputSchema,
// refusals as tool errors, resources and their subscriptions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { BATON, call, callEveryGroup, cli, eventually, freshStore, listAllTools, mcpArgs } from './helpers.mjs';

async function connect(store, agent, role, extra = []) {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: BATON, args: mcpArgs(store, agent, role, extra), stderr: 'pipe' });
  await client.connect(transport);
  return client;
}

test('stdio: handshake, the whole catalogue on the first page, one operation of every group, checked output', async () => {
  const s = freshStore();
  const client = await connect(s.store, 'root', 'admin');
  try {
    assert.equal(client.getServerVersion().name, 'baton');
    assert.ok(client.getServerCapabilities().tools.listChanged);
    const { tools, pages } = await listAllTools(client);
    // Hosts read only the first page (issue 17): everything is on it.
    assert.equal(pages, 1, `the whole catalogue in one page (got ${pages})`);
    const names = tools.map((t) => t.name);
    assert.equal(new Set(names).size, names.length, 'no tool appears on two pages');
    const ops = cli(s.store, ['ops']).operations.map((o) => o.name.replace('.', '_'));
    assert.deepEqual([...names].sort(), [...ops].sort(), 'every operation is a tool (admin sees all)');
    const claim = tools.find((t) => t.name === 'task_claim');
    assert.equal(claim.inputSchema.type, 'object');
    assert.equal(claim.annotations.readOnlyHint, false);
    assert.equal(tools.find((t) => t.name === 'run_list').annotations.readOnlyHint, true);

    await callEveryGroup(client, names);
  } finally {
    await client.close();
    s.remove();
  }
});

test('stdio: a refused transition is a tool error naming the allowed states; nothing changes', async () => {
  const s = freshStore();
  const client = await connect(s.store, 'coord', 'coordinator');
  try {
    const run = await call(client, 'run_create', { profile: 'sinfonia', title: 'login page' });
    const before = cli(s.store, ['store', 'status']).ledger.head_seq;
    const refused = await client.callTool({ name: 'run_set_status', arguments: { id: run.id, status: 'complete' } });
    assert.equal(refused.isError, true);
    const text = refused.content[0].text;
    assert.match(text, /FailedPrecondition/);
    assert.match(text, /allowed next states from "created": created, in-progress, blocked, failed/);
    assert.equal(cli(s.store, ['store', 'status']).ledger.head_seq, before, 'the ledger did not move');
    assert.equal(cli(s.store, ['run', 'show', run.id]).status, 'created');

    // The model corrects itself from the message.
    const moved = await call(client, 'run_set_status', { id: run.id, status: 'in-progress' });
    assert.equal(moved.status, 'in-progress');

    const bad = await client.callTool({ name: 'run_set_status', arguments: { id: run.id } });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /status/);
  } finally {
    await client.close();
    s.remove();
  }
});

test('stdio: a retried call with the same idempotency key acts once', async () => {
  const s = freshStore();
  const client = await connect(s.store, 'coord', 'coordinator');
  try {
    const run = await call(client, 'run_create', { profile: 'baton', title: 'retry me' });
    const args = { id: run.id, description: 'step done', idempotency_key: 'k-1' };
    const first = await call(client, 'run_add_progress', args);
    const second = await call(client, 'run_add_progress', args);
    assert.deepEqual(second, first);
    const viaMeta = { name: 'run_add_progress', arguments: { id: run.id, description: 'again' },
                      _meta: { 'io.baton/idempotencyKey': 'k-2' } };
    const a = await client.callTool(viaMeta);
    const b = await client.callTool(viaMeta);
    assert.deepEqual(b.structuredContent, a.structuredContent);
    const progress = cli(s.store, ['ledger', 'events', '--run', run.id, '--kind', 'run.progress']).events;
    assert.equal(progress.length, 2, 'two calls acted, two were retries');
  } finally {
    await client.close();
    s.remove();
  }
});

test('stdio: resources read, and a subscription hears of a change made by another process', async () => {
  const s = freshStore();
  const client = await connect(s.store, 'watcher', 'agent');
  try {
    const run = cli(s.store, ['run', 'create', '--profile', 'baton', '--title', 'watched']);
    const listed = await client.listResources();
    assert.ok(listed.resources.some((r) => r.uri === `baton://runs/${run.id}`));
    const templates = await client.listResourceTemplates();
    assert.ok(templates.resourceTemplates.some((t) => t.uriTemplate === 'baton://runs/{id}/ledger'));
    const read = await client.readResource({ uri: `baton://runs/${run.id}` });
    assert.equal(JSON.parse(read.contents[0].text).title, 'watched');

    const updates = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
    await client.subscribeResource({ uri: `baton://runs/${run.id}` });
    cli(s.store, ['run', 'set-status', run.id, 'running']);
    await eventually(() => updates.includes(`baton://runs/${run.id}`), 8000, 'resources/updated');
    const after = await client.readResource({ uri: `baton://runs/${run.id}` });
    assert.equal(JSON.parse(after.contents[0].text).status, 'running');

    await assert.rejects(client.readResource({ uri: 'baton://nothing/here' }), /Resource not found/);
  } finally {
    await client.close();
    s.remove();
  }
});

// Raw lines, as a broken or hostile host might send them.
function rawSession(store, lines, { close = true } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(BATON, mcpArgs(store, 'raw', 'agent'), { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, lines: out.split('\n').filter(Boolean).map((l) => JSON.parse(l)) }));
    for (const line of lines) child.stdin.write(line);
    if (close) child.stdin.end();
  });
}

test('stdio: garbage, half lines and an oversized message get JSON-RPC errors and the server goes on', async () => {
  const s = freshStore();
  try {
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
                                  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping', params: { pad: 'x'.repeat(5 << 20) } });
    const { code, lines } = await rawSession(s.store, [
      'this is not json\n',
      '{"jsonrpc":"2.0","id":2,"meth\n',
      '[]\n',
      `${init}\n`,
      '{"jsonrpc":"2.0","id":3,"method":"no/such"}\n',
      `${huge}\n`,
      '{"jsonrpc":"2.0","id":4,"method":"ping"}\n',
    ]);
    assert.equal(code, 0, 'the server exits cleanly when its input ends');
    assert.equal(lines[0].error.code, -32700);
    assert.equal(lines[1].error.code, -32700);
    assert.equal(lines[2].error.code, -32600);
    const byId = Object.fromEntries(lines.filter((l) => l.id != null).map((l) => [l.id, l]));
    assert.equal(byId[1].result.protocolVersion, '2025-06-18');
    assert.equal(byId[3].error.code, -32601);
    const tooLarge = lines.find((l) => l.error && /larger than/.test(l.error.message));
    assert.ok(tooLarge, 'the oversized message is refused');
    assert.deepEqual(byId[4].result, {}, 'and the server still answers');
    assert.equal(byId[9], undefined, 'the oversized request never ran');
  } finally {
    s.remove();
  }
});
