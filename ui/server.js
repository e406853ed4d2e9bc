// The server as the page sees it: the live-events stream (/api/events, read with fetch() and
// the session header), whether the server answers, whether it is paused, and the settings
// every view reads.

import { app, emit } from './state.js';
import { api, sessionHeaders } from './api.js';
import { renderServerState, renderBanners, showUnauthorized } from './shell.js';

/**
 * Opens the live events with fetch(), which can send the session header (EventSource cannot,
 * and a cookie would go to every local port), and reads the text/event-stream as it comes.
 * `app.eventSource` is the open stream ({close()}); a broken one is opened again with backoff.
 */
export function connectEvents() {
  if (app.eventSource) app.eventSource.close();
  const ctrl = new AbortController();
  const stream = { close: () => ctrl.abort() };
  app.eventSource = stream;
  readEvents(ctrl.signal).then((outcome) => {
    if (ctrl.signal.aborted || app.eventSource !== stream) return;
    app.eventSource = null;
    if (outcome === 'unauthorized') return; // showUnauthorized() has said what to do
    app.eventsLost = true;
    checkHealth();
    setTimeout(() => { if (!app.unauthorized && !app.eventSource) connectEvents(); }, app.reconnectDelay);
    app.reconnectDelay = Math.min(app.reconnectDelay * 2, 10_000);
  });
}

/** Reads the stream until it ends; resolves to why: 'ended', 'failed' or 'unauthorized'. */
async function readEvents(signal) {
  let res;
  try {
    res = await fetch('/api/events', {
      headers: { Accept: 'text/event-stream', ...sessionHeaders() },
      signal, cache: 'no-store', credentials: 'omit',
    });
  } catch {
    return 'failed';
  }
  if (res.status === 401) {
    showUnauthorized();
    return 'unauthorized';
  }
  if (!res.ok || !res.body) return 'failed';
  opened();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'ended';
      buffer += value;
      // Events end with a blank line.
      let end;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        dispatch(block);
      }
    }
  } catch {
    return 'failed';
  }
}

/** One event block: `event:` names it, `data:` lines are its JSON; `:` lines keep it alive. */
function dispatch(block) {
  let type = 'message';
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith('event:')) type = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (!data.length) return;
  let payload = {};
  try { payload = JSON.parse(data.join('\n')); } catch { payload = {}; }
  if (type === 'interaction') emit('interaction', payload);
  else if (type === 'settings') { refreshSettings(); emit('settings'); }
  else if (type === 'server') { if (typeof payload.paused === 'boolean') setPaused(payload.paused); }
  // The server could not keep up with this listener: fetch everything again.
  else if (type === 'resync') { refreshSettings(); emit('reconnect'); }
}

function opened() {
  app.reconnectDelay = 1000;
  // Events sent while the stream was down (the server restarted) were missed: every view
  // fetches what it shows again.
  const missed = !app.online || app.eventsLost;
  app.eventsLost = false;
  setOnline(true);
  if (missed) { refreshSettings(); emit('reconnect'); }
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
