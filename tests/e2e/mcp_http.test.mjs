// The official MCP TypeScript SDK client against `baton serve`'s /mcp
// (Streamable HTTP): sessions, the GET stream's notifications, SSE answers,
// the Origin check, bearer tokens (the default: callers prove who they
// are) and message limits.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { call, callEveryGroup, cli, eventually, freshStore, listAllTools, serve, token } from './helpers.mjs';

const bearer = (secret) => ({ Authorization: `Bearer ${secret}` });

async function connect(url, headers) {
  const client = new Client({ name: 'e2e-http', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

const initialize = (version = '2025-11-25') => ({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

async function post(url, body, headers = {}) {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

test('http: tools over a session, output checked, a subscription notified on the GET stream', async () => {
  const s = freshStore();
  const coord = token(s.store, 'coord', 'coordinator');
  const server = await serve(s.store);
  const { client, transport } = await connect(server.url, bearer(coord));
  try {
    assert.ok(transport.sessionId, 'initialize gave a session id');
    const { tools, pages } = await listAllTools(client);
    assert.equal(pages, 1, 'the whole catalogue on the first page');
    for (const name of ['task_claim', 'task_complete', 'run_create', 'run_set_status']) {
      assert.ok(tools.some((t) => t.name === name), `${name} is on the first page`);
    }
    assert.ok(!tools.some((t) => t.name === 'token_resolve'), 'admin-only tools are not offered to a coordinator');
    const run = await call(client, 'run_create', { profile: 'graph', title: 'over http' });
    assert.equal(run.status, 'pending');
    const task = await call(client, 'task_create', { run: run.id, title: 'first' });
    assert.equal(task.run_id, run.id);

    const refused = await client.callTool({ name: 'run_set_status', arguments: { id: run.id, status: 'completed' } });
    assert.equal(refused.isError, true);
    assert.match(refused.content[0].text, /allowed next states from "pending"/);

    const updates = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
    await client.subscribeResource({ uri: `baton://runs/${run.id}/tasks` });
    cli(s.store, ['task', 'set-status', task.id, 'running']);
    await eventually(() => updates.includes(`baton://runs/${run.id}/tasks`), 8000, 'resources/updated over HTTP');
  } finally {
    await transport.terminateSession();
    await client.close();
    await server.stop();
    s.remove();
  }
});

test('http: one operation of every group, as admin', async () => {
  const s = freshStore();
  const root = token(s.store, 'root', 'admin', { as: 'admin' });
  const server = await serve(s.store);
  const { client, transport } = await connect(server.url, bearer(root));
  try {
    const { tools } = await listAllTools(client);
    assert.ok(await callEveryGroup(client, tools.map((t) => t.name)) >= 20);
  } finally {
    await transport.terminateSession();
    await client.close();
    await server.stop();
    s.remove();
  }
});

test('http: sessions, versions, headers, origins and sizes are checked', async () => {
  const s = freshStore();
  const mallory = token(s.store, 'mallory', 'agent');
  const server = await serve(s.store);
  const human = bearer(server.secret);
  try {
    const unproven = await post(server.url, initialize('2025-06-18'));
    assert.equal(unproven.status, 401, 'no credential, no session');
    assert.equal(unproven.headers.get('www-authenticate'), 'Bearer');
    const opened = await post(server.url, initialize('2025-06-18'), human);
    assert.equal(opened.status, 200);
    const session = opened.headers.get('mcp-session-id');
    assert.ok(session);
    assert.equal((await opened.json()).result.protocolVersion, '2025-06-18');
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    const withSession = { ...human, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' };

    assert.equal((await post(server.url, ping, withSession)).status, 200);
    assert.equal((await post(server.url, ping, human)).status, 400, 'no session id');
    assert.equal((await post(server.url, ping, { ...human, 'Mcp-Session-Id': 'nope' })).status, 404, 'unknown session');
    assert.equal((await post(server.url, ping, { ...withSession, 'MCP-Protocol-Version': '2025-03-26' })).status, 200,
                 'any version the server speaks, as hosts and the conformance suite send');
    assert.equal((await post(server.url, ping, { ...withSession, 'MCP-Protocol-Version': '2024-11-05' })).status, 400,
                 'a version the server does not speak');
    assert.equal((await post(server.url, ping, { ...withSession, ...bearer(mallory) })).status, 403,
                 'another caller may not use the session');
    assert.equal((await post(server.url, ping, { ...withSession, 'X-Baton-Agent': 'mallory' })).status, 403,
                 'nor may a header name another caller');
    const notified = await post(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, withSession);
    assert.equal(notified.status, 202);

    const foreign = await post(server.url, initialize(), { Origin: 'http://evil.example' });
    assert.equal(foreign.status, 403, 'a foreign Origin is refused (DNS rebinding)');
    const local = await post(server.url, initialize(), { ...human, Origin: 'http://localhost:5173' });
    assert.equal(local.status, 200);
    const opsForeign = await fetch(`${server.url}/v1/ops`, { headers: { Origin: 'http://evil.example' } });
    assert.equal(opsForeign.status, 403, 'the operations API checks Origin too');

    const garbage = await post(server.url, '{"jsonrpc": "2.0", "id": 3, "meth', withSession);
    assert.equal(garbage.status, 400);
    assert.equal((await garbage.json()).error.code, -32700);
    const huge = await post(server.url, { ...ping, params: { pad: 'x'.repeat(5 << 20) } }, withSession);
    assert.equal(huge.status, 413, 'an oversized message is refused');
    assert.equal((await post(server.url, ping, withSession)).status, 200, 'and the server goes on');

    const ended = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: withSession });
    assert.equal(ended.status, 204);
    assert.equal((await post(server.url, ping, withSession)).status, 404, 'an ended session is gone');

    // 2026-07-28: stateless, the version in the header and in _meta must agree.
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const modern = { jsonrpc: '2.0', id: 'm1', method: 'tools/list', params: { _meta: meta } };
    const ok = await post(server.url, modern, { ...human, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/list' });
    assert.equal(ok.status, 200);
    const body = await ok.json();
    assert.equal(body.result.resultType, 'complete');
    assert.ok(body.result.tools.length > 0);
    assert.equal(typeof body.result.ttlMs, 'number');
    const mismatch = await post(server.url, modern, { ...human, 'MCP-Protocol-Version': '2025-11-25' });
    assert.equal(mismatch.status, 400);
    assert.equal((await mismatch.json()).error.code, -32020);
    const old = await post(server.url, { ...modern, params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '1900-01-01' } } },
                           { ...human, 'MCP-Protocol-Version': '1900-01-01' });
    assert.equal(old.status, 400);
    assert.equal((await old.json()).error.code, -32022);
  } finally {
    await server.stop();
    s.remove();
  }
});

test('http: the caller is the bearer token\'s (no flags needed), no header raises it, a revoked token is refused', async () => {
  const s = freshStore();
  const made = cli(s.store, ['token', 'create', 'coder', '--holder-role', 'agent', '--note', 'e2e']);
  assert.match(made.token, /^baton_[0-9a-f]{64}$/);
  assert.deepEqual(made.grants, []);
  const server = await serve(s.store);
  try {
    assert.equal((await post(server.url, initialize())).status, 401, 'no token');
    assert.equal((await post(server.url, initialize(), { 'X-Baton-Role': 'human' })).status, 401, 'a header is no credential');
    assert.equal((await post(server.url, initialize(), bearer('baton_wrong'))).status, 401);
    const raised = await post(server.url, initialize(), { ...bearer(made.token), 'X-Baton-Role': 'admin' });
    assert.equal(raised.status, 403, 'a role header cannot raise the token\'s role');
    assert.match((await raised.json()).error.message, /X-Baton-Role/);
    const { client, transport } = await connect(server.url, { ...bearer(made.token), 'X-Baton-Agent': 'coder' });
    const agent = await call(client, 'agent_register', {});
    assert.equal(agent.id, 'coder', 'the token names the caller');
    assert.equal(agent.role, 'agent');
    await transport.terminateSession();
    await client.close();
    cli(s.store, ['token', 'revoke', made.id]);
    assert.equal((await post(server.url, initialize(), bearer(made.token))).status, 401);
  } finally {
    await server.stop();
    s.remove();
  }
});

test('http: --auth none, asked for by name, believes headers on loopback and warns', async () => {
  const s = freshStore();
  const server = await serve(s.store, ['--auth', 'none']);
  try {
    assert.equal(server.secret, '', 'no secret in the link');
    assert.match(server.stderr(), /WARNING: --auth none/);
    const { client, transport } = await connect(server.url, { 'X-Baton-Agent': 'coord', 'X-Baton-Role': 'coordinator' });
    const run = await call(client, 'run_create', { profile: 'graph', title: 'no auth' });
    assert.equal(cli(s.store, ['ledger', 'events', '--kind', 'run.created']).events.at(-1).actor.id, 'coord');
    assert.equal(run.status, 'pending');
    const refused = await client.callTool({ name: 'token_create', arguments: { holder: 'x', holder_role: 'agent', grants: ['commands'] } });
    assert.equal(refused.isError, true, 'no caller holds a grant under --auth none');
    await transport.terminateSession();
    await client.close();
  } finally {
    await server.stop();
    s.remove();
  }
});
