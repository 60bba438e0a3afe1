// An sgai-style team through `baton mcp --tools sgai` (SCENARIOS.md §1): a
// coordinator and two agents speak sgai's tools; a question blocks the
// coordinator until the human answers from the CLI; an agent's complete is
// downgraded; the coordinator completes the run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { BATON, cli, eventually, freshStore, mcpArgs } from './helpers.mjs';

const GOAL = `---
flow: |
  "coordinator" -> "coder"
  "coder" -> "reviewer"
---
# Goal
Add a login page.
`;

async function agentClient(store, agent, role, run) {
  const client = new Client({ name: `sgai-${agent}`, version: '1.0.0' });
  const extra = ['--tools', 'sgai', '--progress-interval-ms', '200'];
  if (run) extra.push('--run', run);
  const transport = new StdioClientTransport({ command: BATON, args: mcpArgs(store, agent, role, extra), stderr: 'pipe' });
  await client.connect(transport);
  return client;
}

async function tool(client, name, args = {}, options) {
  const result = await client.callTool({ name, arguments: args }, undefined, options);
  assert.equal(result.isError, false, `${name}: ${result.content[0].text}`);
  return result;
}

function setUp() {
  const s = freshStore();
  const workdir = path.join(s.dir, 'ws');
  mkdirSync(workdir);
  writeFileSync(path.join(workdir, 'GOAL.md'), GOAL);
  const started = cli(s.store, ['sgai', 'start', path.join(workdir, 'GOAL.md')], { role: 'coordinator', agent: 'coordinator' });
  const run = started.run ? started.run.id : started.id;
  for (const agent of ['coordinator', 'coder', 'reviewer']) cli(s.store, ['agent', 'register', agent]);
  return { s, run };
}

test('sgai session: messages, a blocked question answered from the CLI, downgraded and real completion', async () => {
  const { s, run } = setUp();
  const coord = await agentClient(s.store, 'coordinator', 'coordinator', run);
  const coder = await agentClient(s.store, 'coder', 'agent');  // finds the run itself
  const reviewer = await agentClient(s.store, 'reviewer', 'agent', run);
  try {
    const coordTools = (await coord.listTools()).tools;
    const coderTools = (await coder.listTools()).tools;
    const names = (tools) => tools.map((t) => t.name).sort();
    assert.deepEqual(names(coordTools), ['ask_user_question', 'ask_user_work_gate', 'check_inbox', 'check_outbox',
      'peek_message_bus', 'project_todoread', 'project_todowrite', 'send_message', 'update_workflow_state']);
    assert.deepEqual(names(coderTools), ['check_inbox', 'check_outbox', 'send_message', 'update_workflow_state'],
                     'coordinator tools are not offered to agents');
    const statusEnum = (tools) => tools.find((t) => t.name === 'update_workflow_state').inputSchema.properties.status.enum;
    assert.deepEqual(statusEnum(coordTools), ['working', 'agent-done', 'complete']);
    assert.deepEqual(statusEnum(coderTools), ['working', 'agent-done']);

    await tool(coord, 'project_todowrite', { todos: [{ id: '1', content: 'login form', status: 'pending', priority: 'high' }] });
    await tool(coord, 'update_workflow_state', { status: 'working', task: 'planning', addProgress: 'planned the login page' });
    const sent = await tool(coord, 'send_message', { toAgent: 'coder', body: 'build the login form' });
    assert.match(sent.content[0].text, /^Message sent successfully to coder\./);

    const inbox = await tool(coder, 'check_inbox');
    assert.match(inbox.content[0].text, /You have 1 message\(s\):[\s\S]*From: coordinator[\s\S]*Body: build the login form/);
    assert.equal((await tool(coder, 'check_inbox')).content[0].text, 'You have no messages.', 'read messages are marked read');

    const done = await tool(coder, 'update_workflow_state', { status: 'complete', task: 'login form', addProgress: 'form done' });
    assert.equal(done.structuredContent.downgraded, true);
    assert.equal(done.structuredContent.status, 'agent-done', "an agent's complete becomes agent-done");
    assert.equal(cli(s.store, ['run', 'show', run]).status, 'agent-done');

    await tool(coder, 'send_message', { toAgent: 'reviewer', body: 'please review the form' });
    assert.match((await tool(reviewer, 'check_inbox')).content[0].text, /please review the form/);
    const bus = await tool(coord, 'peek_message_bus');
    assert.match(bus.content[0].text, /^Total messages: 2/);
    const refused = await coder.callTool({ name: 'peek_message_bus', arguments: {} });
    assert.equal(refused.isError, true);
    assert.match(refused.content[0].text, /PermissionDenied/);
    const badArgs = await coder.callTool({ name: 'send_message', arguments: { body: 'to whom?' } });
    assert.equal(badArgs.isError, true);
    assert.match(badArgs.content[0].text, /toAgent/);

    // The coordinator asks; its call stays blocked until the human answers.
    const progress = [];
    const asking = tool(coord, 'ask_user_question',
      { questions: [{ question: 'Ship the login page?', choices: ['yes', 'not yet'] }] },
      { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeout: 20000 });
    let settled = false;
    asking.then(() => (settled = true), () => (settled = true));
    const open = await eventually(() => {
      const q = cli(s.store, ['question', 'list', '--run', run]).questions;
      return q.length === 1 ? q[0] : null;
    }, 8000, 'the open question');
    assert.equal(cli(s.store, ['run', 'show', run]).status, 'waiting-for-human');
    await eventually(() => progress.length >= 2, 8000, 'progress notifications while blocked');
    assert.equal(settled, false, 'the call waits for the human');
    cli(s.store, ['question', 'answer', open.id, '--choices', 'yes']);
    const answered = await asking;
    assert.match(answered.content[0].text, /Human response: yes/);
    assert.equal(cli(s.store, ['run', 'show', run]).status, 'working', 'sgai: an answer puts the workflow back to work');

    // The work gate: approving it moves sgai to building, where its ask
    // tools are gone, and the client is told the list changed.
    let changed = 0;
    coord.setNotificationHandler(ToolListChangedNotificationSchema, () => changed++);
    const gate = tool(coord, 'ask_user_work_gate', { summary: 'login page: form, validation, tests' });
    const gateQ = await eventually(() => cli(s.store, ['question', 'list', '--run', run]).questions[0], 8000, 'the work gate');
    cli(s.store, ['question', 'answer', gateQ.id, '--choices', 'DEFINITION IS COMPLETE, BUILD MAY BEGIN']);
    assert.match((await gate).content[0].text, /Human response: DEFINITION IS COMPLETE, BUILD MAY BEGIN/);
    await eventually(() => changed > 0, 8000, 'notifications/tools/list_changed');
    assert.ok(!(await coord.listTools()).tools.some((t) => t.name === 'ask_user_question'));

    // Open project todos hold the completion back; done, the coordinator completes.
    const blocked = await tool(coord, 'update_workflow_state', { status: 'complete', task: 'ship', addProgress: 'all done' });
    assert.equal(blocked.structuredContent.reverted.gate, 'open_todos', JSON.stringify(blocked.structuredContent));
    await tool(coord, 'project_todowrite', { todos: [{ id: '1', content: 'login form', status: 'completed', priority: 'high' }] });
    // The gate wrote to the coordinator as sgai's environment does; unread,
    // it would hold completion back too.
    assert.match((await tool(coord, 'check_inbox')).content[0].text, /From: environment[\s\S]*Pending TODO items/);
    const complete = await tool(coord, 'update_workflow_state', { status: 'complete', task: 'ship', addProgress: 'shipped' });
    assert.equal(complete.structuredContent.status, 'complete', JSON.stringify(complete.structuredContent));
    assert.equal(cli(s.store, ['run', 'show', run]).status, 'complete');
  } finally {
    await Promise.all([coord.close(), coder.close(), reviewer.close()]);
    s.remove();
  }
});

test('sgai session: a coordinator that goes away leaves its question open; the next ask gets the answer', async () => {
  const { s, run } = setUp();
  const question = { questions: [{ question: 'Use OAuth?', choices: ['yes', 'no'] }] };
  const first = await agentClient(s.store, 'coordinator', 'coordinator', run);
  const pending = first.callTool({ name: 'ask_user_question', arguments: question }).catch(() => null);
  const open = await eventually(() => cli(s.store, ['question', 'list', '--run', run]).questions[0], 8000, 'the question');
  await first.close();  // the host went away mid-call
  await pending;
  assert.equal(cli(s.store, ['question', 'show', open.id]).status, 'open', 'the question outlives the client');
  cli(s.store, ['question', 'answer', open.id, '--choices', 'no', '--text', 'keep it simple']);

  const second = await agentClient(s.store, 'coordinator', 'coordinator', run);
  try {
    const again = await tool(second, 'ask_user_question', question);
    assert.match(again.content[0].text, /Human response: no\nkeep it simple/);
    assert.equal(again.structuredContent.id, open.id, 'the same question, answered once');
  } finally {
    await second.close();
    s.remove();
  }
});
