// The client of the JSON API (docs/ui-api.md). The page never holds the token: `vaider ui` and
// the tray put a one-time login code in the link's fragment (`#code=…`), which the page trades
// at POST /api/login for a session, kept in this tab's session storage and sent in the
// X-Vaider-Session header on every call. Media load through the signed URLs the API hands
// out; no cookie is used for anything (browsers send cookies to every local port).

import { app } from './state.js';
import { setOnline } from './server.js';
import { showUnauthorized } from './shell.js';

export const SESSION_KEY = 'vaider.session';
export const SESSION_HEADER = 'X-Vaider-Session';

const CODE = /(?:^#|[?&])code=([^&]*)/;
// An old link's token (`#token=`) is never used or kept, only cut out of the address.
const STRIP = /([?&#])(?:code|token)=[^&]*&?/g;

/** The login code in the address, cut out of it (and of the history) at once. */
export function takeCodeFromUrl() {
  const hash = location.hash;
  const m = hash.match(CODE);
  let code = '';
  if (m) {
    try { code = decodeURIComponent(m[1]); } catch { code = m[1]; }
  }
  if (/(^#|[?&])(code|token)=/.test(hash)) {
    // What is left of the fragment: a route or nothing.
    let rest = hash.replace(STRIP, '$1').replace(/[?&#]$/, '');
    if (rest === '' || rest === '#') rest = '#/';
    history.replaceState(null, '', location.pathname + location.search + rest);
  }
  return code;
}

export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** The headers that carry this tab's session. */
export function sessionHeaders() {
  return app.session ? { [SESSION_HEADER]: app.session } : {};
}

export async function api(path, { method = 'GET', body, signal } = {}) {
  const headers = { Accept: 'application/json', ...sessionHeaders() };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method, headers, signal, credentials: 'omit', cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (e && e.name === 'AbortError') throw e;
    setOnline(false);
    throw new ApiError(0, 'UNREACHABLE',
      `The Vaider server at ${location.host} is not answering. Start it with \`vaider serve\` or from the tray app, then retry.`);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const err = (data && data.error) || {};
    const error = new ApiError(res.status, err.code || `HTTP_${res.status}`,
      err.message || `${res.status} ${res.statusText}`, data);
    if (res.status === 401) showUnauthorized(error.message);
    throw error;
  }
  if (!app.online) setOnline(true);
  return data;
}

/** Trades a login code for this tab's session; the code works once. */
export async function signIn(code) {
  const answer = await api('/api/login', { method: 'POST', body: { code } });
  app.session = answer.session;
  try { sessionStorage.setItem(SESSION_KEY, app.session); } catch { /* storage disabled */ }
}

/** Ends the tab's session on the server and forgets it here. */
export async function signOut() {
  try { await api('/api/session', { method: 'DELETE' }); } catch { /* signed out here anyway */ }
  try { sessionStorage.removeItem(SESSION_KEY); } catch { /* storage disabled */ }
  app.session = null;
  showUnauthorized();
}
