// Runs: filters (status, profile, project, text) kept in the URL query, counts
// by status as chips, and the table (newest activity first, as run.list returns).

import {h, replace, ago, statusBadge, runLink, errorBox, empty, table, tone} from './dom.js';
import {op} from './api.js';

const PROFILES = ['baton', 'sgai', 'genie', 'graph', 'stigmergy', 'sinfonia'];

export function mount(root, ctx) {
  const {app} = ctx;
  const q = {status: ctx.query.status || '', profile: ctx.query.profile || '',
    project: ctx.query.project || '', q: ctx.query.q || ''};

  const status = h('select', {name: 'status', 'data-test': 'filter-status', 'aria-label': 'Status'},
    h('option', {value: ''}, 'Any status'));
  const profile = h('select', {name: 'profile', 'data-test': 'filter-profile', 'aria-label': 'Profile'},
    h('option', {value: ''}, 'Any profile'), PROFILES.map(p => h('option', {value: p}, p)));
  const project = h('select', {name: 'project', 'data-test': 'filter-project', 'aria-label': 'Project'},
    h('option', {value: ''}, 'Any project'));
  const text = h('input', {type: 'search', name: 'q', value: q.q, placeholder: 'id or title',
    'data-test': 'filter-text', 'aria-label': 'Search runs'});
  profile.value = q.profile;
  const form = h('form', {class: 'filters', role: 'search'}, status, profile, project, text,
    h('button', {type: 'submit', class: 'secondary'}, 'Filter'));
  const chips = h('div', {class: 'chips', 'data-test': 'status-counts'});
  const out = h('div');
  root.append(h('div', {class: 'page-head'}, h('h1', null, 'Runs')), form, chips, out);

  const apply = () => {
    q.status = status.value; q.profile = profile.value; q.project = project.value; q.q = text.value.trim();
    app.setQuery(q);
    refresh();
  };
  form.addEventListener('submit', e => { e.preventDefault(); apply(); });
  for (const el of [status, profile, project]) el.addEventListener('change', apply);
  let typing = 0;
  text.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(apply, 300); });

  // Projects for the select (once).
  op('project.list', {}).then(r => {
    for (const p of r.projects || []) project.append(h('option', {value: p.id}, p.name || p.id));
    project.value = q.project;
  }).catch(() => {});

  let lastCounts = '';
  async function refresh() {
    // counts: by status over the other filters; order: newest activity first.
    const input = {limit: 500, counts: true, order: 'activity'};
    if (q.status) input.status = q.status;
    if (q.profile) input.profile = q.profile;
    if (q.project) input.project = q.project;
    if (q.q) input.text = q.q;
    let r;
    try { r = await op('run.list', input); } catch (e) { replace(out, errorBox(e)); return; }
    if (!ctx.isCurrent()) return;
    const counts = r.counts || {};
    // Status select: every status that has runs (under the other filters), plus the chosen one.
    const sig = JSON.stringify([counts, q.status]);
    if (sig !== lastCounts) {
      lastCounts = sig;
      const names = new Set(Object.keys(counts));
      if (q.status) names.add(q.status);
      replace(status, h('option', {value: ''}, 'Any status'),
        [...names].sort().map(n => h('option', {value: n}, counts[n] !== undefined ? `${n} (${counts[n]})` : n)));
      status.value = q.status;
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      replace(chips,
        chip('all', total, !q.status, () => { status.value = ''; apply(); }),
        Object.entries(counts).map(([n, c]) => chip(n, c, q.status === n, () => { status.value = n; apply(); })));
    }
    const runs = r.runs || [];
    replace(out, runs.length ? table([
      {label: 'Id', cell: x => runLink(x.id), class: 'nowrap'},
      {label: 'Title', cell: x => x.title || ''},
      {label: 'Profile', cell: x => x.profile},
      {label: 'Status', cell: x => statusBadge(x.status)},
      {label: 'Updated', cell: x => ago(x.updated_at), class: 'nowrap'},
    ], runs, x => ({'data-test': 'run-row', 'data-id': x.id})) : empty('No runs match.'));
  }

  refresh();
  return {refresh};
}

function chip(name, n, active, onclick) {
  return h('button', {type: 'button', class: `chip tone-${name === 'all' ? 'neutral' : tone(name)}${active ? ' active' : ''}`,
    'aria-pressed': active ? 'true' : 'false', 'data-test': 'status-chip', 'data-status': name, onclick},
  name, ' ', h('span', {class: 'chip-n'}, String(n)));
}
