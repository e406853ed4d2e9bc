// Fails: the page says "Welcome", the test expects "Goodbye".
import { test, expect } from '@playwright/test';

const page_url = new URL('../pages/login.html', import.meta.url).href;

test('expects a farewell', async ({ page }) => {
  await page.goto(page_url);
  await page.click('#signin');
  await expect(page.locator('#welcome')).toHaveText('Goodbye', { timeout: 1000 });
});
