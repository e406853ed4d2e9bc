// The review page (#/review): a project's pending visual changes, newest first, each with the
// comparison views of the detail page (before and after, swipe, onion skin, diff, heat map),
// the model's verdict per region, and Approve or Reject; a selection or all of them at once,
// and Undo for the last decision. Keyboard: j/k the next or previous change, a approves it,
// r rejects it. Only this signed-in page (or the terminal) decides: an agent proposes.

import { h } from './dom.js';
import { api } from './api.js';
import { relTime, plural } from './format.js';
import { errorState, toast } from './shell.js';
import { comparisonViewer } from './compare.js';

const LAST_KEY = 'vaider.review.project';

export function reviewView(root, r) {
  let destroyed = false;
  let project = '';
  let changes = [];
  let current = 0;
  document.title = 'Vaider: review';

  const known = h('datalist', { id: 'review-projects' });
  const folder = h('input', {
    id: 'review-project', type: 'text', placeholder: '/path/to/project', list: 'review-projects',
    'aria-label': 'Project folder', size: 48,
  });
  const form = h('form', { class: 'qa-picker', id: 'review-picker' }, folder, known,
    h('button', { type: 'submit', class: 'btn' }, 'Show'));
  const reason = h('input', { id: 'review-reason', type: 'text', placeholder: 'Why (optional, kept in the log)', 'aria-label': 'Reason', size: 36 });
  const all = h('input', { type: 'checkbox', id: 'review-select-all', 'aria-label': 'Select every change' });
  const approveSelected = h('button', { type: 'button', class: 'btn', id: 'review-approve-selected', disabled: true }, 'Approve selected');
  const rejectSelected = h('button', { type: 'button', class: 'btn', id: 'review-reject-selected', disabled: true }, 'Reject selected');
  const approveAll = h('button', { type: 'button', class: 'btn', id: 'review-approve-all' }, 'Approve all');
  const undo = h('button', { type: 'button', class: 'btn', id: 'review-undo' }, 'Undo last decision');
  const toolbar = h('div', { class: 'review-toolbar', hidden: true },
    h('label', null, all, ' All'), reason, approveSelected, rejectSelected, approveAll, undo);
  const list = h('div', { id: 'review-changes' });
  const log = h('section', { class: 'card', id: 'review-log', hidden: true });

  root.append(h('div', { class: 'page-head' }, h('h1', null, 'Review')),
    h('p', { class: 'muted' }, 'Captures that differ from their approved baseline (or have none yet) wait here for your decision. '
      + 'Keys: j and k move, a approves, r rejects.'),
    form, toolbar, list, log);

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (folder.value.trim()) show(folder.value.trim());
  });
  all.addEventListener('change', () => {
    for (const box of list.querySelectorAll('.review-select')) box.checked = all.checked;
    selectionChanged();
  });
  approveSelected.addEventListener('click', () => decide('approve', selected()));
  rejectSelected.addEventListener('click', () => decide('reject', selected()));
  approveAll.addEventListener('click', () => decide('approve', changes.map((c) => c.id)));
  undo.addEventListener('click', undoLast);

  function selected() {
    return [...list.querySelectorAll('.review-select:checked')].map((box) => box.dataset.id);
  }

  function selectionChanged() {
    const n = selected().length;
    approveSelected.disabled = rejectSelected.disabled = n === 0;
  }

  function onKey(e) {
    if (e.target.closest && e.target.closest('input, textarea, select')) return;
    if (e.ctrlKey || e.metaKey || e.altKey || !changes.length) return;
    if (e.key === 'j') { e.preventDefault(); focus(Math.min(current + 1, changes.length - 1)); }
    else if (e.key === 'k') { e.preventDefault(); focus(Math.max(current - 1, 0)); }
    else if (e.key === 'a') { e.preventDefault(); decide('approve', [changes[current].id]); }
    else if (e.key === 'r') { e.preventDefault(); decide('reject', [changes[current].id]); }
  }
  document.addEventListener('keydown', onKey);

  async function start() {
    try {
      const { projects } = await api('/api/review');
      if (destroyed) return;
      known.replaceChildren(...projects.map((p) => h('option', { value: p })));
      let remembered = '';
      try { remembered = localStorage.getItem(LAST_KEY) || ''; } catch { /* storage disabled */ }
      const wanted = r.params.get('project') || remembered || projects[0] || '';
      if (!wanted) {
        list.replaceChildren(h('p', { class: 'empty', id: 'review-none' },
          'No project with captures yet. Run `vaider capture NAME --url …` in a project, or type its folder above.'));
        return;
      }
      show(wanted);
    } catch (e) {
      if (!destroyed) list.replaceChildren(errorState('Could not load the projects', e, start));
    }
  }

  async function show(dir, keep = 0) {
    project = dir;
    folder.value = dir;
    try {
      const answer = await api(`/api/review?project=${encodeURIComponent(dir)}`);
      if (destroyed) return;
      try { localStorage.setItem(LAST_KEY, dir); } catch { /* storage disabled */ }
      changes = answer.changes;
      current = Math.min(keep, Math.max(changes.length - 1, 0));
      toolbar.hidden = false;
      all.checked = false;
      approveAll.disabled = changes.length === 0;
      render();
      renderLog(answer.decisions);
    } catch (e) {
      if (!destroyed) list.replaceChildren(errorState('Could not read the pending changes', e, () => show(dir)));
    }
  }

  function render() {
    if (!changes.length) {
      list.replaceChildren(h('p', { class: 'empty', id: 'review-none' }, `Nothing to review in ${project}: every capture matches its baseline.`));
      selectionChanged();
      return;
    }
    list.replaceChildren(h('p', { class: 'muted', id: 'review-count' }, `${plural(changes.length, 'pending change', 'pending changes')}, newest first.`),
      ...changes.map((c, i) => card(c, i)));
    selectionChanged();
  }

  function focus(i) {
    current = i;
    render();
    const el = list.querySelector('.review-change.current');
    if (el && el.scrollIntoView) el.scrollIntoView({ block: 'nearest' });
  }

  function card(c, i) {
    const box = h('input', { type: 'checkbox', class: 'review-select', dataset: { id: c.id }, 'aria-label': `Select ${c.name}@${c.variant}` });
    box.addEventListener('change', selectionChanged);
    const isCurrent = i === current;
    return h('section', {
      class: `card review-change${isCurrent ? ' current' : ''}`, id: `change-${c.id}`, dataset: { id: c.id },
      onclick: (e) => { if (!isCurrent && !e.target.closest('button, input, a')) focus(i); },
    },
    h('div', { class: 'review-head' }, box,
      h('h2', null, `${c.name}@${c.variant}`),
      h('span', { class: `badge review-status status-${c.status}` }, c.status),
      h('span', { class: 'muted' }, ` ${c.changedPixels} pixels · ${relTime(c.created)} · ${c.id}`),
      h('span', { class: 'review-actions' },
        h('button', { type: 'button', class: 'btn btn-primary btn-small review-approve', onclick: () => decide('approve', [c.id]) }, 'Approve'),
        h('button', { type: 'button', class: 'btn btn-small review-reject', onclick: () => decide('reject', [c.id]) }, 'Reject'))),
    verdicts(c),
    isCurrent ? pictures(c) : thumbnail(c));
  }

  function verdicts(c) {
    if (!c.verdicts.length) {
      const why = c.status === 'new' ? 'No baseline yet: approving makes this picture the baseline.'
        : c.status === 'unchanged' ? `Unchanged, but ${(c.proposedIgnore || []).length} region(s) differed run to run: approving keeps them ignored with the baseline.`
        : (c.summary || 'No verdict from the model (pixels only).');
      return h('p', { class: 'muted review-verdicts' }, why);
    }
    return h('ul', { class: 'review-verdicts' }, c.verdicts.map((v) => h('li', { class: `review-verdict verdict-${v.verdict}` },
      h('strong', null, `Region ${v.region}: ${v.verdict}`), ` ${v.reason}`)));
  }

  function thumbnail(c) {
    const url = c.pictures.annotated || c.pictures.actual;
    return url ? h('img', { class: 'review-thumb', alt: `${c.name}, as captured`, src: url }) : null;
  }

  function pictures(c) {
    const p = c.pictures;
    const after = p.annotated || p.actual;
    if (!p.baseline || !after) return thumbnail(c);
    const found = [];
    const unexpected = [];
    for (const v of c.verdicts) {
      const finding = { region: `region ${v.region}`, change: `${v.verdict}: ${v.reason}`, severity: 'error' };
      (v.verdict === 'regression' ? unexpected : found).push(finding);
    }
    const view = {
      result: { regions: c.regions, agentic_analysis: { found_changes: found, unexpected_changes: unexpected }, validation: { expected_missed: [] } },
      diffUrl: p.diff, heatMapUrl: p.heatmap, closeUpsUrl: p.closeups,
    };
    const load = (img, url) => { if (url) img.src = url; return img; };
    return comparisonViewer(p.baseline, after, load, view);
  }

  async function decide(action, ids) {
    if (!ids.length) return;
    try {
      const answer = await api(`/api/review/${action}`, { method: 'POST', body: { project, ids, reason: reason.value.trim() } });
      const done = answer.decided.length;
      toast(`${action === 'approve' ? 'Approved' : 'Rejected'} ${plural(done, 'change', 'changes')}`
        + (answer.failed.length ? `; ${answer.failed.length} could not be: ${answer.failed[0].message}` : '.'), answer.failed.length ? 'error' : 'info');
      reason.value = '';
      await show(project, current);
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  async function undoLast() {
    try {
      const { undone } = await api('/api/review/undo', { method: 'POST', body: { project, reason: reason.value.trim() } });
      toast(`Undone: the ${undone.name}@${undone.variant} decision; it waits for review again.`);
      reason.value = '';
      await show(project, current);
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  function renderLog(decisions) {
    log.hidden = !decisions.length;
    log.replaceChildren(h('h2', null, 'Decisions'),
      h('ol', { class: 'review-log' }, decisions.slice(0, 30).map((d) => h('li', { class: `review-record action-${d.action}` },
        h('strong', null, `${d.action} ${d.name}@${d.variant}`),
        ` by ${d.gitUser || d.user} ${relTime(d.at)} (${proofText(d.proof)})`,
        d.reason ? `: ${d.reason}` : ''))));
  }

  start();
  return {
    destroy() {
      destroyed = true;
      document.removeEventListener('keydown', onKey);
    },
  };
}

function proofText(proof) {
  switch (proof.kind) {
    case 'signedInUi': return 'in this page';
    case 'askedThroughClient': return `asked through ${proof.client}`;
    case 'clickedInChatView': return `clicked in ${proof.client}'s chat view`;
    case 'terminal': return 'at a terminal';
    case 'commandLine': return 'on the command line';
    default: return proof.kind;
  }
}
