// What surrounds every view: the server state in the header, the banners (unreachable, paused,
// no key), the signed-out page, toasts and the error card views show when a load fails.

import { h, $ } from './dom.js';
import { app } from './state.js';
import { api } from './api.js';
import { connectEvents, refreshSettings, setOnline, setServerPaused } from './server.js';
import { route } from './router.js';

export function renderServerState() {
  const el = $('#server-state');
  if (!el) return;
  let state = 'running';
  let label = 'Running';
  if (app.unauthorized) { state = 'unknown'; label = 'Not signed in'; }
  else if (!app.online) { state = 'offline'; label = 'Unreachable'; }
  else if (app.paused) { state = 'paused'; label = 'Paused'; }
  el.dataset.state = state;
  $('.label', el).textContent = label;
  el.title = {
    running: 'The server is running: agents can ask for analyses.',
    paused: 'Analyses are paused: agents get 503 PAUSED until you resume.',
    offline: 'The server is not answering.',
    unknown: '',
  }[state];
}

export function defaultProviderWithoutKey() {
  const s = app.settings;
  if (!s) return null; // not loaded yet
  const p = s.providers.find((x) => x.name === s.values.provider);
  return p && p.needsKey && !p.keySet ? p : null;
}

export function renderBanners() {
  const box = $('#banners');
  if (!box) return;
  box.replaceChildren();
  if (app.unauthorized) return;
  if (!app.online) {
    box.append(h('div', { class: 'banner banner-error', id: 'banner-offline', role: 'alert' },
      h('strong', null, 'Cannot reach the Vaider server. '),
      `Nothing answers at ${location.host}. Start it with `, h('code', null, 'vaider serve'),
      ' or from the tray app; this page reconnects by itself.',
      h('button', { type: 'button', class: 'btn btn-small', onclick: () => retryConnection() }, 'Retry now')));
    return;
  }
  if (app.paused) {
    box.append(h('div', { class: 'banner banner-warn', id: 'banner-paused' },
      h('strong', null, 'Vaider is paused. '),
      'Agents get 503 PAUSED until you resume.',
      h('button', {
        type: 'button', class: 'btn btn-small', id: 'banner-resume',
        onclick: async (e) => {
          e.currentTarget.disabled = true;
          try { await setServerPaused(false); } catch (err) { toast(err.message, 'error'); }
        },
      }, 'Resume')));
  }
  const missing = defaultProviderWithoutKey();
  if (missing) {
    const envNames = missing.envNames.join(' or ');
    box.append(h('div', { class: 'banner banner-info', id: 'banner-no-key' },
      h('strong', null, `No key set for ${missing.name}: `),
      h('a', { href: '#/settings' }, 'add one in Settings'),
      envNames ? ` (or set ${envNames} in the environment).` : '.'));
  }
}

export async function retryConnection() {
  try {
    await api('/api/settings');
    setOnline(true);
    await refreshSettings();
    connectEvents();
    route();
  } catch {
    renderBanners();
  }
}

/** The signed-out page; `reason` is the server's word on why (a refused code, an ended session). */
export function showUnauthorized(reason) {
  if (app.unauthorized) return;
  app.unauthorized = true;
  if (app.eventSource) { app.eventSource.close(); app.eventSource = null; }
  if (app.view && app.view.destroy) app.view.destroy();
  app.view = null;
  renderServerState();
  renderBanners();
  document.body.classList.add('signed-out');
  const main = $('#main');
  main.replaceChildren(h('section', { class: 'state-card', id: 'unauthorized' },
    h('h1', null, 'This page is not signed in'),
    h('p', null, 'Open it with ', h('code', null, 'vaider ui'),
      ' or from the tray menu (“Open history”). The link they open carries a one-time code, never the token; the page trades it for a session kept for this tab only.'),
    reason ? h('p', { id: 'unauthorized-reason' }, reason) : null,
    h('p', { class: 'muted' }, 'A session also ends when you sign out, after 12 idle hours, when the token is rotated or when Vaider restarts: open the page again the same way.')));
  document.title = 'Vaider: not signed in';
}

let toastTimer = null;
export function toast(message, kind = 'info') {
  let el = $('#toast');
  if (!el) {
    el = h('div', { id: 'toast', class: 'toast', role: 'status' });
    document.body.append(el);
  }
  el.className = `toast toast-${kind} show`;
  el.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => el.classList.remove('show'), 4000);
}

export function errorState(title, err, retry) {
  const box = h('div', { class: 'state-card error-state', role: 'alert' },
    h('h2', null, title),
    h('p', null, err && err.code && err.code !== 'UNREACHABLE' ? h('code', { class: 'code' }, err.code) : null,
      err && err.code && err.code !== 'UNREACHABLE' ? ' ' : null,
      err ? err.message : ''),
    retry ? h('button', { type: 'button', class: 'btn', onclick: retry }, 'Retry') : null);
  return box;
}
