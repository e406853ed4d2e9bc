// A call the server never finished: `vaider serve` is killed (SIGKILL) while the model is
// still answering; after the restart the history shows the call as interrupted, and its
// detail says the server stopped during it, instead of a row that stays "running" forever.
import { test, expect, serverPerFile, openUi, historyRow } from './fixtures.mjs';

// The fake Gemini never answers within the test: the call is still waiting when it is killed.
const ctx = serverPerFile({ name: 'interrupted', fakeArgs: ['--generate-delay-ms', '600000'] });

test('a call cut off by a crash shows as interrupted after the restart', async ({ page }) => {
  const server = ctx.server;
  const video = await server.addMedia('login-flow.webm', 'crash.webm', 'crash');
  const pending = server.analyse({ videoPath: video, timeoutSec: 600 }).catch(() => null);
  let id = null;
  await expect.poll(async () => {
    const { body } = await server.json('/api/history?limit=1');
    const row = body && body.items && body.items[0];
    id = row ? row.id : null;
    return row ? row.status : null;
  }, { timeout: 30_000 }).toBe('running');

  await server.kill();
  await pending;
  await server.restart();

  await openUi(page, server);
  const row = historyRow(page, id);
  await expect(row.locator('.c-status .badge').first()).toHaveText('interrupted');
  await openUi(page, server, `#/i/${id}`);
  await expect(page.locator('#error-box')).toContainText('The analysis was interrupted.');
  await expect(page.locator('#error-box')).toContainText('Vaider stopped while this call was running');
});
