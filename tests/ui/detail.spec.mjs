// The detail page against the real server: the video plays and seeks from the description's
// timestamps, text is shown as text, errors say what to do, and "Run again" starts a new row.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test, expect, serverPerFile, openUi } from './fixtures.mjs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'detail' });
let video;
let plain;
let sampled;

test.beforeAll(async () => {
  video = await ctx.server.addMedia('login-flow.webm', 'login-flow.webm');
  // The fake Gemini describes a video in three timed steps over its length (00:00, 00:01,
  // 00:03 for this 5.5 s clip) and echoes the start of the prompt.
  plain = await ctx.server.analyseOk({ videoPath: video, prompt: 'Describe the login test; look closely at 2 seconds in.' });
  // A mostly still 20 s recording with two steps (at 5 and 12 s), made here with ffmpeg as
  // Playwright records (VP8 WebM): on a Gemini 2.x model (258 tokens a frame) clips around the
  // changes cost less than the whole video. The busy login clip goes whole.
  const still = path.join(path.dirname(video), 'two-steps.webm');
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=white:s=640x360:d=20:r=25',
    '-vf', "drawbox=x=40:y=40:w=200:h=80:color=blue:t=fill:enable='gte(t,5)',"
      + "drawbox=x=300:y=200:w=200:h=80:color=red:t=fill:enable='gte(t,12)'",
    '-c:v', 'libvpx', '-b:v', '300k', still]);
  sampled = await ctx.server.analyseOk({ videoPath: still, model: 'gemini-2.5-flash-lite', noCache: true });
});

async function videoState(page) {
  return page.locator('#media-video').evaluate((v) => ({
    readyState: v.readyState, currentTime: v.currentTime, paused: v.paused, error: v.error && v.error.code,
    duration: v.duration,
  }));
}

test('the video plays: it reaches HAVE_ENOUGH_DATA and its time advances', async ({ page }) => {
  await openUi(page, ctx.server, `#/i/${plain.interactionId}`);
  const v = page.locator('#media-video');
  await expect(v).toBeVisible();
  await expect(v).toHaveAttribute('src', new RegExp(`^/api/interactions/${plain.interactionId}/media\\?exp=\\d+&sig=[0-9a-f]{64}$`));
  await expect.poll(async () => (await videoState(page)).readyState, { timeout: 20_000 }).toBe(4);
  const before = await videoState(page);
  expect(before.error).toBeNull();
  expect(before.duration).toBeGreaterThan(5);
  await v.evaluate((el) => el.play());
  await expect.poll(async () => (await videoState(page)).currentTime, { timeout: 10_000 }).toBeGreaterThan(0.5);
});

test('a timestamp in the description seeks the video', async ({ page }) => {
  await openUi(page, ctx.server, `#/i/${plain.interactionId}`);
  const description = page.locator('#description');
  await expect(description).toContainText('The login page is shown');
  const links = description.locator('a.ts');
  const times = await links.evaluateAll((as) => as.map((a) => ({ text: a.textContent, t: Number(a.dataset.t) })));
  // 00:00, 00:01 and 00:03 from the steps, and "at 2 seconds" echoed from the prompt.
  expect(times.map((x) => x.t)).toEqual(expect.arrayContaining([0, 1, 3]));
  const later = times.filter((x) => x.t >= 1).sort((a, b) => b.t - a.t)[0];
  expect(later, `a timestamp after 0 s in ${JSON.stringify(times)}`).toBeTruthy();
  await expect.poll(async () => (await videoState(page)).readyState, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);

  await description.locator(`a.ts[data-t="${later.t}"]`).first().click();
  await expect.poll(async () => (await videoState(page)).currentTime, { timeout: 5000 })
    .toBeGreaterThanOrEqual(later.t - 0.05);
  const after = await videoState(page);
  expect(after.currentTime).toBeLessThan(later.t + 1.5);
  expect(after.paused).toBe(false);

  // And back to the start.
  await description.locator('a.ts[data-t="0"]').first().click();
  await expect.poll(async () => (await videoState(page)).currentTime, { timeout: 5000 }).toBeLessThan(1);
  // The URL did not change: a seek is not a navigation.
  await expect(page).toHaveURL(new RegExp(`#/i/${plain.interactionId}$`));
});

test('facts, usage, raw JSON and the log folder are shown', async ({ page }) => {
  await openUi(page, ctx.server, `#/i/${plain.interactionId}`);
  const facts = page.locator('#facts');
  await expect(facts).toContainText('gemini-3.5-flash-lite');
  // The count the model reported, the estimate made before the call beside it, and the output.
  await expect(facts).toContainText(/\d+ in \(estimated \d+\) · \d+ out/);
  await expect(facts).toContainText('$');
  await expect(facts).toContainText('video/webm');
  await expect(page.locator('.detail-meta .badge').first()).toHaveText('ok');

  await page.click('#request-json summary');
  await expect(page.locator('#request-json pre')).toBeVisible();
  const request = JSON.parse(await page.locator('#request-json pre').textContent());
  expect(JSON.stringify(request)).toContain('login-flow.webm');
  await page.click('#response-json summary');
  const responseText = await page.locator('#response-json pre').textContent();
  expect(() => JSON.parse(responseText)).not.toThrow();
  // Pretty-printed, not one long line.
  expect(responseText.split('\n').length).toBeGreaterThan(5);
  expect(responseText).not.toContain('test-gemini-key');

  await expect(page.locator('#log-dir')).toHaveText(/login-flow\.webm\.VaiderInteractions/);
  await expect(page.locator('#copy-log-dir')).toBeVisible();
  await expect(page.locator('#open-folder')).toBeVisible();
});

test('video sampling: the moments sent seek the video, and the tokens saved are shown per call and summed', async ({ page }) => {
  await openUi(page, ctx.server, `#/i/${sampled.interactionId}`);
  const detail = await ctx.server.json(`/api/interactions/${sampled.interactionId}`);
  const sampling = detail.body.sampling;
  expect(sampling).toMatchObject({ requested: 'auto', used: 'clips' });
  await expect(page.locator('#sampling-used')).toHaveText('auto → clips around the changes');
  const moments = page.locator('#sampling-moments a.ts');
  await expect(moments).toHaveCount(sampling.moments.length);
  const saving = page.locator('#sampling-saving');
  await expect(saving).toContainText('where the default sampling would use');
  const said = (await saving.textContent()).split('would use')[1].split('(')[0].replace(/\D/g, '');
  expect(Number(said)).toBe(sampling.defaultSamplingInputTokens);
  expect(sampling.defaultSamplingInputTokens).toBeGreaterThan(detail.body.usage.inputTokens);
  // A moment is a link into the video, like the description's timestamps.
  const last = moments.last();
  const t = Number(await last.getAttribute('data-t'));
  await expect.poll(async () => (await videoState(page)).readyState, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
  await last.click();
  await expect.poll(async () => (await videoState(page)).currentTime, { timeout: 5000 }).toBeGreaterThanOrEqual(t - 0.05);

  // The history page sums what sampling saved over every call.
  await openUi(page, ctx.server, '#/');
  await expect(page.locator('#history-saving')).toContainText(/video sampling saved [\d,.\s]+ input tokens \(\d+\.\dx fewer\)/);
});

test('text from the model and the prompt is shown as text, never run as HTML', async ({ page }) => {
  const evil = '<img src=x onerror="window.__owned=1"><script>window.__owned=2</script> **bold** at 3 seconds';
  const result = await ctx.server.analyseOk({ videoPath: video, prompt: evil, noCache: true });
  await openUi(page, ctx.server, `#/i/${result.interactionId}`);
  await expect(page.locator('#description')).toBeVisible();
  // The fake echoes the prompt into the description: it must appear literally.
  await expect(page.locator('#description')).toContainText('<img src=x onerror=');
  await expect(page.locator('#description strong')).toHaveText('bold');
  await expect(page.locator('#description a.ts', { hasText: 'at 3 seconds' })).toHaveAttribute('data-t', '3');
  await expect(page.locator('.facts .prompt-text')).toHaveText(evil);
  await page.click('#request-json summary');
  await expect(page.locator('#request-json pre')).toContainText('onerror');
  expect(await page.locator('#main img').count()).toBe(0);
  expect(await page.locator('#main script').count()).toBe(0);
  expect(await page.evaluate(() => window.__owned)).toBeUndefined();
});

test('expectations show their verdict and evidence', async ({ page }) => {
  const result = await ctx.server.analyseOk({
    videoPath: video, noCache: true,
    expectations: ['the dashboard shows "Welcome"', 'no error message appears'],
  });
  await openUi(page, ctx.server, `#/i/${result.interactionId}`);
  const items = page.locator('#expectations .verdict');
  await expect(items).toHaveCount(2);
  await expect(items.first()).toContainText('the dashboard shows "Welcome"');
  await expect(items.first().locator('.badge')).toHaveText(/^(met|not met|unclear)$/);
  await expect(items.nth(1)).toContainText('no error message appears');
});

test('a refused request shows its error code, message and what to do', async ({ page }) => {
  const secret = `${ctx.server.projectDir}/notes.txt`;
  const fs = await import('node:fs/promises');
  await fs.writeFile(secret, 'not a video at all\n');
  const res = await ctx.server.analyse({ videoPath: secret });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('INVALID_PATH');
  const page1 = await ctx.server.json('/api/history?status=rejected');
  expect(page1.status).toBe(200);
  const row = page1.body.items[0];
  await openUi(page, ctx.server, `#/i/${row.id}`);
  await expect(page.locator('#error-box')).toBeVisible();
  await expect(page.locator('#error-code')).toHaveText('INVALID_PATH');
  await expect(page.locator('#error-message')).not.toBeEmpty();
  await expect(page.locator('#error-box')).toContainText('What to do');
  await expect(page.locator('.detail-meta .badge').first()).toHaveText('rejected');
  // Nothing was read, so there is nothing to run again: the server says so and no form shows.
  const detail = await ctx.server.json(`/api/interactions/${row.id}`);
  expect([detail.body.kind, detail.body.runAgain]).toEqual(['analysis', null]);
  await expect(page.locator('#facts')).toBeVisible();
  await expect(page.locator('#run-again')).toHaveCount(0);
});

test('"Run again" with an edited prompt opens the new analysis, which finishes through events', async ({ page }) => {
  await openUi(page, ctx.server, `#/i/${plain.interactionId}`);
  await expect(page.locator('#run-prompt')).toHaveValue('Describe the login test; look closely at 2 seconds in.');
  await page.fill('#run-prompt', 'Again, and say where the password is typed.');
  await page.fill('#run-expectations', 'the login page is shown\nthe dashboard appears');
  await page.evaluate(() => { window.__sameDocument = 1; });
  await page.click('#run-again');
  await expect(page).not.toHaveURL(new RegExp(`#/i/${plain.interactionId}$`));
  await expect(page).toHaveURL(/#\/i\/[0-9a-zA-Z-]+$/);
  const newId = decodeURIComponent(page.url().split('#/i/')[1]);
  expect(newId).not.toBe(plain.interactionId);
  await expect(page.locator('.detail-meta .badge').first()).toHaveText('ok', { timeout: 30_000 });
  await expect(page.locator('#expectations .verdict')).toHaveCount(2);
  await expect(page.locator('.facts .prompt-text')).toHaveText('Again, and say where the password is typed.');
  expect(await page.evaluate(() => window.__sameDocument)).toBe(1);
  const detail = await ctx.server.json(`/api/interactions/${newId}`);
  expect(detail.body.door).toBe('ui');
  expect(detail.body.cached).toBe(false);
});

test('a repeated request is answered from the cache and says so', async ({ page }) => {
  const again = await ctx.server.analyseOk({ videoPath: video, prompt: 'Describe the login test; look closely at 2 seconds in.' });
  expect(again.cached).toBe(true);
  await openUi(page, ctx.server, `#/i/${again.interactionId}`);
  await expect(page.locator('.detail-meta .badge-cached')).toHaveText('cached');
  await expect(page.locator('#facts')).toContainText('answered from the cache');
  await page.click('a.back');
  await expect(page.locator(`#history-rows tr[data-id="${again.interactionId}"] .badge-cached`)).toBeVisible();
});

test('"Open folder" asks the server and says what happened', async ({ page }) => {
  await openUi(page, ctx.server, `#/i/${plain.interactionId}`);
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/open-folder') && r.request().method() === 'POST'),
    page.click('#open-folder'),
  ]);
  // A headless box has no file manager: then the answer is 500 with the path and the reason.
  const note = page.locator('#log-folder .action-note');
  if (res.status() === 204) await expect(note).toHaveText('Opened in the file manager.');
  else {
    expect(res.status()).toBe(500);
    await expect(note).toContainText('Could not open it:');
    await expect(note).toContainText('VaiderInteractions');
  }
});

test('an image analysis shows the image, a ui_diff_check both images and the differences', async ({ page }) => {
  const shot = await ctx.server.addMedia('login-error.png', 'screenshot.png', 'login-error');
  const image = await ctx.server.mcpTool('analyze_image', { image_source: shot, cwd: ctx.server.projectDir });
  const imageId = image.structuredContent.interactionId;
  await openUi(page, ctx.server, `#/i/${imageId}`);
  await expect(page.locator('#media-image')).toHaveAttribute('src', new RegExp(`^/api/interactions/${imageId}/media\\?exp=\\d+&sig=[0-9a-f]{64}$`));
  await expect.poll(() => page.locator('#media-image').evaluate((img) => img.complete && img.naturalWidth)).toBeGreaterThan(100);
  await expect(page.locator('#media-video')).toHaveCount(0);

  const expected = await ctx.server.addMedia('login.png', 'expected.png', 'visual');
  const actual = await ctx.server.addMedia('login-error.png', 'actual.png', 'visual');
  const diff = await ctx.server.mcpTool('ui_diff_check', { expected_image_source: expected, actual_image_source: actual, cwd: ctx.server.projectDir });
  const diffId = diff.structuredContent.interactionId;
  await openUi(page, ctx.server, `#/i/${diffId}`);
  for (const sel of ['#media-expected', '#media-image']) {
    await expect.poll(() => page.locator(sel).evaluate((img) => img.complete && img.naturalWidth)).toBeGreaterThan(100);
  }
  await expect(page.locator('#media-expected')).toHaveAttribute('src', new RegExp(`^/api/interactions/${diffId}/media\\?which=expected&exp=\\d+&sig=[0-9a-f]{64}$`));
  await expect(page.locator('figure figcaption')).toHaveText(['Expected', 'Actual']);
  const table = page.locator('#details table.table-differences');
  await expect(table).toBeVisible();
  await expect(table.locator('thead')).toContainText('Severity');
  await expect(table.locator('tbody .badge').first()).toHaveText(/high|medium|low/);
});

test('an unknown id says so', async ({ page }) => {
  await openUi(page, ctx.server, '#/i/0000000000000000000000000000dead');
  await expect(page.locator('#detail-not-found')).toContainText('Not in the history');
});
