// Many agent hosts on one `baton serve`, as the official TypeScript SDK
// connects them (issue 17): each host opens its session's notification
// stream (GET /mcp) right after initialize and sends every POST accepting
// SSE. Seen before: 50 such hosts held the 48 stream slots, so 0 of 50 tool
// calls were answered (503), and a slot came back ~15 s after its host left.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { cli, eventually, freshStore, serve, token } from './helpers.mjs';

const kHosts = 200;

// Connects "n" hosts; each records the stream errors its transport reports
// and the resource updates its notification stream brings.
async function connectHosts(url, secret, n, tag) {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const host = { errors: [], updates: [] };
      host.client = new Client({ name: `host-${tag}-${i}`, version: '1.0.0' });
      host.client.onerror = (e) => host.errors.push(String(e));
      host.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (m) => host.updates.push(m.params.uri));
      host.transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${secret}` } },
      });
      await host.client.connect(host.transport);
      return host;
    }),
  );
}

// Every host calls a tool at the same moment; every call must be answered,
// then every host's stream must carry the update of a run it subscribed to.
async function allAnswered(s, hosts, label) {
  const run = cli(s.store, ['run', 'create', '--title', label]).id;
  const results = await Promise.allSettled(
    hosts.map((h) => h.client.callTool({ name: 'run_show', arguments: { id: run } })),
  );
  const failed = results.filter((r) => r.status === 'rejected' || r.value.isError);
  const why = failed.length ? String(failed[0].reason?.message ?? JSON.stringify(failed[0].value?.content)) : '';
  assert.equal(failed.length, 0, `${label}: ${failed.length} of ${hosts.length} tool calls failed: ${why.slice(0, 300)}`);
  const uri = `baton://runs/${run}`;
  await Promise.all(hosts.map((h) => h.client.subscribeResource({ uri })));
  cli(s.store, ['run', 'add-progress', '--id', run, '--description', 'news for every host']);
  await eventually(() => hosts.every((h) => h.updates.includes(uri)), 15000,
                   `${label}: every host's notification stream brings the update`);
  const streamErrors = hosts.flatMap((h) => h.errors);
  assert.deepEqual(streamErrors, [], `${label}: no host's stream was refused`);
}

test(`http: ${kHosts} SDK hosts, each holding its notification stream, all get their tool calls answered; ` +
     'a host that leaves frees its slot at once', { timeout: 240000 }, async () => {
  const s = freshStore();
  const coord = token(s.store, 'coord', 'coordinator');
  const server = await serve(s.store);
  try {
    const first = await connectHosts(server.url, coord, kHosts, 'a');
    await allAnswered(s, first, 'first hosts');
    await Promise.all(first.map((h) => h.client.close()));
    // With the defaults the server holds 336 streams: the second hosts fit
    // only if the first ones' slots came back when they left.
    await new Promise((r) => setTimeout(r, 2500));
    const second = await connectHosts(server.url, coord, kHosts, 'b');
    await allAnswered(s, second, 'second hosts');
    await Promise.all(second.map((h) => h.client.close()));
  } finally {
    await server.stop();
    s.remove();
  }
});
