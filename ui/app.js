// Vaider's web UI: history, detail and settings over the JSON API of docs/ui-api.md.
// Plain ES module, no build step, no dependency. Every text from the server goes into the
// page as text nodes (never as HTML), so nothing an analysis contains can run here.

const TOKEN_KEY = 'vaider.token';
const PAGE_SIZE = 100;
const SEARCH_DEBOUNCE_MS = 150;
const STATUSES = ['running', 'ok', 'error', 'timeout', 'rejected'];

// ---------------------------------------------------------------- small DOM helpers

/** h('div', {class: 'x', onclick: fn}, 'text', child, [more]) */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'dataset') Object.assign(el.dataset, value);
      else if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2), value);
      } else if (key === 'value') el.value = value;
      else if (key === 'checked' || key === 'disabled' || key === 'hidden' || key === 'open') {
        el[key] = Boolean(value);
      } else el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.append(child);
    else el.append(String(child));
  }
  return el;
}

const $ = (sel, root = document) => root.querySelector(sel);

// ---------------------------------------------------------------- formatting

// Times in the table are formatted by hand: Intl formatters cost tens of milliseconds to set
// up, which the first paint of the history should not pay. The detail page uses them lazily.
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n) => String(n).padStart(2, '0');
let fullDateFormat = null;
let relativeFormat = null;

function parseDate(iso) {
  if (!iso) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Local time: "14:03:21" today, "Nov 21, 14:03" another day, "Nov 21 2025, 14:03" another year. */
function fmtTime(iso) {
  const d = parseDate(iso);
  if (!d) return '—';
  const now = new Date();
  const hm = `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
  if (d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate()) {
    return `${hm}:${pad2(d.getSeconds())}`;
  }
  const year = d.getFullYear() === now.getFullYear() ? '' : ` ${d.getFullYear()}`;
  return `${MONTHS[d.getMonth()]} ${d.getDate()}${year}, ${hm}`;
}

function fmtFullTime(iso) {
  const d = parseDate(iso);
  if (!d) return '—';
  fullDateFormat = fullDateFormat || new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  return fullDateFormat.format(d);
}

function relTime(iso) {
  const d = parseDate(iso);
  if (!d) return '';
  relativeFormat = relativeFormat || new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const relative = relativeFormat;
  const secs = (d.getTime() - Date.now()) / 1000;
  const abs = Math.abs(secs);
  if (abs < 45) return relative.format(Math.round(secs), 'second');
  if (abs < 45 * 60) return relative.format(Math.round(secs / 60), 'minute');
  if (abs < 22 * 3600) return relative.format(Math.round(secs / 3600), 'hour');
  if (abs < 26 * 86400) return relative.format(Math.round(secs / 86400), 'day');
  if (abs < 320 * 86400) return relative.format(Math.round(secs / (30 * 86400)), 'month');
  return relative.format(Math.round(secs / (365 * 86400)), 'year');
}

function fmtDuration(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m} min ${s} s`;
}

function fmtCost(usd) {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  if (usd < 0.0001) return '<$0.0001';
  if (usd < 1) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

function fmtBytes(n) {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

function fmtInt(n) {
  return n === null || n === undefined ? '—' : Number(n).toLocaleString();
}

function basename(path) {
  if (!path) return '';
  const parts = String(path).split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path);
}

function shortPath(path, max = 42) {
  if (!path) return '';
  return path.length <= max ? path : `…${path.slice(path.length - max + 1)}`;
}

function dirname(p) {
  const i = Math.max(String(p).lastIndexOf('/'), String(p).lastIndexOf('\\'));
  return i > 0 ? String(p).slice(0, i) : '';
}

/** Where a file sits, short: "shop › test-results/login" (project, then the folder inside it). */
function whereIs(s) {
  const dir = dirname(s.source || '');
  if (!dir) return s.project ? basename(s.project) : '';
  if (s.project && (dir === s.project || dir.startsWith(`${s.project}/`) || dir.startsWith(`${s.project}\\`))) {
    const inner = dir.slice(s.project.length + 1);
    return inner ? `${basename(s.project)} › ${inner}` : basename(s.project);
  }
  return shortPath(dir, 48);
}

function plural(n, one, many) {
  return `${Number(n).toLocaleString()} ${n === 1 ? one : many}`;
}

const STATUS_LABEL = {
  running: 'running', ok: 'ok', error: 'error', timeout: 'timeout', rejected: 'rejected',
};
const VERDICT_LABEL = { met: 'met', not_met: 'not met', unclear: 'unclear' };

function statusBadge(status) {
  return h('span', { class: `badge status-${status}` }, STATUS_LABEL[status] || status);
}

// ---------------------------------------------------------------- token and API

function takeTokenFromUrl() {
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

class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

async function api(path, { method = 'GET', body, signal } = {}) {
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

// ---------------------------------------------------------------- app state and events

const app = {
  token: null,
  settings: null,
  paused: false,
  online: true,
  unauthorized: false,
  view: null,
  events: new EventTarget(),
  eventSource: null,
  reconnectDelay: 1000,
  pending: new Set(), // ids just started by "Run again" that may not be in the history yet
};

function emit(type, detail) {
  app.events.dispatchEvent(new CustomEvent(type, { detail }));
}

/** Subscribes for the life of a view; returns the unsubscribe function. */
function on(type, fn) {
  const listener = (e) => fn(e.detail);
  app.events.addEventListener(type, listener);
  return () => app.events.removeEventListener(type, listener);
}

async function startSession() {
  await api('/api/session', { method: 'POST' });
}

function connectEvents() {
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
    const wasDown = !app.online;
    setOnline(true);
    if (wasDown) { refreshSettings(); emit('reconnect'); }
  });
  es.addEventListener('error', () => {
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

async function checkHealth() {
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

function setOnline(online) {
  if (app.online === online) return;
  app.online = online;
  renderServerState();
  renderBanners();
}

function setPaused(paused) {
  app.paused = paused;
  if (app.settings) app.settings.paused = paused;
  renderServerState();
  renderBanners();
  emit('server', { paused });
}

async function refreshSettings() {
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

async function setServerPaused(paused) {
  const res = await api(`/api/server/${paused ? 'pause' : 'resume'}`, { method: 'POST' });
  setPaused(Boolean(res && res.paused));
}

// ---------------------------------------------------------------- header, banners, states

function renderServerState() {
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

function defaultProviderWithoutKey() {
  const s = app.settings;
  if (!s || !s.values || !Array.isArray(s.providers)) return null;
  const p = s.providers.find((x) => x.name === s.values.provider);
  return p && p.needsKey && !p.keySet ? p : null;
}

function renderBanners() {
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
    const envNames = (missing.envNames || []).join(' or ');
    box.append(h('div', { class: 'banner banner-info', id: 'banner-no-key' },
      h('strong', null, `No key set for ${missing.name}: `),
      h('a', { href: '#/settings' }, 'add one in Settings'),
      envNames ? ` (or set ${envNames} in the environment).` : '.'));
  }
}

async function retryConnection() {
  try {
    await startSession();
    setOnline(true);
    await refreshSettings();
    connectEvents();
    route();
  } catch {
    renderBanners();
  }
}

function showUnauthorized() {
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
    h('h1', null, 'This page needs Vaider’s token'),
    h('p', null, 'Open this page with ', h('code', null, 'vaider ui'),
      ' or from the tray menu (“Open history”). The link they open carries the token; the page keeps it for this tab only.'),
    h('p', { class: 'muted' }, 'The token may also have changed since this tab was opened: open the page again the same way.')));
  document.title = 'Vaider: not signed in';
}

let toastTimer = null;
function toast(message, kind = 'info') {
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

function errorState(title, err, retry) {
  const box = h('div', { class: 'state-card error-state', role: 'alert' },
    h('h2', null, title),
    h('p', null, err && err.code && err.code !== 'UNREACHABLE' ? h('code', { class: 'code' }, err.code) : null,
      err && err.code && err.code !== 'UNREACHABLE' ? ' ' : null,
      err ? err.message : ''),
    retry ? h('button', { type: 'button', class: 'btn', onclick: retry }, 'Retry') : null);
  return box;
}

// ---------------------------------------------------------------- router

function parseRoute() {
  const hash = location.hash || '#/';
  const body = hash.slice(1);
  const q = body.indexOf('?');
  const path = q === -1 ? body : body.slice(0, q);
  const params = new URLSearchParams(q === -1 ? '' : body.slice(q + 1));
  if (path === '/' || path === '') return { name: 'history', params };
  const m = path.match(/^\/i\/([^/]+)$/);
  if (m) {
    let id = m[1];
    try { id = decodeURIComponent(id); } catch { /* keep it */ }
    return { name: 'detail', id, params };
  }
  if (path === '/settings') return { name: 'settings', params };
  return { name: 'notfound', params };
}

const views = {
  history: historyView,
  detail: detailView,
  settings: settingsView,
  notfound: (root) => {
    root.append(h('section', { class: 'state-card' },
      h('h1', null, 'Nothing here'),
      h('p', null, 'This address is not a page of Vaider. ', h('a', { href: '#/' }, 'Go to the history'), '.')));
    return {};
  },
};

function route() {
  if (app.unauthorized) return;
  const r = parseRoute();
  if (app.view && app.view.destroy) app.view.destroy();
  const main = $('#main');
  main.replaceChildren();
  main.dataset.view = r.name;
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === r.name || (r.name === 'detail' && a.dataset.nav === 'history')) {
      a.setAttribute('aria-current', 'page');
    } else a.removeAttribute('aria-current');
  }
  app.view = views[r.name](main, r) || {};
}

// ---------------------------------------------------------------- history view

function historyView(root, r) {
  const st = {
    q: r.params.get('q') || '',
    status: r.params.get('status') || '',
    tool: r.params.get('tool') || '',
    project: r.params.get('project') || '',
    rows: new Map(), // id -> {summary, tr}
    next: null,
    total: null,
    loading: false,
    seq: 0,
    ctrl: null,
    timer: null,
    lastFire: -Infinity,
    refreshTimer: null,
    eventIds: new Set(),
    destroyed: false,
  };
  document.title = 'Vaider: history';

  const search = h('input', {
    type: 'search', id: 'history-search', placeholder: 'Search files, prompts, descriptions, models, errors',
    value: st.q, autocomplete: 'off', spellcheck: 'false',
    oninput: () => onSearchInput(),
    onkeydown: (e) => { if (e.key === 'Escape' && search.value) { search.value = ''; onSearchInput(); } },
  });
  const mkSelect = (id, label, value) => {
    const select = h('select', { id, onchange: () => { st[label] = select.value; filtersChanged(); } },
      h('option', { value: '' }, 'All'));
    if (value) select.append(h('option', { value }, value));
    select.value = value;
    return select;
  };
  const statusSel = mkSelect('filter-status', 'status', st.status);
  for (const s of STATUSES) if (s !== st.status) statusSel.append(h('option', { value: s }, s));
  statusSel.value = st.status;
  const toolSel = mkSelect('filter-tool', 'tool', st.tool);
  const projectSel = mkSelect('filter-project', 'project', st.project);
  const count = h('span', { class: 'count', id: 'history-count', 'aria-live': 'polite' }, '');
  const tbody = h('tbody', { id: 'history-rows' });
  const table = h('table', { class: 'history', id: 'history-table' },
    h('caption', { class: 'sr-only' }, 'Analyses, newest first'),
    h('thead', null, h('tr', null,
      h('th', { scope: 'col', class: 'c-time' }, 'Time'),
      h('th', { scope: 'col', class: 'c-tool' }, 'Tool'),
      h('th', { scope: 'col', class: 'c-file' }, 'Source'),
      h('th', { scope: 'col', class: 'c-model' }, 'Provider / model'),
      h('th', { scope: 'col', class: 'c-status' }, 'Status'),
      h('th', { scope: 'col', class: 'c-num' }, 'Duration'),
      h('th', { scope: 'col', class: 'c-num' }, 'Cost'))),
    tbody);
  const empty = h('div', { id: 'history-empty', class: 'empty', hidden: true });
  const failure = h('div', { id: 'history-error', hidden: true });
  const more = h('button', { type: 'button', class: 'btn', id: 'load-more', hidden: true, onclick: () => loadMore() },
    'Load more');
  const loadingNote = h('p', { class: 'loading', id: 'history-loading' }, 'Loading the history…');

  root.append(
    h('div', { class: 'page-head' },
      h('h1', null, 'History'),
      count),
    h('div', { class: 'toolbar', role: 'search' },
      h('label', { class: 'search' }, h('span', { class: 'sr-only' }, 'Search the history'),
        h('span', { class: 'search-icon', 'aria-hidden': 'true' }), search),
      h('label', { class: 'filter' }, h('span', null, 'Status'), statusSel),
      h('label', { class: 'filter' }, h('span', null, 'Tool'), toolSel),
      h('label', { class: 'filter' }, h('span', null, 'Project'), projectSel)),
    h('div', { class: 'table-wrap history-wrap' }, table),
    loadingNote, empty, failure,
    h('div', { class: 'more' }, more));

  tbody.addEventListener('click', (e) => {
    if (e.target.closest('a, button')) return;
    const tr = e.target.closest('tr[data-id]');
    if (tr && !window.getSelection().toString()) location.hash = `#/i/${encodeURIComponent(tr.dataset.id)}`;
  });
  tbody.addEventListener('mouseover', (e) => {
    const t = e.target.closest('time[datetime]');
    if (t) t.title = `${relTime(t.getAttribute('datetime'))} (${fmtFullTime(t.getAttribute('datetime'))})`;
  });

  const observer = 'IntersectionObserver' in window
    ? new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) loadMore();
    }, { rootMargin: '400px' })
    : null;
  if (observer) observer.observe(more);

  function hasFilters() {
    return Boolean(st.q || st.status || st.tool || st.project);
  }

  function syncHash() {
    const p = new URLSearchParams();
    for (const k of ['q', 'status', 'tool', 'project']) if (st[k]) p.set(k, st[k]);
    const qs = p.toString();
    const hash = qs ? `#/?${qs}` : '#/';
    if (location.hash !== hash) history.replaceState(null, '', location.pathname + location.search + hash);
  }

  function query(before, limit = PAGE_SIZE) {
    const p = new URLSearchParams();
    if (st.q) p.set('q', st.q);
    if (st.status) p.set('status', st.status);
    if (st.tool) p.set('tool', st.tool);
    if (st.project) p.set('project', st.project);
    p.set('limit', String(limit));
    if (before) p.set('before', before);
    return `/api/history?${p}`;
  }

  function rowEl(s) {
    const file = s.fileName || basename(s.source) || '(no file)';
    return h('tr', { dataset: { id: s.id, status: s.status }, class: s.status === 'running' ? 'is-running' : null },
      h('td', { class: 'c-time' }, h('time', { datetime: s.createdAt }, fmtTime(s.createdAt))),
      h('td', { class: 'c-tool' }, h('span', { class: 'tool' }, s.tool)),
      h('td', { class: 'c-file' },
        h('a', { href: `#/i/${encodeURIComponent(s.id)}`, title: s.source || '' }, file),
        h('span', { class: 'project', title: s.project || '' }, whereIs(s))),
      h('td', { class: 'c-model' }, h('span', { class: 'provider' }, s.provider), h('span', { class: 'model' }, s.model)),
      h('td', { class: 'c-status' }, statusBadge(s.status), s.cached ? h('span', { class: 'badge badge-cached' }, 'cached') : null,
        s.errorCode ? h('span', { class: 'err-code', title: s.errorMessage || '' }, s.errorCode) : null),
      h('td', { class: 'c-num' }, s.status === 'running' ? '…' : fmtDuration(s.durationMs)),
      h('td', { class: 'c-num' }, s.status === 'running' ? '…' : fmtCost(s.costUsd)));
  }

  function renderCount() {
    if (st.total === null) { count.textContent = ''; return; }
    count.textContent = hasFilters()
      ? `${plural(st.total, 'match', 'matches')}`
      : `${plural(st.total, 'analysis', 'analyses')}`;
  }

  function renderEmpty() {
    const none = st.rows.size === 0 && st.total !== null;
    empty.hidden = !none;
    table.hidden = none;
    if (!none) return;
    if (hasFilters()) {
      empty.replaceChildren(h('div', { class: 'state-card' },
        h('h2', null, 'Nothing matches'),
        h('p', null, 'No analysis matches this search and these filters.'),
        h('button', { type: 'button', class: 'btn', id: 'clear-filters', onclick: clearFilters }, 'Clear search and filters')));
    } else {
      empty.replaceChildren(h('div', { class: 'state-card', id: 'no-analyses' },
        h('h2', null, 'No analyses yet'),
        h('p', null, 'No analyses yet. Ask your agent to call ', h('code', null, 'analyze_video'),
          ', or run ', h('code', null, 'vaider analyse <file>'), '.'),
        h('p', { class: 'muted' }, 'Every analysis appears here as it starts, with what was sent and what came back.')));
    }
  }

  function renderMore() {
    more.hidden = !st.next;
    more.disabled = st.loading;
    more.textContent = st.loading ? 'Loading…' : 'Load more';
  }

  function showRows(items, reset) {
    const frag = document.createDocumentFragment();
    if (reset) st.rows.clear();
    for (const s of items) {
      if (st.rows.has(s.id)) continue;
      const tr = rowEl(s);
      st.rows.set(s.id, { summary: s, tr });
      frag.append(tr);
    }
    if (reset) {
      tbody.replaceChildren(frag);
      performance.mark('vaider:history-rows');
    } else tbody.append(frag);
  }

  async function load(reset) {
    const seq = ++st.seq;
    if (st.ctrl) st.ctrl.abort();
    const ctrl = new AbortController();
    st.ctrl = ctrl;
    st.loading = true;
    renderMore();
    try {
      const page = await api(query(reset ? null : st.next), { signal: ctrl.signal });
      if (seq !== st.seq || st.destroyed) return;
      failure.hidden = true;
      showRows(page.items || [], reset);
      st.next = page.next || null;
      st.total = typeof page.total === 'number' ? page.total : st.rows.size;
      loadingNote.hidden = true;
      renderCount();
      renderEmpty();
    } catch (e) {
      if (e.name === 'AbortError' || seq !== st.seq || st.destroyed) return;
      loadingNote.hidden = true;
      failure.hidden = false;
      failure.replaceChildren(errorState('Could not load the history', e, () => load(reset)));
    } finally {
      if (seq === st.seq) {
        st.loading = false;
        st.ctrl = null;
        renderMore();
      }
    }
  }

  function loadMore() {
    if (st.loading || !st.next || st.destroyed) return;
    load(false);
  }

  function fire() {
    clearTimeout(st.timer);
    st.timer = null;
    st.lastFire = performance.now();
    syncHash();
    load(true);
  }

  // Leading and trailing: a search after a pause is sent at once; while typing, the query is
  // sent when the typing stops for SEARCH_DEBOUNCE_MS.
  function onSearchInput() {
    st.q = search.value.trim();
    clearTimeout(st.timer);
    if (performance.now() - st.lastFire >= SEARCH_DEBOUNCE_MS) fire();
    else st.timer = setTimeout(fire, SEARCH_DEBOUNCE_MS);
  }

  function filtersChanged() {
    syncHash();
    load(true);
  }

  function clearFilters() {
    st.q = ''; st.status = ''; st.tool = ''; st.project = '';
    search.value = ''; statusSel.value = ''; toolSel.value = ''; projectSel.value = '';
    filtersChanged();
  }

  async function loadFacets() {
    try {
      const f = await api('/api/history/facets');
      if (st.destroyed) return;
      fillSelect(toolSel, f.tools || [], st.tool, (v) => v);
      fillSelect(projectSel, f.projects || [], st.project, (v) => shortPath(v, 36));
      const statuses = [...new Set([...STATUSES, ...(f.statuses || [])])];
      fillSelect(statusSel, statuses, st.status, (v) => v);
    } catch { /* the filters stay as they are */ }
  }

  function fillSelect(select, values, current, label) {
    const all = [...new Set([...(current ? [current] : []), ...values])].sort((a, b) => String(a).localeCompare(String(b)));
    select.replaceChildren(h('option', { value: '' }, 'All'),
      ...all.map((v) => h('option', { value: v, title: v }, label(v))));
    select.value = current;
  }

  // Live updates: coalesce the events of a short while, then fetch the first page and patch.
  function scheduleRefresh(id) {
    if (id) st.eventIds.add(id);
    clearTimeout(st.refreshTimer);
    st.refreshTimer = setTimeout(refreshTop, 80);
  }

  async function refreshTop() {
    if (st.destroyed || st.loading) { if (!st.destroyed) scheduleRefresh(); return; }
    const ids = [...st.eventIds];
    st.eventIds.clear();
    let page;
    try {
      page = await api(query(null));
    } catch {
      return;
    }
    if (st.destroyed) return;
    const items = page.items || [];
    const seen = new Set();
    // New rows go on top, in the server's order.
    let anchor = tbody.firstElementChild;
    let added = false;
    for (const s of items) {
      seen.add(s.id);
      const have = st.rows.get(s.id);
      if (have) {
        patchRow(have, s);
        anchor = have.tr.nextElementSibling;
        continue;
      }
      const tr = rowEl(s);
      tr.classList.add('is-new');
      st.rows.set(s.id, { summary: s, tr });
      tbody.insertBefore(tr, anchor);
      added = true;
    }
    if (typeof page.total === 'number') st.total = page.total;
    if (st.rows.size > 0 && !st.next && page.next && st.rows.size >= PAGE_SIZE) st.next = page.next;
    // Rows further down that changed (rare: they finished while newer ones arrived).
    for (const id of ids) {
      if (seen.has(id) || !st.rows.has(id)) continue;
      try {
        const d = await api(`/api/interactions/${encodeURIComponent(id)}`);
        if (!st.destroyed && st.rows.has(id)) patchRow(st.rows.get(id), d);
      } catch { /* keep the row as it is */ }
    }
    renderCount();
    renderEmpty();
    renderMore();
    if (added) loadFacets();
  }

  function patchRow(entry, s) {
    const old = entry.summary;
    if (old.status === s.status && old.durationMs === s.durationMs && old.costUsd === s.costUsd
      && old.cached === s.cached && old.errorCode === s.errorCode) return;
    const tr = rowEl(s);
    entry.tr.replaceWith(tr);
    entry.tr = tr;
    entry.summary = s;
  }

  const offs = [
    on('interaction', (ev) => scheduleRefresh(ev && ev.id)),
    on('reconnect', () => scheduleRefresh()),
  ];

  load(true);
  loadFacets();
  if (!st.q && document.activeElement === document.body) { /* leave focus where it is */ }

  return {
    destroy() {
      st.destroyed = true;
      if (st.ctrl) st.ctrl.abort();
      clearTimeout(st.timer);
      clearTimeout(st.refreshTimer);
      if (observer) observer.disconnect();
      offs.forEach((off) => off());
    },
  };
}

// ---------------------------------------------------------------- rich text (safe)

// mm:ss, m:ss, hh:mm:ss (optionally with fractions), 3s, 3.5s, "at 3 seconds".
const INLINE = /\*\*([^*\n]+?)\*\*|`([^`\n]+)`|\b(?:(\d{1,2}):)?(\d{1,3}):([0-5]\d)(?:\.(\d{1,3}))?(?![\d:])|\b(\d+(?:\.\d+)?)s\b|\b(at (\d+(?:\.\d+)?) ?(?:seconds?|secs?|s)\b)/gi;

function timestampSeconds(m) {
  if (m[4] !== undefined) {
    const hours = m[3] !== undefined ? Number(m[3]) : 0;
    const frac = m[6] !== undefined ? Number(`0.${m[6]}`) : 0;
    return hours * 3600 + Number(m[4]) * 60 + Number(m[5]) + frac;
  }
  if (m[7] !== undefined) return Number(m[7]);
  if (m[9] !== undefined) return Number(m[9]);
  return null;
}

function inline(text, ctx, noBold = false) {
  const frag = document.createDocumentFragment();
  let last = 0;
  INLINE.lastIndex = 0;
  const matches = [...String(text).matchAll(INLINE)];
  for (const m of matches) {
    if (m.index > last) frag.append(text.slice(last, m.index));
    if (m[1] !== undefined) {
      frag.append(noBold ? m[0] : h('strong', null, inline(m[1], ctx, true)));
    } else if (m[2] !== undefined) {
      frag.append(h('code', null, m[2]));
    } else {
      const t = timestampSeconds(m);
      if (t === null || !ctx || !ctx.seekable) frag.append(h('span', { class: 'ts-plain' }, m[0]));
      else {
        const secs = String(Math.round(t * 1000) / 1000);
        frag.append(h('a', {
          class: 'ts', href: ctx.hrefFor(secs), dataset: { t: secs },
          title: `Play the video from ${m[0].replace(/^at /i, '')}`,
        }, m[0]));
      }
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}

/** Markdown-ish text to DOM: paragraphs with line breaks, lists, headings, **bold**, `code`. */
function richText(text, ctx) {
  const out = document.createDocumentFragment();
  const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n');
  let para = null;
  let list = null;
  const close = () => { para = null; list = null; };
  for (const raw of lines) {
    const line = raw.replace(/\s+$/, '');
    if (!line.trim()) { close(); continue; }
    let m = line.match(/^\s*(#{1,6})\s+(.*)$/);
    if (m) {
      close();
      out.append(h('h4', { class: 'md-heading' }, inline(m[2], ctx)));
      continue;
    }
    m = line.match(/^\s*(?:[-*•]|(\d+)[.)])\s+(.*)$/);
    if (m) {
      const ordered = m[1] !== undefined;
      const tag = ordered ? 'ol' : 'ul';
      if (!list || list.tagName.toLowerCase() !== tag) {
        para = null;
        list = h(tag, ordered && m[1] !== '1' ? { start: m[1] } : null);
        out.append(list);
      }
      list.append(h('li', null, inline(m[2], ctx)));
      continue;
    }
    if (list && /^\s{2,}\S/.test(raw) && list.lastElementChild) {
      list.lastElementChild.append(h('br'), inline(line.trim(), ctx));
      continue;
    }
    list = null;
    if (!para) {
      para = h('p');
      out.append(para);
    } else para.append(h('br'));
    para.append(inline(line, ctx));
  }
  return out;
}

function prettyJson(value) {
  try { return JSON.stringify(value, null, 2); } catch { return String(value); }
}

function humanize(key) {
  const s = String(key).replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function detailsBlock(details, ctx) {
  const wrap = h('div', { class: 'details-structured' });
  if (details === null || typeof details !== 'object' || Array.isArray(details)) {
    wrap.append(h('pre', { class: 'json' }, prettyJson(details)));
    return wrap;
  }
  for (const [key, value] of Object.entries(details)) {
    const title = h('h4', null, humanize(key));
    if (typeof value === 'string') {
      wrap.append(title, h('div', { class: 'prose' }, richText(value, ctx)));
    } else if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
      wrap.append(title, value.length
        ? h('ul', null, value.map((v) => h('li', null, inline(String(v), ctx))))
        : h('p', { class: 'muted' }, 'None.'));
    } else if (Array.isArray(value) && value.length && value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) {
      const cols = [...new Set(value.flatMap((v) => Object.keys(v)))];
      wrap.append(title, h('div', { class: 'table-wrap' }, h('table', { class: `data-table table-${key}` },
        h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, humanize(c))))),
        h('tbody', null, value.map((row) => h('tr', null, cols.map((c) => {
          const v = row[c];
          if (c === 'severity' && typeof v === 'string') {
            return h('td', null, h('span', { class: `badge severity-${v.toLowerCase()}` }, v));
          }
          if (v === null || v === undefined) return h('td', { class: 'muted' }, '—');
          return h('td', null, typeof v === 'object' ? h('code', null, JSON.stringify(v)) : inline(String(v), ctx));
        })))))));
    } else if (value === null || value === undefined) {
      continue;
    } else if (typeof value === 'number' || typeof value === 'boolean') {
      wrap.append(title, h('p', null, String(value)));
    } else {
      wrap.append(title, h('pre', { class: 'json' }, prettyJson(value)));
    }
  }
  return wrap;
}

async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch { /* fall back */ }
  const ta = h('textarea', { class: 'offscreen', readonly: true });
  ta.value = text;
  document.body.append(ta);
  ta.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  ta.remove();
  return ok;
}

// ---------------------------------------------------------------- detail view

const ERROR_HELP = {
  NO_API_KEY: () => ['Add a key for this provider in ', h('a', { href: '#/settings' }, 'Settings'),
    ', or set its environment variable (for example GEMINI_API_KEY) where the server runs, then run it again.'],
  INVALID_PATH: () => ['Check that the file exists, is readable by the server and is a video or an image '
    + '(WebM, MP4, MOV, AVI, PNG, JPEG, WebP or GIF), not empty or truncated. Relative paths are resolved against the agent’s workspace.'],
  INVALID_REQUEST: () => ['The request was malformed. Fix the arguments the agent sent (see the request JSON below).'],
  TIMEOUT: () => ['The analysis took longer than its time limit. Raise the timeout in ',
    h('a', { href: '#/settings' }, 'Settings'), ' or send a shorter clip, then run it again.'],
  UPSTREAM_ERROR: () => ['The model service failed. The response JSON below has its answer; check the key, the quota and the '
    + 'provider’s status, then run it again (rate limits are retried automatically up to the retry limit).'],
  PAUSED: () => ['Vaider was paused when this arrived. Resume it (banner above or Settings) and run it again.'],
  INTERNAL: () => ['Something failed inside Vaider. The server log (VAIDER_LOG=debug) says more; run it again, and report it if it repeats.'],
};

function errorHelp(code) {
  const f = ERROR_HELP[code];
  return f ? f() : ['See the response JSON below for what came back, then run it again.'];
}

/** Sets a media element's src once the session cookie is there (the media route needs it). */
function withSrc(el, url) {
  Promise.resolve(app.sessionReady).catch(() => {}).then(() => { el.src = url; });
  return el;
}

function detailView(root, r) {
  const id = r.id;
  let d = null;
  let destroyed = false;
  let attempts = 0;
  let retryTimer = null;
  let mediaKey = null;
  let video = null;
  let pendingSeek = r.params.get('t') ? Number(r.params.get('t')) : null;
  document.title = 'Vaider: analysis';

  const back = h('a', { href: '#/', class: 'back' }, '← History');
  const head = h('div', { class: 'detail-head' });
  const mediaPane = h('section', { class: 'media-pane', 'aria-label': 'Media' });
  const infoPane = h('section', { class: 'info-pane', 'aria-label': 'Analysis' });
  const runAgain = h('section', { class: 'run-again-wrap' });
  const layout = h('div', { class: 'detail-layout', hidden: true }, mediaPane, h('div', { class: 'info-col' }, infoPane, runAgain));
  const status = h('div', { class: 'detail-status' }, h('p', { class: 'loading' }, 'Loading the analysis…'));
  root.append(h('div', { class: 'detail' }, back, head, status, layout));

  const ctx = {
    get seekable() { return Boolean(video); },
    hrefFor: (secs) => `#/i/${encodeURIComponent(id)}?t=${secs}`,
  };

  root.addEventListener('click', (e) => {
    const a = e.target.closest('a.ts');
    if (!a || !video) return;
    e.preventDefault();
    seek(Number(a.dataset.t));
  });

  function seek(t) {
    if (!video || !Number.isFinite(t)) return;
    video.currentTime = t;
    const p = video.play();
    if (p && p.catch) p.catch(() => { /* autoplay refused: the frame still shows */ });
    const rect = video.getBoundingClientRect();
    if (rect.bottom < 0 || rect.top > window.innerHeight) video.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  async function load() {
    try {
      const data = await api(`/api/interactions/${encodeURIComponent(id)}`);
      if (destroyed) return;
      d = data;
      app.pending.delete(id);
      render();
    } catch (e) {
      if (destroyed) return;
      if (e.status === 404 && app.pending.has(id) && attempts < 30) {
        attempts += 1;
        status.replaceChildren(h('p', { class: 'loading' }, 'Starting the new analysis…'));
        clearTimeout(retryTimer);
        retryTimer = setTimeout(load, 500);
        return;
      }
      if (d) return; // keep showing what we have
      if (e.status === 404) {
        status.replaceChildren(h('div', { class: 'state-card', id: 'detail-not-found' },
          h('h1', null, 'Not in the history'),
          h('p', null, 'There is no analysis with the id ', h('code', null, id), '. It may come from another data folder. ',
            h('a', { href: '#/' }, 'Back to the history'), '.')));
      } else {
        status.replaceChildren(errorState('Could not load this analysis', e, load));
      }
    }
  }

  function render() {
    status.replaceChildren();
    layout.hidden = false;
    document.title = `Vaider: ${d.fileName || basename(d.source) || 'analysis'}`;
    renderHead();
    const key = `${d.mediaUrl}|${d.expectedMediaUrl}|${d.mediaType}`;
    if (key !== mediaKey) { mediaKey = key; renderMedia(); }
    renderInfo();
    if (!runAgain.firstChild) renderRunAgain();
  }

  function renderHead() {
    head.replaceChildren(
      h('h1', { class: 'detail-title', title: d.source || '' }, d.fileName || basename(d.source) || '(no file)'),
      h('div', { class: 'detail-meta' },
        statusBadge(d.status),
        d.cached ? h('span', { class: 'badge badge-cached' }, 'cached') : null,
        h('span', { class: 'tool' }, d.tool),
        h('span', { class: 'muted' }, `${d.provider} · ${d.model}`),
        h('time', { datetime: d.createdAt, title: fmtFullTime(d.createdAt), class: 'muted' }, `${fmtTime(d.createdAt)} (${relTime(d.createdAt)})`)));
  }

  function renderMedia() {
    video = null;
    const parts = [];
    const isVideo = (d.mediaType || '').startsWith('video/');
    const isImage = (d.mediaType || '').startsWith('image/');
    if (d.mediaUrl && isVideo) {
      video = h('video', {
        id: 'media-video', controls: true, preload: 'auto', playsinline: true,
        'aria-label': `Video: ${d.fileName || ''}`,
      });
      const el = video;
      // The media route takes the session cookie: set the source once the cookie is there.
      Promise.resolve(app.sessionReady).catch(() => {}).then(() => { if (el === video) el.src = d.mediaUrl; });
      video.addEventListener('error', () => {
        const note = $('.media-error', mediaPane) || h('p', { class: 'media-error notice' });
        note.textContent = 'The video could not be played here. The file may have moved since the analysis; its path is '
          + `${d.source}.`;
        mediaPane.append(note);
      });
      if (pendingSeek !== null && Number.isFinite(pendingSeek)) {
        const t = pendingSeek;
        pendingSeek = null;
        video.addEventListener('loadedmetadata', () => { video.currentTime = t; }, { once: true });
      }
      parts.push(h('figure', { class: 'media' }, video));
    } else if (d.mediaUrl && (isImage || d.expectedMediaUrl)) {
      if (d.expectedMediaUrl) {
        parts.push(h('figure', { class: 'media' },
          withSrc(h('img', { alt: 'Expected screenshot', id: 'media-expected' }), d.expectedMediaUrl),
          h('figcaption', null, 'Expected')));
        parts.push(h('figure', { class: 'media' },
          withSrc(h('img', { alt: 'Actual screenshot', id: 'media-image' }), d.mediaUrl),
          h('figcaption', null, 'Actual')));
      } else {
        parts.push(h('figure', { class: 'media' },
          withSrc(h('img', { alt: `Screenshot: ${d.fileName || ''}`, id: 'media-image' }), d.mediaUrl)));
      }
    } else {
      // Nothing playable: a refused file (a text file, a key) is never linked from here.
      parts.push(h('div', { class: 'media-missing', id: 'media-missing' },
        h('p', null, d.status === 'rejected'
          ? 'The request was refused before the file was read, so there is no media to show.'
          : 'No video or image was recorded for this analysis.')));
    }
    parts.push(h('p', { class: 'media-source muted', title: d.source || '' }, d.source || ''));
    mediaPane.replaceChildren(...parts);
  }

  function fact(label, ...value) {
    return [h('dt', null, label), h('dd', null, ...value)];
  }

  function renderInfo() {
    const sections = [];
    if (d.status === 'running') {
      sections.push(h('div', { class: 'running-note', id: 'running-note' },
        h('span', { class: 'spinner', 'aria-hidden': 'true' }),
        `Analysing… started ${relTime(d.createdAt)}. This page updates when it finishes.`));
    }
    if (d.errorCode || ['error', 'timeout', 'rejected'].includes(d.status)) {
      sections.push(h('div', { class: `error-box status-${d.status}`, id: 'error-box', role: 'alert' },
        h('div', { class: 'error-title' },
          h('code', { class: 'code', id: 'error-code' }, d.errorCode || d.status.toUpperCase()),
          h('span', null, d.status === 'rejected' ? ' The request was refused.' : d.status === 'timeout' ? ' The analysis timed out.' : ' The analysis failed.')),
        h('p', { class: 'error-message', id: 'error-message' }, d.errorMessage || 'No message was recorded.'),
        h('p', { class: 'error-help' }, h('strong', null, 'What to do: '), ...errorHelp(d.errorCode))));
    }
    if (d.description) {
      sections.push(h('div', { class: 'card' },
        h('h2', null, 'Description'),
        h('div', { class: 'prose description', id: 'description' }, richText(d.description, ctx))));
    } else if (d.status === 'ok') {
      sections.push(h('div', { class: 'card' }, h('h2', null, 'Description'), h('p', { class: 'muted' }, 'The model gave no description.')));
    }
    const verdicts = Array.isArray(d.verdicts) ? d.verdicts : [];
    if (verdicts.length || (d.expectations && d.expectations.length)) {
      const list = verdicts.length ? verdicts : d.expectations.map((e) => ({ expectation: e, verdict: null }));
      sections.push(h('div', { class: 'card', id: 'expectations' },
        h('h2', null, 'Expectations',
          d.allExpectationsMet === true ? h('span', { class: 'badge verdict-met' }, 'all met') : null,
          d.allExpectationsMet === false ? h('span', { class: 'badge verdict-not_met' }, 'not all met') : null),
        h('ul', { class: 'verdicts' }, list.map((v) => h('li', { class: 'verdict' },
          h('div', { class: 'verdict-head' },
            v.verdict ? h('span', { class: `badge verdict-${v.verdict}` }, VERDICT_LABEL[v.verdict] || v.verdict)
              : h('span', { class: 'badge' }, 'pending'),
            h('span', { class: 'expectation' }, v.expectation)),
          v.evidence ? h('div', { class: 'evidence prose' }, richText(v.evidence, ctx)) : null)))));
    }
    if (d.details && !(typeof d.details === 'object' && !Array.isArray(d.details) && Object.keys(d.details).length === 0)) {
      sections.push(h('div', { class: 'card', id: 'details' }, h('h2', null, 'Details'), detailsBlock(d.details, ctx)));
    }
    const usage = d.usage || {};
    const facts = h('dl', { class: 'facts', id: 'facts' },
      fact('Provider', d.provider || '—'),
      fact('Model', d.model || '—'),
      fact('Tool', h('span', { class: 'tool' }, d.tool), d.door ? h('span', { class: 'muted' }, ` via ${d.door}`) : null),
      fact('Started', h('time', { datetime: d.createdAt, title: relTime(d.createdAt) }, fmtFullTime(d.createdAt))),
      fact('Duration', fmtDuration(d.durationMs)),
      fact('Cost', fmtCost(d.costUsd), d.cached ? h('span', { class: 'muted' }, ' (answered from the cache)') : null),
      fact('Tokens', `${fmtInt(usage.inputTokens)} in · ${fmtInt(usage.outputTokens)} out`),
      fact('Cached', d.cached ? 'yes' : 'no'),
      d.framesAnalysed ? fact('Frames analysed', String(d.framesAnalysed)) : null,
      fact('Media', `${d.mediaType || '—'}${d.sizeBytes ? `, ${fmtBytes(d.sizeBytes)}` : ''}`),
      d.project ? fact('Project', h('span', { class: 'path' }, d.project)) : null,
      d.prompt ? fact('Prompt', h('span', { class: 'prompt-text' }, d.prompt)) : null,
      Array.isArray(d.adaptations) && d.adaptations.length
        ? fact('Adaptations', h('ul', { class: 'plain' }, d.adaptations.map((a) => h('li', null, a)))) : null);
    sections.push(h('div', { class: 'card' }, h('h2', null, 'Facts'), facts));

    if (d.logDir) {
      const note = h('span', { class: 'action-note', role: 'status' });
      sections.push(h('div', { class: 'card', id: 'log-folder' },
        h('h2', null, 'Log folder'),
        h('p', null, h('code', { class: 'path', id: 'log-dir' }, d.logDir)),
        h('div', { class: 'actions' },
          h('button', {
            type: 'button', class: 'btn', id: 'copy-log-dir',
            onclick: async () => { note.textContent = (await copyText(d.logDir)) ? 'Path copied.' : 'Could not copy: select the path above.'; },
          }, 'Copy path'),
          h('button', {
            type: 'button', class: 'btn', id: 'open-folder',
            onclick: async (e) => {
              const btn = e.currentTarget;
              btn.disabled = true;
              note.textContent = 'Opening…';
              try {
                await api(`/api/interactions/${encodeURIComponent(id)}/open-folder`, { method: 'POST' });
                note.textContent = 'Opened in the file manager.';
              } catch (err) {
                note.textContent = `Could not open it: ${err.message}`;
              } finally { btn.disabled = false; }
            },
          }, 'Open folder'),
          note)));
    }
    sections.push(h('div', { class: 'card raw' },
      h('h2', null, 'What was sent and what came back'),
      rawBlock('Request JSON', d.requestJson, 'request-json'),
      rawBlock('Response JSON', d.responseJson, 'response-json')));
    infoPane.replaceChildren(...sections);
  }

  function rawBlock(label, value, idName) {
    const open = document.getElementById(idName)?.open || false;
    return h('details', { id: idName, open },
      h('summary', null, label),
      value === null || value === undefined
        ? h('p', { class: 'muted' }, 'Not written (the request was refused before it, or the file is gone).')
        : h('pre', { class: 'json' }, h('code', null, prettyJson(value))));
  }

  function renderRunAgain() {
    const prompt = h('textarea', { id: 'run-prompt', rows: 4, spellcheck: 'false' });
    prompt.value = d.prompt || '';
    const expectations = h('textarea', { id: 'run-expectations', rows: 3, spellcheck: 'false', placeholder: 'One expectation per line' });
    expectations.value = (d.expectations || []).join('\n');
    const note = h('p', { class: 'action-note', role: 'status', id: 'run-again-note' });
    const button = h('button', { type: 'submit', class: 'btn btn-primary', id: 'run-again' }, 'Run again');
    const form = h('form', {
      class: 'card run-again',
      onsubmit: async (e) => {
        e.preventDefault();
        button.disabled = true;
        note.textContent = 'Starting…';
        const body = {
          prompt: prompt.value,
          expectations: expectations.value.split('\n').map((s) => s.trim()).filter(Boolean),
        };
        try {
          const res = await api(`/api/interactions/${encodeURIComponent(id)}/run-again`, { method: 'POST', body });
          app.pending.add(res.id);
          location.hash = `#/i/${encodeURIComponent(res.id)}`;
        } catch (err) {
          note.textContent = `${err.code && err.code !== 'UNREACHABLE' ? `${err.code}: ` : ''}${err.message}`;
          note.classList.add('error-text');
          button.disabled = false;
        }
      },
    },
    h('h2', null, 'Run again'),
    h('p', { class: 'muted' }, 'The same media through the same pipeline, with the cache off. Edit the prompt or the expectations first if you like.'),
    h('label', { for: 'run-prompt' }, 'Prompt'), prompt,
    h('label', { for: 'run-expectations' }, 'Expectations (one per line)'), expectations,
    h('div', { class: 'actions' }, button, note));
    runAgain.replaceChildren(form);
  }

  const offs = [
    on('interaction', (ev) => { if (ev && ev.id === id) load(); }),
    on('reconnect', () => load()),
  ];
  // A running analysis whose "finished" event was missed still updates.
  const poll = setInterval(() => { if (d && d.status === 'running' && !document.hidden) load(); }, 5000);
  load();

  return {
    destroy() {
      destroyed = true;
      clearTimeout(retryTimer);
      clearInterval(poll);
      offs.forEach((off) => off());
      if (video) { video.pause(); video.removeAttribute('src'); video.load(); }
    },
  };
}

// ---------------------------------------------------------------- settings view

const FIELDS = [
  { key: 'provider', label: 'Provider', type: 'select', env: ['VAIDER_PROVIDER'], help: 'Answers every request that names no provider.' },
  { key: 'model', label: 'Model', type: 'text', env: ['VAIDER_MODEL', 'VAIDER_GEMINI_MODEL'], help: 'The default provider’s default model.' },
  { key: 'timeoutSec', label: 'Timeout (seconds)', type: 'number', min: 1, env: ['VAIDER_TIMEOUT_SEC'], help: 'Time limit of one analysis, upload included.' },
  { key: 'maxAttempts', label: 'Max attempts (retry limit)', type: 'number', min: 1, env: ['VAIDER_MAX_ATTEMPTS'], help: 'Tries per call for rate limits and server errors.' },
  { key: 'maxConcurrent', label: 'Max concurrent analyses', type: 'number', min: 1, env: ['VAIDER_MAX_CONCURRENT'], help: 'Analyses talking to the provider at once; the rest queue.' },
  { key: 'cache', label: 'Cache', type: 'checkbox', env: ['VAIDER_CACHE'], help: 'Answer a repeated request (same media, prompt and model) from the history, at no cost.' },
  { key: 'downloadLimitMb', label: 'Download limit (MB)', type: 'number', min: 1, env: ['VAIDER_DOWNLOAD_LIMIT_MB'], help: 'Largest file fetched from an http(s) URL.' },
  { key: 'port', label: 'Port', type: 'number', min: 1, max: 65535, env: ['VAIDER_PORT'], help: 'Applies after a restart.' },
  { key: 'dataDir', label: 'Data folder', type: 'text', env: ['VAIDER_DATA_DIR'], help: 'History and downloads. Empty: the OS data folder. Applies after a restart.' },
];

function settingsView(root) {
  let s = null;
  let dirty = false;
  let destroyed = false;
  const inputs = {};
  document.title = 'Vaider: settings';

  const status = h('p', { class: 'loading' }, 'Loading the settings…');
  const formNote = h('div', { class: 'save-note', id: 'settings-note', role: 'status', 'aria-live': 'polite' });
  const form = h('form', { class: 'card settings-form', id: 'settings-form', novalidate: true });
  const keys = h('section', { class: 'card', id: 'keys', 'aria-labelledby': 'keys-title' });
  const server = h('section', { class: 'card', id: 'server-section', 'aria-labelledby': 'server-title' });
  const desktop = h('section', { class: 'card', id: 'desktop-section', hidden: true, 'aria-labelledby': 'desktop-title' });
  root.append(h('div', { class: 'page-head' }, h('h1', null, 'Settings')), status,
    h('div', { class: 'settings-grid', hidden: true, id: 'settings-grid' }, form, h('div', { class: 'settings-side' }, keys, server, desktop)));

  async function load() {
    try {
      s = await api('/api/settings');
      if (destroyed) return;
      app.settings = s;
      app.paused = Boolean(s.paused);
      renderServerState();
      renderBanners();
      status.remove();
      $('#settings-grid', root).hidden = false;
      renderForm();
      renderKeys();
      renderServer();
    } catch (e) {
      if (destroyed) return;
      status.replaceWith(errorState('Could not load the settings', e, () => { route(); }));
    }
  }

  // envOverrides: names (["VAIDER_PORT"]) or {field, variable} objects; both are understood.
  function overrides() {
    return (s.envOverrides || []).map((o) => (typeof o === 'string'
      ? { variable: o, field: (FIELDS.find((f) => f.env.includes(o)) || {}).key || null }
      : { variable: o.variable || o.name || '', field: o.field || (FIELDS.find((f) => f.env.includes(o.variable)) || {}).key || null }));
  }

  function envFor(field) {
    return overrides().filter((o) => o.field === field.key || field.env.includes(o.variable)).map((o) => o.variable);
  }

  function renderForm() {
    const v = s.values || {};
    const rows = [];
    for (const field of FIELDS) {
      const id = `setting-${field.key}`;
      let input;
      if (field.type === 'select') {
        const names = (s.providers || []).map((p) => p.name);
        if (v[field.key] && !names.includes(v[field.key])) names.unshift(v[field.key]);
        input = h('select', { id, name: field.key }, names.map((n) => h('option', { value: n }, n)));
        input.value = v[field.key] || '';
      } else if (field.type === 'checkbox') {
        input = h('input', { type: 'checkbox', id, name: field.key, checked: Boolean(v[field.key]) });
      } else {
        input = h('input', {
          type: field.type, id, name: field.key, min: field.min, max: field.max,
          inputmode: field.type === 'number' ? 'numeric' : null, spellcheck: 'false', autocomplete: 'off',
          placeholder: field.key === 'dataDir' ? 'the OS data folder' : null,
        });
        input.value = v[field.key] === null || v[field.key] === undefined ? '' : String(v[field.key]);
      }
      if (field.key === 'model') {
        const list = h('datalist', { id: 'model-options' },
          [...new Set((s.providers || []).map((p) => p.model))].map((m) => h('option', { value: m })));
        input.setAttribute('list', 'model-options');
        rows.push(list);
      }
      inputs[field.key] = input;
      const env = envFor(field);
      const help = h('p', { class: 'help', id: `${id}-help` }, field.help,
        env.length ? h('span', { class: 'env-note' }, ` Set by ${env.join(' and ')} in the environment: that value wins over the file while it is set.`) : null);
      input.setAttribute('aria-describedby', `${id}-help`);
      const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
      rows.push(field.type === 'checkbox'
        ? h('div', { class: 'field field-check', dataset: { key: field.key } },
          h('label', { for: id }, input, h('span', null, field.label)), help, error)
        : h('div', { class: 'field', dataset: { key: field.key } },
          h('label', { for: id }, field.label), input, help, error));
    }
    // Picking another provider suggests its default model.
    inputs.provider.addEventListener('change', () => {
      const p = (s.providers || []).find((x) => x.name === inputs.provider.value);
      const oldDefault = (s.providers || []).find((x) => x.name === s.values.provider);
      if (p && (!inputs.model.value || (oldDefault && inputs.model.value === oldDefault.model) || inputs.model.value === s.values.model)) {
        inputs.model.value = p.model;
      }
    });
    const others = overrides().filter((o) => !FIELDS.some((f) => f.key === o.field || f.env.includes(o.variable))).map((o) => o.variable);
    form.replaceChildren(
      h('h2', null, 'Analyses'),
      ...rows,
      others.length ? h('p', { class: 'help env-note' }, `Also set in the environment: ${others.join(', ')}.`) : null,
      h('p', { class: 'help' }, 'Saved to ', h('code', { class: 'path', id: 'config-path' }, s.configPath || 'config.toml'), ', the file the command line uses too.'),
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'btn btn-primary', id: 'save-settings' }, 'Save'),
        h('button', { type: 'button', class: 'btn', id: 'reset-settings', onclick: () => { dirty = false; formNote.replaceChildren(); renderForm(); } }, 'Undo changes'),
        formNote));
    dirty = false;
  }

  form.addEventListener('input', () => { dirty = true; });
  form.addEventListener('change', () => { dirty = true; });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    for (const el of form.querySelectorAll('.field-error')) { el.hidden = true; el.textContent = ''; }
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    const body = {};
    const v = s.values || {};
    for (const field of FIELDS) {
      const input = inputs[field.key];
      let value;
      if (field.type === 'checkbox') value = input.checked;
      else if (field.type === 'number') {
        const raw = input.value.trim();
        value = Number(raw);
        if (!raw || !Number.isInteger(value) || value < (field.min ?? 0) || (field.max && value > field.max)) {
          fieldError(field.key, `${field.label} must be a whole number${field.min ? ` of at least ${field.min}` : ''}${field.max ? ` and at most ${field.max}` : ''}.`);
          return;
        }
      } else value = input.value.trim();
      const old = v[field.key] === null || v[field.key] === undefined ? (field.type === 'text' ? '' : v[field.key]) : v[field.key];
      if (value !== old) body[field.key] = value;
    }
    if (Object.keys(body).length === 0) {
      formNote.replaceChildren(h('span', { class: 'muted' }, 'Nothing changed.'));
      return;
    }
    const button = $('#save-settings', form);
    button.disabled = true;
    formNote.replaceChildren(h('span', { class: 'muted' }, 'Saving…'));
    try {
      const res = await api('/api/settings', { method: 'PUT', body });
      if (destroyed) return;
      const restart = Array.isArray(res.restartNeeded) ? res.restartNeeded : [];
      s = res;
      app.settings = res;
      renderBanners();
      renderForm();
      renderKeys();
      const labels = restart.map((k) => (FIELDS.find((f) => f.key === k) || { label: k }).label.toLowerCase());
      formNote.replaceChildren(h('span', { class: 'saved', id: 'saved' }, 'Saved.'),
        restart.length ? h('span', { class: 'restart-note', id: 'restart-needed' },
          ` Restart Vaider for the new ${labels.join(' and ')} to apply.`) : null);
    } catch (err) {
      const key = FIELDS.map((f) => f.key).find((k) => new RegExp(`\\b(${k}|${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)})\\b`, 'i').test(err.message));
      if (key) fieldError(key, err.message);
      formNote.replaceChildren(h('span', { class: 'error-text', id: 'settings-error' }, `Not saved: ${err.message}`));
    } finally {
      button.disabled = false;
    }
  });

  function fieldError(key, message) {
    const el = $(`#setting-${key}-error`, form);
    const input = inputs[key];
    if (el) { el.textContent = message; el.hidden = false; }
    if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
    formNote.replaceChildren(h('span', { class: 'error-text' }, message));
  }

  // keySource: "keychain", "environment", ".env file" (or a longer phrase naming the variable
  // or the file); shown as it comes, with the keychain one kept short.
  function fromKeychain(p) {
    return /keychain/i.test(p.keySource || '');
  }

  function keyStatusText(p) {
    if (!p.needsKey) return 'No key needed';
    if (!p.keySet) return 'Not set';
    if (fromKeychain(p)) return 'Key set (keychain)';
    if (p.keySource === 'environment' && p.envNames && p.envNames.length) return `Key set (environment: ${p.envNames.join(' or ')})`;
    if (p.keySource) return `Key set (${p.keySource.replace(/^environment variable /i, 'environment: ')})`;
    return 'Key set';
  }

  function renderKeys() {
    const kc = s.keychain || { available: true };
    const providers = s.providers || [];
    const rows = providers.map((p) => {
      const statusEl = h('span', { class: `key-status ${p.keySet ? 'is-set' : 'is-unset'}`, id: `key-status-${p.name}` }, keyStatusText(p));
      const head = h('div', { class: 'key-head' }, h('span', { class: 'key-name', id: `key-name-${p.name}` }, p.name), statusEl);
      if (!p.needsKey) {
        return h('li', { class: 'key-row key-row-local', dataset: { provider: p.name } }, head);
      }
      const inputId = `key-input-${p.name}`;
      const input = h('input', {
        type: 'password', id: inputId, name: `key-${p.name}`, autocomplete: 'new-password', spellcheck: 'false',
        placeholder: p.keySet ? 'Paste a new key' : 'Paste the key', 'data-lpignore': 'true',
      });
      const note = h('p', { class: 'key-note', id: `key-note-${p.name}`, role: 'status' });
      const setBtn = h('button', { type: 'submit', class: 'btn btn-small', id: `key-set-${p.name}` }, p.keySet ? 'Replace' : 'Set');
      const clearBtn = h('button', {
        type: 'button', class: 'btn btn-small', id: `key-clear-${p.name}`,
        'aria-label': `Clear the ${p.name} key from the keychain`,
        onclick: async () => {
          clearBtn.disabled = true;
          note.textContent = 'Clearing…';
          try {
            await api(`/api/keys/${encodeURIComponent(p.name)}`, { method: 'DELETE' });
            await afterKeyChange();
            const fresh = (s.providers || []).find((x) => x.name === p.name);
            setNote(p.name, fresh && fresh.keySet
              ? `Removed from the keychain; a key still comes from the ${fresh.keySource || 'environment'}.`
              : 'Removed from the keychain.');
          } catch (err) {
            note.textContent = err.message;
            note.classList.add('error-text');
            clearBtn.disabled = false;
          }
        },
      }, 'Clear');
      const form2 = h('form', {
        class: 'key-form', autocomplete: 'off',
        onsubmit: async (e) => {
          e.preventDefault();
          // Take the key out of the page at once: it lives only in this request.
          let key = input.value;
          input.value = '';
          if (!key.trim()) { note.textContent = 'Paste a key first.'; return; }
          setBtn.disabled = true;
          note.classList.remove('error-text');
          note.textContent = 'Saving…';
          try {
            await api(`/api/keys/${encodeURIComponent(p.name)}`, { method: 'PUT', body: { key } });
            key = null;
            await afterKeyChange();
            setNote(p.name, 'Saved in the keychain.');
          } catch (err) {
            key = null;
            note.textContent = err.message;
            note.classList.add('error-text');
            setBtn.disabled = false;
          }
        },
      },
      h('label', { class: 'sr-only', for: inputId }, `New ${p.name} API key`),
      input, setBtn, clearBtn);
      return h('li', { class: 'key-row', dataset: { provider: p.name } },
        head, form2, note,
        p.keySet && p.keySource && !fromKeychain(p)
          ? h('p', { class: 'help' }, `The key from the ${p.keySource} is used before the keychain.`) : null);
    });
    const configDir = (s.configPath || '').replace(/[\\/][^\\/]*$/, '') || 'the config folder';
    keys.replaceChildren(
      h('h2', { id: 'keys-title' }, 'API keys'),
      kc.available === false
        ? h('div', { class: 'notice notice-warn', id: 'keychain-unavailable', role: 'note' },
          h('strong', null, 'Keys cannot be stored in a keychain here. '),
          h('span', { class: 'keychain-message' }, `${kc.message || 'No OS keychain is available.'} `),
          kc.message && /GEMINI_API_KEY/.test(kc.message) ? null : [
            'Keys can still come from the environment: set ', h('code', null, 'GEMINI_API_KEY'),
            ' (or ', h('code', null, '<PROVIDER>_API_KEY'), ') where the server runs, or put that line in a ',
            h('code', null, '.env'), ' file in the project folder or in ', h('code', { class: 'path' }, configDir), '.'])
        : h('p', { class: 'help' }, 'Keys are kept in the OS keychain and are never shown again, not even here.'),
      h('ul', { class: 'key-list', 'aria-label': 'Providers and their keys' }, rows));
  }

  const keyNotes = {};
  function setNote(provider, text) {
    keyNotes[provider] = text;
    const el = $(`#key-note-${CSS.escape(provider)}`, keys);
    if (el) el.textContent = text;
  }

  async function afterKeyChange() {
    const fresh = await api('/api/settings');
    if (destroyed) return;
    s.providers = fresh.providers;
    s.keychain = fresh.keychain;
    app.settings = fresh;
    renderKeys();
    renderBanners();
  }

  function renderServer() {
    const paused = app.paused;
    server.replaceChildren(
      h('h2', { id: 'server-title' }, 'Server'),
      h('p', { id: 'server-status-text' }, paused
        ? 'Paused: agents get 503 PAUSED until you resume.'
        : 'Running: agents can ask for analyses.'),
      h('button', {
        type: 'button', class: 'btn', id: paused ? 'resume-server' : 'pause-server',
        onclick: async (e) => {
          e.currentTarget.disabled = true;
          try { await setServerPaused(!paused); } catch (err) { toast(err.message, 'error'); }
          renderServer();
        },
      }, paused ? 'Resume' : 'Pause'));
    loadDesktop();
  }

  async function loadDesktop() {
    let dsk;
    try { dsk = await api('/api/desktop'); } catch { dsk = { available: false }; }
    if (destroyed) return;
    desktop.hidden = !dsk.available;
    if (!dsk.available) return;
    const note = h('p', { class: 'key-note', role: 'status' });
    const box = h('input', {
      type: 'checkbox', id: 'autostart', checked: Boolean(dsk.autostart),
      onchange: async () => {
        box.disabled = true;
        try {
          await api('/api/desktop', { method: 'PUT', body: { autostart: box.checked } });
          note.textContent = box.checked ? 'Vaider starts when you log in.' : 'Vaider no longer starts at login.';
        } catch (err) {
          box.checked = !box.checked;
          note.textContent = err.message;
        } finally { box.disabled = false; }
      },
    });
    desktop.replaceChildren(h('h2', { id: 'desktop-title' }, 'Desktop app'),
      h('div', { class: 'field field-check' }, h('label', { for: 'autostart' }, box, h('span', null, 'Start at login'))),
      note);
  }

  const offs = [
    on('settings', async () => {
      if (dirty || destroyed) return;
      try {
        const fresh = await api('/api/settings');
        if (destroyed || dirty) return;
        const keep = formNote.cloneNode(true);
        s = fresh;
        renderForm();
        formNote.replaceChildren(...keep.childNodes);
        renderKeys();
      } catch { /* keep what is shown */ }
    }),
    on('server', () => { if (s) renderServer(); }),
    on('reconnect', () => { if (!dirty) load(); }),
  ];
  load();
  return { destroy() { destroyed = true; offs.forEach((off) => off()); } };
}

// ---------------------------------------------------------------- start

async function main() {
  try { app.token = sessionStorage.getItem(TOKEN_KEY); } catch { app.token = null; }
  takeTokenFromUrl();
  window.addEventListener('hashchange', () => {
    if (/(^#|[?&])token=/.test(location.hash)) takeTokenFromUrl();
    route();
  });
  // The view's first request carries the bearer header, so it need not wait for the cookie;
  // what cannot send a header (<video>, EventSource) waits for app.sessionReady.
  app.sessionReady = startSession();
  route();
  try {
    await app.sessionReady;
  } catch (e) {
    if (e.status === 401) return; // showUnauthorized() has said what to do
    renderServerState();
    renderBanners();
    // Keep trying in the background; the page comes back by itself.
    const timer = setInterval(async () => {
      try {
        app.sessionReady = startSession();
        await app.sessionReady;
        clearInterval(timer);
        setOnline(true);
        await refreshSettings();
        connectEvents();
        route();
      } catch { /* still down */ }
    }, 3000);
    return;
  }
  connectEvents();
  await refreshSettings();
}

main();
