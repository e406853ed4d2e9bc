// A test validation's detail (a validate_test entry): the rubric's verdict with its errors and
// warnings, what the run showed (browser, test, console, network), each test of the report
// with its error and where it failed, its traces (the command that opens each, a download),
// the screenshots, what the model saw in the recording, where each failed test went wrong
// (its failing step watched closely; its times seek the recording), a flaky test's attempts
// compared, and the model calls the validation made (each a link to its own entry). The
// recording itself plays in the media pane beside these.

import { h } from './dom.js';
import { fmtCost, fmtDuration, statusBadge, VERDICT_LABEL } from './format.js';
import { inline, richText } from './richtext.js';

// `load(img, url)` sets an image's source once the session allows it; `ctx` makes times links
// that seek the recording. `job` is the detail's `job` (its lists always there); `job.result`
// is the validation's AgentResult (contracts.md §2), whose `data` is `{}` when the test never
// ran, or null while it runs.
export function validationCards(job, load, ctx) {
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
  if (data.failure_analysis && data.failure_analysis.length) cards.push(failuresCard(data.failure_analysis, ctx));
  if (data.flaky && data.flaky.length) cards.push(flakyCard(data.flaky, ctx));
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

// Each failed test's failing step as the model saw it over the stretch it watched.
function failuresCard(failures, ctx) {
  const line = (label, text) => (text ? h('div', { class: 'failure-line' }, h('span', { class: 'muted' }, label), ' ', inline(text, ctx)) : null);
  return h('div', { class: 'card', id: 'failures' },
    h('h2', null, 'Where it failed'),
    h('ul', { class: 'plain' }, failures.map((f) => h('li', { class: 'failure' },
      h('div', { class: 'failure-test' }, f.test),
      line('Failed at', f.failing_step),
      h('div', { class: 'prose failure-screen' }, richText(f.screen_at_failure || '', ctx)),
      line('Expected:', f.expected),
      line('First wrong:', f.first_wrong),
      line('Likely cause:', f.cause),
      h('div', { class: 'muted' }, `Watched ${f.watched.from.toFixed(1)}–${f.watched.to.toFixed(1)} s at ${f.watched.fps} frames a second`,
        f.video && /screencast-[^/]*\.webm$/.test(f.video) ? ", on the trace's screencast (no video was recorded)" : '')))));
}

// A flaky test: what differed between its failed attempt and its passing one.
function flakyCard(flaky, ctx) {
  return h('div', { class: 'card', id: 'flaky' },
    h('h2', null, 'Flaky'),
    h('ul', { class: 'plain' }, flaky.map((f) => h('li', { class: 'flaky-test' },
      h('div', null, f.test, ' ', h('span', { class: 'muted' }, f.attempts)),
      h('ul', { class: 'flaky-differences' }, f.differences.map((d) => h('li', null, inline(d, ctx))))))));
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
