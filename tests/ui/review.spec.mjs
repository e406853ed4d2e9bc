// The review page against the real server: two captures of a tiny local page, made with the
// real `vaider capture --no-model` (one changed from its approved baseline, one new), listed
// newest first with the comparison views; approved one by one, undone, approved all, by mouse
// and by keys. Only this signed-in page decides: the token alone is refused.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { test, expect, serverPerFile, openUi } from './fixtures.mjs';
import { VAIDER_BIN } from './lib/vaider.mjs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'review' });

let colour = 'rgb(40, 90, 200)';
let app;
let base;
let project;
// Asynchronous, so that this process's own page server answers the capture.
const vaider = async (...args) => (await promisify(execFile)(VAIDER_BIN, args,
  { cwd: project, env: ctx.server.env() })).stdout;
const capture = (name, route) => vaider('capture', name, '--url', `${base}${route}`, '--target', 'web', '--viewport', '320x200', '--no-model');
const pending = async () => JSON.parse(await vaider('review', 'list', '--json'));
const baseline = (name) => path.join(project, '.vaider', 'baselines', `${name}@320x200.png`);

test.beforeAll(async () => {
  app = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><html><body style="margin:0;background:#fff">
      <h1 style="margin:20px;color:${colour};font:bold 28px sans-serif">${req.url === '/cart' ? 'Cart' : 'Home'}</h1>
      <div style="margin:20px;width:120px;height:40px;background:${colour}"></div></body></html>`);
  });
  await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${app.address().port}`;
  project = ctx.server.projectDir;
  fs.mkdirSync(project, { recursive: true });
  // home has an approved baseline and then changes colour; cart is new.
  await capture('home', '/');
  await vaider('review', 'approve', (await pending())[0].id, '--yes', '--reason', 'first look');
  colour = 'rgb(200, 40, 40)';
  await capture('home', '/');
  await capture('cart', '/cart');
});
test.afterAll(() => app && app.close());

test('the pending changes are listed newest first with their pictures and verdicts', async ({ page }) => {
  await openUi(page, ctx.server, `#/review?project=${encodeURIComponent(project)}`);
  const cards = page.locator('.review-change');
  await expect(cards).toHaveCount(2);
  await expect(cards.nth(0).locator('h2')).toHaveText('cart@320x200');
  await expect(cards.nth(0).locator('.review-status')).toHaveText('new');
  await expect(cards.nth(1).locator('h2')).toHaveText('home@320x200');
  await expect(cards.nth(1).locator('.review-status')).toHaveText('changed');
  // j moves to the changed one, which opens the comparison views, its pictures served.
  await page.keyboard.press('j');
  await expect(cards.nth(1)).toHaveClass(/current/);
  const before = cards.nth(1).locator('img.cmp-before');
  await expect(before).toBeVisible();
  expect(await before.evaluate(async (img) => { await img.decode(); return img.naturalWidth; })).toBe(320);
  await cards.nth(1).locator('#compare-diff').click();
  expect(await cards.nth(1).locator('img.cmp-diff').evaluate(async (img) => { await img.decode(); return img.naturalWidth; })).toBe(320);
  await page.keyboard.press('k');
  await expect(cards.nth(0)).toHaveClass(/current/);
  await expect(page.locator('#review-log')).toContainText('approved home@320x200');
});

test('the token alone decides nothing', async () => {
  const res = await ctx.server.fetch('/api/review/approve', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ project, id: (await pending())[0].id }),
  });
  expect(res.status).toBe(403);
  expect((await res.json()).error.code).toBe('PERSON_REQUIRED');
  expect(await pending()).toHaveLength(2);
});

test('approve one with a reason, undo it, approve all, undo, and approve by key', async ({ page }) => {
  await openUi(page, ctx.server, `#/review?project=${encodeURIComponent(project)}`);
  const cards = page.locator('.review-change');
  await expect(cards).toHaveCount(2);
  const homeChange = (await pending()).find((c) => c.name === 'home');
  const home = page.locator(`#change-${homeChange.id}`);
  await page.locator('#review-reason').fill('red is the new brand colour');
  await home.locator('.review-approve').click();
  await expect(cards).toHaveCount(1);
  await expect(page.locator('#review-log li').first()).toContainText('approved home@320x200');
  await expect(page.locator('#review-log li').first()).toContainText('in this page');
  await expect(page.locator('#review-log li').first()).toContainText('red is the new brand colour');
  // The new picture is the baseline now.
  expect(fs.readFileSync(baseline('home')).equals(fs.readFileSync(path.join(homeChange.actual)))).toBe(true);

  await page.locator('#review-undo').click();
  await expect(cards).toHaveCount(2);

  await page.locator('#review-approve-all').click();
  await expect(page.locator('#review-none')).toBeVisible();
  expect(fs.existsSync(baseline('cart'))).toBe(true);
  expect(await pending()).toHaveLength(0);

  // Undo reverts the last decision only (all were approved newest first, so home last): home
  // is pending again and its previous baseline is back.
  const approvedHome = fs.readFileSync(baseline('home'));
  await page.locator('#review-undo').click();
  await expect(cards).toHaveCount(1);
  await expect(cards.first().locator('h2')).toHaveText('home@320x200');
  expect(fs.readFileSync(baseline('home')).equals(approvedHome)).toBe(false);
  expect(fs.existsSync(baseline('cart'))).toBe(true);

  // The keys: a approves the current change.
  await page.locator('h1').click();
  await page.keyboard.press('a');
  await expect(page.locator('#review-none')).toBeVisible();
  expect(fs.readFileSync(baseline('home')).equals(approvedHome)).toBe(true);
});

test('a selection is approved or rejected together', async ({ page }) => {
  colour = 'rgb(20, 160, 60)';
  await capture('home', '/');
  await capture('cart', '/cart');
  await openUi(page, ctx.server, `#/review?project=${encodeURIComponent(project)}`);
  const cards = page.locator('.review-change');
  await expect(cards).toHaveCount(2);
  await expect(page.locator('#review-reject-selected')).toBeDisabled();
  await page.locator('#review-select-all').check();
  await page.locator('#review-reject-selected').click();
  await expect(page.locator('#review-none')).toBeVisible();
  await expect(page.locator('#review-log li').first()).toContainText('rejected');
});
