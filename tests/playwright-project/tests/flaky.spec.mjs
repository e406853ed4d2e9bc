// Flaky: fails on its first attempt (the stock check is slow and logs an error) and passes on
// its retry. For the attempts compared.
import { test, expect } from '@playwright/test';

test.describe.configure({ retries: 1 });

test('adds the chair, on the second try', async ({ page }, testInfo) => {
  const stock = testInfo.retry === 0 ? 'slow' : 'ok';
  await test.step('open the shop', async () => {
    await page.goto(new URL(`../pages/cart.html?stock=${stock}`, import.meta.url).href);
    await expect(page.locator('h1')).toHaveText('Chairs');
  });
  await test.step('add the chair', async () => {
    await page.click('#add');
    await expect(page.locator('#cart')).toHaveText('Cart: 1 item', { timeout: 1500 });
  });
});
