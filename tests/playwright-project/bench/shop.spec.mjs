// The benchmark's ten steps on the shop app (tests/qa-app/shop.html, served at QA_BASE_URL),
// written as a Playwright test: the same checks as the benchmark's test plan, one for one.
import { test, expect } from '@playwright/test';

test('signs in and adds an item', async ({ page }) => {
  await page.goto(`${process.env.QA_BASE_URL}/`);                          // 1 open
  await page.locator('#email').fill('ada@example.com');                     // 2 type
  await page.locator('#password').fill('secret');                           // 3 type
  await page.getByText('Sign in', { exact: true }).click();                 // 4 click
  await page.locator('#greeting').waitFor();                                // 5 waitForElement
  await expect(page.locator('#greeting')).toHaveText('Welcome, Ada');       // 6 assertText
  await expect(page.locator('#count')).toContainText('3 items');            // 7 contains
  await page.locator('#add').click();                                       // 8 click
  await expect(page.locator('#count')).toHaveText('4 items');               // 9 equals
  await expect(page.locator('#items li:nth-child(4)')).toBeVisible();       // 10 visible
});
