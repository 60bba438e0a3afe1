// Needs you: every inbox item as a card that can be answered in place.
//
// Cards are keyed by item id and rebuilt only when the item itself changes, so
// a live re-fetch never eats what the user is typing. Typed text and chosen
// options are also saved to localStorage (baton-draft:<id>) and restored after
// a reload; a successful action clears them.

import {h, replace, ago, badge, runLink, errorText, empty, enc} from './dom.js';
import {Submission} from './api.js';

const DRAFT = 'baton-draft:';

const KIND_LABEL = {
  question: 'question', approval: 'approval', board_card: 'board card', message: 'message',
  lost_agent: 'lost agent', mirror: 'mirror',
};
const KIND_TONE = {question: 'warn', approval: 'warn', board_card: 'active', message: 'neutral',
  lost_agent: 'bad', mirror: 'bad'};

// ---- drafts ---------------------------------------------------------------------

function loadDraft(id) {
  try { return JSON.parse(localStorage.getItem(DRAFT + id) || 'null'); } catch { return null; }
}
function saveDraft(id, form) {
  const fields = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === 'checkbox' || el.type === 'radio') {
      if (!fields[el.name]) fields[el.name] = [];
      if (el.checked) fields[el.name].push(el.value);
    } else if (el.tagName === 'SELECT' || el.tagName === 'TEXTAREA' || el.type === 'text') {
      fields[el.name] = el.value;
    }
  }
  const anything = Object.values(fields).some(v => Array.isArray(v) ? v.length : v);
  try {
    if (anything) localStorage.setItem(DRAFT + id, JSON.stringify({fields, at: Date.now()}));
    else localStorage.removeItem(DRAFT + id);
  } catch { /* storage full or disabled: drafts are a convenience */ }
}
function restoreDraft(id, form) {
  const d = loadDraft(id);
  if (!d || !d.fields) return;
  for (const el of form.elements) {
    if (!el.name || !(el.name in d.fields)) continue;
    const v = d.fields[el.name];
    if (el.type === 'checkbox' || el.type === 'radio') el.checked = Array.isArray(v) && v.includes(el.value);
    else if (el.tagName === 'SELECT') { if ([...el.options].some(o => o.value === v)) el.value = v; }
    else el.value = v;
  }
}
export function clearDraft(id) {
  try { localStorage.removeItem(DRAFT + id); } catch { /* ignore */ }
}
// Drop drafts of items that are no longer pending (answered elsewhere).
export function gcDrafts(items) {
  const live = new Set(items.map(i => DRAFT + i.id));
  try {
    for (let i = localStorage.length - 1; i >= 0; i--) {
      const k = localStorage.key(i);
      if (k && k.startsWith(DRAFT) && !live.has(k)) localStorage.removeItem(k);
    }
  } catch { /* ignore */ }
}

// ---- the view -------------------------------------------------------------------

export function mount(root, ctx) {
  const {app} = ctx;
  const notifyBtn = h('button', {type: 'button', class: 'secondary', 'data-test': 'notify', hidden: true},
    'Notify me');
  const canNotify = 'Notification' in window && window.isSecureContext !== false;
  const showNotify = () => { notifyBtn.hidden = !(canNotify && Notification.permission === 'default'); };
  notifyBtn.addEventListener('click', async () => {
    try { await Notification.requestPermission(); } catch { /* ignore */ }
    showNotify();
  });
  showNotify();
  const summary = h('p', {class: 'muted summary', 'data-test': 'inbox-summary'});
  const errEl = h('div');
  const list = h('div', {class: 'inbox-list', 'data-test': 'inbox'});
  root.append(h('div', {class: 'page-head'}, h('h1', null, 'Needs you'), notifyBtn), summary, errEl, list);

  const cards = new Map(); // id -> {el, sig}

  function render() {
    if (!ctx.isCurrent()) return;
    replace(errEl, app.inboxError ? h('p', {class: 'err', role: 'alert'}, errorText(app.inboxError)) : null);
    const data = app.inbox;
    if (!data) return;
    const items = data.items || [];
    const parts = Object.entries(data.by_kind || {}).filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${KIND_LABEL[k] || k}${n === 1 ? '' : 's'}`);
    summary.textContent = items.length ? parts.join(' · ') : '';
    const keep = new Set();
    let prev = null;
    for (const it of items) {
      keep.add(it.id);
      // The signature leaves out the ticking wait so an unchanged item keeps its DOM.
      const {waited_ms, ...rest} = it;
      const sig = JSON.stringify(rest);
      let c = cards.get(it.id);
      if (!c || c.sig !== sig) {
        const el = buildCard(it, app, () => { cards.delete(it.id); el.remove(); renderEmpty(); });
        if (c) c.el.replaceWith(el);
        c = {el, sig};
        cards.set(it.id, c);
      }
      // keep server order
      const want = prev ? prev.nextSibling : list.firstChild;
      if (want !== c.el) list.insertBefore(c.el, want);
      prev = c.el;
    }
    for (const [id, c] of cards) if (!keep.has(id)) { c.el.remove(); cards.delete(id); }
    renderEmpty();
  }
  function renderEmpty() {
    const e = list.querySelector('.empty');
    if (cards.size === 0 && !e && app.inbox) list.append(empty('Nothing needs you'));
    if (cards.size > 0 && e) e.remove();
  }

  (async () => { if (!app.inbox) await app.loadInbox(); render(); })();
  return {refresh: async () => render()};
}

function buildCard(it, app, removeSelf) {
  const since = it.since || (typeof it.waited_ms === 'number' ? Date.now() - it.waited_ms : null);
  const head = h('div', {class: 'item-head'},
    badge(KIND_LABEL[it.kind] || it.kind, KIND_TONE[it.kind] || 'neutral', {'data-test': 'kind'}),
    it.run_id ? h('span', {class: 'item-run'}, runLink(it.run_id), it.run_title ? h('span', {class: 'run-title'}, it.run_title) : null) : null,
    it.profile ? h('span', {class: 'muted small'}, it.profile) : null,
    it.from ? h('span', {class: 'from'}, 'from ', h('strong', null, it.from)) : null,
    h('span', {class: 'waited', title: 'waiting for'}, 'waiting ', since ? ago(since, 'wait') : '—'));
  const card = h('article', {class: 'card inbox-item', 'data-test': 'inbox-item', 'data-id': it.id,
    'data-kind': it.kind},
    head,
    h('h3', {class: 'item-title'}, it.title || '(untitled)'),
    it.body ? h('p', {class: 'item-body'}, it.body) : null);

  const actions = new Set(it.actions || []);
  const ref = it.ref || {};
  const err = h('p', {class: 'err', role: 'alert', 'data-test': 'item-error'});
  const form = h('form', {class: 'item-form'});
  const sub = new Submission(); // one submission at a time per card
  const buttons = () => form.querySelectorAll('button');
  async function act(name, input) {
    err.textContent = '';
    for (const b of buttons()) b.disabled = true;
    try {
      await sub.run(name, input);
      clearDraft(it.id);
      card.classList.add('done');
      removeSelf();
      app.scheduleRefresh(0);
    } catch (e) {
      err.textContent = errorText(e); // the engine's own words
      for (const b of buttons()) b.disabled = false;
    }
  }

  if (it.kind === 'question' && actions.has('answer')) buildQuestion(form, it, ref.question || {}, act, err);
  else if (it.kind === 'approval' && (actions.has('approve') || actions.has('reject'))) buildApproval(form, it, ref, actions, act, err);
  else if (it.kind === 'board_card' && actions.has('move')) buildMove(form, ref, act);
  else buildInfo(card, it, ref);

  const row = form.querySelector('.actions') || form.appendChild(h('div', {class: 'actions'}));
  if (actions.has('dismiss')) {
    row.append(h('button', {type: 'button', class: 'secondary', 'data-test': 'dismiss',
      onclick: () => act('inbox.dismiss', {item: it.id})}, 'Dismiss'));
  }
  form.append(err);
  if (row.childNodes.length) card.append(form);
  else card.append(err);

  restoreDraft(it.id, form);
  const save = () => saveDraft(it.id, form);
  form.addEventListener('input', save);
  form.addEventListener('change', save);
  return card;
}

// A question: each part's choices as radios (or checkboxes when multiSelect),
// plus a free-text answer. Parts come as {question, choices:[..]} (baton) or
// {question, header, options:[{label, description}]} (sgai's shape).
function buildQuestion(form, it, q, act, err) {
  const parts = Array.isArray(q.questions) ? q.questions : [];
  if (q.message && q.message !== it.body && q.message !== it.title) form.append(h('p', {class: 'item-body'}, q.message));
  parts.forEach((p, i) => {
    const opts = Array.isArray(p.options) ? p.options.map(o => typeof o === 'string' ? {label: o} : o)
      : Array.isArray(p.choices) ? p.choices.map(c => typeof c === 'string' ? {label: c} : c) : [];
    const multi = !!p.multiSelect;
    // A one-part question whose text is already the card's title keeps its
    // legend for screen readers only.
    const dup = parts.length === 1 && p.question === it.title && !p.header;
    const fs = h('fieldset', {class: 'q-part'},
      h('legend', {class: dup ? 'sr-only' : null}, p.header ? h('span', {class: 'badge tone-neutral'}, p.header) : null, ' ', p.question || `Part ${i + 1}`,
        multi ? h('span', {class: 'muted small'}, ' (choose any)') : null));
    for (const o of opts) {
      const label = String(o.label ?? '');
      fs.append(h('label', {class: 'opt'},
        h('input', {type: multi ? 'checkbox' : 'radio', name: `part${i}`, value: label, 'data-test': 'option'}),
        h('span', null, label),
        o.description ? h('span', {class: 'muted small opt-desc'}, o.description) : null));
    }
    form.append(fs);
  });
  const textId = `t-${it.id}`;
  form.append(h('label', {for: textId, class: 'small'}, parts.length ? 'Other / note (optional)' : 'Your answer'),
    h('input', {type: 'text', id: textId, name: 'text', 'data-test': 'answer-text', autocomplete: 'off'}));
  form.append(h('div', {class: 'actions'},
    h('button', {type: 'submit', class: 'primary', 'data-test': 'answer'}, 'Answer')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const answers = parts.map((_, i) => [...form.querySelectorAll(`input[name="part${i}"]:checked`)].map(x => x.value));
    const text = form.elements.text.value.trim();
    if (!text && !answers.some(a => a.length)) { err.textContent = 'Choose an option or write an answer.'; return; }
    const input = {id: q.id || it.ref?.question?.id};
    if (it.run_id) input.run = it.run_id;
    if (answers.some(a => a.length)) input.answers = answers;
    if (text) input.text = text;
    act('question.answer', input);
  });
}

// An approval: Approve (note optional) or Reject (a reason is required).
function buildApproval(form, it, ref, actions, act, err) {
  if (ref.subject_kind || ref.subject) {
    form.append(h('p', {class: 'muted small'}, `${ref.subject_kind || 'subject'}: `, h('span', {class: 'mono'}, ref.subject || '')));
  }
  const noteId = `n-${it.id}`;
  const note = h('textarea', {id: noteId, name: 'note', rows: 2, 'data-test': 'note',
    placeholder: 'Required to reject; optional to approve'});
  form.append(h('label', {for: noteId, class: 'small'}, 'Reason / note'), note);
  const base = () => {
    const x = {subject_kind: ref.subject_kind, subject: ref.subject};
    if (ref.run || it.run_id) x.run = ref.run || it.run_id;
    const n = note.value.trim();
    if (n) x.note = n;
    return x;
  };
  const reject = () => {
    if (!note.value.trim()) { err.textContent = 'Give a reason to reject.'; note.focus(); return; }
    act('approval.reject', base());
  };
  const row = h('div', {class: 'actions'});
  if (actions.has('approve')) row.append(h('button', {type: 'submit', class: 'primary', 'data-test': 'approve'}, 'Approve'));
  if (actions.has('reject')) row.append(h('button', {type: 'button', class: 'danger', 'data-test': 'reject', onclick: reject}, 'Reject'));
  form.append(row);
  // Ctrl/Cmd+Enter in the reason rejects (plain Enter makes a new line).
  note.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); if (actions.has('reject')) reject(); }
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (actions.has('approve')) act('approval.approve', base());
  });
}

// A card held at a human gate: move it to one of the next columns.
function buildMove(form, ref, act) {
  const next = ref.next_columns || [];
  const sel = h('select', {name: 'column', 'data-test': 'column', 'aria-label': 'Move to column'},
    next.map(c => h('option', {value: c}, c)));
  form.append(h('p', {class: 'muted small'}, 'Board ',
    ref.board ? h('a', {href: `#/boards/${enc(ref.board)}`, class: 'mono'}, ref.board) : '',
    ', column ', h('strong', null, ref.column || '')));
  form.append(h('div', {class: 'actions'}, sel,
    h('button', {type: 'submit', class: 'primary', 'data-test': 'move', disabled: next.length === 0}, 'Move')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (sel.value) act('board.move', {task: ref.task, column: sel.value});
  });
}

// Kinds without a form of their own: show what there is to know.
function buildInfo(card, it, ref) {
  if (it.kind === 'message' && ref.message) {
    const m = ref.message;
    card.append(h('p', {class: 'muted small'}, `to ${m.to ?? ''} · ${m.delivery_status ?? ''}`,
      m.last_error ? ` · ${m.last_error}` : ''));
    if (m.body && m.body !== it.body) card.append(h('p', {class: 'item-body'}, m.body));
  } else if (it.kind === 'lost_agent') {
    const tasks = ref.tasks || [];
    card.append(h('p', {class: 'small'}, `Agent ${ref.agent ?? it.from ?? ''} holds ${tasks.length} task(s): `,
      h('span', {class: 'mono'}, tasks.join(', '))));
  } else if (it.kind === 'mirror') {
    card.append(h('p', {class: 'small'}, h('span', {class: 'mono'}, ref.path || ''), ` (${ref.format || ''})`));
    if (ref.last_error) card.append(h('p', {class: 'err'}, ref.last_error));
  }
}
