// A server with no D-Bus session bus, so no Secret Service: Settings says so and explains the
// environment fallback; setting a key fails with that message; nothing crashes.
import { test, expect, serverPerFile, openUi } from './fixtures.mjs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'nokeychain', keychain: false, geminiKeyInEnv: false });

test('Settings says no keychain is available and how to give a key instead', async ({ page }) => {
  const api = await ctx.server.json('/api/settings');
  expect(api.status).toBe(200);
  expect(api.body.keychain.available).toBe(false);
  await openUi(page, ctx.server, '#/settings');
  const note = page.locator('#keychain-unavailable');
  await expect(note).toBeVisible();
  await expect(note).toContainText('GEMINI_API_KEY');
  await expect(note).toContainText('.env');
  await expect(note).toContainText(api.body.keychain.message);
  await expect(page.locator('#key-status-gemini')).toHaveText('Not set');
});

test('setting a key fails with that message and the server keeps running', async ({ page }) => {
  await openUi(page, ctx.server, '#/settings');
  await page.fill('#key-input-gemini', 'AIza-no-keychain-test-key');
  await page.click('#key-set-gemini');
  const note = page.locator('#key-note-gemini');
  await expect(note).toHaveClass(/error-text/);
  await expect(note).toContainText('GEMINI_API_KEY');
  await expect(page.locator('#key-input-gemini')).toHaveValue('');
  await expect(page.locator('#key-status-gemini')).toHaveText('Not set');
  const html = await page.evaluate(() => document.documentElement.outerHTML);
  expect(html).not.toContain('AIza-no-keychain-test-key');

  const direct = await ctx.server.json('/api/keys/gemini', {
    method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ key: 'AIza-direct' }),
  });
  expect(direct.status).toBe(503);
  expect(direct.body.error.code).toBe('KEYCHAIN_UNAVAILABLE');
  expect(JSON.stringify(direct.body)).not.toContain('AIza-direct');

  // Still serving: health, the history, and the page.
  expect((await ctx.server.fetch('/v1/health', { token: null })).status).toBe(200);
  await page.click('nav a[data-nav="history"]');
  await expect(page.locator('#no-analyses')).toBeVisible();
  await expect(page.locator('#banner-no-key')).toBeVisible();
});

test('an analysis without any key is refused with NO_API_KEY and the detail says what to do', async ({ page }) => {
  const video = await ctx.server.addMedia('login-flow.webm');
  const res = await ctx.server.analyse({ videoPath: video });
  expect(res.status).toBe(503);
  expect(res.body.error.code).toBe('NO_API_KEY');
  const list = await ctx.server.json('/api/history');
  const row = list.body.items[0];
  expect(row.errorCode).toBe('NO_API_KEY');
  await openUi(page, ctx.server, `#/i/${row.id}`);
  await expect(page.locator('#error-code')).toHaveText('NO_API_KEY');
  await expect(page.locator('#error-box a[href="#/settings"]')).toBeVisible();
});
