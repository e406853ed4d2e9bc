// Two failing tests, for analyse_test_results: each failure's video is analysed.
import { test, expect } from '@playwright/test';

const page_url = new URL('../pages/login.html', import.meta.url).href;

test('expects an error banner', async ({ page }) => {
  await page.goto(page_url);
  await expect(page.locator('#error-banner')).toBeVisible({ timeout: 1000 });
});

test('expects the welcome before signing in', async ({ page }) => {
  await page.goto(page_url);
  await expect(page.locator('#welcome')).toBeVisible({ timeout: 1000 });
});
