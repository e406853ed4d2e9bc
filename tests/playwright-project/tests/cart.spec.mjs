// Fails in its second step: adding the chair flashes "Out of stock" and the cart stays empty.
// For the failing step watched closely (steps on the video's clock).
import { test, expect } from '@playwright/test';

const shop = new URL('../pages/cart.html', import.meta.url).href;

test('adds the chair to the cart', async ({ page }) => {
  await test.step('open the shop', async () => {
    await page.goto(shop);
    await expect(page.locator('h1')).toHaveText('Chairs');
  });
  await test.step('add the chair', async () => {
    await page.click('#add');
    await expect(page.locator('#cart')).toHaveText('Cart: 1 item', { timeout: 1500 });
  });
});
