// Regenerates Vaider's eval set (docs/eval.md): short GUI recordings and screenshot pairs of
// the small apps in apps.mjs, each with at most one injected defect, and a labels JSON per
// item (its classes, the expectations an agent would state with their true verdicts, and
// where the defect is: a time range and a region box). Every choice comes from the seed, so
// the same seed gives the same items and labels (video bytes differ run to run: encoding).
//
// Usage: node eval/generate/generate.mjs --out DIR [--seed N] [--playwright DIR] [--part all|failures]
// `--part failures` makes only the failing runs and flaky pairs (failures.mjs) and keeps the
// recordings and pairs already in DIR.
// Run it through scripts/eval-set.sh, which provides Playwright, Chromium and ffmpeg.

import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { APPS, page } from './apps.mjs';
import * as flows from './failures.mjs';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) =>
  (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []));
const OUT = resolve(args.out || 'eval/set');
const SEED = Number(args.seed || 25);
const PLAYWRIGHT_DIR = resolve(args.playwright || 'tests/playwright-project');
const { chromium } = createRequire(join(PLAYWRIGHT_DIR, 'package.json'))('playwright');
const VIEWPORT = { width: 560, height: 340 };
const PART = args.part || 'all';

export const RECORDING_CLASSES = ['text-overflow', 'overlap', 'wrong-text', 'missing-extra-element',
  'wrong-colour-state', 'layout-shift', 'flash-error-toast', 'endless-spinner', 'wrong-page',
  'unmentioned-change'];
export const PAIR_CLASSES = ['text-overflow', 'overlap', 'wrong-text', 'missing-extra-element',
  'wrong-colour-state', 'layout-shift', 'unmentioned-change', 'wrong-page'];

// mulberry32: a small seeded generator, so items do not depend on Math.random.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle(list, rand) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

// The plan: which app and defect each item gets (null = a control), in a seeded order so a
// class is not a block of neighbouring ids.
function plan(classes, perClass, controls, rand) {
  const apps = Object.keys(APPS);
  const items = [];
  for (const c of classes) for (let i = 0; i < perClass; i++) items.push(c);
  for (let i = 0; i < controls; i++) items.push(null);
  return shuffle(items, rand).map((defect, i) => ({ defect, app: apps[i % apps.length], seed: Math.floor(rand() * 1e9) }));
}

// The expectations an agent would state about a recording, with their true verdicts.
function recordingExpectations(app, defect, rand) {
  const truth = (bad) => (bad.includes(defect) ? 'not_met' : 'met');
  const always = [
    [`After "${app.button}" is clicked, a loading spinner shows and then goes away`, truth(['endless-spinner'])],
    [`The message "${app.message}" appears`, truth(['endless-spinner', 'wrong-text'])],
    ['No error message is shown at any time', truth(['flash-error-toast'])],
    [`The ${app.next} page opens at the end`, truth(['endless-spinner', 'wrong-page'])],
  ];
  const optional = {
    'wrong-colour-state': [`The "${app.badge}" badge turns green`, truth(['wrong-colour-state', 'endless-spinner'])],
    'text-overflow': ['Every text fits inside its box', truth(['text-overflow'])],
    overlap: ['No element covers another', truth(['overlap'])],
    'missing-extra-element': [`The "${app.second}" button stays visible`, truth(['missing-extra-element'])],
    'layout-shift': ['Nothing on the page jumps or moves once it has loaded', truth(['layout-shift'])],
  };
  const keys = shuffle(Object.keys(optional), rand).slice(0, 2);
  if (optional[defect] && !keys.includes(defect)) keys.push(defect);
  return [...always, ...keys.map((k) => optional[k])].map(([text, t]) => ({ text, truth: t }));
}

// The changes the agent meant to make between a pair's screenshots, with whether they show.
function pairExpectations(app, defect, identical) {
  if (identical) return [];
  return [
    { text: `The "${app.button}" button now reads "${app.button} again"`, truth: 'met' },
    { text: `The message "${app.message}" appears below the buttons`, truth: defect === 'wrong-text' ? 'not_met' : 'met' },
    { text: `The "${app.badge}" badge turns green`, truth: defect === 'wrong-colour-state' ? 'not_met' : 'met' },
  ];
}

const PAIR_REGION = {
  'text-overflow': ['#label'], overlap: ['#defect'], 'wrong-text': ['#msg'],
  'missing-extra-element': ['#buttons'], 'wrong-colour-state': ['#badge'],
  'layout-shift': ['#banner', '#main'], 'unmentioned-change': ['#title'], 'wrong-page': ['#heading'],
};

async function regionOf(pageHandle, selectors) {
  return pageHandle.evaluate((sels) => {
    const rects = sels.map((s) => document.querySelector(s)).filter(Boolean).map((e) => e.getBoundingClientRect());
    if (!rects.length) return null;
    const x = Math.min(...rects.map((r) => r.x)), y = Math.min(...rects.map((r) => r.y));
    const right = Math.max(...rects.map((r) => r.right)), bottom = Math.max(...rects.map((r) => r.bottom));
    return { x: Math.round(x), y: Math.round(y), width: Math.round(right - x), height: Math.round(bottom - y) };
  }, selectors);
}

// The pages by path (a page is its HTML, or a function making it), `POST /save` (the apps'
// save) and `POST /mark/<item>/<attempt>` (a failing run's page saying when its defect showed).
function serve(pages) {
  pages.marks = new Map();
  const server = createServer((req, res) => {
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (chunk) => { body += chunk; });
      req.on('end', () => {
        if (req.url.startsWith('/mark/')) pages.marks.set(req.url.slice(6), JSON.parse(body));
        res.writeHead(204);
        res.end();
      });
      return;
    }
    const found = pages.get(req.url);
    const html = typeof found === 'function' ? found() : found;
    res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html || 'not found');
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

async function recordOne(browser, base, pages, item, id, dir) {
  const rand = rng(item.seed);
  pages.set(`/${id}`, page(item.app, item.defect, 'recording', rand));
  const context = await browser.newContext({ viewport: VIEWPORT, recordVideo: { dir, size: VIEWPORT } });
  const tab = await context.newPage();
  const t0 = Date.now();
  await tab.goto(`${base}/${id}`);
  await tab.waitForTimeout(700 + Math.floor(rand() * 300));
  await tab.click('#primary');
  await tab.waitForTimeout(2300);
  const defect = await tab.evaluate(() => window.__defect || null);
  const stop = Date.now();
  const video = tab.video();
  await context.close();
  const file = `${id}.webm`;
  await video.saveAs(join(dir, file));
  await video.delete();
  const secs = (t) => Math.round(((t - t0) / 1000) * 10) / 10;
  return {
    id, kind: 'recording', app: item.app, seed: item.seed, media: file,
    classes: item.defect ? [item.defect] : [],
    expectations: recordingExpectations(APPS[item.app], item.defect, rand),
    where: defect ? { time: { start_s: secs(defect.start), end_s: secs(defect.end || stop) }, region: defect.box } : null,
    duration_s: secs(stop),
  };
}

async function pairOne(browser, base, pages, item, id, dir) {
  const rand = rng(item.seed);
  const identical = item.identical;
  const context = await browser.newContext({ viewport: VIEWPORT });
  const tab = await context.newPage();
  pages.set(`/${id}/before`, page(item.app, item.defect, 'before', rng(item.seed)));
  pages.set(`/${id}/after`, page(item.app, item.defect, identical ? 'before' : 'after', rng(item.seed)));
  await tab.goto(`${base}/${id}/before`);
  await tab.screenshot({ path: join(dir, `${id}-before.png`) });
  await tab.goto(`${base}/${id}/after`);
  await tab.screenshot({ path: join(dir, `${id}-after.png`) });
  const region = item.defect ? await regionOf(tab, PAIR_REGION[item.defect]) : null;
  await context.close();
  rand();
  return {
    id, kind: 'pair', app: item.app, seed: item.seed, before: `${id}-before.png`, after: `${id}-after.png`,
    classes: item.defect ? [item.defect] : [],
    expectations: pairExpectations(APPS[item.app], item.defect, identical),
    where: region ? { region } : null,
  };
}

async function main() {
  const rand = rng(SEED);
  const recordings = plan(RECORDING_CLASSES, 3, 15, rand);
  const pairs = plan(PAIR_CLASSES, 4, 16, rand);
  // A quarter of the pair controls change nothing at all (the diff alone must say so).
  pairs.filter((p) => !p.defect).slice(0, 4).forEach((p) => { p.identical = true; });
  // The failing runs and flaky pairs have a generator of their own, so adding them changed
  // nothing of the items before.
  const flowItems = flows.plan(rng(SEED ^ 0x5eed), shuffle, rng);
  const pages = new Map();
  const server = await serve(pages);
  const base = `http://127.0.0.1:${server.address().port}`;
  const items = [];
  try {
    if (PART === 'all') items.push(...await recordAndShoot(recordings, pairs, base, pages));
    else items.push(...keptItems());
    items.push(...await flows.generate({ out: OUT, items: flowItems, pages, base, viewport: VIEWPORT,
      playwrightDir: PLAYWRIGHT_DIR, rng }));
  } finally {
    server.close();
  }
  for (const item of items) writeFileSync(join(OUT, folder(item), `${item.id}.json`), `${JSON.stringify(item, null, 2)}\n`);
  const manifest = { version: 1, seed: SEED, viewport: VIEWPORT, items: items.map((i) => `${folder(i)}/${i.id}.json`) };
  writeFileSync(join(OUT, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`\n${items.length} items in ${OUT}`);
}

function folder(item) {
  return { recording: 'recordings', pair: 'pairs', failure: 'failures', flaky: 'flaky' }[item.kind];
}

/// The recordings and pairs already in OUT (`--part failures`).
function keptItems() {
  const manifest = join(OUT, 'manifest.json');
  if (!existsSync(manifest)) throw new Error(`--part failures: no ${manifest} to keep the other items of`);
  return JSON.parse(readFileSync(manifest, 'utf8')).items
    .filter((p) => p.startsWith('recordings/') || p.startsWith('pairs/'))
    .map((p) => JSON.parse(readFileSync(join(OUT, p), 'utf8')));
}

async function recordAndShoot(recordings, pairs, base, pages) {
  for (const sub of ['recordings', 'pairs']) rmSync(join(OUT, sub), { recursive: true, force: true });
  mkdirSync(join(OUT, 'recordings'), { recursive: true });
  mkdirSync(join(OUT, 'pairs'), { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--font-render-hinting=none'],
  });
  const items = [];
  try {
    for (const [i, item] of recordings.entries()) {
      const id = `rec-${String(i + 1).padStart(2, '0')}`;
      items.push(await recordOne(browser, base, pages, item, id, join(OUT, 'recordings')));
      process.stdout.write(`${id} `);
    }
    for (const [i, item] of pairs.entries()) {
      const id = `pair-${String(i + 1).padStart(2, '0')}`;
      items.push(await pairOne(browser, base, pages, item, id, join(OUT, 'pairs')));
    }
  } finally {
    await browser.close();
  }
  return items;
}

await main();
