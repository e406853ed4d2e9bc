// The Plans page: the QA test plans kept in a workspace's .qa-agent/ folder, by project, each
// with its steps, its last run and a Run button. A run starts at once and its page (the history
// entry) opens: it shows the run going, then every step with its evidence and the video. A plan
// Vaider did not write (one a cloned repository brought) shows what it reaches and asks the
// person looking at the page to approve it before it runs.

import { h } from './dom.js';
import { api } from './api.js';
import { fmtDuration, relTime } from './format.js';
import { errorState, toast } from './shell.js';
import { app } from './state.js';

const LAST_KEY = 'vaider.qa.workspace';

export function plansView(root, r) {
  let destroyed = false;
  document.title = 'Vaider: test plans';
  const picker = h('select', { id: 'qa-workspace', 'aria-label': 'Workspace' });
  const folder = h('input', { id: 'qa-folder', type: 'text', placeholder: '/path/to/project', 'aria-label': 'Project folder' });
  const list = h('div', { id: 'qa-plans' }, h('p', { class: 'loading' }, 'Loading the workspaces…'));
  const open = h('button', { type: 'submit', class: 'btn' }, 'Show');
  const form = h('form', { class: 'qa-picker', id: 'qa-picker' }, picker, folder, open);
  root.append(h('div', { class: 'page-head' }, h('h1', null, 'Test plans')),
    h('p', { class: 'muted' }, 'Plans written by generate_test_plan (or by hand) in a project’s .qa-agent/plans/. '
      + 'Pick a project the history knows, or type its folder.'),
    form, list);

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const chosen = folder.value.trim() || picker.value;
    if (chosen) show(chosen);
  });
  picker.addEventListener('change', () => { folder.value = ''; if (picker.value) show(picker.value); });

  async function start() {
    try {
      const { workspaces } = await api('/api/qa/workspaces');
      if (destroyed) return;
      const wanted = r.params.get('workspace') || sessionStorage.getItem(LAST_KEY) || workspaces[0] || '';
      const options = [...new Set([...(wanted ? [wanted] : []), ...workspaces])];
      picker.replaceChildren(...options.map((w) => h('option', { value: w }, w)));
      if (!options.length) {
        picker.hidden = true;
        list.replaceChildren(h('p', { class: 'empty', id: 'qa-none' },
          'No project with test plans yet. Ask your agent to call generate_test_plan, or type a project folder above.'));
        return;
      }
      picker.value = wanted;
      show(wanted);
    } catch (e) {
      if (!destroyed) list.replaceChildren(errorState('Could not load the workspaces', e, start));
    }
  }

  async function show(workspace) {
    list.replaceChildren(h('p', { class: 'loading' }, 'Loading the plans…'));
    try {
      const { plans } = await api(`/api/qa/plans?workspace=${encodeURIComponent(workspace)}`);
      if (destroyed) return;
      try { sessionStorage.setItem(LAST_KEY, workspace); } catch { /* storage disabled */ }
      list.replaceChildren(...render(workspace, plans));
    } catch (e) {
      if (!destroyed) list.replaceChildren(errorState('Could not read the plans', e, () => show(workspace)));
    }
  }

  function render(workspace, plans) {
    if (!plans.length) {
      return [h('p', { class: 'empty', id: 'qa-none' }, `No plans in ${workspace}/.qa-agent/plans/.`)];
    }
    const byProject = new Map();
    for (const plan of plans) {
      if (!byProject.has(plan.project)) byProject.set(plan.project, []);
      byProject.get(plan.project).push(plan);
    }
    return [...byProject].map(([project, items]) => h('section', { class: 'card qa-project' },
      h('h2', null, project),
      h('table', { class: 'table' },
        h('thead', null, h('tr', null, ['Plan', 'Steps', 'Last run', ''].map((t) => h('th', null, t)))),
        h('tbody', null, items.map((plan) => planRow(workspace, plan))))));
  }

  // What an unapproved plan reaches, and the person's Approve: the page is signed in through a
  // login code, which is what lets the server take this as the user's decision.
  function approvalCell(workspace, plan) {
    const reach = h('ul', { class: 'qa-reach' }, plan.approval.reach.map((line) => h('li', null, line)));
    const approve = h('button', { type: 'button', class: 'btn', dataset: { approve: plan.id } }, 'Approve');
    approve.addEventListener('click', async () => {
      approve.disabled = true;
      try {
        await api('/api/qa/plans/approve', { method: 'POST', body: { workspace, planId: plan.id } });
        toast(`Approved ${plan.name}: it may run now`);
        show(workspace);
      } catch (e) {
        approve.disabled = false;
        toast(`Could not approve ${plan.name}: ${e.message}`, 'error');
      }
    });
    return h('div', { class: 'qa-approval' },
      h('p', null, h('span', { class: 'badge badge-warn' }, 'not approved'),
        ' Vaider did not write this plan. It runs once you approve what it reaches:'),
      reach, approve);
  }

  function planRow(workspace, plan) {
    const last = plan.lastRun;
    const run = h('button', { type: 'button', class: 'btn btn-primary', dataset: { plan: plan.id } }, 'Run');
    if (plan.approval) run.disabled = true;
    run.addEventListener('click', async () => {
      run.disabled = true;
      try {
        const { runId } = await api('/api/qa/runs', { method: 'POST', body: { workspace, planId: plan.id } });
        // Its history entry is made as the run starts: the page waits for it.
        app.pending.add(runId);
        location.hash = `#/i/${encodeURIComponent(runId)}`;
      } catch (e) {
        run.disabled = false;
        toast(`Could not run ${plan.name}: ${e.message}`, 'error');
      }
    });
    return h('tr', { class: 'qa-plan', id: `plan-${plan.id}` },
      h('td', null, h('strong', null, plan.name), h('div', { class: 'muted' }, plan.baseUrl || ''),
        plan.approval ? approvalCell(workspace, plan) : null),
      h('td', null, String(plan.stepCount)),
      h('td', null, last ? h('a', { href: `#/i/${encodeURIComponent(last.id)}`, class: `qa-last qa-${last.status}` },
        `${last.status}${last.duration != null ? ` in ${fmtDuration(last.duration)}` : ''}, ${relTime(last.startedAt)}`) : h('span', { class: 'muted' }, 'never')),
      h('td', null, run));
  }

  start();
  return { destroy() { destroyed = true; } };
}

