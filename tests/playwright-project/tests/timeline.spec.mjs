// Paints the page at known moments in two steps, then fails in the second: the timeline's
// tests (crates/vaider-validate/tests/timeline.rs) place the steps on the video's clock and
// check them against the colours the video shows. The colours fill the page below the button.
import { test, expect } from '@playwright/test';

// TIMELINE_VIDEO=off: a machine without Playwright's ffmpeg, where only the trace records.
test.use({ video: process.env.TIMELINE_VIDEO === 'off' ? 'off' : 'on', trace: 'on' });

const paint = (page, colour) =>
  page.evaluate((c) => { document.body.style.background = c; }, colour);

test('paints and fails', async ({ page }) => {
  await test.step('paint red', async () => {
    await page.setContent('<body style="margin:0;background:#ffffff"><button id="go">go</button></body>');
    await page.waitForTimeout(600);
    await paint(page, '#ff0000');
    await page.waitForTimeout(800);
  });
  await test.step('paint blue and fail', async () => {
    await paint(page, '#0000ff');
    await page.click('#go');
    await page.waitForTimeout(800);
    await paint(page, '#00ff00');
    await expect(page.locator('#missing')).toBeVisible({ timeout: 1000 });
  });
});
