// System: store.status as a readable key/value page.

import {h, replace, patch, kv, ago, errorBox, section, fmtNum, runLink, statusBadge, table, badge} from './dom.js';
import {op} from './api.js';

function label(k) { return k.replace(/_/g, ' ').replace(/^./, c => c.toUpperCase()); }
function val(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') return fmtNum(v);
  if (typeof v === 'object') return h('span', {class: 'mono small'}, JSON.stringify(v));
  return String(v);
}

export function mount(root, ctx) {
  const out = h('div');
  root.append(h('div', {class: 'page-head'}, h('h1', null, 'System')), out);
  async function refresh() {
    let r;
    try { r = await op('store.status', {}); } catch (e) { replace(out, errorBox(e)); return; }
    if (!ctx.isCurrent()) return;
    patch(out, r, () => {
      const st = r.store || {};
      const known = ['backend', 'location', 'durability', 'schema_version', 'detail'];
      const storePairs = [
        ['Version', r.version ?? st.version ?? undefined],
        ['Backend', st.backend], ['Location', st.location !== undefined ? h('span', {class: 'mono'}, st.location) : undefined],
        ['Durability', st.durability], ['Schema version', r.schema_version ?? st.schema_version],
        ['Detail', st.detail],
        ...Object.entries(st).filter(([k]) => !known.includes(k)).map(([k, v]) => [label(k), val(v)]),
      ];
      const led = r.ledger || {};
      return [
        section('Store', kv(storePairs.map(([k, v]) => [k, v === undefined ? undefined : (v instanceof Node ? v : val(v))]))),
        section('Counts', kv(Object.entries(r.counts || {}).map(([k, v]) => [label(k), val(v)]))),
        section('Ledger', kv([['Head seq', val(led.head_seq)], ['Head hash', h('span', {class: 'mono small'}, led.head_hash || '—')],
          ...Object.entries(led).filter(([k]) => !['head_seq', 'head_hash'].includes(k)).map(([k, v]) => [label(k), val(v)])]),
        h('p', null, h('a', {href: '#/ledger'}, 'Ledger and verification →'))),
        (r.active_runs || []).length ? section('Active runs', table([
          {label: 'Id', cell: x => runLink(x.id)}, {label: 'Title', cell: x => x.title || ''},
          {label: 'Profile', cell: x => x.profile}, {label: 'Status', cell: x => statusBadge(x.status)},
          {label: 'Updated', cell: x => ago(x.updated_at)}], r.active_runs)) : null,
        (r.open_questions || []).length ? section('Open questions', table([
          {label: 'Question', cell: x => x.question || ''}, {label: 'Asked by', cell: x => x.asked_by || ''},
          {label: 'Run', cell: x => runLink(x.run_id)}, {label: 'Since', cell: x => ago(x.created_at)}], r.open_questions)) : null,
        (r.mirrors || []).length ? section('Mirrors', table([
          {label: 'Path', cell: x => h('span', {class: 'mono'}, x.path || '')}, {label: 'Run', cell: x => runLink(x.run_id)},
          {label: 'Health', cell: x => badge(x.ok === false || x.last_error ? 'failed' : 'ok', x.ok === false || x.last_error ? 'bad' : 'ok')},
          {label: 'Last error', cell: x => x.last_error || '—'}], r.mirrors)) : null,
      ];
    });
  }
  refresh();
  return {refresh};
}
