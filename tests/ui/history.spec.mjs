// The history view against the real server: what it lists, live updates, search, filters,
// and the states that tell a person what to do.
import { test, expect, serverPerFile, openUi, historyRow } from './fixtures.mjs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'history' });
let first;

test.beforeAll(async () => {
  const video = await ctx.server.addMedia('login-flow.webm', 'login-flow.webm');
  first = await ctx.server.analyseOk({ videoPath: video, prompt: 'Describe the login test step by step.' });
});

test('lists a finished analysis with its file, tool and status, and takes the code out of the address', async ({ page }) => {
  await openUi(page, ctx.server);
  expect(page.url()).not.toContain('code=');
  // The page keeps a session, never the token, anywhere it can store.
  const stored = await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }) + document.cookie);
  expect(stored).not.toContain(ctx.server.token);
  expect(await page.evaluate(() => sessionStorage.getItem('vaider.session'))).toMatch(/^[0-9a-f]{64}$/);

  const row = historyRow(page, first.interactionId);
  await expect(row).toBeVisible();
  await expect(row.locator('.c-file a')).toHaveText('login-flow.webm');
  await expect(row.locator('.c-file a')).toHaveAttribute('title', /test-results\/login\/login-flow\.webm$/);
  await expect(row.locator('.c-tool')).toHaveText('analyze_video');
  await expect(row.locator('.c-status .badge').first()).toHaveText('ok');
  await expect(row.locator('.c-model')).toContainText('gemini');
  await expect(row.locator('.c-model')).toContainText('gemini-3.5-flash-lite');
  await expect(row.locator('time')).toHaveAttribute('datetime', /\d{4}-\d\d-\d\dT/);
  await expect(row.locator('td.c-num').first()).toHaveText(/^\d+(\.\d)?(ms|s|m)$/);
  await expect(row.locator('td.c-num').nth(1)).toHaveText(/^\$/);
  await expect(page.locator('#history-count')).toHaveText('1 analysis');
  await expect(page.locator('#history-rows tr')).toHaveCount(1);
});

test('a new analysis made while the page is open appears without a reload', async ({ page }) => {
  await openUi(page, ctx.server);
  await expect(historyRow(page, first.interactionId)).toBeVisible();
  await page.evaluate(() => { window.__sameDocument = 'still here'; });

  const video = await ctx.server.addMedia('login-flow.webm', 'checkout.webm', 'checkout');
  const result = await ctx.server.analyseOk({ videoPath: video, prompt: 'What happens at checkout?', noCache: true });

  const row = historyRow(page, result.interactionId);
  await expect(row).toBeVisible();
  await expect(row.locator('.c-file a')).toHaveText('checkout.webm');
  await expect(row.locator('.c-status .badge').first()).toHaveText('ok');
  // Newest first, the count follows, and the page was never reloaded.
  await expect(page.locator('#history-rows tr').first()).toHaveAttribute('data-id', result.interactionId);
  await expect(page.locator('#history-count')).toHaveText('2 analyses');
  expect(await page.evaluate(() => window.__sameDocument)).toBe('still here');
});

test('a refused request shows up as rejected with its error code', async ({ page }) => {
  await openUi(page, ctx.server);
  const res = await ctx.server.analyse({ videoPath: `${ctx.server.projectDir}/test-results/missing.webm` });
  expect(res.status).toBe(400);
  const row = page.locator('#history-rows tr[data-status="rejected"]');
  await expect(row).toHaveCount(1);
  await expect(row.locator('.c-status')).toContainText('rejected');
  await expect(row.locator('.c-status')).toContainText('INVALID_PATH');
});

test('search and filters narrow the list and can be cleared', async ({ page }) => {
  await openUi(page, ctx.server);
  await expect(page.locator('#history-rows tr')).toHaveCount(3);

  await page.fill('#history-search', 'checkout');
  await expect(page.locator('#history-rows tr')).toHaveCount(1);
  await expect(page.locator('#history-rows tr .c-file a')).toHaveText('checkout.webm');
  await expect(page.locator('#history-count')).toHaveText('1 match');
  expect(page.url()).toContain('q=checkout');

  await page.fill('#history-search', 'no-such-thing-anywhere');
  await expect(page.locator('#history-empty')).toContainText('Nothing matches');
  await page.click('#clear-filters');
  await expect(page.locator('#history-rows tr')).toHaveCount(3);

  await expect(page.locator('#filter-status option[value="rejected"]')).toHaveCount(1);
  await page.selectOption('#filter-status', 'rejected');
  await expect(page.locator('#history-rows tr')).toHaveCount(1);
  await page.selectOption('#filter-status', 'ok');
  await expect(page.locator('#history-rows tr')).toHaveCount(2);
  await page.selectOption('#filter-status', '');

  await expect(page.locator('#filter-tool option[value="analyze_video"]')).toHaveCount(1);
  // Project folders come from the facets: the agent's workspace (cwd) the analyses named.
  const projects = await page.locator('#filter-project option').evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
  expect(projects).toContain(ctx.server.projectDir);
  await page.selectOption('#filter-project', ctx.server.projectDir);
  await expect(page.locator('#history-rows tr[data-status="ok"]')).toHaveCount(2);
  await expect(page.locator('#history-rows tr[data-status="ok"] .project').first()).toHaveText(/^shop › test-results\/\w+$/);
  expect(page.url()).toContain('project=');
  // The filters survive a reload: they are in the address.
  await page.reload();
  await expect(page.locator('#filter-project')).toHaveValue(ctx.server.projectDir);
  await expect(page.locator('#history-rows tr[data-status="ok"]')).toHaveCount(2);
});

test('clicking a row opens the detail page', async ({ page }) => {
  await openUi(page, ctx.server);
  await historyRow(page, first.interactionId).locator('.c-model').click();
  await expect(page).toHaveURL(new RegExp(`#/i/${first.interactionId}$`));
  await expect(page.locator('.detail-title')).toHaveText('login-flow.webm');
  await page.click('a.back');
  await expect(page.locator('#history-rows tr')).toHaveCount(3);
});

test('without the token the page says how to open it', async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${ctx.server.baseUrl}/`);
  await expect(page.locator('#unauthorized')).toContainText('vaider ui');
  await expect(page.locator('#unauthorized')).toContainText('tray menu');
  await expect(page.locator('#history-rows')).toHaveCount(0);
  await context.close();
});

test('the assets are served without the token and the page loads nothing from elsewhere', async ({ page }) => {
  for (const asset of ['/', '/ui/app.js', '/ui/style.css', '/ui/icon.svg']) {
    const res = await ctx.server.fetch(asset, { token: null });
    expect(res.status, asset).toBe(200);
  }
  const foreign = [];
  page.on('request', (req) => {
    if (!req.url().startsWith(ctx.server.baseUrl) && !req.url().startsWith('data:')) foreign.push(req.url());
  });
  await openUi(page, ctx.server);
  await expect(page.locator('#history-rows tr').first()).toBeVisible();
  await openUi(page, ctx.server, '#/settings');
  await expect(page.locator('#settings-form')).toBeVisible();
  expect(foreign).toEqual([]);
});
