// Shared test setup: a Vaider server per test file, a page that fails the test on any
// uncaught error, and helpers to open the UI the way `vaider ui` does.
import { test as base, expect } from '@playwright/test';
import { VaiderServer } from './lib/vaider.mjs';

export { expect };

export const test = base.extend({
  // Every page fails its test on an uncaught exception or a console error from the UI.
  page: async ({ page }, use, testInfo) => {
    const errors = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const text = msg.text();
      // Failed fetches the test provokes on purpose (401, 404, 503) are logged by Chromium.
      if (/Failed to load resource|the server responded with a status/.test(text)) return;
      errors.push(`console.error: ${text}`);
    });
    await use(page);
    if (errors.length && testInfo.status === testInfo.expectedStatus) {
      throw new Error(`The page reported errors:\n${errors.join('\n')}`);
    }
  },
});

/**
 * Starts a server for the tests of one file (beforeAll) and stops it after them (afterAll).
 * Returns a holder whose `.server` is the running VaiderServer.
 */
export function serverPerFile(options = {}) {
  const holder = { server: null };
  test.beforeAll(async () => {
    holder.server = await new VaiderServer(options).start();
  });
  test.afterEach(async ({}, testInfo) => {
    if (!holder.server || testInfo.status === testInfo.expectedStatus) return;
    await testInfo.attach('vaider-serve.log', { body: holder.server.logTail(200), contentType: 'text/plain' });
    console.log(`---- vaider serve log, last lines (${holder.server.logFile}) ----\n${holder.server.logTail(40)}`);
  });
  test.afterAll(async () => {
    if (holder.server) await holder.server.stop();
  });
  return holder;
}

/** Opens the UI as `vaider ui` does (a one-time login code in the fragment), then goes to `route`. */
export async function openUi(page, server, route = '#/') {
  await page.goto(await server.uiUrl());
  await expect(page.locator('#server-state')).toHaveAttribute('data-state', /running|paused/);
  if (route !== '#/') {
    await page.evaluate((r) => { location.hash = r; }, route);
  }
  await expect(page.locator('#main')).toHaveAttribute('data-view', /\w+/);
}

/** Waits until the history has a row for `id` and returns its locator. */
export function historyRow(page, id) {
  return page.locator(`#history-rows tr[data-id="${id}"]`);
}
