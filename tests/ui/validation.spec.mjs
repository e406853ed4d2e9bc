// A test validation's detail against the real server: a real Playwright run of the fixture
// project (tests/playwright-project) through validate_test, then its entry in the history
// shows the rubric, the run, each test of the report with its error, the screenshots, what
// the model saw in the recording, where a failed test went wrong, the model calls it made, and
// the recording itself.
import fs from 'node:fs';
import path from 'node:path';
import { test, expect, serverPerFile, openUi } from './fixtures.mjs';
import { REPO_ROOT } from './lib/vaider.mjs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'validation' });

const FIXTURE = path.join(REPO_ROOT, 'tests', 'playwright-project');

// A copy of the fixture project in the server's project folder (node_modules linked), so the
// runs' folders are written there, not in the repository.
function copyFixture(to) {
  fs.mkdirSync(to, { recursive: true });
  for (const name of ['playwright.config.mjs', 'package.json']) fs.copyFileSync(path.join(FIXTURE, name), path.join(to, name));
  for (const dir of ['tests', 'pages']) fs.cpSync(path.join(FIXTURE, dir), path.join(to, dir), { recursive: true });
  fs.symlinkSync(path.join(FIXTURE, 'node_modules'), path.join(to, 'node_modules'));
  return to;
}

let passing;
let failing;
test.beforeAll(async () => {
  test.setTimeout(120_000);
  const project = copyFixture(path.join(ctx.server.projectDir, 'e2e'));
  const run = async (spec, extra = {}) => {
    const result = await ctx.server.mcpTool('validate_test', {
      test_path: path.join(project, 'tests', spec), cwd: ctx.server.projectDir, ...extra,
    });
    return result.structuredContent;
  };
  passing = await run('login.spec.mjs', { expectations: ['the welcome is shown after signing in'] });
  failing = await run('failing.spec.mjs');
});

async function entryOf(server, testPath) {
  const res = await server.fetch(`/api/history?tool=validate_test`);
  const page = await res.json();
  return page.items.find((i) => i.source === testPath);
}

test('a passing validation shows its rubric, run, report, screenshots, video analysis and model call', async ({ page }) => {
  expect(passing.success, JSON.stringify(passing)).toBe(true);
  const entry = await entryOf(ctx.server, passing.data.test_path);
  expect(entry).toBeTruthy();
  await openUi(page, ctx.server, `#/i/${entry.id}`);
  await expect(page.locator('#rubric-verdict')).toHaveText('passed');
  await expect(page.locator('#run')).toContainText('Browser launched');
  await expect(page.locator('#report tbody tr').first()).toContainText('signs in and sees the welcome');
  // Each screenshot is served and is the file the run wrote.
  const shots = page.locator('#screenshots img');
  await expect(shots).toHaveCount(passing.data.screenshots.length);
  const size = await shots.first().evaluate(async (img) => { await img.decode(); return [img.naturalWidth, img.naturalHeight]; });
  const png = fs.readFileSync(passing.data.screenshots[0]);
  expect(size).toEqual([png.readUInt32BE(16), png.readUInt32BE(20)]);
  // What the model saw, and its call, a link to its own entry.
  await expect(page.locator('#video-analysis')).toContainText('the welcome is shown after signing in');
  const call = page.locator('#calls a');
  await expect(call).toHaveText('analyze_video');
  await expect(call).toHaveAttribute('href', `#/i/${passing.data.video_analysis.interaction_id}`);
  // The recording plays beside it.
  await expect(page.locator('#media-video')).toHaveAttribute('src', new RegExp(`^/api/interactions/${entry.id}/media\\?exp=\\d+&sig=[0-9a-f]{64}$`));
  // A screenshot past the last is not served.
  const res = await ctx.server.fetch(`/api/interactions/${entry.id}/media?which=screenshot&n=${passing.data.screenshots.length}`);
  expect(res.status).toBe(404);
});

test('a failing validation shows the rubric errors and the test error where it failed', async ({ page }) => {
  expect(failing.success).toBe(false);
  const entry = await entryOf(ctx.server, failing.data.test_path);
  await openUi(page, ctx.server, `#/i/${entry.id}`);
  await expect(page.locator('#rubric-verdict')).toHaveText('failed');
  await expect(page.locator('.rubric-errors')).toContainText('Test failed (test_passed=false)');
  const error = page.locator('#report .test-error');
  await expect(error).toContainText(failing.data.report[0].error.message.split('\n')[0]);
  await expect(error).toContainText('at ');
  // A failed test is a result, with its trace at hand.
  await expect(page.locator('#failed-box')).toBeVisible();
  await expect(page.locator('#error-box')).toHaveCount(0);
  await expect(page.locator('#traces .trace-open').first()).toContainText('npx playwright show-trace ');
  await expect(page.locator('#traces a.trace-download').first()).toHaveAttribute('href', new RegExp(`^/api/interactions/${entry.id}/media\\?which=trace&n=0&exp=\\d+&sig=[0-9a-f]{64}$`));
  await expect(page.locator('#run-again')).toHaveText('Run the test again');
  // Where it failed: the failing step as the model saw it; its time seeks the recording.
  const where = failing.data.failure_analysis[0];
  expect(where, JSON.stringify(failing.data)).toBeTruthy();
  const failures = page.locator('#failures');
  await expect(failures).toContainText(`Failed at ${where.failing_step.split(',')[0]}`);
  await expect(failures).toContainText('frames a second');
  await expect(page.locator('#calls')).toContainText('watch_failing_step');
  const video = page.locator('#media-video');
  await video.evaluate((v) => new Promise((resolve) => (v.readyState >= 1 ? resolve() : v.addEventListener('loadedmetadata', resolve, { once: true }))));
  const stamp = failures.locator('.failure-line a.ts').first();
  const at = Number(await stamp.getAttribute('data-t'));
  await stamp.click();
  await expect.poll(() => video.evaluate((v) => v.currentTime)).toBeGreaterThanOrEqual(at - 0.05);
});
