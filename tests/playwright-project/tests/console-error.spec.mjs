// Passes, but the page logs an error to the browser console.
import { test, expect } from '@playwright/test';

test('opens the dashboard', async ({ page }) => {
  await page.goto(new URL('../pages/console-error.html', import.meta.url).href);
  await expect(page.locator('h1')).toHaveText('Dashboard');
});
