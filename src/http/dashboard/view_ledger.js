// Ledger: all events newest first, filters (kind, actor, run) in the URL,
// "Older" paging with ledger.events' `before`, "Follow live" prepending SSE
// events (each seq shown at most once), and a Verify button.

import {h, replace, errorBox, errorText, kv, badge, empty, fmtNum} from './dom.js';
import {op} from './api.js';
import {ledgerRow, ledgerTable} from './run_sections.js';

const PAGE = 100;

export function mount(root, ctx) {
  const {app} = ctx;
  const q = {kind: ctx.query.kind || '', actor: ctx.query.actor || '', run: ctx.query.run || ''};
  const kind = h('input', {type: 'text', name: 'kind', value: q.kind, placeholder: 'kind or prefix (task.)',
    'aria-label': 'Kind', 'data-test': 'filter-kind'});
  const actor = h('input', {type: 'text', name: 'actor', value: q.actor, placeholder: 'actor', 'aria-label': 'Actor',
    'data-test': 'filter-actor'});
  const run = h('input', {type: 'text', name: 'run', value: q.run, placeholder: 'run id', 'aria-label': 'Run',
    'data-test': 'filter-run'});
  const form = h('form', {class: 'filters', role: 'search'}, kind, actor, run,
    h('button', {type: 'submit', class: 'secondary'}, 'Filter'));
  const follow = h('input', {type: 'checkbox', id: 'follow', checked: true, 'data-test': 'follow'});
  const newer = h('button', {type: 'button', class: 'link', hidden: true, 'data-test': 'ledger-newer'});
  const verifyBtn = h('button', {type: 'button', class: 'secondary', 'data-test': 'verify'}, 'Verify');
  const deep = h('input', {type: 'checkbox', id: 'deep'});
  const verifyOut = h('div', {'data-test': 'verify-result', 'aria-live': 'polite'});
  const err = h('div');
  const {el: tableEl, tbody} = ledgerTable(true);
  const emptyEl = empty('No events.');
  const older = h('button', {type: 'button', class: 'secondary', 'data-test': 'ledger-older'}, 'Older');
  root.append(h('div', {class: 'page-head'}, h('h1', null, 'Ledger'),
    h('div', {class: 'toolbar'}, h('label', {class: 'check'}, follow, ' Follow live'), newer,
      h('label', {class: 'check'}, deep, ' deep'), verifyBtn)),
  verifyOut, form, err, tableEl, emptyEl, older);

  const seen = new Set();
  let oldest = Infinity, newest = 0, pending = 0;

  const input = extra => {
    const x = {...extra};
    if (q.kind) x.kind = q.kind;
    if (q.actor) x.actor = q.actor;
    if (q.run) x.run = q.run;
    return x;
  };
  const add = (events, where) => {
    // events arrive in seq order; rows are newest first
    const rows = [];
    for (const e of events) {
      if (seen.has(e.seq)) continue;
      seen.add(e.seq);
      oldest = Math.min(oldest, e.seq);
      newest = Math.max(newest, e.seq);
      rows.push(ledgerRow(e, true));
    }
    rows.reverse();
    if (where === 'top') tbody.prepend(...rows); else tbody.append(...rows);
    emptyEl.hidden = seen.size > 0;
  };

  async function load() {
    seen.clear(); oldest = Infinity; newest = 0; pending = 0;
    replace(tbody); replace(err);
    newer.hidden = true;
    try {
      const r = await op('ledger.events', input({before: Number.MAX_SAFE_INTEGER, limit: PAGE}));
      if (!ctx.isCurrent()) return;
      add(r.events || [], 'bottom');
      older.hidden = (r.events || []).length < PAGE;
    } catch (e) { replace(err, errorBox(e)); older.hidden = true; }
    emptyEl.hidden = seen.size > 0 || err.firstChild !== null;
  }

  older.addEventListener('click', async () => {
    older.disabled = true;
    try {
      const r = await op('ledger.events', input({before: oldest, limit: PAGE}));
      add(r.events || [], 'bottom');
      if ((r.events || []).length < PAGE) older.hidden = true;
    } catch (e) { replace(err, errorBox(e)); }
    older.disabled = false;
  });

  // Events after the newest shown (after a reset, or when turning Follow back on).
  async function catchUp() {
    if (!newest) return load();
    try {
      const r = await op('ledger.events', input({since: newest, limit: 1000}));
      add(r.events || [], 'top');
      if ((r.events || []).length >= 1000) load();
    } catch (e) { replace(err, errorBox(e)); }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    q.kind = kind.value.trim(); q.actor = actor.value.trim(); q.run = run.value.trim();
    app.setQuery(q);
    load();
  });
  follow.addEventListener('change', () => { if (follow.checked) { pending = 0; newer.hidden = true; catchUp(); } });
  newer.addEventListener('click', () => { pending = 0; newer.hidden = true; catchUp(); });

  verifyBtn.addEventListener('click', async () => {
    verifyBtn.disabled = true;
    replace(verifyOut, h('p', {class: 'muted'}, 'Verifying…'));
    try {
      const r = await op('ledger.verify', deep.checked ? {deep: true} : {});
      replace(verifyOut, h('div', {class: 'card verify'}, h('p', null, badge(r.ok ? 'verified' : 'NOT verified', r.ok ? 'ok' : 'bad'),
        ` through ${fmtNum(r.events)} events`), kv([['Head hash', r.head_hash ? h('span', {class: 'mono small'}, r.head_hash) : undefined],
        ['Structure', r.structure], ['Rows checked', r.rows_checked !== undefined ? fmtNum(r.rows_checked) : undefined],
        ['Deep', r.deep !== undefined ? String(r.deep) : undefined]])));
    } catch (e) {
      replace(verifyOut, h('div', {class: 'card verify'}, badge('failed', 'bad'), ' ', h('span', {class: 'err-text'}, errorText(e))));
    }
    verifyBtn.disabled = false;
  });

  const matches = (ev) => {
    if (q.run && ev.run_id !== q.run) return false;
    if (q.actor) {
      const a = ev.actor && typeof ev.actor === 'object' ? ev.actor.id : ev.actor;
      if (a !== q.actor) return false;
    }
    if (q.kind) {
      if (q.kind.endsWith('.') ? !String(ev.kind).startsWith(q.kind) : ev.kind !== q.kind) return false;
    }
    return true;
  };

  load();
  return {
    live: false, // no re-fetch on events: the live ones are prepended instead
    onLedger(ev) {
      if (!matches(ev) || seen.has(ev.seq)) return;
      if (follow.checked && newest) add([ev], 'top');
      else if (follow.checked) load();
      else { pending++; newer.hidden = false; newer.textContent = `${pending} newer event${pending === 1 ? '' : 's'} — show`; }
    },
    onReset() { if (follow.checked) catchUp(); },
  };
}
