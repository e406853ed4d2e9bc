// A visual comparison's detail against the real server: BEFORE and AFTER side by side, as a
// swipe and an onion skin; the diff, heat map and close-ups; and each changed region's box
// linked to the model's finding and verdict. The fake Gemini answers every call with the
// explanation below (--reply-file), as a model that found the regions would.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect, serverPerFile, openUi } from './fixtures.mjs';

test.describe.configure({ mode: 'serial' });

const EXPECTED = 'an error message appears under the form';
const replyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vaider-compare-')), 'reply.json');
fs.writeFileSync(replyFile, JSON.stringify({
  description: 'An error message appeared under the form.',
  summary: 'An error message appeared.',
  found_changes: [{ region: 'region 1', change: 'A red "Email is required" message appeared.' }],
  unexpected_changes: [],
  expected_matched: [EXPECTED],
  expected_missed: [],
}));
const ctx = serverPerFile({ name: 'compare', fakeArgs: ['--reply-file', replyFile] });

let id;
let data;
test.beforeAll(async () => {
  const before = await ctx.server.addMedia('login.png', 'before.png', 'visual-compare');
  const after = await ctx.server.addMedia('login-error.png', 'after.png', 'visual-compare');
  const result = await ctx.server.mcpTool('visual_compare', {
    before, after, cwd: ctx.server.projectDir,
    expected_changes: [EXPECTED, 'the logo turns blue'],
  });
  data = result.structuredContent.data;
  expect(data.pixel_diff.total_changes).toBeGreaterThan(0);
  id = data.interaction_id;
});

test('BEFORE and AFTER side by side, as a swipe and as an onion skin', async ({ page }) => {
  await openUi(page, ctx.server, `#/i/${id}`);
  const stage = page.locator('#compare-stage');
  // Side by side: both pictures load, BEFORE first, AFTER the annotated one.
  await expect(stage.locator('figcaption')).toHaveText(['Before', 'After']);
  await expect(stage.locator('img.cmp-before')).toHaveAttribute('src', new RegExp(`^/api/interactions/${id}/media\\?which=expected&exp=\\d+&sig=[0-9a-f]{64}$`));
  await expect(stage.locator('img.cmp-after')).toHaveAttribute('src', new RegExp(`^/api/interactions/${id}/media\\?exp=\\d+&sig=[0-9a-f]{64}$`));
  for (const sel of ['img.cmp-before', 'img.cmp-after']) {
    await expect.poll(() => stage.locator(sel).evaluate((img) => img.complete && img.naturalWidth)).toBeGreaterThan(100);
  }
  await expect(page.locator('#compare-slider')).toBeHidden();
  // Swipe: the slider reveals AFTER over BEFORE.
  await page.click('#compare-swipe');
  await expect(page.locator('#compare-swipe')).toHaveAttribute('aria-pressed', 'true');
  await page.locator('#compare-slider').fill('30');
  await expect(stage.locator('img.cmp-top')).toHaveCSS('clip-path', 'inset(0px 70% 0px 0px)');
  // Onion skin: the slider fades AFTER in.
  await page.click('#compare-onion');
  await page.locator('#compare-slider').fill('25');
  await expect(stage.locator('img.cmp-top')).toHaveCSS('opacity', '0.25');
});

test('the diff, the heat map and the close-ups are shown as the comparison wrote them', async ({ page }) => {
  await openUi(page, ctx.server, `#/i/${id}`);
  const stage = page.locator('#compare-stage');
  const shown = [
    ['#compare-diff', 'img.cmp-diff', 'diff', data.diff_image],
    ['#compare-heatmap', 'img.cmp-heatmap', 'heatmap', data.heat_map],
    ['#compare-zoom', 'img.cmp-zoom', 'zoom', data.close_ups],
  ];
  for (const [button, img, which, file] of shown) {
    await page.click(button);
    await expect(stage.locator(img)).toHaveAttribute('src', new RegExp(`^/api/interactions/${id}/media\\?which=${which}&exp=\\d+&sig=[0-9a-f]{64}$`));
    const size = await stage.locator(img).evaluate(async (el) => {
      await el.decode();
      return [el.naturalWidth, el.naturalHeight];
    });
    // The picture served is the file the comparison wrote (a PNG's size is in its header).
    const png = fs.readFileSync(file);
    expect(size).toEqual([png.readUInt32BE(16), png.readUInt32BE(20)]);
  }
  // An unknown picture is refused with what to ask for.
  const res = await ctx.server.fetch(`/api/interactions/${id}/media?which=secrets`);
  expect(res.status).toBe(400);
  expect(await res.text()).toContain('heatmap');
});

test('each region box is linked to its finding and verdict, and back', async ({ page }) => {
  await openUi(page, ctx.server, `#/i/${id}`);
  const findings = page.locator('#compare-findings li');
  await expect(findings).toHaveCount(data.regions.length);
  const first = page.locator('#finding-1');
  await expect(first).toContainText('Email is required');
  await expect(first.locator('.cmp-verdict')).toHaveText('as expected');
  await expect(page.locator('#compare-missed')).toContainText('the logo turns blue');
  // The box sits over region 1 of the annotated image, in its place.
  const box = page.locator('#compare-stage .cmp-box[data-region="1"]');
  await expect(box).toBeVisible();
  const placed = await page.evaluate(() => {
    const img = document.querySelector('#compare-stage img.cmp-after');
    const b = document.querySelector('#compare-stage .cmp-box[data-region="1"]').getBoundingClientRect();
    const i = img.getBoundingClientRect();
    const scale = i.width / img.naturalWidth;
    return { x: (b.left - i.left) / scale, y: (b.top - i.top) / scale, w: b.width / scale };
  });
  const r = data.regions[0];
  expect(Math.abs(placed.x - r.x)).toBeLessThan(2);
  expect(Math.abs(placed.y - r.y)).toBeLessThan(2);
  expect(Math.abs(placed.w - r.width)).toBeLessThan(2);
  // A click on the box selects its finding; a click on a finding selects its box.
  await box.click();
  await expect(first).toHaveClass(/selected/);
  await expect(box).toHaveClass(/selected/);
  if (data.regions.length > 1) {
    await page.locator('#finding-2').click();
    await expect(page.locator('#compare-stage .cmp-box[data-region="2"]')).toHaveClass(/selected/);
    await expect(box).not.toHaveClass(/selected/);
  }
});
