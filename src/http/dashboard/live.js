// The live stream: one native EventSource on /v1/events per tab.
//
// The browser reconnects by itself after a dropped connection and sends
// Last-Event-ID, so the server replays what we missed. It gives up only when
// the server answers with an error status (503 when too many streams are open,
// 401 when the session is gone); then we open a new EventSource after a
// backoff, asking with ?after= for what came after the last event we had,
// so nothing is missed there either (past the server's replay limit it
// sends "reset" and everything is re-fetched).

import {getSession, sessionProof} from './api.js';

export class Live {
  // handlers: onLedger(ev), onReset(head), onState('connecting'|'open'|'reconnecting'), onUnauthorized()
  constructor(handlers) {
    this.h = handlers;
    this.es = null;
    this.maxSeq = 0;        // highest ledger seq delivered; never deliver one twice
    this.fresh = false;     // the current EventSource is the tab's first: it starts at the head
    this.everOpen = false;
    this.backoff = 1000;
    this.timer = 0;
    this.state = '';
  }

  start() {
    this.stop();
    // Only the first stream starts at the head; later ones resume after maxSeq.
    this.fresh = this.maxSeq === 0;
    this.setState(this.everOpen ? 'reconnecting' : 'connecting');
    // EventSource sends no headers: the session's proof goes in the query.
    const query = new URLSearchParams();
    if (this.maxSeq > 0) query.set('after', String(this.maxSeq));
    const proof = sessionProof();
    if (proof) query.set('proof', proof);
    const url = '/v1/events' + ([...query].length ? '?' + query : '');
    const es = new EventSource(url, {withCredentials: false});
    this.es = es;
    es.addEventListener('open', () => {
      this.backoff = 1000;
      this.setState('open');
    });
    es.addEventListener('hello', (e) => {
      const d = parse(e.data) || {};
      this.setState('open');
      // The first stream has no replay: what it sends starts after head. On a
      // reconnect (the browser's, with Last-Event-ID, or ours, with ?after=)
      // the replayed events follow hello, so maxSeq stays where it is.
      if (this.fresh && typeof d.head === 'number') this.maxSeq = Math.max(this.maxSeq, d.head);
      this.fresh = false;
      this.everOpen = true;
    });
    es.addEventListener('ledger', (e) => {
      const d = parse(e.data);
      if (!d) return;
      const seq = Number(d.seq ?? e.lastEventId);
      if (Number.isFinite(seq)) {
        if (seq <= this.maxSeq) return; // replayed twice: drop
        this.maxSeq = seq;
      }
      this.h.onLedger?.({...d, seq});
    });
    es.addEventListener('reset', (e) => {
      const d = parse(e.data) || {};
      if (typeof d.head === 'number') this.maxSeq = d.head;
      this.h.onReset?.(d.head);
    });
    es.addEventListener('error', () => {
      if (es !== this.es) return;
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up: retry ourselves, after checking the session.
        this.setState('reconnecting');
        clearTimeout(this.timer);
        this.timer = setTimeout(async () => {
          try {
            const s = await getSession();
            if (!s) { this.h.onUnauthorized?.(); return; }
          } catch { /* server down: just retry */ }
          this.start();
        }, this.backoff);
        this.backoff = Math.min(this.backoff * 2, 30000);
      } else {
        this.setState('reconnecting'); // CONNECTING: the browser retries with Last-Event-ID
      }
    });
  }

  stop() {
    clearTimeout(this.timer);
    if (this.es) { this.es.close(); this.es = null; }
  }

  setState(st) {
    if (st === this.state) return;
    this.state = st;
    this.h.onState?.(st);
  }
}

function parse(text) {
  try { return JSON.parse(text); } catch { return null; }
}
