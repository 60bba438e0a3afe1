// DOM helpers. Safety rule: nothing here (and nothing in the dashboard) turns
// data into markup. Text goes in with createTextNode/textContent, attributes
// with setAttribute, and `href` only ever holds a "#/..." route we built.

const SVG_NS = 'http://www.w3.org/2000/svg';

// Properties set directly on the element (not attributes) so that form state
// is right even after the user has touched the control.
const PROPS = new Set(['value', 'checked', 'disabled', 'selected', 'hidden', 'open']);

function applyAttrs(el, attrs, isSvg) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (k === 'dataset') {
      for (const [dk, dv] of Object.entries(v)) if (dv !== undefined && dv !== null) el.dataset[dk] = String(dv);
    } else if (k === 'href' || k === 'xlink:href') {
      // Only routes of our own making: "#/runs/<encoded id>" and the like.
      const s = String(v);
      if (s.startsWith('#/') || s === '#') el.setAttribute('href', s);
      else console.warn('refused href', s);
    } else if (!isSvg && PROPS.has(k)) {
      el[k] = v;
    } else if (k.startsWith('on')) {
      // Never an on*= attribute (CSP forbids them anyway).
      console.warn('refused attribute', k);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false || c === true) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// h('a', {href: '#/runs', class: 'x'}, 'text', child, [more])
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  applyAttrs(el, attrs, false);
  append(el, children);
  return el;
}

// Same for SVG elements.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  applyAttrs(el, attrs, true);
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function replace(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

// Route links. Ids are percent-encoded so that no id can break out of the route.
export const enc = encodeURIComponent;
export function runHref(id) { return `#/runs/${enc(id)}`; }
export function runLink(id, label) {
  return id ? h('a', {href: runHref(id), class: 'mono'}, label ?? id) : h('span', {class: 'muted'}, '—');
}

// ---- time -------------------------------------------------------------------

export function parseTime(t) {
  if (t === null || t === undefined || t === '') return NaN;
  if (typeof t === 'number') return t;
  return Date.parse(t);
}

// "3 s", "4 min", "2 h 5 min", "3 d"
export function humanizeMs(ms) {
  if (!Number.isFinite(ms)) return '—';
  const neg = ms < 0;
  ms = Math.abs(ms);
  const sec = Math.floor(ms / 1000);
  let out;
  if (sec < 60) out = `${sec} s`;
  else if (sec < 3600) out = `${Math.floor(sec / 60)} min`;
  else if (sec < 86400) {
    const m = Math.floor((sec % 3600) / 60);
    out = `${Math.floor(sec / 3600)} h` + (m ? ` ${m} min` : '');
  } else out = `${Math.floor(sec / 86400)} d`;
  return neg ? `in ${out}` : out;
}

export function agoText(t) {
  const ms = parseTime(t);
  if (!Number.isFinite(ms)) return '—';
  const d = Date.now() - ms;
  return d >= 0 ? `${humanizeMs(d)} ago` : humanizeMs(d);
}

// A <time> that the 1-second ticker keeps current ("5 min ago" / "in 3 min").
// mode "ago" (default) or "wait" (a duration without "ago").
export function ago(t, mode = 'ago') {
  const ms = parseTime(t);
  const el = h('time', {class: 'tick', dataset: {t: Number.isFinite(ms) ? ms : '', mode}});
  if (Number.isFinite(ms)) el.setAttribute('datetime', new Date(ms).toISOString());
  if (Number.isFinite(ms)) el.title = new Date(ms).toLocaleString();
  tickOne(el);
  return el;
}

function tickOne(el) {
  const ms = Number(el.dataset.t);
  if (!el.dataset.t || !Number.isFinite(ms)) { el.textContent = '—'; return; }
  el.textContent = el.dataset.mode === 'wait' ? humanizeMs(Date.now() - ms) : agoText(ms);
}

export function startTicker() {
  setInterval(() => { for (const el of document.querySelectorAll('time.tick')) tickOne(el); }, 1000);
}

// ---- badges, tones ------------------------------------------------------------

// Map any machine's status names onto a few colour tones.
export function tone(status) {
  const x = String(status ?? '').toLowerCase();
  if (/^(done|completed?|resolved|approved|ok|delivered|project_complete|story_complete)$/.test(x)) return 'ok';
  if (/(fail|error|rejected|lost|halted|aborted)/.test(x)) return 'bad';
  if (/(cancel|archived|skipped|suspended)/.test(x)) return 'muted';
  if (/(block|wait|paused|question|permission|human|escalat|awaiting|needs)/.test(x)) return 'warn';
  if (/(progress|running|working|active|claimed|spawning|execution)/.test(x)) return 'active';
  return 'neutral';
}

export function badge(text, t, attrs = {}) {
  return h('span', {...attrs, class: `badge tone-${t ?? tone(text)} ${attrs.class ?? ''}`.trim()}, String(text ?? '—'));
}

export function statusBadge(status) {
  return badge(status, tone(status), {'data-test': 'status'});
}

// ---- small building blocks -----------------------------------------------------

export function errorBox(err) {
  return h('p', {class: 'err', role: 'alert'}, errorText(err));
}

export function errorText(err) {
  if (!err) return '';
  if (typeof err === 'string') return err;
  return err.message || String(err);
}

export function section(title, ...children) {
  return h('section', {class: 'card'}, h('h2', null, title), ...children);
}

export function empty(text) { return h('p', {class: 'empty'}, text); }

// A definition list from [label, value] pairs; value may be a node or text.
export function kv(pairs) {
  const dl = h('dl', {class: 'kv'});
  for (const [k, v] of pairs) {
    if (v === undefined) continue;
    dl.append(h('dt', null, k), h('dd', null, v === null ? '—' : v));
  }
  return dl;
}

// A table that stacks into labelled blocks on narrow screens (CSS uses data-label).
// cols: [{label, cell: row => node|text, class?}]
export function table(cols, rows, rowAttrs) {
  const thead = h('thead', null, h('tr', null, cols.map(c => h('th', {class: c.class}, c.label))));
  const tbody = h('tbody');
  for (const r of rows) {
    const tr = h('tr', rowAttrs ? rowAttrs(r) : null);
    for (const c of cols) tr.append(h('td', {'data-label': c.label, class: c.class}, c.cell(r)));
    tbody.append(tr);
  }
  return h('div', {class: 'table-wrap'}, h('table', {class: 'resp'}, thead, tbody));
}

export function pre(value) {
  return h('pre', {class: 'json'}, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

// Compare-and-patch: rebuild `el`'s content only if `data` changed since last
// time, so live re-fetches do not disturb focus, scroll or half-typed input.
export function patch(el, data, build) {
  const sig = JSON.stringify(data ?? null);
  if (el._sig === sig) return false;
  el._sig = sig;
  replace(el, build());
  return true;
}

export function uuid() {
  if (globalThis.crypto && typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  // randomUUID needs a secure context; getRandomValues does not.
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map(v => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export function truncate(text, n) {
  const t = String(text ?? '');
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
}

export function fmtNum(n) {
  return typeof n === 'number' ? n.toLocaleString() : (n ?? '—');
}
