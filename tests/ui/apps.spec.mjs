// Vaider's chat views (MCP Apps) in a real MCP Apps host: a page running the TypeScript MCP
// client and the ext-apps SDK's AppBridge (lib/apps-host), which renders each view from a real
// tool result (the real `vaider serve`, the fake Gemini) inside a sandbox proxy on another
// origin. The description's times seek the video, nothing the view gets holds the token, the
// approve click changes the baseline while the model's own call is refused, and with loopback
// blocked (as Chromium blocks web pages from reaching it) the media come as data.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { test, expect, serverPerFile } from './fixtures.mjs';
import { VAIDER_BIN } from './lib/vaider.mjs';
import { startAppsHost } from './lib/apps-host/server.mjs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'apps' });
let host;
let video;
let app;
let project;

const vaider = async (...args) => (await promisify(execFile)(VAIDER_BIN, args,
  { cwd: project, env: ctx.server.env() })).stdout;
const baseline = (name) => path.join(project, '.vaider', 'baselines', `${name}@320x200.png`);

test.beforeAll(async () => {
  host = await startAppsHost();
  video = await ctx.server.addMedia('login-flow.webm', 'login-flow.webm', 'apps');
  project = ctx.server.projectDir;
  // A tiny page to capture: its first capture is a pending `new` change.
  app = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><html><body style="margin:0;background:#fff"><h1 style="margin:20px;color:rgb(40,90,200)">Home</h1></body></html>');
  });
  await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve));
  await vaider('capture', 'home', '--url', `http://127.0.0.1:${app.address().port}/`, '--target', 'web', '--viewport', '320x200', '--no-model');
});
test.afterAll(async () => { if (host) await host.stop(); if (app) app.close(); });

/** Opens the host page and connects its MCP client to Vaider. */
async function openHost(page, { views = true } = {}) {
  await page.goto(host.hostUrl);
  await page.waitForFunction(() => window.hostReady === true);
  return page.evaluate(([url, token, v]) => window.host.connect(url, token, { views: v }),
    [`${ctx.server.baseUrl}/mcp`, ctx.server.token, views]);
}

const view = (page) => page.frameLocator('#view').frameLocator('#inner');

async function show(page, tool, args) {
  return page.evaluate(([t, a, s]) => window.host.show(t, a, s), [tool, args, host.sandboxUrl]);
}

/** Every request the page made to Vaider's /api/ (the view's media) with its headers. */
function mediaRequests(page) {
  const seen = [];
  page.on('request', (r) => { if (r.url().startsWith(`${ctx.server.baseUrl}/api/`)) seen.push({ url: r.url(), headers: r.headers() }); });
  return seen;
}

/** The token appears nowhere the view can read: its page, what it was sent, its requests. */
async function expectNoToken(page, requests) {
  const token = ctx.server.token;
  const html = await view(page).locator('html').evaluate((el) => el.outerHTML);
  expect(html).not.toContain(token);
  const sent = await page.evaluate(() => window.host.toView());
  expect(sent.length).toBeGreaterThan(100);
  expect(sent).not.toContain(token);
  for (const r of requests) {
    expect(r.url).not.toContain(token);
    expect(r.headers.authorization, r.url).toBeUndefined();
  }
}

async function expectTimesSeek(page) {
  const v = view(page).locator('#video');
  await expect.poll(() => v.evaluate((el) => el.readyState), { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
  expect(await v.evaluate((el) => el.duration)).toBeGreaterThan(5);
  const times = await view(page).locator('#description button.time').evaluateAll((bs) => bs.map((b) => Number(b.dataset.t)));
  const later = Math.max(...times);
  expect(later, `a time after 0 s in ${JSON.stringify(times)}`).toBeGreaterThan(0);
  await view(page).locator(`#description button.time[data-t="${later}"]`).first().click();
  await expect.poll(() => v.evaluate((el) => el.currentTime), { timeout: 5000 }).toBeGreaterThanOrEqual(later - 0.05);
  await view(page).locator('#description button.time[data-t="0"]').first().click();
  await expect.poll(() => v.evaluate((el) => el.currentTime), { timeout: 5000 }).toBeLessThan(0.5);
}

test('the recording view: the video beside its description, whose times seek it; no token in the view', async ({ page }) => {
  const requests = mediaRequests(page);
  await openHost(page);
  // The fake Gemini describes the clip in timed steps (00:00, 00:01, 00:03).
  const result = await show(page, 'analyze_video', { video_source: video });
  expect(result.isError).toBeFalsy();
  await expect(view(page).locator('#description')).toContainText('The login page is shown');
  await expect(view(page).locator('body')).toHaveAttribute('data-media', 'url');
  await expect(view(page).locator('#media-note')).toContainText('Media from Vaider at 127.0.0.1');
  await expectTimesSeek(page);
  // With expectations: each with the model's verdict and its evidence.
  await show(page, 'analyze_video', { video_source: video, expectations: ['the login form is shown'] });
  await expect(view(page).locator('.expectation')).toHaveCount(1);
  await expect(view(page).locator('.expectation .badge')).toHaveText('met');
  await expect(view(page).locator('.expectation')).toContainText('the login form is shown');
  expect(requests.length).toBeGreaterThan(0);
  await expectNoToken(page, requests);
});

test('the model is not offered the views\' tools, its own approval is refused, the view\'s click approves', async ({ page }) => {
  const all = await openHost(page);
  expect(all).toEqual(expect.arrayContaining(['vaider_view_decide', 'vaider_view_media']));
  const forModel = await page.evaluate(() => window.host.modelTools());
  expect(forModel).toContain('review_approve');
  expect(forModel).not.toContain('vaider_view_decide');
  expect(forModel).not.toContain('vaider_view_media');

  const pending = JSON.parse(await vaider('review', 'list', '--json'));
  expect(pending).toHaveLength(1);
  const id = pending[0].id;
  // The model proposes through its own tools: refused (this host cannot ask its user), and a
  // call of the view's tool with a grant it made up is refused too.
  const proposed = await page.evaluate(([i, p]) => window.host.callAsModel('review_approve', { id: i, cwd: p }), [id, project]);
  expect(proposed.isError).toBe(true);
  const forged = await page.evaluate((i) => window.host.callAsModel('vaider_view_decide', { id: i, decision: 'approve', grant: 'e30.00' }), id);
  expect(forged.isError).toBe(true);
  expect(JSON.stringify(forged.content)).toContain('Nothing changed');
  expect(fs.existsSync(baseline('home'))).toBe(false);

  const requests = mediaRequests(page);
  await show(page, 'review_pending', { cwd: project });
  const card = view(page).locator(`section.change[data-id="${id}"]`);
  await expect(card).toBeVisible();
  const shot = card.locator('img[data-which="new"]');
  await expect(shot).toHaveAttribute('data-source', 'url');
  expect(await shot.evaluate(async (img) => { await img.decode(); return img.naturalWidth; })).toBe(320);
  await card.locator('button[data-decision="approve"]').click();
  await expect(card).toHaveAttribute('data-outcome', 'approved');
  await expect(card.locator('.outcome')).toContainText('approved');
  expect(fs.existsSync(baseline('home'))).toBe(true);
  const calls = await page.evaluate(() => window.host.viewCalls());
  expect(calls.map((c) => c.name)).toContain('vaider_view_decide');
  expect(JSON.parse(await vaider('review', 'list', '--json'))).toHaveLength(0);
  const log = fs.readFileSync(path.join(project, '.vaider', 'baselines', 'decisions.jsonl'), 'utf8');
  expect(log).toContain('"kind":"clickedInChatView"');
  await expectNoToken(page, requests);
});

test('with loopback blocked for the view, the same views show their media from data', async ({ page }) => {
  // A host served from the web: Chromium keeps its pages from loopback. Here every request
  // to Vaider's media fails as such a request does.
  await page.route(`${ctx.server.baseUrl}/api/**`, (route) => route.abort('blockedbyclient'));
  await openHost(page);
  await show(page, 'analyze_video', { video_source: video });
  await expect(view(page).locator('body')).toHaveAttribute('data-media', 'data');
  await expect(view(page).locator('#media-note')).toContainText('cannot reach Vaider on loopback');
  await expect(view(page).locator('#video')).toHaveAttribute('data-source', 'data');
  await expectTimesSeek(page);
  const calls = await page.evaluate(() => window.host.viewCalls());
  expect(calls.map((c) => c.name)).toContain('vaider_view_media');
});

test('a host without the extension gets no view and no view tools', async ({ page }) => {
  const tools = await openHost(page, { views: false });
  expect(tools).not.toContain('vaider_view_decide');
  expect(tools).not.toContain('vaider_view_media');
  const error = await page.evaluate(([s]) => window.host.show('analyze_video', {}, s).then(() => null, (e) => e.message), [host.sandboxUrl]);
  expect(error).toContain('has no view');
});
