// Passes, but the page's request to a closed port fails (net::ERR_CONNECTION_REFUSED).
import { test, expect } from '@playwright/test';

test('shows the orders offline', async ({ page }) => {
  await page.goto(new URL('../pages/network-failure.html', import.meta.url).href);
  await expect(page.locator('#status')).toHaveText('offline');
});
