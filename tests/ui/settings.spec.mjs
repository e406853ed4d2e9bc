// Settings against the real server: saved values land in config.toml and survive a restart
// of the server process; environment overrides are shown; pause and resume; and the states a
// fresh or unreachable server shows.
import fs from 'node:fs/promises';
import { test, expect, serverPerFile, openUi } from './fixtures.mjs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'settings' });

test('a fresh server: the empty history says what to do', async ({ page }) => {
  await openUi(page, ctx.server);
  await expect(page.locator('#no-analyses')).toContainText('No analyses yet');
  await expect(page.locator('#no-analyses')).toContainText('analyze_video');
  await expect(page.locator('#no-analyses')).toContainText('vaider analyse <file>');
  await expect(page.locator('#history-count')).toHaveText('0 analyses');
  // GEMINI_API_KEY is set for this server: no "no key" banner.
  await expect(page.locator('#banner-no-key')).toHaveCount(0);
});

test('settings show the current values and what the environment sets', async ({ page }) => {
  await openUi(page, ctx.server, '#/settings');
  await expect(page.locator('#setting-provider')).toHaveValue('gemini');
  await expect(page.locator('#setting-model')).toHaveValue('gemini-3.5-flash-lite');
  await expect(page.locator('#setting-port')).toHaveValue(String(ctx.server.port));
  await expect(page.locator('#setting-timeoutSec')).toHaveValue('30');
  await expect(page.locator('#setting-maxAttempts')).toHaveValue('3');
  await expect(page.locator('#setting-cache')).toBeChecked();
  await expect(page.locator('.field[data-key="port"] .env-note')).toContainText('Set by VAIDER_PORT in the environment');
  await expect(page.locator('.field[data-key="dataDir"] .env-note')).toContainText('VAIDER_DATA_DIR');
  await expect(page.locator('.field[data-key="model"] .env-note')).toHaveCount(0);
  await expect(page.locator('#config-path')).toHaveText(ctx.server.configFile);
  const options = await page.locator('#setting-provider option').evaluateAll((os) => os.map((o) => o.value));
  expect(options).toEqual(expect.arrayContaining(['gemini', 'openai', 'anthropic']));
  // The desktop-only part is hidden in a browser; pause is always there.
  await expect(page.locator('#desktop-section')).toBeHidden();
  await expect(page.locator('#pause-server')).toBeVisible();
});

test('the model field offers the provider\'s models and warns about a retiring one', async ({ page }) => {
  await openUi(page, ctx.server, '#/settings');
  const options = page.locator('#model-options option');
  await expect(options).toHaveCount(5);
  const values = await options.evaluateAll((os) => os.map((o) => o.value));
  expect(values).toEqual(['gemini-3.5-flash', 'gemini-3.5-flash-lite', 'gemini-3.8-flash', 'gemini-3.1-pro-preview', 'gemini-2.5-flash-lite']);
  await expect(page.locator('#setting-model-note')).toBeHidden();
  await page.fill('#setting-model', 'gemini-2.5-flash');
  await expect(page.locator('#setting-model-note')).toContainText('2026-12-01');
  await expect(page.locator('#setting-model-note')).toContainText('gemini-3.5-flash-lite');
  await page.fill('#setting-model', 'gemini-3.8-flash');
  await expect(page.locator('#setting-model-note')).toBeHidden();
});

test('saved settings are written to config.toml and survive a restart of the server', async ({ page }) => {
  await openUi(page, ctx.server, '#/settings');
  await page.fill('#setting-model', 'gemini-3.5-flash');
  await page.fill('#setting-timeoutSec', '45');
  await page.fill('#setting-maxAttempts', '5');
  await page.uncheck('#setting-cache');
  await page.selectOption('#setting-videoSampling', 'full');
  await page.click('#save-settings');
  await expect(page.locator('#saved')).toHaveText('Saved.');

  const toml = await fs.readFile(ctx.server.configFile, 'utf8');
  expect(toml).toMatch(/^model = "gemini-3\.5-flash"$/m);
  expect(toml).toMatch(/^timeout_sec = 45$/m);
  expect(toml).toMatch(/^max_attempts = 5$/m);
  expect(toml).toMatch(/^cache = false$/m);
  expect(toml).toMatch(/^video_sampling = "full"$/m);
  // Environment values are not copied into the file.
  expect(toml).not.toContain(ctx.server.dataDir);

  await ctx.server.restart();
  // A restart ends every UI session (they live in memory): the page is opened again, as
  // `vaider ui` or the tray does, with a fresh code.
  await openUi(page, ctx.server, '#/settings');
  await expect(page.locator('#setting-model')).toHaveValue('gemini-3.5-flash');
  await expect(page.locator('#setting-timeoutSec')).toHaveValue('45');
  await expect(page.locator('#setting-maxAttempts')).toHaveValue('5');
  await expect(page.locator('#setting-cache')).not.toBeChecked();
  await expect(page.locator('#setting-videoSampling')).toHaveValue('full');
  const api = await ctx.server.json('/api/settings');
  expect(api.body.values).toMatchObject({ model: 'gemini-3.5-flash', timeoutSec: 45, maxAttempts: 5, cache: false, videoSampling: 'full' });
});

test('a port set by VAIDER_PORT: saving another keeps it in the file and the note says the environment wins', async ({ page }) => {
  await openUi(page, ctx.server, '#/settings');
  const other = ctx.server.port === 65000 ? 65001 : 65000;
  await page.fill('#setting-port', String(other));
  await page.click('#save-settings');
  await expect(page.locator('#saved')).toBeVisible();
  expect(await fs.readFile(ctx.server.configFile, 'utf8')).toMatch(new RegExp(`^port = ${other}$`, 'm'));
  // The value in force is still the environment's, and the note says why.
  await expect(page.locator('#setting-port')).toHaveValue(String(ctx.server.port));
  await expect(page.locator('.field[data-key="port"] .env-note')).toContainText('VAIDER_PORT');
});

test('a wrong value is refused with a message naming the field', async ({ page }) => {
  await openUi(page, ctx.server, '#/settings');
  await page.fill('#setting-maxAttempts', '0');
  await page.click('#save-settings');
  await expect(page.locator('#setting-maxAttempts-error')).toBeVisible();
  await expect(page.locator('#saved')).toHaveCount(0);
  // And one that only the server can judge.
  await page.fill('#setting-maxAttempts', '5');
  await page.fill('#setting-dataDir', 'relative/folder');
  await page.click('#save-settings');
  await expect(page.locator('#settings-error')).toContainText('dataDir');
  expect(await fs.readFile(ctx.server.configFile, 'utf8')).not.toContain('relative/folder');
});

test('pause and resume: the banner, the status dot and the doors follow', async ({ page }) => {
  const video = await ctx.server.addMedia('login-flow.webm');
  await openUi(page, ctx.server, '#/settings');
  await page.click('#pause-server');
  await expect(page.locator('#banner-paused')).toBeVisible();
  await expect(page.locator('#server-state')).toHaveAttribute('data-state', 'paused');
  const refused = await ctx.server.analyse({ videoPath: video });
  expect(refused.status).toBe(503);
  expect(refused.body.error.code).toBe('PAUSED');

  await page.click('#banner-resume');
  await expect(page.locator('#banner-paused')).toHaveCount(0);
  await expect(page.locator('#server-state')).toHaveAttribute('data-state', 'running');
  await ctx.server.analyseOk({ videoPath: video, noCache: true });
});

test('a paused server shows the banner to a page opened later too', async ({ page }) => {
  const res = await ctx.server.json('/api/server/pause', { method: 'POST' });
  expect(res.body).toEqual({ paused: true });
  await openUi(page, ctx.server);
  await expect(page.locator('#banner-paused')).toBeVisible();
  await page.click('#banner-resume');
  await expect(page.locator('#banner-paused')).toHaveCount(0);
  expect((await ctx.server.json('/api/settings')).body.paused).toBe(false);
});

test('when the server goes away the page says so; after the restart it says to sign in again, and then works', async ({ page }) => {
  await openUi(page, ctx.server);
  await expect(page.locator('#history-rows tr').first()).toBeVisible();
  await ctx.server.stopServer();
  await expect(page.locator('#banner-offline')).toContainText('Cannot reach the Vaider server', { timeout: 30_000 });
  await expect(page.locator('#server-state')).toHaveAttribute('data-state', 'offline');
  await ctx.server.spawnServer();
  // UI sessions live in the server's memory: the restarted server knows none, and the page
  // notices by itself (its events reconnect) and says how to open it again.
  await expect(page.locator('#unauthorized')).toContainText('vaider ui', { timeout: 30_000 });
  await expect(page.locator('#banner-offline')).toHaveCount(0);
  await openUi(page, ctx.server);
  await expect(page.locator('#server-state')).toHaveAttribute('data-state', 'running');
  // Events flow again: a new analysis appears without a reload.
  const video = await ctx.server.addMedia('login-flow.webm', 'after-restart.webm', 'after');
  const result = await ctx.server.analyseOk({ videoPath: video, noCache: true });
  await expect(page.locator(`#history-rows tr[data-id="${result.interactionId}"]`)).toBeVisible();
});

test.describe('a server whose port is in config.toml', () => {
  const own = serverPerFile({ name: 'settings-port', portInConfig: true });

  test('a new port says a restart is needed, and the restarted server listens there', async ({ page }) => {
    const { freePort } = await import('./lib/vaider.mjs');
    await openUi(page, own.server, '#/settings');
    await expect(page.locator('.field[data-key="port"] .env-note')).toHaveCount(0);
    const next = await freePort();
    await page.fill('#setting-port', String(next));
    await page.click('#save-settings');
    await expect(page.locator('#saved')).toBeVisible();
    await expect(page.locator('#restart-needed')).toContainText('port');
    expect(await fs.readFile(own.server.configFile, 'utf8')).toMatch(new RegExp(`^port = ${next}$`, 'm'));

    own.server.port = next;
    await own.server.restart();
    await openUi(page, own.server, '#/settings');
    await expect(page.locator('#setting-port')).toHaveValue(String(next));
  });
});
