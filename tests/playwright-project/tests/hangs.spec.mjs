// Never ends on its own (a minute of waiting): validate_test's timeout must stop it.
import { test } from '@playwright/test';

test('waits for a reply that never comes', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto(new URL('../pages/login.html', import.meta.url).href);
  await page.waitForTimeout(60_000);
});
