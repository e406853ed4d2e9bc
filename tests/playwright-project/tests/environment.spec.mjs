// Passes, and prints the environment Vaider gave the run: the trust test
// (crates/vaider-validate/tests/fixture.rs) checks that no secret of the server is in it.
import { test, expect } from '@playwright/test';

const page_url = new URL('../pages/login.html', import.meta.url).href;

test('prints its environment', async ({ page }) => {
  console.log(`ENVIRONMENT ${JSON.stringify(process.env)}`);
  await page.goto(page_url);
  await expect(page.locator('#signin')).toBeVisible();
});
