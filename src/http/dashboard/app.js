// Entry point: session, login form, top nav, hash router, the live stream and
// the inbox count (tab title, nav badge, browser notifications).

import {h, replace, startTicker, errorText} from './dom.js';
import {op, getSession, login, logout, sessionProof, setUnauthorizedHandler, whoIs} from './api.js';
import {Live} from './live.js';
import * as inboxView from './view_inbox.js';
import * as runsView from './view_runs.js';
import * as runView from './view_run.js';
import * as boardsView from './view_boards.js';
import * as agentsView from './view_agents.js';
import * as ledgerView from './view_ledger.js';
import * as systemView from './view_system.js';

const NAV = [
  {href: '#/', label: 'Needs you', match: p => p === '' || p === '/', test: 'nav-inbox'},
  {href: '#/runs', label: 'Runs', match: p => p.startsWith('/runs'), test: 'nav-runs'},
  {href: '#/boards', label: 'Boards', match: p => p.startsWith('/boards'), test: 'nav-boards'},
  {href: '#/agents', label: 'Agents', match: p => p.startsWith('/agents'), test: 'nav-agents'},
  {href: '#/ledger', label: 'Ledger', match: p => p.startsWith('/ledger'), test: 'nav-ledger'},
  {href: '#/system', label: 'System', match: p => p.startsWith('/system'), test: 'nav-system'},
];

// path pattern -> view module; params are the regex groups, decoded.
const ROUTES = [
  [/^\/?$/, inboxView],
  [/^\/runs$/, runsView],
  [/^\/runs\/([^/]+)$/, runView],
  [/^\/boards$/, boardsView],
  [/^\/boards\/([^/]+)$/, boardsView],
  [/^\/agents$/, agentsView],
  [/^\/ledger$/, ledgerView],
  [/^\/system$/, systemView],
];

export function parseHash(hash = location.hash) {
  let x = hash.replace(/^#/, '');
  const qi = x.indexOf('?');
  const path = qi >= 0 ? x.slice(0, qi) : x;
  const query = Object.fromEntries(new URLSearchParams(qi >= 0 ? x.slice(qi + 1) : ''));
  return {path: path || '/', query};
}

export function buildHash(path, query = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const qs = q.toString();
  return `#${path}${qs ? '?' + qs : ''}`;
}

class App {
  constructor() {
    this.root = document.getElementById('app');
    this.session = null;
    this.view = null;        // the mounted view's controller
    this.route = null;
    this.inbox = null;       // last inbox.list result
    this.inboxError = null;
    this.seenInbox = null;   // ids seen so far (null until the first load)
    this.refreshTimer = 0;
    this.refreshing = false;
    this.refreshAgain = false;
    this.live = null;
    this.mountSeq = 0;
  }

  async start() {
    if (!this.started) {
      this.started = true;
      startTicker();
      setUnauthorizedHandler(() => this.showLogin('Your session has ended. Sign in again.'));
      // A link pasted into a tab already open on the page changes only the
      // fragment (no new document): sign in with it all the same.
      window.addEventListener('hashchange', () => {
        if (/(?:^#|[?&/#])token=/.test(location.hash)) this.start();
      });
    }
    // The banner's link carries the secret in the hash: trade it for the cookie
    // first, then drop it from the URL (and from history).
    const m = location.hash.match(/(?:^#|[?&/#])token=([^&]+)/);
    if (m) {
      const token = decodeURIComponent(m[1]);
      history.replaceState(null, '', location.pathname + location.search + '#/');
      // A link must not quietly change who this page acts as: one for
      // someone else than the session's asks first.
      let current = null;
      if (sessionProof()) {  // without a proof there is no session to replace
        try { current = await getSession(); } catch { current = null; }
      }
      let other = null;
      if (current) {
        try { other = await whoIs(token); } catch (e) { other = null; }
        const same = other && current.actor && other.id === current.actor.id && other.role === current.actor.role;
        if (same || !other) return this.enter(current);
        return this.askSwitch(current, other, token);
      }
      try { await login(token); } catch (e) { return this.showLogin(errorText(e)); }
    }
    let s = null;
    try { s = await getSession(); } catch (e) { return this.showLogin(errorText(e)); }
    if (!s) return this.showLogin();
    this.enter(s);
  }

  // A link for another identity was opened while signed in: say so, and
  // switch only when asked to.
  askSwitch(current, other, token) {
    const keep = h('button', {type: 'button', class: 'primary', 'data-test': 'switch-keep'},
      `Stay ${current.actor.id} (${current.actor.role})`);
    const change = h('button', {type: 'button', class: 'secondary', 'data-test': 'switch-accept'},
      `Sign in as ${other.id} (${other.role})`);
    keep.addEventListener('click', () => this.enter(current));
    change.addEventListener('click', async () => {
      try { await login(token); } catch (e) { return this.showLogin(errorText(e)); }
      const s = await getSession();
      if (s) this.enter(s); else this.showLogin();
    });
    replace(document.body, h('main', {id: 'app', class: 'login-page'},
      h('div', {class: 'login card', 'data-test': 'switch'},
        h('h1', null, 'Another identity'),
        h('p', null, `This page is signed in as ${current.actor.id} (${current.actor.role}). ` +
          `The link you opened signs in as ${other.id} (${other.role}).`),
        keep, ' ', change)));
    keep.focus();
  }

  // No valid session: a login form and nothing else.
  showLogin(message) {
    this.live?.stop();
    this.live = null;
    this.session = null;
    this.view?.unmount?.();
    this.view = null;
    document.title = 'baton';
    const input = h('input', {type: 'password', name: 'token', id: 'token', autocomplete: 'current-password',
      required: true, 'data-test': 'login-token', autofocus: true});
    const err = h('p', {class: 'err', role: 'alert', 'data-test': 'login-error'}, message || '');
    const btn = h('button', {type: 'submit', class: 'primary', 'data-test': 'login-submit'}, 'Sign in');
    const form = h('form', {class: 'login card', 'data-test': 'login'},
      h('h1', null, 'baton'),
      h('label', {for: 'token'}, 'Access token'),
      input, btn, err,
      h('p', {class: 'muted small'}, 'The link baton serve prints (or `baton url`) signs you in directly.'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      btn.disabled = true;
      err.textContent = '';
      try {
        await login(input.value);
        const s = await getSession();
        if (!s) throw new Error('The server did not keep the session.');
        input.value = '';
        this.enter(s);
      } catch (ex) {
        err.textContent = errorText(ex);
        btn.disabled = false;
        input.focus();
      }
    });
    replace(document.body, h('main', {id: 'app', class: 'login-page'}, form));
    this.root = document.getElementById('app');
    input.focus();
  }

  enter(session) {
    this.live?.stop();  // entered again (a link opened in this tab): one stream
    this.session = session;
    this.liveEl = h('span', {class: 'live', 'data-test': 'live', 'data-state': 'reconnecting', role: 'status',
      title: 'Live updates'}, 'connecting');
    this.navBadge = h('span', {class: 'nav-badge', 'data-test': 'inbox-count', hidden: true}, '0');
    this.navLinks = NAV.map(n => h('a', {href: n.href, 'data-test': n.test},
      n.label, n.href === '#/' ? this.navBadge : null));
    const who = session.actor ? `${session.actor.id} (${session.actor.role})` : '';
    const logoutBtn = session.auth === 'none' ? null :
      h('button', {type: 'button', class: 'link', 'data-test': 'logout', onclick: async () => {
        try { await logout(); } catch { /* gone anyway */ }
        this.showLogin('Signed out.');
      }}, 'Sign out');
    const header = h('header', {class: 'top'},
      h('a', {href: '#/', class: 'brand'}, 'baton'),
      h('nav', {'aria-label': 'Main'}, this.navLinks),
      h('div', {class: 'top-right'}, this.liveEl, h('span', {class: 'muted small who'}, who), logoutBtn));
    this.root = h('main', {id: 'app', tabindex: '-1'});
    replace(document.body, header, this.root);

    this.live = new Live({
      onState: st => this.setLiveState(st),
      onLedger: ev => this.onLedger(ev),
      onReset: () => { this.view?.onReset?.(); this.scheduleRefresh(0); },
      onUnauthorized: () => this.showLogin('Your session has ended. Sign in again.'),
    });
    this.live.start();
    if (!this.onHash) window.addEventListener('hashchange', this.onHash = () => this.session && this.mountRoute());
    this.loadInbox();
    this.mountRoute();
  }

  setLiveState(st) {
    const open = st === 'open';
    // While the stream is down (the server refused it, or is gone), Needs you
    // is still looked at every 10 s.
    clearInterval(this.pollTimer);
    if (!open) this.pollTimer = setInterval(() => this.session && this.loadInbox(), 10000);
    this.liveEl.dataset.state = open ? 'open' : 'reconnecting';
    this.liveEl.textContent = open ? 'live' : (st === 'connecting' ? 'connecting' : 'reconnecting');
  }

  onLedger(ev) {
    this.view?.onLedger?.(ev);
    // A view may say which events concern it (the run detail: its run's).
    if (!this.view?.wants || this.view.wants(ev)) this.viewDirty = true;
    this.scheduleRefresh(250);
  }

  // Batched: the first event of a burst starts a 250 ms timer and everything
  // that arrives meanwhile rides along; a steady stream of events cannot
  // postpone the refresh forever (the timer is not pushed back).
  scheduleRefresh(delay) {
    if (delay === 0) {
      clearTimeout(this.refreshTimer);
      this.refreshTimer = 0;
      this.viewDirty = true;
      this.refreshNow();
      return;
    }
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => { this.refreshTimer = 0; this.refreshNow(); }, delay);
  }

  async refreshNow() {
    if (this.refreshing) { this.refreshAgain = true; return; }
    this.refreshing = true;
    const dirty = this.viewDirty;
    this.viewDirty = false;
    try {
      await this.loadInbox();
      if (dirty && this.view && this.view.live !== false) await this.view.refresh?.().catch(() => {});
    } finally {
      this.refreshing = false;
      if (this.refreshAgain) { this.refreshAgain = false; this.scheduleRefresh(250); }
    }
  }

  async loadInbox() {
    try {
      this.inbox = await op('inbox.list', {});
      this.inboxError = null;
    } catch (e) {
      this.inboxError = e;
      return this.inbox;
    }
    const items = this.inbox.items || [];
    const n = this.inbox.count ?? items.length;
    document.title = n > 0 ? `(${n}) baton` : 'baton';
    this.navBadge.textContent = String(n);
    this.navBadge.hidden = n === 0;
    this.notifyNew(items);
    inboxView.gcDrafts(items);
    return this.inbox;
  }

  // After the first load, each item id not seen before raises a notification.
  notifyNew(items) {
    const first = this.seenInbox === null;
    if (first) this.seenInbox = new Set();
    for (const it of items) {
      if (this.seenInbox.has(it.id)) continue;
      this.seenInbox.add(it.id);
      if (first) continue;
      if ('Notification' in window && Notification.permission === 'granted') {
        try {
          const n = new Notification(it.title || 'baton needs you', {body: it.body || it.run_title || '', tag: it.id});
          n.onclick = () => { window.focus(); location.hash = '#/'; };
        } catch { /* some browsers only allow notifications from a service worker */ }
      }
    }
  }

  mountRoute() {
    const {path, query} = parseHash();
    for (const a of this.navLinks) {
      const n = NAV.find(x => x.href === a.getAttribute('href'));
      if (n && n.match(path)) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
    this.view?.unmount?.();
    this.view = null;
    const seq = ++this.mountSeq;
    let mod = null, params = [];
    for (const [re, m] of ROUTES) {
      const mm = path.match(re);
      if (mm) { mod = m; params = mm.slice(1).map(decodeURIComponent); break; }
    }
    replace(this.root);
    if (!mod) {
      this.root.append(h('section', {class: 'card'}, h('h1', null, 'Not found'),
        h('p', null, 'No such page. '), h('a', {href: '#/'}, 'Back to Needs you')));
      return;
    }
    this.route = {path, query, params};
    this.view = mod.mount(this.root, {app: this, params, query, path, isCurrent: () => seq === this.mountSeq});
  }

  // Views change their own filters without a remount (keeps focus in a text box).
  setQuery(query) {
    const {path} = parseHash();
    history.replaceState(null, '', location.pathname + location.search + buildHash(path, query));
  }

  navigate(hash) { location.hash = hash; }

  get role() { return this.session?.actor?.role || ''; }
}

const app = new App();
app.start();
