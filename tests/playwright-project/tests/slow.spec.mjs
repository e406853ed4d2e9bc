// Passes, slowly: longer than the limit the test asks validate_test for.
import { test, expect } from '@playwright/test';

test('waits for the report', async ({ page }) => {
  await page.goto(new URL('../pages/login.html', import.meta.url).href);
  await page.waitForTimeout(1500);
  await expect(page.locator('#signin')).toBeVisible();
});
