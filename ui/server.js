// The server as the page sees it: the live-events stream (/api/events), whether the server
// answers, whether it is paused, and the settings every view reads.

import { app, emit } from './state.js';
import { api, startSession } from './api.js';
import { renderServerState, renderBanners } from './shell.js';

export function connectEvents() {
  if (app.eventSource) app.eventSource.close();
  const es = new EventSource('/api/events');
  app.eventSource = es;
  const parse = (e) => { try { return JSON.parse(e.data); } catch { return {}; } };
  es.addEventListener('interaction', (e) => emit('interaction', parse(e)));
  es.addEventListener('settings', () => { refreshSettings(); emit('settings'); });
  es.addEventListener('server', (e) => {
    const data = parse(e);
    if (typeof data.paused === 'boolean') setPaused(data.paused);
  });
  // The server could not keep up with this listener: fetch everything again.
  es.addEventListener('resync', () => { refreshSettings(); emit('reconnect'); });
  es.addEventListener('open', () => {
    app.reconnectDelay = 1000;
    // Events sent while the stream was down (the server restarted, the session was minted
    // again) were missed: every view fetches what it shows again.
    const missed = !app.online || app.eventsLost;
    app.eventsLost = false;
    setOnline(true);
    if (missed) { refreshSettings(); emit('reconnect'); }
  });
  es.addEventListener('error', () => {
    app.eventsLost = true;
    if (es.readyState === EventSource.CLOSED) {
      // The browser gave up (for example a 401 after the server restarted): start again
      // ourselves, with a new session cookie.
      es.close();
      if (app.eventSource === es) app.eventSource = null;
      setTimeout(async () => {
        if (app.unauthorized) return;
        try { await startSession(); connectEvents(); } catch { setTimeout(connectEvents, app.reconnectDelay); }
      }, app.reconnectDelay);
      app.reconnectDelay = Math.min(app.reconnectDelay * 2, 10_000);
    }
    checkHealth();
  });
}

export async function checkHealth() {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), 3000);
  try {
    const res = await fetch('/v1/health', { signal: ctrl.signal, cache: 'no-store' });
    setOnline(res.ok);
  } catch {
    setOnline(false);
  } finally {
    clearTimeout(timer);
  }
}

export function setOnline(online) {
  if (app.online === online) return;
  app.online = online;
  renderServerState();
  renderBanners();
}

export function setPaused(paused) {
  app.paused = paused;
  if (app.settings) app.settings.paused = paused;
  renderServerState();
  renderBanners();
  emit('server', { paused });
}

export async function refreshSettings() {
  try {
    app.settings = await api('/api/settings');
    app.paused = Boolean(app.settings.paused);
    renderServerState();
    renderBanners();
  } catch {
    /* banners show what is wrong */
  }
  return app.settings;
}

export async function setServerPaused(paused) {
  const res = await api(`/api/server/${paused ? 'pause' : 'resume'}`, { method: 'POST' });
  setPaused(Boolean(res && res.paused));
}
