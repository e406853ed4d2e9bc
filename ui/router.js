// The address after # picks the view: #/ the history (with ?q=&status=&tool=&project=),
// #/i/ID an analysis, #/plans the QA test plans, #/review the pending visual changes, #/evals the runs of `vaider eval`, #/settings the settings. route() tears the old view down and builds the new.

import { h, $ } from './dom.js';
import { app } from './state.js';
import { historyView } from './history.js';
import { detailView } from './detail.js';
import { settingsView } from './settings.js';
import { plansView } from './plans.js';
import { evalsView } from './evals.js';
import { reviewView } from './review.js';

export function parseRoute() {
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
  if (path === '/plans') return { name: 'plans', params };
  if (path === '/evals') return { name: 'evals', params };
  if (path === '/review') return { name: 'review', params };
  return { name: 'notfound', params };
}

const views = {
  history: historyView,
  detail: detailView,
  settings: settingsView,
  plans: plansView,
  evals: evalsView,
  review: reviewView,
  notfound: (root) => {
    root.append(h('section', { class: 'state-card' },
      h('h1', null, 'Nothing here'),
      h('p', null, 'This address is not a page of Vaider. ', h('a', { href: '#/' }, 'Go to the history'), '.')));
    return {};
  },
};

export function route() {
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
