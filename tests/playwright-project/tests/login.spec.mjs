// Passes: signs in and shows the dashboard, with a screenshot of its own.
import { test, expect } from '@playwright/test';

const page_url = new URL('../pages/login.html', import.meta.url).href;

test('signs in and sees the welcome', async ({ page }, testInfo) => {
  await page.goto(page_url);
  await page.fill('#email', 'ada@example.com');
  await page.click('#signin');
  await expect(page.locator('#welcome')).toHaveText('Welcome');
  await page.screenshot({ path: testInfo.outputPath('dashboard.png') });
});
