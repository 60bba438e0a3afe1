// The server API: every read and write is POST /v1/ops/<name> with a JSON body.
// Failures come back as {"error": {code, message, details}}; we throw ApiError
// carrying error.message verbatim so views can show the engine's own words.

import {uuid} from './dom.js';

export class ApiError extends Error {
  constructor(message, {code = '', status = 0, details = null, network = false} = {}) {
    super(message);
    this.code = code;
    this.status = status;
    this.details = details;
    this.network = network; // true: the request may not have reached the server
  }
}

// Called when any request answers 401 (the session is gone): the app shows the login form.
let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

// Mutating ops whose input schema has no idempotency_key (additionalProperties
// is false, so sending one would be refused).
const NO_IDEMPOTENCY_KEY = new Set(['graph.resume', 'graph.run', 'mail.deliver', 'question.wait',
  'sgai.update_workflow_state']);

function withProof(headers) {
  const proof = sessionProof();
  if (proof) headers['X-Baton-Proof'] = proof;
  return headers;
}

async function request(method, path, body) {
  let res;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: withProof(body === undefined ? {'Accept': 'application/json'}
                                            : {'Content-Type': 'application/json', 'Accept': 'application/json'}),
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch (e) {
    throw new ApiError(`Network error: ${e.message || e}`, {network: true});
  }
  let data = null;
  const text = await res.text();
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const err = data && data.error;
    const message = (err && err.message) || `${res.status} ${res.statusText || 'error'}`;
    const e = new ApiError(message, {code: err && err.code, status: res.status, details: err && err.details});
    if (res.status === 401 && path !== '/v1/session') onUnauthorized(e);
    throw e;
  }
  return data ?? {};
}

// A read (or any op called without a submission).
export function op(name, input = {}) {
  return request('POST', `/v1/ops/${name}`, input);
}

// One user submission of a form. Its idempotency key is reused when the same
// submission is retried after a network error (the first attempt may have
// landed), and dropped once the server has answered either way.
export class Submission {
  constructor() { this.key = null; this.what = ''; }
  async run(name, input = {}) {
    const body = {...input};
    if (!NO_IDEMPOTENCY_KEY.has(name)) {
      // Only the very same call (op and input) may reuse the key.
      const what = JSON.stringify([name, input]);
      if (!this.key || this.what !== what) { this.key = uuid(); this.what = what; }
      body.idempotency_key = this.key;
    }
    try {
      const out = await op(name, body);
      this.key = null;
      return out;
    } catch (e) {
      if (!e.network) this.key = null;
      throw e;
    }
  }
}

// A one-shot mutating call (its own key).
export function mutate(name, input = {}) {
  return new Submission().run(name, input);
}

// ---- session ----------------------------------------------------------------

export async function getSession() {
  try {
    return await request('GET', '/v1/session');
  } catch (e) {
    if (e.status === 401) return null;
    throw e;
  }
}

// The session's proof: the cookie alone counts for nothing (browsers send it
// to every port of this host), so the page keeps the other half here, in
// storage that belongs to this origin (port included) alone.
const PROOF_KEY = 'baton-proof';
let memoryProof = '';  // when storage is off: the session lasts as long as this page
export function sessionProof() {
  try { return localStorage.getItem(PROOF_KEY) || memoryProof; } catch { return memoryProof; }
}
function setProof(proof) {
  memoryProof = proof || '';
  try {
    if (proof) localStorage.setItem(PROOF_KEY, proof);
    else localStorage.removeItem(PROOF_KEY);
  } catch { /* storage off */ }
}

// Who "token" speaks for, without signing in with it.
export async function whoIs(token) {
  return (await request('POST', '/v1/session', {token, check: true})).actor;
}

export async function login(token) {
  const out = await request('POST', '/v1/session', {token});
  setProof(out.proof);
  return out;
}

export async function logout() {
  try { return await request('DELETE', '/v1/session'); } finally { setProof(''); }
}
