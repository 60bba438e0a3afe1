// SVG drawings: a state machine (states by BFS depth from the initial state)
// and a task graph (columns by dependency depth). Both use fixed-size boxes
// so layout is O(nodes + edges) and stays usable at 1,000 tasks; colours come
// from CSS classes so dark mode applies.

import {h, s, truncate, humanizeMs, parseTime, tone, table, statusBadge, empty} from './dom.js';

let uid = 0;

function arrowDefs(id) {
  return s('defs', null,
    s('marker', {id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 8, markerHeight: 8,
      markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse', class: 'arrowhead'},
    s('path', {d: 'M0,0 L10,5 L0,10 z'})));
}

// Where the segment from a box's centre toward (tx, ty) leaves the box.
function edgePoint(cx, cy, hw, hh, tx, ty) {
  const dx = tx - cx, dy = ty - cy;
  if (dx === 0 && dy === 0) return [cx, cy];
  const t = Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity);
  return [cx + dx * t, cy + dy * t];
}

// ---- state machine ------------------------------------------------------------------

// machine: machine.show's `machine` ({states:[{name, initial, terminal, description}],
// transitions:[{from, to, note, ops?}]}); current: the run's status.
export function machineSvg(machine, current) {
  const states = machine.states || [];
  const trans = (machine.transitions || []).filter(t => t.from !== t.to);
  const names = states.map(x => x.name);
  const initial = (states.find(x => x.initial) || states[0] || {}).name;
  const out = new Map(names.map(n => [n, []]));
  for (const t of trans) if (out.has(t.from)) out.get(t.from).push(t.to);
  // BFS depth from the initial state; unreachable states go in a last column.
  const depth = new Map();
  if (initial !== undefined) {
    depth.set(initial, 0);
    const queue = [initial];
    while (queue.length) {
      const n = queue.shift();
      for (const m of out.get(n) || []) if (!depth.has(m)) { depth.set(m, depth.get(n) + 1); queue.push(m); }
    }
  }
  const maxD = Math.max(0, ...depth.values());
  for (const n of names) if (!depth.has(n)) depth.set(n, maxD + 1);
  const cols = [];
  for (const n of names) (cols[depth.get(n)] ||= []).push(n);
  // Order each column by the mean row of its predecessors (one barycentre pass)
  // so that edges cross less.
  const row = new Map();
  cols.forEach((col, ci) => {
    if (!col) return;
    if (ci > 0) {
      const bary = n => {
        const rs = trans.filter(t => t.to === n && row.has(t.from)).map(t => row.get(t.from));
        return rs.length ? rs.reduce((a, b) => a + b, 0) / rs.length : Infinity;
      };
      const score = new Map(col.map(n => [n, bary(n)]));
      col.sort((a, b) => score.get(a) - score.get(b));
    }
    col.forEach((n, i) => row.set(n, i));
  });

  const W = 132, H = 34, GX = 84, GY = 44, PAD = 20;
  const pos = new Map();
  let rows = 0;
  cols.forEach((col, ci) => {
    (col || []).forEach((n, ri) => pos.set(n, {x: PAD + ci * (W + GX), y: PAD + ri * (H + GY)}));
    rows = Math.max(rows, (col || []).length);
  });
  const width = PAD * 2 + cols.length * W + Math.max(0, cols.length - 1) * GX;
  const height = PAD * 2 + rows * H + Math.max(0, rows - 1) * GY;
  const mid = `arrow-${++uid}`;
  const svg = s('svg', {class: 'machine-svg', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': `State machine ${machine.name || ''}, current state ${current || ''}`, 'data-test': 'machine-svg'},
  arrowDefs(mid));

  const pairs = new Set(trans.map(t => `${t.from}\u0000${t.to}`));
  const seen = new Set();
  for (const t of trans) {
    const key = `${t.from}\u0000${t.to}`;
    if (seen.has(key) || !pos.has(t.from) || !pos.has(t.to)) continue;
    seen.add(key);
    const a = pos.get(t.from), b = pos.get(t.to);
    const ax = a.x + W / 2, ay = a.y + H / 2, bx = b.x + W / 2, by = b.y + H / 2;
    // Bend edges that are not one column forward, and both of a pair going both ways.
    const adjacent = depth.get(t.to) === depth.get(t.from) + 1 && ay === by;
    const sameCol = depth.get(t.to) === depth.get(t.from);
    const bend = adjacent && !pairs.has(`${t.to}\u0000${t.from}`) ? 0 : sameCol ? 34 : 24;
    const mx = (ax + bx) / 2, my = (ay + by) / 2;
    const len = Math.hypot(bx - ax, by - ay) || 1;
    const cx = mx + (-(by - ay) / len) * bend, cy = my + ((bx - ax) / len) * bend;
    const [sx, sy] = edgePoint(ax, ay, W / 2, H / 2, cx, cy);
    const [ex, ey] = edgePoint(bx, by, W / 2 + 2, H / 2 + 2, cx, cy);
    const live = t.from === current;
    const p = s('path', {d: `M${sx},${sy} Q${cx},${cy} ${ex},${ey}`, class: `edge${live ? ' edge-live' : ''}`,
      'marker-end': `url(#${mid})`});
    p.append(s('title', null, `${t.from} → ${t.to}${t.note ? ': ' + t.note : ''}`));
    svg.append(p);
  }
  for (const st of states) {
    const p = pos.get(st.name);
    const cls = ['state', st.name === current ? 'current' : '', st.terminal ? 'terminal' : '', st.initial ? 'initial' : '']
      .filter(Boolean).join(' ');
    svg.append(s('g', {class: cls, 'data-state': st.name, transform: `translate(${p.x},${p.y})`},
      s('title', null, `${st.name}${st.description ? ': ' + st.description : ''}`),
      s('rect', {width: W, height: H, rx: 6}),
      s('text', {x: W / 2, y: H / 2 + 4, 'text-anchor': 'middle'}, truncate(st.name, 18))));
  }
  return h('div', {class: 'graph-scroll machine-scroll'}, svg);
}

// ---- task graph --------------------------------------------------------------------

function leaseText(t) {
  const l = t.lease;
  if (!l || !l.owner) return '';
  // Only work in progress is held; a finished task names who did it.
  if (t.status !== 'in_progress') return `by ${l.owner}`;
  const ms = parseTime(l.expires_at);
  const left = Number.isFinite(ms) ? ms - Date.now() : NaN;
  return `${l.owner} · ${Number.isFinite(left) ? (left >= 0 ? 'lease ' + humanizeMs(-left) : 'lease expired') : 'leased'}`;
}

// Longest-path depth over depends_on (edges to tasks outside the list are ignored;
// a cycle, which the engine refuses anyway, cannot loop forever).
function depths(tasks) {
  const byId = new Map(tasks.map(t => [t.id, t]));
  const d = new Map();
  const visiting = new Set();
  // Depth-first with an explicit stack: a chain of 100,000 tasks listed in
  // any order must not overflow the call stack.
  for (const root of tasks) {
    if (d.has(root.id)) continue;
    const stack = [root.id];
    while (stack.length) {
      const id = stack[stack.length - 1];
      if (d.has(id)) { stack.pop(); continue; }
      const deps = (byId.get(id).depends_on || []).filter(dep => byId.has(dep));
      const pending = visiting.has(id) ? [] : deps.filter(dep => !d.has(dep) && !visiting.has(dep));
      if (pending.length) {
        visiting.add(id);
        stack.push(...pending);
        continue;
      }
      // All known deps are done (a cycle, which the engine refuses, counts as 0).
      let best = 0;
      for (const dep of deps) if (d.has(dep)) best = Math.max(best, d.get(dep) + 1);
      visiting.delete(id);
      d.set(id, best);
      stack.pop();
    }
  }
  return d;
}

// Returns {el, setFilter(text)}: the scrollable SVG, a filter box and a table.
export function taskGraph(tasks) {
  if (!tasks.length) return {el: empty('No tasks.'), filter: null};
  const d = depths(tasks);
  const cols = [];
  for (const t of tasks) (cols[d.get(t.id)] ||= []).push(t);
  for (const c of cols) if (c) c.sort((a, b) => (b.priority || 0) - (a.priority || 0) || (a.position || 0) - (b.position || 0) || String(a.id).localeCompare(String(b.id)));

  const W = 210, H = 54, GX = 56, GY = 10, PAD = 12;
  const pos = new Map();
  let rows = 0;
  cols.forEach((col, ci) => {
    (col || []).forEach((t, ri) => pos.set(t.id, {x: PAD + ci * (W + GX), y: PAD + ri * (H + GY)}));
    rows = Math.max(rows, (col || []).length);
  });
  const width = PAD * 2 + cols.length * W + Math.max(0, cols.length - 1) * GX;
  const height = PAD * 2 + rows * H + Math.max(0, rows - 1) * GY;
  const mid = `arrow-${++uid}`;
  const svg = s('svg', {class: 'task-svg', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': `Task graph: ${tasks.length} tasks`, 'data-test': 'task-graph'}, arrowDefs(mid));
  const edges = s('g', {class: 'edges'});
  const nodes = s('g', {class: 'nodes'});
  svg.append(edges, nodes);
  const groups = new Map();
  for (const t of tasks) {
    const b = pos.get(t.id);
    for (const dep of t.depends_on || []) {
      const a = pos.get(dep);
      if (!a) continue;
      const sx = a.x + W, sy = a.y + H / 2, ex = b.x - 2, ey = b.y + H / 2;
      const c = Math.max(20, (ex - sx) / 2);
      edges.append(s('path', {class: 'edge', 'data-from': dep, 'data-to': t.id,
        d: `M${sx},${sy} C${sx + c},${sy} ${ex - c},${ey} ${ex},${ey}`, 'marker-end': `url(#${mid})`}));
    }
    const lease = leaseText(t);
    const g = s('g', {class: `task tone-${tone(t.status)}`, transform: `translate(${b.x},${b.y})`, 'data-id': t.id,
      'data-test': 'task-node'},
    s('title', null, `${t.id}: ${t.title || ''}\nstatus ${t.status}${lease ? '\n' + lease : ''}`),
    s('rect', {width: W, height: H, rx: 5}),
    s('text', {x: 8, y: 16, class: 't-title'}, truncate(t.title || t.id, 30)),
    s('text', {x: 8, y: 31, class: 't-meta'}, truncate(`${t.status} · ${t.id}`, 34)),
    s('text', {x: 8, y: 46, class: 't-lease'}, truncate(lease || (t.assignee ? `assignee ${t.assignee}` : ''), 34)));
    nodes.append(g);
    groups.set(t.id, g);
  }
  const scroller = h('div', {class: 'graph-scroll task-scroll'}, svg);

  const rowsById = new Map();
  const tbl = table([
    {label: 'Id', cell: t => h('span', {class: 'mono'}, t.id), class: 'nowrap'},
    {label: 'Title', cell: t => t.title || ''},
    {label: 'Status', cell: t => statusBadge(t.status)},
    {label: 'Holder', cell: t => leaseText(t) || t.assignee || '—'},
    {label: 'Depends on', cell: t => h('span', {class: 'mono small'}, (t.depends_on || []).join(', ') || '—')},
  ], tasks, t => ({'data-test': 'task-row', 'data-id': t.id}));
  for (const tr of tbl.querySelectorAll('tr[data-id]')) rowsById.set(tr.dataset.id, tr);

  const count = h('span', {class: 'muted small', 'aria-live': 'polite'});
  const filter = h('input', {type: 'search', placeholder: 'Highlight tasks (id, title, status, holder)',
    'aria-label': 'Highlight tasks', 'data-test': 'task-filter'});
  const index = tasks.map(t => [t.id, `${t.id} ${t.title || ''} ${t.status} ${t.assignee || ''} ${t.lease?.owner || ''}`.toLowerCase()]);
  let timer = 0;
  const apply = () => {
    const q = filter.value.trim().toLowerCase();
    let first = null, n = 0;
    for (const [id, text] of index) {
      const hit = !q || text.includes(q);
      const g = groups.get(id);
      g.classList.toggle('match', !!q && hit);
      g.classList.toggle('dim', !!q && !hit);
      const tr = rowsById.get(id);
      if (tr) tr.hidden = !hit;
      if (q && hit) { n++; if (!first) first = id; }
    }
    svg.classList.toggle('filtering', !!q);
    count.textContent = q ? `${n} match${n === 1 ? '' : 'es'}` : `${tasks.length} tasks`;
    if (first) {
      const p = pos.get(first);
      scroller.scrollTo({left: Math.max(0, p.x - 40), top: Math.max(0, p.y - 40), behavior: 'smooth'});
    }
  };
  filter.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(apply, 120); });
  apply();
  const details = h('details', {class: 'task-table', open: tasks.length <= 100},
    h('summary', null, `Table of ${tasks.length} tasks`), tbl);
  const el = h('div', {class: 'task-graph'}, h('div', {class: 'toolbar'}, filter, count), scroller, details);
  return {el, filter};
}
