// The eval set's failing runs and flaky pairs (docs/eval.md): real Playwright tests with
// `test.step`s, run by Playwright's own runner with video and trace on, against the same small
// apps with an injected defect. A failing run fails at a known step; its first wrong moment
// (the defect's own time, which may come earlier) is written by the page itself. A flaky test
// fails on its first attempt only (a slow save, a crash, a refused request, a banner) and
// passes on retry. The labels come from a reporter of the generator's own (the steps in start
// order, as Playwright reports them) and the trace's first screencast frame (the video's
// clock starts at the page's first frame): nothing of Vaider's own reading is used, so the
// eval's tests can check Vaider's timeline against them.

import { spawn, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APPS, STYLE, esc } from './apps.mjs';

const FAILING_DEFECTS = ['flash-error-toast', 'missing-extra-element', 'overlap', 'unmentioned-change',
  'wrong-text', 'wrong-colour-state', 'text-overflow', 'wrong-page'];
const FLAKY_KINDS = ['timing', 'timing', 'console', 'network', 'screen'];
const NAMES = ['Ada', 'Grace', 'Linus', 'Barbara', 'Edsger'];
// How long the app takes to save, and how long Playwright waits for a check or an action.
const SAVE_MS = 300;
const SLOW_SAVE_MS = 2500;
const WAIT_MS = 1000;

/// The plan: 10 failing runs (every defect once, two of them twice) and 5 flaky tests.
export function plan(rand, shuffle, rng) {
  const extra = shuffle([...FAILING_DEFECTS], rand).slice(0, 2);
  const defects = shuffle([...FAILING_DEFECTS, ...extra], rand);
  const apps = Object.keys(APPS);
  const pace = (r) => Array.from({ length: 6 }, (_, i) => (i === 2 ? 550 : 350) + Math.floor(r() * 250));
  const failing = defects.map((defect, i) => {
    const seed = Math.floor(rand() * 1e9);
    const r = rng(seed);
    return { id: `fail-${String(i + 1).padStart(2, '0')}`, kind: 'failure', app: apps[i % 3], defect, seed,
      name: NAMES[Math.floor(r() * NAMES.length)], waits: pace(r) };
  });
  const flaky = shuffle([...FLAKY_KINDS], rand).map((flakyKind, i) => {
    const seed = Math.floor(rand() * 1e9);
    const r = rng(seed);
    return { id: `flaky-${String(i + 1).padStart(2, '0')}`, kind: 'flaky', app: apps[(i + 1) % 3], flaky: flakyKind, seed,
      name: NAMES[Math.floor(r() * NAMES.length)], waits: pace(r) };
  });
  return [...failing, ...flaky];
}

/// The page of one item: a form whose save shows a message and a badge, and a link to the next
/// page. `attempt` is the Playwright retry (a flaky item misbehaves on attempt 0 only).
export function flowPage(item, attempt, rand) {
  const app = APPS[item.app];
  const header = ['#2d3e50', '#30475e', '#263445'][Math.floor(rand() * 3)];
  const config = { app, defect: item.defect || null, flaky: attempt === 0 ? item.flaky || null : null,
    mark: `/mark/${item.id}/${attempt}`, save: SAVE_MS, slow: SLOW_SAVE_MS };
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(app.title)}</title>
<style>${STYLE.replace('HEADER', header)}
input { font-size: 15px; padding: 4px 6px; width: 200px; }
.cookies { position: fixed; left: 0; right: 0; bottom: 0; height: 210px; background: #263445; color: #fff; padding: 16px; font-size: 17px; }
</style></head><body>
<header id="title">${esc(app.title)}</header>
<nav><a href="#">Home</a><a href="#" id="next">${esc(app.next)}</a><a href="#">Help</a></nav>
<main id="main"><div class="card" id="card">
<h2 id="heading" style="margin:0 0 8px">${esc(app.heading)}</h2>
<div class="label${item.app === 'dashboard' ? '' : ' clip'}" id="label">${esc(app.label)}</div>
<div class="row"><input id="name" placeholder="Name"></div>
<div><span class="badge" id="badge">${esc(app.badge)}</span></div>
<div class="row" id="buttons"><button class="primary" id="primary">${esc(app.button)}</button><button id="second">${esc(app.second)}</button></div>
<div class="msg" id="msg"></div>
</div></main>
<script>window.__flow = ${JSON.stringify(config)};</script>
<script>${FLOW}</script>
</body></html>`;
}

// The app's behaviour in the page. The defect bends one moment; the page posts that moment's
// wall-clock time (and the element's box) to the generator's server, which makes the label.
const FLOW = `
(() => {
  const { app, defect, flaky, mark, save, slow } = window.__flow;
  const $ = (id) => document.getElementById(id);
  const wrong = (el, end) => { const r = el.getBoundingClientRect();
    navigator.sendBeacon(mark, JSON.stringify({ start: Date.now(), end: end || null,
      box: { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) } })); };
  if (flaky === 'screen') { const c = document.createElement('div'); c.className = 'cookies'; c.id = 'cookies';
    c.textContent = 'We use cookies to remember your cart. Choose your settings below.';
    document.body.appendChild(c); wrong(c); }
  let typed = false;
  $('name').addEventListener('input', () => {
    if (typed) return; typed = true;
    if (defect === 'flash-error-toast') { const t = document.createElement('div'); t.className = 'toast';
      t.textContent = 'Error: could not check the name'; $('main').appendChild(t); wrong(t, Date.now() + 450);
      setTimeout(() => t.remove(), 450); }
    if (defect === 'missing-extra-element') { wrong($('second')); $('second').remove(); }
    if (defect === 'overlap') { const p = document.createElement('div'); p.className = 'panel';
      p.style.left = '16px'; p.style.top = '150px'; p.style.width = '320px'; p.style.height = '110px';
      p.textContent = 'Tip: you can ' + app.button.toLowerCase() + ' later.'; $('main').appendChild(p); wrong(p); }
    if (defect === 'unmentioned-change') { $('title').textContent = app.renamed; wrong($('title')); }
  });
  const saved = () => {
    if (defect === 'flash-error-toast') { $('msg').textContent = 'Could not save'; return; }
    $('msg').textContent = defect === 'wrong-text' ? app.wrongMessage : app.message;
    if (defect === 'wrong-text') wrong($('msg'));
    $('badge').className = defect === 'wrong-colour-state' ? 'badge bad' : 'badge ok';
    if (defect === 'wrong-colour-state') wrong($('badge'));
    if (defect === 'text-overflow') { $('label').textContent = app.longLabel; wrong($('label')); }
  };
  $('primary').addEventListener('click', () => {
    const spin = document.createElement('span'); spin.className = 'spinner';
    $('msg').textContent = ''; $('msg').appendChild(spin);
    if (flaky === 'console') setTimeout(() => { throw new TypeError("Cannot read properties of undefined (reading 'saveDraft')"); }, 100);
    else if (flaky === 'network') fetch('http://127.0.0.1:9/save', { method: 'POST' })
      .catch(() => { $('msg').textContent = 'Could not save'; });
    else if (flaky === 'timing') setTimeout(saved, slow);
    else fetch('/save', { method: 'POST' }).then(() => setTimeout(saved, save));
  });
  $('second').addEventListener('click', () => { $('msg').textContent = app.second + ': done'; });
  $('next').addEventListener('click', (e) => { e.preventDefault();
    $('heading').textContent = defect === 'wrong-page' ? app.wrongNext : app.next;
    document.title = $('heading').textContent;
    if (defect === 'wrong-page') wrong($('heading')); });
})();
`;

// The spec every item runs: six steps, each checking what the user would see.
const SPEC = `
import { test, expect } from '@playwright/test';
import { readFileSync } from 'node:fs';

const plan = JSON.parse(readFileSync(process.env.FLOW_PLAN, 'utf8'));

async function flow(page, item, retry) {
  const { app, waits } = item;
  await test.step('open ' + app.title, async () => {
    await page.goto(process.env.FLOW_BASE + '/f/' + item.id + '?attempt=' + retry);
    await expect(page.locator('#heading')).toHaveText(app.heading);
    await page.waitForTimeout(waits[0]);
  });
  await test.step('type the name ' + item.name, async () => {
    await page.fill('#name', item.name);
    await page.waitForTimeout(waits[1]);
  });
  await test.step('press ' + app.button, async () => {
    await page.click('#primary');
    await page.waitForTimeout(waits[2]);
  });
  await test.step('see "' + app.message + '"', async () => {
    await expect(page.locator('#msg')).toHaveText(app.message);
    await expect(page.locator('#badge')).toHaveClass(/ok/);
    await expect(page.locator('#label')).toHaveText(app.label);
    await page.waitForTimeout(waits[3]);
  });
  await test.step('press ' + app.second, async () => {
    await page.click('#second');
    await page.waitForTimeout(waits[4]);
  });
  await test.step('open the ' + app.next + ' page', async () => {
    await page.click('#next');
    await expect(page.locator('#heading')).toHaveText(app.next);
    await expect(page.locator('#title')).toHaveText(app.title);
    await page.waitForTimeout(waits[5]);
  });
}

for (const item of plan) {
  test.describe(() => {
    test.describe.configure({ retries: item.kind === 'flaky' ? 1 : 0 });
    test(item.title, async ({ page }, testInfo) => flow(page, item, testInfo.retry));
  });
}
`;

// The generator's own reporter: every attempt's steps in the order they began, with their
// wall-clock times and errors, and its video and trace.
const REPORTER = `
import { writeFileSync } from 'node:fs';
const clean = (text) => String(text || '').replace(/\\u001b\\[[0-9;]*m/g, '');
export default class Labeller {
  constructor(options) { this.out = options.out; this.attempts = []; this.open = new Map(); }
  onTestBegin(test, result) { this.open.set(result, []); }
  onStepBegin(test, result, step) {
    const steps = this.open.get(result);
    step.__index = steps.length;
    steps.push({ title: step.title, category: step.category, start: step.startTime.getTime(),
      parent: step.parent ? step.parent.__index : null });
  }
  onStepEnd(test, result, step) {
    const s = this.open.get(result)[step.__index];
    s.end = s.start + step.duration;
    if (step.error) s.error = clean(step.error.message).split('\\n')[0];
  }
  onTestEnd(test, result) {
    this.attempts.push({ title: test.title, retry: result.retry, status: result.status,
      error: result.error ? clean(result.error.message).split('\\nCall log:')[0].trim() : null,
      steps: this.open.get(result),
      files: Object.fromEntries(result.attachments.filter((a) => a.path).map((a) => [a.name, a.path])) });
  }
  onEnd() { writeFileSync(this.out, JSON.stringify(this.attempts)); }
}
`;

function config(viewport, reportPath) {
  return `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: '.', workers: 1, retries: 0, timeout: 20000,
  reporter: [['./labeller.mjs', { out: ${JSON.stringify(reportPath)} }]],
  expect: { timeout: ${WAIT_MS} },
  use: {
    browserName: 'chromium', headless: true, viewport: ${JSON.stringify(viewport)},
    video: { mode: 'on', size: ${JSON.stringify(viewport)} }, trace: 'on', actionTimeout: ${WAIT_MS},
    launchOptions: { executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--no-first-run', '--font-render-hinting=none'] },
  },
});
`;
}

/// A test's title: what it does, in the app's words.
function title(item) {
  const app = APPS[item.app];
  return `${app.title}: ${app.button.toLowerCase()} as ${item.name}, then open ${app.next} (${item.id})`;
}

/// Runs every item's test once (a flaky one twice) and returns the reporter's attempts. The
/// runner is waited for without blocking: this process serves the pages.
async function runTests(items, base, viewport, playwrightDir) {
  const dir = mkdtempSync(join(tmpdir(), 'vaider-eval-flows-'));
  symlinkSync(join(playwrightDir, 'node_modules'), join(dir, 'node_modules'));
  const planPath = join(dir, 'plan.json');
  const reportPath = join(dir, 'attempts.json');
  writeFileSync(planPath, JSON.stringify(items.map((i) => ({ ...i, app: APPS[i.app], title: title(i) }))));
  writeFileSync(join(dir, 'flows.spec.mjs'), SPEC);
  writeFileSync(join(dir, 'labeller.mjs'), REPORTER);
  writeFileSync(join(dir, 'playwright.config.mjs'), config(viewport, reportPath));
  const runner = spawn(process.execPath, [join(playwrightDir, 'node_modules/@playwright/test/cli.js'), 'test', '-c', join(dir, 'playwright.config.mjs')],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, FLOW_PLAN: planPath, FLOW_BASE: base } });
  await new Promise((done) => runner.on('exit', done));
  return { dir, attempts: JSON.parse(readFileSync(reportPath, 'utf8')) };
}

/// The attempt's own steps numbered as Vaider's timeline numbers them: in start order, hooks,
/// fixtures, what runs inside them and attachments left out. Titles are as the trace shows
/// them: an action's title with its subtitle (`Click locator('#second')`), which the reporter
/// API leaves out; the trace's events are matched by title, in order.
function numbered(attempt, origin, trace) {
  const events = execFileSync('unzip', ['-p', trace, 'test.trace'], { maxBuffer: 64 << 20 }).toString()
    .split('\n').filter((l) => l.includes('"before"')).map((l) => JSON.parse(l)).filter((e) => e.type === 'before');
  const seen = new Map();
  const fullTitle = (title) => {
    const k = seen.get(title) || 0;
    seen.set(title, k + 1);
    const event = events.filter((e) => e.title === title)[k];
    return event && event.subtitle ? `${title} ${event.subtitle}` : title;
  };
  attempt.steps.forEach((s) => { s.title = fullTitle(s.title); });
  const setup = [];
  const out = [];
  attempt.steps.forEach((s, i) => {
    setup[i] = ['hook', 'fixture', 'test.attach'].includes(s.category) || (s.parent !== null && setup[s.parent]);
    if (!setup[i]) out.push({ ...s, index: i });
  });
  return out.map((s, n) => ({ number: n + 1, title: s.title, index: s.index, parent: s.parent,
    start_s: secs(s.start - origin), end_s: secs(s.end - origin), error: s.error || null }));
}

const secs = (ms) => Math.round(ms / 10) / 100;

/// The wall-clock time of the trace's first screencast frame of the first page: where the video
/// starts.
function videoOrigin(trace) {
  // The first page's frames are in the library's trace of its context: `0-trace.trace`, ...
  const text = execFileSync('unzip', ['-p', trace, '*-trace.trace'], { maxBuffer: 64 << 20 }).toString();
  let page = null;
  for (const line of text.split('\n')) {
    if (!line.includes('"screencast-frame"')) continue;
    const frame = JSON.parse(line);
    page = page || frame.pageId;
    if (frame.pageId === page && frame.frameSwapWallTime) return frame.frameSwapWallTime;
  }
  throw new Error(`${trace}: no screencast frame with its wall time`);
}

/// The innermost failed step, the first in start order if several failed.
function failingStep(steps) {
  const withFailedChild = new Set(steps.filter((s) => s.error && s.parent !== null).map((s) => s.parent));
  return steps.find((s) => s.error && !withFailedChild.has(s.index));
}

/// The steps running at `at` seconds, the outermost first.
function runningAt(steps, at) {
  return steps.filter((s) => s.start_s <= at && at <= s.end_s).map((s) => ({ number: s.number, title: s.title }));
}

const stepRef = (s) => ({ number: s.number, title: s.title });

const CAUSES = {
  'flash-error-toast': (a) => `Checking the name failed: an error toast flashed while it was typed, and saving then said "Could not save" instead of "${a.message}".`,
  'missing-extra-element': (a) => `The "${a.second}" button disappeared as soon as the name was typed, so the test could not press it.`,
  overlap: (a) => `A tip panel appeared over the "${a.button}" button when the name was typed, so the click could not reach the button.`,
  'unmentioned-change': (a) => `The header's title changed from "${a.title}" to "${a.renamed}" when the name was typed.`,
  'wrong-text': (a) => `The save showed the wrong message "${a.wrongMessage}" instead of "${a.message}".`,
  'wrong-colour-state': (a) => `The save turned the "${a.badge}" badge red instead of green.`,
  'text-overflow': (a) => `The save replaced the label with a long text that no longer fits its box.`,
  'wrong-page': (a) => `The "${a.next}" link opened the ${a.wrongNext} page instead.`,
};

const DIFFERENCES = {
  timing: (a) => `The save took ${SLOW_SAVE_MS / 1000} s on the first attempt, longer than the ${WAIT_MS / 1000} s the check waits for "${a.message}"; on the retry it took ${SAVE_MS / 1000} s.`,
  console: () => `The first attempt's save handler threw an uncaught TypeError, so the spinner never ended; the retry saved.`,
  network: () => `The first attempt's save request was refused (net::ERR_CONNECTION_REFUSED) and the page said "Could not save"; the retry's request went through.`,
  screen: (a) => `A cookie banner covered the bottom of the page on the first attempt, so the "${a.button}" button could not be clicked; the retry had no banner.`,
};
// The words a screen difference must be named by.
const SCREEN_WORDS = ['cookie', 'banner'];

function copyAttempt(attempt, dir, name) {
  const files = {};
  for (const [kind, ext] of [['video', 'webm'], ['trace', 'trace.zip']]) {
    const from = attempt.files[kind];
    if (!from) throw new Error(`${attempt.title} (retry ${attempt.retry}): no ${kind} was recorded`);
    copyFileSync(from, join(dir, `${name}.${ext}`));
    files[kind] = `${name}.${ext}`;
  }
  // The trace is kept without its screencast pictures and its attachments (a copy of the
  // video): the video is kept beside it, and the frames' events, which set the clock, stay.
  // This keeps a trace at about 15 KB instead of 400.
  execFileSync('zip', ['-q', '-d', join(dir, files.trace), 'screencast/*', 'attachments/*']);
  return files;
}

/// Runs the failing and flaky tests and writes their media and labels into `out`/failures and
/// `out`/flaky; returns the labels.
export async function generate({ out, items, pages, base, viewport, playwrightDir, rng }) {
  for (const item of items) {
    for (const attempt of [0, 1]) pages.set(`/f/${item.id}?attempt=${attempt}`, () => flowPage(item, attempt, rng(item.seed)));
  }
  const { dir, attempts } = await runTests(items, base, viewport, playwrightDir);
  const marks = pages.marks;
  const labels = [];
  for (const sub of ['failures', 'flaky']) {
    rmSync(join(out, sub), { recursive: true, force: true });
    mkdirSync(join(out, sub), { recursive: true });
  }
  try {
    for (const item of items) {
      const mine = attempts.filter((a) => a.title === title(item)).sort((a, b) => a.retry - b.retry);
      labels.push(item.kind === 'failure' ? failureLabel(item, mine, marks, out) : flakyLabel(item, mine, out));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return labels;
}

function failureLabel(item, attempts, marks, out) {
  const [attempt] = attempts;
  if (!attempt || attempt.status === 'passed') throw new Error(`${item.id}: the test did not fail`);
  const files = copyAttempt(attempt, join(out, 'failures'), item.id);
  const origin = videoOrigin(join(out, 'failures', files.trace));
  const steps = numbered(attempt, origin, join(out, 'failures', files.trace));
  const mark = marks.get(`${item.id}/0`);
  if (!mark) throw new Error(`${item.id}: the page never showed its defect`);
  const at = secs(mark.start - origin);
  const failing = failingStep(steps);
  const running = runningAt(steps, at);
  const app = APPS[item.app];
  return {
    id: item.id, kind: 'failure', app: item.app, seed: item.seed, media: files.video, trace: files.trace,
    test: attempt.title, error: attempt.error, classes: [], expectations: [],
    failure: {
      defect: item.defect,
      failing_step: stepRef(failing),
      first_wrong: { at_s: at, step: running[0] ? stepRef(running[0]) : null, running },
      cause: CAUSES[item.defect](app),
    },
    where: { time: { start_s: at, end_s: mark.end ? secs(mark.end - origin) : secs(attempt.steps.at(-1).end - origin) }, region: mark.box },
    duration_s: secs(Math.max(...attempt.steps.map((s) => s.end || s.start)) - origin),
  };
}

function flakyLabel(item, attempts, out) {
  const [failed, passed] = attempts;
  if (!failed || !passed || failed.status === 'passed' || passed.status !== 'passed') {
    throw new Error(`${item.id}: the test did not fail once and then pass (${attempts.map((a) => a.status).join(', ')})`);
  }
  const files = [failed, passed].map((a, i) => copyAttempt(a, join(out, 'flaky'), `${item.id}-attempt${i + 1}`));
  const trace = join(out, 'flaky', files[0].trace);
  const steps = numbered(failed, videoOrigin(trace), trace);
  const app = APPS[item.app];
  return {
    id: item.id, kind: 'flaky', app: item.app, seed: item.seed, test: failed.title, classes: [], expectations: [],
    attempts: [
      { number: 1, status: failed.status, video: files[0].video, trace: files[0].trace, error: failed.error },
      { number: 2, status: passed.status, video: files[1].video, trace: files[1].trace },
    ],
    flaky: {
      parted_at: stepRef(failingStep(steps)),
      difference: DIFFERENCES[item.flaky](app),
      kind: item.flaky,
      ...(item.flaky === 'screen' ? { words: SCREEN_WORDS } : {}),
    },
  };
}
