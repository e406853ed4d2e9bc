// The history view: every analysis newest first, searched and filtered through /api/history,
// paged as the list scrolls, and patched live from the server's events.

import { h } from './dom.js';
import { basename, fmtCost, fmtDuration, fmtFullTime, fmtInt, fmtTime, plural, relTime, shortPath, statusBadge, whereIs } from './format.js';
import { api } from './api.js';
import { on } from './state.js';
import { errorState } from './shell.js';

const PAGE_SIZE = 100;
const SEARCH_DEBOUNCE_MS = 150;
const STATUSES = ['running', 'ok', 'failed', 'error', 'timeout', 'rejected', 'interrupted'];

export function historyView(root, r) {
  const st = {
    q: r.params.get('q') || '',
    status: r.params.get('status') || '',
    tool: r.params.get('tool') || '',
    project: r.params.get('project') || '',
    rows: new Map(), // id -> {summary, tr}
    next: null,
    total: null,
    totals: null,
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
  // What change-aware video sampling saved over the whole history.
  const saving = h('span', { class: 'count muted', id: 'history-saving', hidden: true }, '');
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
      count, saving),
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

  function shortText(text, max) {
    return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
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
        // A failed test is a result: the failing step or test, not a red error code.
        s.status === 'failed' ? h('span', { class: 'failed-what', title: s.errorMessage || '' }, shortText(s.errorMessage || '', 80))
          : s.errorCode ? h('span', { class: 'err-code', title: s.errorMessage || '' }, s.errorCode) : null),
      h('td', { class: 'c-num' }, s.status === 'running' ? '…' : fmtDuration(s.durationMs)),
      h('td', { class: 'c-num' }, s.status === 'running' ? '…' : fmtCost(s.costUsd)));
  }

  function renderCount() {
    if (st.total === null) { count.textContent = ''; return; }
    count.textContent = hasFilters()
      ? `${plural(st.total, 'match', 'matches')}`
      : `${plural(st.total, 'analysis', 'analyses')}`;
    const t = st.totals;
    saving.hidden = !(t && t.defaultSamplingInputTokens > t.inputTokens);
    if (!saving.hidden) {
      const saved = t.defaultSamplingInputTokens - t.inputTokens;
      const times = (t.defaultSamplingInputTokens / Math.max(1, t.inputTokens)).toFixed(1);
      saving.textContent = `· video sampling saved ${fmtInt(saved)} input tokens (${times}x fewer)`;
      saving.title = `Gemini's default sampling would have used ${fmtInt(t.defaultSamplingInputTokens)} input tokens over the whole history.`;
    }
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
      showRows(page.items, reset);
      st.next = page.next;
      st.total = page.total;
      st.totals = page.totals;
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
      fillSelect(toolSel, f.tools, st.tool, (v) => v);
      fillSelect(projectSel, f.projects, st.project, (v) => shortPath(v, 36));
      const statuses = [...new Set([...STATUSES, ...f.statuses])];
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
    const { items } = page;
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
    st.total = page.total;
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
