// The run detail's sections (builders take an op's result and return DOM),
// plus two stateful ones: the paged run ledger and the graph checkpoints panel.

import {h, replace, patch, ago, badge, statusBadge, table, empty, pre, errorBox, errorText, fmtNum,
  runHref, runLink, tone} from './dom.js';
import {op, Submission} from './api.js';

// ---- progress, todos ----------------------------------------------------------------

export function progressList(items, total = items.length) {
  // Newest first; each entry {agent, description, timestamp}. run.show gives
  // the newest notes; the rest are in the run's ledger (kind run.progress).
  return h('div', null,
    h('ol', {class: 'timeline', reversed: true},
      [...items].reverse().map(p => h('li', null,
        h('div', {class: 'meta'}, h('strong', null, p.agent || ''), ' ', ago(p.timestamp)),
        h('div', {class: 'text'}, p.description ?? '')))),
    total > items.length ? h('p', {class: 'muted small'},
      `The newest ${items.length} of ${total}; the others are in the ledger below (kind run.progress).`) : null);
}

// sgai todo lists: the project's and each agent's that touched the run.
export async function loadTodos(run, tasks, usage, mail) {
  const agents = new Set();
  for (const p of run.progress || []) if (p.agent) agents.add(p.agent);
  if (tasks?.ok) for (const t of tasks.value.tasks || []) { if (t.assignee) agents.add(t.assignee); if (t.lease?.owner) agents.add(t.lease.owner); }
  if (usage?.ok) for (const r of usage.value.rows || []) if (r.agent) agents.add(r.agent);
  if (mail?.ok) for (const m of mail.value.messages || []) if (m.from) agents.add(m.from);
  const calls = [op('sgai.todo_read', {run: run.id, project: true})];
  for (const a of [...agents].slice(0, 20)) calls.push(op('sgai.todo_read', {run: run.id, agent: a}));
  const res = await Promise.allSettled(calls);
  return res.filter(r => r.status === 'fulfilled').map(r => r.value);
}

export function todoLists(lists) {
  return lists.filter(l => (l.todos || []).length).map(l => h('div', {class: 'todo-list'},
    h('h3', null, l.list === 'project' ? 'Project' : l.list),
    h('ul', {class: 'plain'}, l.todos.map(t => h('li', null, statusBadge(t.status), ' ', t.content ?? t.id,
      t.priority ? h('span', {class: 'muted small'}, ` · ${t.priority}`) : null)))));
}

// ---- questions, approvals ------------------------------------------------------------

function answerText(a) {
  if (a === null || a === undefined) return '';
  if (typeof a === 'string') return a;
  const parts = [];
  if (Array.isArray(a.answers)) parts.push(a.answers.map(x => Array.isArray(x) ? x.join(', ') : String(x)).join(' | '));
  else if (Array.isArray(a.choices)) parts.push(a.choices.join(', '));
  if (a.text) parts.push(a.text);
  if (a.answer !== undefined && !parts.length) parts.push(typeof a.answer === 'string' ? a.answer : JSON.stringify(a.answer));
  return parts.length ? parts.join(' — ') : JSON.stringify(a);
}

export function questionList(v) {
  return h('ul', {class: 'plain items'}, (v.questions || []).map(q => h('li', {'data-test': 'question', 'data-id': q.id},
    h('div', {class: 'meta'}, statusBadge(q.status), ' asked by ', h('strong', null, q.asked_by || ''), ' ', ago(q.created_at),
      q.work_gate ? badge('work gate', 'warn') : null),
    q.message ? h('p', {class: 'text'}, q.message) : null,
    (q.questions || []).map(p => h('p', {class: 'small'}, p.question ?? '',
      (p.choices || p.options) ? h('span', {class: 'muted'}, ' [',
        (p.choices || p.options).map(c => typeof c === 'string' ? c : c.label).join(' / '), ']') : null)),
    q.status === 'answered' ? h('p', {class: 'answer'}, '↳ ', answerText(q.answer), ' ',
      h('span', {class: 'muted small'}, `by ${q.answered_by ?? '?'} `), ago(q.answered_at)) : null)));
}

export function approvalList(v) {
  return table([
    {label: 'Decision', cell: d => badge(d.decision, tone(d.decision === 'approved' || d.decision === 'approve' ? 'ok' : d.decision))},
    {label: 'Subject', cell: d => `${d.subject_kind} ${d.subject}`},
    {label: 'Reviewer', cell: d => d.reviewer},
    {label: 'Note', cell: d => d.note || ''},
    {label: 'When', cell: d => ago(d.created_at), class: 'nowrap'},
  ], v.decisions || []);
}

// ---- cost, messages, chat, mirrors ------------------------------------------------------

const money = n => typeof n === 'number' ? n.toLocaleString(undefined, {maximumFractionDigits: 4}) : (n ?? '—');

export function usageTable(v) {
  const cols = [
    {label: 'Agent', cell: r => r.agent ?? ''},
    {label: 'Model', cell: r => r.model ?? ''},
    {label: 'Cost', cell: r => money(r.cost), class: 'num'},
    {label: 'Input', cell: r => fmtNum(r.input_tokens), class: 'num'},
    {label: 'Output', cell: r => fmtNum(r.output_tokens), class: 'num'},
    {label: 'Reasoning', cell: r => fmtNum(r.reasoning_tokens), class: 'num'},
    {label: 'Cache read', cell: r => fmtNum(r.cache_read_tokens), class: 'num'},
    {label: 'Cache write', cell: r => fmtNum(r.cache_write_tokens), class: 'num'},
    {label: 'Steps', cell: r => fmtNum(r.steps), class: 'num'},
  ];
  const rows = [...(v.rows || [])];
  if (v.total) rows.push({...v.total, agent: 'Total', model: ''});
  const t = table(cols, rows, r => (r === rows[rows.length - 1] && v.total ? {class: 'total'} : null));
  return t;
}

export function messageList(v) {
  return h('ul', {class: 'plain items'}, (v.messages || []).map(m => h('li', {'data-test': 'message', 'data-id': m.id},
    h('div', {class: 'meta'}, h('strong', null, m.from ?? ''), ' → ', h('strong', null, m.to ?? ''), ' ', ago(m.created_at), ' ',
      badge(m.delivery_status || (m.read ? 'read' : 'unread'), tone(m.delivery_status)), m.read ? h('span', {class: 'muted small'}, ' read') : null),
    h('div', {class: 'text'}, m.body ?? ''),
    m.last_error ? h('p', {class: 'err'}, m.last_error) : null)));
}

export function chatChannels(v) {
  return h('div', null, (v.channels || []).map(c => {
    const body = h('div', {class: 'chat-body'});
    const d = h('details', {class: 'chat-channel'},
      h('summary', null, h('strong', null, c.channel), ` · ${c.messages} messages · last `, ago(c.last_at)), body);
    d.addEventListener('toggle', async () => {
      if (!d.open) return;
      replace(body, h('p', {class: 'muted'}, 'Loading…'));
      try {
        const r = await op('chat.history', {channel: c.channel, limit: 100});
        replace(body, (r.messages || []).length ? h('ul', {class: 'plain items'}, r.messages.map(m => h('li', null,
          h('div', {class: 'meta'}, h('strong', null, m.from ?? ''), ' ', ago(m.created_at)),
          h('div', {class: 'text'}, m.body ?? '')))) : empty('No messages.'));
      } catch (e) { replace(body, errorBox(e)); }
    });
    return d;
  }));
}

export function mirrorList(v) {
  return table([
    {label: 'Path', cell: m => h('span', {class: 'mono'}, m.path)},
    {label: 'Format', cell: m => m.format},
    {label: 'Health', cell: m => badge(m.ok ? 'ok' : 'failed', m.ok ? 'ok' : 'bad')},
    {label: 'Last error', cell: m => m.last_error ? h('span', {class: 'err-text'}, m.last_error) : '—'},
    {label: 'Failed', cell: m => m.failed_at ? ago(m.failed_at) : '—'},
  ], v.mirrors || [], m => ({'data-test': 'mirror', 'data-ok': m.ok ? 'true' : 'false'}));
}

// ---- ledger rows (shared with the Ledger page) -------------------------------------------

export function actorText(ev) {
  const a = ev.actor;
  if (a && typeof a === 'object') return `${a.id ?? ''}${a.role ? ' (' + a.role + ')' : ''}`;
  return `${a ?? ''}${ev.role ? ' (' + ev.role + ')' : ''}`;
}

export function ledgerRow(ev, withRun = true) {
  return h('tr', {'data-test': 'ledger-row', 'data-seq': ev.seq},
    h('td', {'data-label': 'Seq', class: 'num mono'}, String(ev.seq)),
    h('td', {'data-label': 'Time', class: 'nowrap'}, ago(ev.time)),
    h('td', {'data-label': 'Kind', class: 'mono nowrap'}, ev.kind ?? ''),
    withRun ? h('td', {'data-label': 'Run', class: 'nowrap'}, ev.run_id ? runLink(ev.run_id) : '—') : null,
    h('td', {'data-label': 'Actor', class: 'nowrap'}, actorText(ev)),
    h('td', {'data-label': 'Summary'}, ev.summary ?? ''));
}

export function ledgerTable(withRun = true) {
  const tbody = h('tbody');
  const el = h('div', {class: 'table-wrap'}, h('table', {class: 'resp ledger'},
    h('thead', null, h('tr', null, h('th', {class: 'num'}, 'Seq'), h('th', null, 'Time'), h('th', null, 'Kind'),
      withRun ? h('th', null, 'Run') : null, h('th', null, 'Actor'), h('th', null, 'Summary'))),
    tbody));
  return {el, tbody};
}

// The run's ledger, newest first, merged by seq (so no event shows twice),
// with "Older" paging through ledger.events' `before`.
export function runLedger(run) {
  const PAGE = 50;
  const events = new Map();
  let oldest = Infinity;
  let more = true;
  let error = null;
  let target = null;
  const merge = list => { for (const e of list) { events.set(e.seq, e); oldest = Math.min(oldest, e.seq); } };
  async function page(before) {
    const r = await op('ledger.events', {run, before, limit: PAGE});
    const list = r.events || [];
    merge(list);
    return list;
  }
  const self = {
    async refresh() {
      try { await page(Number.MAX_SAFE_INTEGER); error = null; } catch (e) { error = e; }
      if (events.size < PAGE) more = false;
    },
    render(body) {
      target = body;
      const seqs = [...events.keys()].sort((a, b) => b - a);
      patch(body, [seqs, more, error && errorText(error)], () => {
        const {el, tbody} = ledgerTable(false);
        for (const s of seqs) tbody.append(ledgerRow(events.get(s), false));
        const olderBtn = h('button', {type: 'button', class: 'secondary', 'data-test': 'ledger-older', onclick: async () => {
          olderBtn.disabled = true;
          try {
            const list = await page(oldest);
            if (list.length < PAGE) more = false;
          } catch (e) { error = e; }
          self.render(target);
        }}, 'Older');
        return [error ? errorBox(error) : null, seqs.length ? el : empty('No events.'), more && seqs.length ? olderBtn : null];
      });
    },
    reset() { events.clear(); oldest = Infinity; more = true; },
  };
  return self;
}

// ---- graph runs: path, checkpoints, state at a checkpoint, fork ----------------------------

export function checkpointPanel(runId, app) {
  let chosen = null;     // seq of the checkpoint whose state is shown
  let shownSeq = null;
  const pathEl = h('div', {class: 'path', 'data-test': 'graph-path'});
  const listEl = h('div');
  const stateEl = h('div', {class: 'cp-state', 'data-test': 'checkpoint-state'});
  const forkErr = h('p', {class: 'err', role: 'alert'});
  const forkSub = new Submission();
  const forkBtn = h('button', {type: 'button', class: 'primary', 'data-test': 'fork', onclick: async () => {
    if (chosen === null) return;
    forkBtn.disabled = true; forkErr.textContent = '';
    try {
      const r = await forkSub.run('graph.fork', {id: runId, seq: chosen});
      app.navigate(runHref(r.id));
    } catch (e) { forkErr.textContent = errorText(e); }
    finally { forkBtn.disabled = false; }
  }}, 'Fork from here');
  const chosenLabel = h('span', {class: 'muted'});
  const wrap = h('div', {class: 'checkpoints'},
    h('h3', null, 'Path'), pathEl,
    h('h3', null, 'Checkpoints'), listEl,
    h('div', {class: 'cp-head'}, h('h3', null, 'State at checkpoint ', chosenLabel), forkBtn),
    forkErr, stateEl);
  let mounted = null;
  let cps = [];

  async function showState(seq) {
    chosen = seq;
    chosenLabel.textContent = `#${seq}`;
    for (const tr of listEl.querySelectorAll('tr[data-seq]')) {
      const on = Number(tr.dataset.seq) === seq;
      tr.classList.toggle('selected', on);
      tr.querySelector('button')?.setAttribute('aria-pressed', on ? 'true' : 'false');
    }
    if (shownSeq === seq) return;
    shownSeq = seq;
    replace(stateEl, h('p', {class: 'muted'}, 'Loading…'));
    try {
      const r = await op('graph.checkpoint', {id: runId, seq});
      if (chosen !== seq) return;
      replace(stateEl, h('p', {class: 'small'}, `after node `, h('strong', null, r.node || '(start)'), `, next `,
        h('strong', null, r.next || '')), pre(r.state ?? {}));
    } catch (e) { shownSeq = null; replace(stateEl, errorBox(e)); }
  }

  return {
    update(body, cpsRes, pathRes) {
      if (mounted !== body) { replace(body, wrap); mounted = body; }
      if (pathRes) {
        patch(pathEl, pathRes.ok ? pathRes.value : {e: errorText(pathRes.error)}, () => {
          if (!pathRes.ok) return errorBox(pathRes.error);
          const p = pathRes.value.path || [];
          if (!p.length) return empty('No node has run yet.');
          const chips = [];
          p.forEach((x, i) => {
            if (i) chips.push(h('span', {class: 'arrow', 'aria-hidden': 'true'}, '→'));
            chips.push(h('span', {class: `node-chip tone-${tone(x.outcome)}`, title: `#${x.seq} ${x.outcome}`}, x.node));
          });
          const last = p[p.length - 1];
          if (last.next && !/^(END|ERROR)$/.test(last.next) && pathRes.value.status !== 'completed') {
            chips.push(h('span', {class: 'arrow', 'aria-hidden': 'true'}, '→'),
              h('span', {class: 'node-chip current', title: 'next'}, last.next));
          } else if (last.next) {
            chips.push(h('span', {class: 'arrow', 'aria-hidden': 'true'}, '→'), h('span', {class: 'node-chip'}, last.next));
          }
          return h('div', {class: 'path-chips'}, chips);
        });
      }
      if (!cpsRes) return;
      if (!cpsRes.ok) { patch(listEl, {e: errorText(cpsRes.error)}, () => errorBox(cpsRes.error)); return; }
      cps = cpsRes.value.checkpoints || [];
      const changed = patch(listEl, cps, () => cps.length ? table([
        {label: 'Seq', cell: c => String(c.seq), class: 'num mono'},
        {label: 'Node', cell: c => c.node || '(start)'},
        {label: 'Outcome', cell: c => badge(c.outcome, tone(c.outcome))},
        {label: 'Next', cell: c => c.next},
        {label: 'When', cell: c => ago(c.created_at), class: 'nowrap'},
        {label: 'State', cell: c => h('button', {type: 'button', class: 'link', 'data-test': 'checkpoint-show',
          'aria-pressed': 'false', onclick: () => showState(c.seq)}, 'Show')},
      ], cps, c => ({'data-test': 'checkpoint', 'data-seq': c.seq})) : empty('No checkpoints.'));
      forkBtn.hidden = !cps.length;
      if (!cps.length) { chosen = null; return; }
      // Default to the latest checkpoint; keep the user's choice while it exists.
      const pick = chosen !== null && cps.some(c => c.seq === chosen) ? chosen : cps[cps.length - 1].seq;
      if (changed || pick !== chosen) showState(pick);
    },
  };
}
