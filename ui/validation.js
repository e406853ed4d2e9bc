// A test validation's detail (a validate_test entry): the rubric's verdict with its errors and
// warnings, what the run showed (browser, test, console, network), each test of the report
// with its error and where it failed, its traces (the command that opens each, a download),
// the screenshots, what the model saw in the recording
// and the model calls the validation made (each a link to its own entry). The recording itself
// plays in the media pane beside these.

import { h } from './dom.js';
import { fmtCost, fmtDuration, statusBadge, VERDICT_LABEL } from './format.js';

// `load(img, url)` sets an image's source once the session allows it. `job` is the detail's
// `job` (its lists always there); `job.result` is the validation's AgentResult (contracts.md
// §2), whose `data` is `{}` when the test never ran, or null while it runs.
export function validationCards(job, load) {
  const result = job.result === null ? {} : job.result;
  const data = result.data || {};
  const rubric = data.rubric_validation;
  const run = data.validation_result;
  const cards = [];
  cards.push(rubricCard(result, rubric));
  if (run) cards.push(runCard(run));
  if (run && data.report.length) cards.push(reportCard(data.report));
  if (job.screenshotUrls.length) cards.push(screenshotsCard(job.screenshotUrls, data.screenshots, load));
  if (job.traces.length) cards.push(tracesCard(job.traces));
  if (data.video_analysis) cards.push(videoCard(data.video_analysis));
  if (job.calls.length) cards.push(callsCard(job.calls));
  return cards;
}

function rubricCard(result, rubric) {
  const passed = result.success === true;
  const list = (items, cls) => (items && items.length
    ? h('ul', { class: `plain ${cls}` }, items.map((e) => h('li', null, e))) : null);
  return h('div', { class: 'card', id: 'rubric' },
    h('h2', null, 'Rubric ',
      h('span', { class: `badge ${passed ? 'verdict-met' : 'verdict-not_met'}`, id: 'rubric-verdict' }, passed ? 'passed' : 'failed')),
    rubric ? null : h('p', { class: 'error-message' }, result.error || 'The test did not run.'),
    rubric ? list(rubric.errors, 'rubric-errors') : null,
    rubric && rubric.warnings && rubric.warnings.length ? h('h3', null, 'Warnings') : null,
    rubric ? list(rubric.warnings, 'rubric-warnings') : null,
    h('p', { class: 'muted' }, `Took ${fmtDuration(result.execution_time_ms)} in all; the model's part cost ${fmtCost(result.cost_usd)}.`));
}

function runCard(run) {
  const yes = (b) => (b ? 'yes' : 'no');
  const messages = (label, items, id) => [h('dt', null, label), h('dd', { id },
    items && items.length ? h('ul', { class: 'plain' }, items.map((m) => h('li', { class: 'code' }, m))) : 'none')];
  return h('div', { class: 'card', id: 'run' },
    h('h2', null, 'The run'),
    h('dl', { class: 'facts' },
      h('dt', null, 'Browser launched'), h('dd', null, yes(run.browser_launched)),
      h('dt', null, 'Test executed'), h('dd', null, yes(run.test_executed)),
      h('dt', null, 'Test passed'), h('dd', null, yes(run.test_passed)),
      h('dt', null, 'Test time'), h('dd', null, fmtDuration(run.execution_time_ms)),
      ...messages('Console errors', run.console_errors, 'console-errors'),
      ...messages('Network failures', run.network_failures, 'network-failures')));
}

function reportCard(tests) {
  return h('div', { class: 'card', id: 'report' },
    h('h2', null, 'Tests'),
    h('table', { class: 'table' },
      h('thead', null, h('tr', null, ['Test', 'Status', 'Time', 'Retries'].map((t) => h('th', null, t)))),
      h('tbody', null, tests.map((t) => [
        h('tr', { class: `test-${t.status}` },
          h('td', null, t.title, h('div', { class: 'muted' }, `${t.file}:${t.line}${t.project ? ` · ${t.project}` : ''}`)),
          h('td', null, h('span', { class: `badge ${t.status === 'passed' ? 'verdict-met' : 'verdict-not_met'}` }, t.status)),
          h('td', null, fmtDuration(t.duration_ms)),
          h('td', null, String(t.retries || 0))),
        t.error ? h('tr', { class: 'test-error' }, h('td', { colspan: 4 },
          h('pre', { class: 'code' }, t.error.message),
          t.error.location ? h('div', { class: 'muted' }, `at ${t.error.location}`) : null)) : null,
      ]))));
}

// Each trace: the command that opens it in Playwright's trace viewer, and the file itself
// through the session's media route.
function tracesCard(traces) {
  return h('div', { class: 'card', id: 'traces' },
    h('h2', null, traces.length === 1 ? 'Trace' : `Traces (${traces.length})`),
    h('ul', { class: 'plain' }, traces.map((t) => h('li', { class: 'trace' },
      h('pre', { class: 'code trace-open' }, t.open),
      h('a', { href: t.url, download: 'trace.zip', class: 'trace-download' }, 'Download trace.zip'),
      h('div', { class: 'muted path' }, t.path)))));
}

function screenshotsCard(urls, paths, load) {
  return h('div', { class: 'card', id: 'screenshots' },
    h('h2', null, `Screenshots (${urls.length})`),
    h('div', { class: 'shots' }, urls.map((url, i) => h('figure', { class: 'shot' },
      h('a', { href: url, target: '_blank', rel: 'noopener' }, load(h('img', { alt: `Screenshot ${i + 1}`, loading: 'lazy' }), url)),
      h('figcaption', { class: 'muted path' }, paths[i] || '')))));
}

function videoCard(video) {
  const verdicts = video.expectations || [];
  return h('div', { class: 'card', id: 'video-analysis' },
    h('h2', null, 'What the recording shows'),
    h('p', { class: 'prose' }, video.description),
    verdicts.length ? h('ul', { class: 'verdicts' }, verdicts.map((v) => h('li', { class: 'verdict' },
      h('div', { class: 'verdict-head' },
        h('span', { class: `badge verdict-${v.verdict}` }, VERDICT_LABEL[v.verdict] || v.verdict),
        h('span', { class: 'expectation' }, v.expectation)),
      v.evidence ? h('div', { class: 'evidence' }, v.evidence) : null))) : null);
}

export function callsCard(calls) {
  return h('div', { class: 'card', id: 'calls' },
    h('h2', null, 'Model calls'),
    h('ul', { class: 'plain' }, calls.map((c) => h('li', null,
      statusBadge(c.status), ' ',
      h('a', { href: `#/i/${c.id}` }, c.tool), ' ',
      h('span', { class: 'muted' }, fmtCost(c.costUsd)),
      c.description ? h('div', { class: 'muted' }, c.description.slice(0, 160)) : null))));
}
