// Boards: the list (#/boards) and one board as kanban columns (#/boards/<id>),
// each card with a Move control (the engine refuses moves its gates forbid).

import {h, replace, patch, ago, badge, statusBadge, errorBox, errorText, empty, table, enc, runLink} from './dom.js';
import {op, Submission} from './api.js';

export function mount(root, ctx) {
  return ctx.params.length ? mountBoard(root, ctx, ctx.params[0]) : mountList(root, ctx);
}

function mountList(root, ctx) {
  const out = h('div');
  root.append(h('div', {class: 'page-head'}, h('h1', null, 'Boards')), out);
  async function refresh() {
    let r;
    try { r = await op('board.list', {}); } catch (e) { replace(out, errorBox(e)); return; }
    if (!ctx.isCurrent()) return;
    const boards = r.boards || [];
    patch(out, boards, () => boards.length ? table([
      {label: 'Name', cell: b => h('a', {href: `#/boards/${enc(b.id)}`}, b.name || b.id)},
      {label: 'Description', cell: b => b.description || ''},
      {label: 'Columns', cell: b => String((b.columns || []).length), class: 'num'},
      {label: 'Tasks', cell: b => String(b.task_count ?? ''), class: 'num'},
      {label: 'Template', cell: b => b.template || '—'},
      {label: 'Updated', cell: b => ago(b.updated_at), class: 'nowrap'},
    ], boards, b => ({'data-test': 'board-row', 'data-id': b.id})) : empty('No boards.'));
  }
  refresh();
  return {refresh};
}

const GATE_LABEL = {human: 'human gate', agent: 'agent', 'human+agent': 'human + agent'};

function mountBoard(root, ctx, id) {
  const {app} = ctx;
  const head = h('div');
  const err = h('div');
  const out = h('div', {class: 'kanban', 'data-test': 'kanban'});
  root.append(h('p', null, h('a', {href: '#/boards'}, '← Boards')), head, err, out);
  async function refresh() {
    let b;
    try { b = await op('board.show', {board: id}); } catch (e) { replace(err, errorBox(e)); return; }
    if (!ctx.isCurrent()) return;
    replace(err);
    patch(head, [b.name, b.description], () => [
      h('div', {class: 'page-head'}, h('h1', null, b.name || b.id)),
      b.description ? h('p', {class: 'muted'}, b.description) : null]);
    const cols = [...(b.columns || [])].sort((x, y) => (x.position ?? 0) - (y.position ?? 0));
    // Rebuild only when the board changed, so an open select keeps its choice.
    patch(out, [cols, b.orphaned], () => [
      cols.map(c => column(c, cols, app)),
      (b.orphaned || []).length ? h('section', {class: 'kcol orphaned'}, h('h2', null, 'Without a column'),
        b.orphaned.map(t => h('div', {class: 'kcard'}, h('div', {class: 'kcard-title'}, t.title), statusBadge(t.status)))) : null,
    ]);
  }
  refresh();
  return {refresh};
}

function column(c, cols, app) {
  const tasks = c.tasks || [];
  return h('section', {class: 'kcol', 'data-test': 'board-column', 'data-column': c.name},
    h('header', {class: 'kcol-head'},
      c.color && /^#[0-9a-fA-F]{3,8}$/.test(c.color) ? colorDot(c.color) : null,
      h('h2', null, c.label || c.name),
      h('span', {class: 'muted small'}, String(tasks.length)),
      c.gate === 'human' ? badge('human gate', 'warn', {'data-test': 'gate-human'})
        : c.gate ? badge(GATE_LABEL[c.gate] || c.gate, 'neutral') : null),
    tasks.length ? tasks.map(t => card(t, c, cols, app)) : h('p', {class: 'muted small empty-col'}, 'Empty'));
}

function colorDot(color) {
  const d = h('span', {class: 'dot', 'aria-hidden': 'true'});
  d.style.background = color; // a validated #hex, set from JS (CSP allows it)
  return d;
}

function card(t, c, cols, app) {
  const others = cols.filter(x => x.name !== c.name);
  // The column after this one is the usual next step: selected by default.
  const at = cols.findIndex(x => x.name === c.name);
  const next = cols[at + 1]?.name;
  const sel = h('select', {'aria-label': `Move ${t.title || t.id} to`, 'data-test': 'card-column'},
    others.map(x => h('option', {value: x.name, selected: x.name === next}, x.label || x.name)));
  const err = h('p', {class: 'err', role: 'alert'});
  const sub = new Submission();
  const btn = h('button', {type: 'submit', class: 'secondary', 'data-test': 'card-move'}, 'Move');
  const form = h('form', {class: 'kmove'}, sel, btn);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    btn.disabled = true; err.textContent = '';
    try { await sub.run('board.move', {task: t.id, column: sel.value}); app.scheduleRefresh(0); }
    catch (ex) { err.textContent = errorText(ex); }
    finally { btn.disabled = false; }
  });
  return h('article', {class: 'kcard', 'data-test': 'board-card', 'data-id': t.id},
    h('div', {class: 'kcard-title'}, t.title || t.id),
    h('div', {class: 'kcard-meta'}, statusBadge(t.status), t.run_id ? runLink(t.run_id) : null,
      t.assignee ? h('span', {class: 'muted small'}, t.assignee) : null),
    others.length ? form : null, err);
}
