// Cannot run: this folder's config points at a browser that does not exist.
import { test } from '@playwright/test';

test('opens a page', async ({ page }) => {
  await page.goto('about:blank');
});
