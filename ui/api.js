// The client of the JSON API (docs/ui-api.md): the token taken from the link's fragment, every
// call with the bearer header, errors as ApiError, and the session cookie for <video> and
// EventSource, which cannot send headers.

import { app } from './state.js';
import { setOnline } from './server.js';
import { showUnauthorized } from './shell.js';

export const TOKEN_KEY = 'vaider.token';

export function takeTokenFromUrl() {
  const hash = location.hash;
  const m = hash.match(/(?:^#|[?&])token=([^&]*)/);
  if (!m) return;
  let token = '';
  try { token = decodeURIComponent(m[1]); } catch { token = m[1]; }
  if (token) {
    try { sessionStorage.setItem(TOKEN_KEY, token); } catch { /* storage disabled */ }
    app.token = token;
  }
  // What is left of the fragment once token=... is cut out: a route or nothing.
  let rest = hash.replace(/([?&#])token=[^&]*&?/, '$1').replace(/[?&]$/, '');
  if (rest === '#' || rest === '') rest = '#/';
  history.replaceState(null, '', location.pathname + location.search + rest);
}

export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

export async function api(path, { method = 'GET', body, signal } = {}) {
  const headers = { Accept: 'application/json' };
  if (app.token) headers.Authorization = `Bearer ${app.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method, headers, signal, credentials: 'same-origin', cache: 'no-store',
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
    if (res.status === 401) showUnauthorized();
    throw error;
  }
  if (!app.online) setOnline(true);
  return data;
}

export async function startSession() {
  await api('/api/session', { method: 'POST' });
}

/** Ends the page's session on the server and forgets the token in this tab. */
export async function signOut() {
  try { await api('/api/session', { method: 'DELETE' }); } catch { /* signed out here anyway */ }
  try { sessionStorage.removeItem(TOKEN_KEY); } catch { /* storage disabled */ }
  app.token = null;
  showUnauthorized();
}
