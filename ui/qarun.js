// A test plan run's detail (a run_test_plan entry): the run's verdict, then each step with its
// status, how long it took, a link that plays the run's video from the moment the step
// started, what was expected and what the page had, the model's reasoning and confidence, the
// screenshot taken after it, and its logs. The video plays in the media pane beside these.

import { h } from './dom.js';
import { fmtDuration } from './format.js';
import { callsCard } from './validation.js';

const STEP_BADGE = { passed: 'verdict-met', failed: 'verdict-not_met', error: 'verdict-not_met', skipped: 'verdict-unclear' };

// `load(img, url)` sets an image's source once the session allows it; `ctx.hrefFor(secs)` is
// the address of the video at that second.
export function qaRunCards(job, load, ctx) {
  if (job.result === null) return [];
  const run = job.result.testRun;
  const cards = [verdictCard(run)];
  cards.push(stepsCard(run, job.screenshotUrls, load, ctx));
  if (job.calls.length) cards.push(callsCard(job.calls));
  return cards;
}

function verdictCard(run) {
  const steps = run.stepResults;
  const passed = steps.filter((s) => s.status === 'passed').length;
  return h('div', { class: 'card', id: 'qa-run' },
    h('h2', null, run.planName || 'Test plan', ' ',
      h('span', { class: `badge ${STEP_BADGE[run.status] || ''}`, id: 'qa-run-status' }, run.status)),
    h('p', null, `${passed} of ${steps.length} steps passed in ${fmtDuration(run.duration)}, against `,
      h('code', null, run.baseUrl), '.'),
    run.error ? h('p', { class: 'error-message', id: 'qa-run-error' }, run.error) : null,
    run.video && run.video.error ? h('p', { class: 'muted', id: 'qa-video-note' }, run.video.error) : null);
}

// Seconds into the run's video when the step started, or null without a video.
function videoSecond(run, step) {
  if (!run.video || !run.video.path) return null;
  const t = (Date.parse(step.startedAt) - Date.parse(run.video.startedAt)) / 1000;
  return Number.isFinite(t) ? Math.max(0, Math.round(t * 10) / 10) : null;
}

function stepsCard(run, urls, load, ctx) {
  let shot = 0;
  const items = run.stepResults.map((step, i) => {
    const url = step.screenshot ? urls[shot++] : null;
    return stepItem(run, step, i, url, load, ctx);
  });
  return h('div', { class: 'card', id: 'qa-steps' },
    h('h2', null, 'Steps'),
    h('ol', { class: 'qa-steps plain' }, items));
}

function stepItem(run, step, i, url, load, ctx) {
  const t = videoSecond(run, step);
  const when = t === null || step.status === 'skipped' ? null : h('a', {
    class: 'ts', href: ctx.hrefFor(String(t)), dataset: { t: String(t) },
    title: 'Play the run’s video from this step',
  }, `▶ ${t.toFixed(1)} s`);
  const pair = (label, value, cls) => (value ? [h('dt', null, label), h('dd', { class: cls }, value)] : []);
  const facts = [
    ...pair('Expected', step.expected, 'qa-expected'),
    ...pair('Actual', step.actual, 'qa-actual'),
    ...pair('Model', step.llmReasoning, 'qa-reasoning'),
    ...pair('Confidence', step.llmConfidence != null ? step.llmConfidence.toFixed(2) : null, 'qa-confidence'),
  ];
  const logs = step.logs && step.logs.length ? h('details', { class: 'qa-logs' },
    h('summary', null, `Logs (${step.logs.length})`),
    h('ul', { class: 'plain' }, step.logs.map((l) => h('li', { class: 'code' }, l)))) : null;
  return h('li', { class: `qa-step qa-${step.status}`, id: `qa-step-${i + 1}` },
    h('div', { class: 'qa-step-head' },
      h('span', { class: `badge ${STEP_BADGE[step.status] || ''}` }, step.status), ' ',
      h('strong', null, `${i + 1}. ${step.stepName}`), ' ',
      h('span', { class: 'muted' }, `${step.stepType} · ${fmtDuration(step.duration)}`), ' ',
      when),
    step.error ? h('p', { class: 'error-message' }, step.error) : null,
    facts.length ? h('dl', { class: 'facts' }, ...facts) : null,
    url ? h('figure', { class: 'shot' },
      h('a', { href: url, target: '_blank', rel: 'noopener' }, load(h('img', { alt: `After step ${i + 1}`, loading: 'lazy' }), url))) : null,
    logs);
}
