// Never ends on its own (a minute of waiting) on a page that logged a console error:
// validate_test's timeout must stop it, and still report what the page logged.
import { test } from '@playwright/test';

test('waits for a reply that never comes', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto(new URL('../pages/console-error.html', import.meta.url).href);
  await page.waitForTimeout(60_000);
});
