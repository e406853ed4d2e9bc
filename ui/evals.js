// #/evals: the runs of `vaider eval` (docs/eval.md), newest first: each run's headline scores
// in one table, then each run's per-class recall, precision and F1 in a fold-out.

import { h } from './dom.js';
import { api } from './api.js';

const pct = (v) => (typeof v === 'number' ? `${(v * 100).toFixed(1)} %` : '–');

export function evalsView(root) {
  let destroyed = false;
  document.title = 'Vaider: eval';
  const body = h('div', { id: 'eval-runs' }, h('p', { class: 'loading' }, 'Loading the eval runs…'));
  root.append(h('div', { class: 'page-head' }, h('h1', null, 'Eval')),
    h('p', { class: 'muted' }, 'How often Vaider sees right: runs of `vaider eval` on the labelled set of GUI defects. '
      + 'Balanced accuracy is 50 % for an answerer that always says "defect".'),
    body);

  api('/api/evals').then(({ runs }) => {
    if (destroyed) return;
    if (!runs.length) {
      body.replaceChildren(h('p', { class: 'empty', id: 'eval-none' }, 'No eval run yet. Run `vaider eval`: it finds the labelled set installed with Vaider, or eval/set in a checkout.'));
      return;
    }
    const head = ['finished', 'provider · model', 'sampling', 'items', 'balanced accuracy', 'recall', 'specificity',
      'verdicts', 'localisation', 'cost', 'latency'];
    const table = h('table', { class: 'eval-table' },
      h('thead', null, h('tr', null, ...head.map((t) => h('th', null, t)))),
      h('tbody', null, ...runs.map((r) => h('tr', null,
        h('td', null, String(r.finishedAt || '').slice(0, 19).replace('T', ' ')),
        h('td', null, `${r.provider} · ${r.model}`),
        h('td', null, r.only ? `${r.sampling} (only ${r.only})` : r.sampling),
        h('td', null, `${r.items}${r.errors ? ` (+${r.errors} failed)` : ''}`),
        h('td', null, pct(r.balancedAccuracy)), h('td', null, pct(r.recall)), h('td', null, pct(r.specificity)),
        h('td', null, pct(r.verdictAccuracy)), h('td', null, pct(r.localisation)),
        h('td', null, `$${Number(r.costUsd || 0).toFixed(4)}`),
        h('td', null, typeof r.meanLatencyMs === 'number' ? `${Math.round(r.meanLatencyMs)} ms` : '–')))));
    const folds = runs.map((r) => h('details', { class: 'eval-classes' },
      h('summary', null, `Per class: ${r.provider} · ${r.model} · ${String(r.finishedAt || '').slice(0, 19)}`),
      h('table', null,
        h('thead', null, h('tr', null, ...['class', 'support', 'precision', 'recall', 'F1'].map((t) => h('th', null, t)))),
        h('tbody', null, ...r.classes.map((c) => h('tr', null, h('td', null, c.class), h('td', null, String(c.support)),
          h('td', null, pct(c.precision)), h('td', null, pct(c.recall)), h('td', null, pct(c.f1))))))));
    body.replaceChildren(table, ...folds);
  }).catch((e) => {
    if (!destroyed) body.replaceChildren(h('p', { class: 'error' }, `Could not read the eval runs: ${e.message}`));
  });
  return { destroy() { destroyed = true; } };
}
