// Agents: status, current tasks with lease expiry, last heartbeat, unread mail.

import {h, replace, patch, ago, statusBadge, errorBox, empty, table, runLink} from './dom.js';
import {op} from './api.js';

export function mount(root, ctx) {
  const out = h('div');
  root.append(h('div', {class: 'page-head'}, h('h1', null, 'Agents')), out);

  async function refresh() {
    let agents, tasks;
    try {
      [agents, tasks] = await Promise.all([op('agent.list', {}), op('task.list', {status: 'in_progress', limit: 100000})]);
    } catch (e) { replace(out, errorBox(e)); return; }
    if (!ctx.isCurrent()) return;
    const list = agents.agents || [];
    // Tasks held by each agent: the lease owner, else the assignee.
    const held = new Map();
    for (const t of tasks.tasks || []) {
      const who = t.lease?.owner || t.assignee;
      if (!who) continue;
      if (!held.has(who)) held.set(who, []);
      held.get(who).push(t);
    }
    // Unread counts, a few requests at a time.
    const unread = new Map();
    const queue = [...list];
    await Promise.all(Array.from({length: 4}, async () => {
      while (queue.length) {
        const a = queue.shift();
        try {
          const r = await op('mail.peek', {agent: a.id, unread_only: true, limit: 1000});
          unread.set(a.id, (r.messages || []).length);
        } catch { unread.set(a.id, null); }
      }
    }));
    if (!ctx.isCurrent()) return;
    const rows = list.map(a => ({a, tasks: held.get(a.id) || [], unread: unread.get(a.id)}));
    patch(out, rows, () => rows.length ? table([
      {label: 'Id', cell: r => h('span', {class: 'mono'}, r.a.id)},
      {label: 'Role', cell: r => r.a.role + (r.a.team ? ` · ${r.a.team}` : '')},
      {label: 'Status', cell: r => statusBadge(r.a.status)},
      {label: 'Current tasks', cell: r => r.tasks.length ? h('ul', {class: 'plain'}, r.tasks.map(t => h('li', null,
        h('span', {class: 'mono small'}, t.id), ' ', t.title || '', t.run_id ? [' (', runLink(t.run_id), ')'] : null,
        t.lease?.expires_at ? [h('span', {class: 'muted small'}, ' lease '), ago(t.lease.expires_at)] : null))) : '—'},
      {label: 'Heartbeat', cell: r => r.a.last_heartbeat_at ? ago(r.a.last_heartbeat_at) : '—', class: 'nowrap'},
      {label: 'Unread', cell: r => r.unread === null || r.unread === undefined ? '—' : String(r.unread), class: 'num'},
    ], rows, r => ({'data-test': 'agent-row', 'data-id': r.a.id})) : empty('No agents registered.'));
  }
  refresh();
  return {refresh};
}
