// API keys through the UI with a real Secret Service (gnome-keyring on the D-Bus session that
// scripts/ui-test.sh starts): the key reaches the keychain, and never the page.
import { test, expect, serverPerFile, openUi } from './fixtures.mjs';
import { keychainLookup, keychainClear, secretServiceWorks } from './lib/vaider.mjs';

test.describe.configure({ mode: 'serial' });
// No GEMINI_API_KEY in this server's environment: the keychain is the only place for a key.
const ctx = serverPerFile({ name: 'keys', geminiKeyInEnv: false });
const KEY = `AIzaUiTest-${Math.random().toString(36).slice(2)}-${Date.now()}`;

test.beforeAll(async () => {
  if (!(await secretServiceWorks())) {
    throw new Error('No Secret Service on this D-Bus session: run these tests with `bash scripts/ui-test.sh`, '
      + 'which starts gnome-keyring inside dbus-run-session.');
  }
  await keychainClear('gemini');
});
test.afterAll(async () => { await keychainClear('gemini'); });

async function assertKeyNowhere(page) {
  const html = await page.evaluate(() => document.documentElement.outerHTML);
  expect(html.includes(KEY), 'the key is in the page HTML').toBe(false);
  const values = await page.evaluate(() => [...document.querySelectorAll('input, textarea, select')].map((e) => e.value));
  for (const v of values) expect(v.includes(KEY), 'the key is in an input value').toBe(false);
  const storage = await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }));
  expect(storage.includes(KEY), 'the key is in web storage').toBe(false);
}

test('without a key the banner points to Settings', async ({ page }) => {
  await openUi(page, ctx.server);
  await expect(page.locator('#banner-no-key')).toContainText('No key set');
  await page.click('#banner-no-key a');
  await expect(page).toHaveURL(/#\/settings$/);
  await expect(page.locator('#key-status-gemini')).toHaveText('Not set');
  await expect(page.locator('#key-set-gemini')).toHaveText('Set');
});

test('a key set in the UI goes to the keychain and never into the page', async ({ page }) => {
  const bodies = [];
  page.on('response', async (res) => {
    if (res.url().includes('/api/')) bodies.push(await res.text().catch(() => ''));
  });
  await openUi(page, ctx.server, '#/settings');
  await expect(page.locator('#keychain-unavailable')).toHaveCount(0);
  await page.fill('#key-input-gemini', KEY);
  await page.click('#key-set-gemini');
  await expect(page.locator('#key-status-gemini')).toHaveText('Key set (keychain)');
  await expect(page.locator('#key-note-gemini')).toContainText('Saved');
  await expect(page.locator('#key-input-gemini')).toHaveValue('');
  await expect(page.locator('#key-set-gemini')).toHaveText('Replace');
  await expect(page.locator('#banner-no-key')).toHaveCount(0);
  await assertKeyNowhere(page);
  for (const body of bodies) expect(body.includes(KEY), 'an API answer carries the key').toBe(false);

  expect(await keychainLookup('gemini')).toBe(KEY);

  // Still not there after a reload, and no route gives it back.
  await page.reload();
  await expect(page.locator('#key-status-gemini')).toHaveText('Key set (keychain)');
  await assertKeyNowhere(page);
  const settings = await ctx.server.fetch('/api/settings');
  expect((await settings.text()).includes(KEY)).toBe(false);
});

test('clearing the key removes it from the keychain', async ({ page }) => {
  await openUi(page, ctx.server, '#/settings');
  await expect(page.locator('#key-status-gemini')).toHaveText('Key set (keychain)');
  await page.click('#key-clear-gemini');
  await expect(page.locator('#key-status-gemini')).toHaveText('Not set');
  await expect(page.locator('#banner-no-key')).toBeVisible();
  expect(await keychainLookup('gemini')).toBeNull();
});

test('a key for another provider is kept under its own name', async ({ page }) => {
  await openUi(page, ctx.server, '#/settings');
  await page.fill('#key-input-openai', `${KEY}-openai`);
  await page.click('#key-set-openai');
  await expect(page.locator('#key-status-openai')).toHaveText('Key set (keychain)');
  expect(await keychainLookup('openai')).toBe(`${KEY}-openai`);
  expect(await keychainLookup('gemini')).toBeNull();
  await page.click('#key-clear-openai');
  await expect(page.locator('#key-status-openai')).toHaveText('Not set');
  expect(await keychainLookup('openai')).toBeNull();
});
