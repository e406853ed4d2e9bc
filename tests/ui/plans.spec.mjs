// The Plans page and a run's detail against the real server: a plan kept in a project's
// .qa-agent/plans/ (written by hand, as another tool would) is listed by project; "Run" runs it
// in real headless Chromium against a small app this test serves and opens the run's entry,
// which shows each step with its status, screenshot and logs, and plays the run's video, each
// step a link that seeks the video to when the step started.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { test, expect, serverPerFile, openUi } from './fixtures.mjs';
import { VAIDER_BIN } from './lib/vaider.mjs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'plans' });

const APP = `<!doctype html><html><head><title>Shop</title></head><body>
<label for="email">Email</label><input id="email">
<button id="go" type="button">Sign in</button>
<h1 id="greeting"></h1>
<script>
  document.getElementById('go').addEventListener('click', () => {
    setTimeout(() => { document.getElementById('greeting').textContent = 'Welcome, ' + document.getElementById('email').value; }, 400);
  });
</script></body></html>`;

let app;
let base;
test.beforeAll(async () => {
  app = http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end(APP); });
  await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${app.address().port}`;
  const folder = path.join(ctx.server.projectDir, '.qa-agent', 'plans', 'shop');
  fs.mkdirSync(folder, { recursive: true });
  const plan = (id, name, expected) => ({
    id, name, description: '', project: { name: 'shop' }, prompt: 'a user signs in and is greeted',
    baseUrl: base, createdAt: '2026-11-22T10:00:00.000Z', updatedAt: '2026-11-22T10:00:00.000Z',
    steps: [
      { id: 'open', name: 'open the shop', type: 'selenese', commands: [{ command: 'open', target: '/' }] },
      { id: 'sign-in', name: 'sign in', type: 'selenese', commands: [
        { command: 'type', target: '#email', value: 'Ada' }, { command: 'click', target: 'text=Sign in' }] },
      { id: 'greeted', name: 'is greeted', type: 'selenese', commands: [
        { command: 'assertText', target: '#greeting', value: expected }] },
      { id: 'after', name: 'the greeting is a heading', type: 'unit_assertion', assertions: [
        { type: 'visible', selector: 'h1', expected: true }] },
    ],
  });
  fs.writeFileSync(path.join(folder, 'greet.json'), JSON.stringify(plan('greet', 'Greets the user', 'Welcome, Ada')));
  fs.writeFileSync(path.join(folder, 'wrong.json'), JSON.stringify(plan('wrong', 'Expects another name', 'Welcome, Bob')));
  // Written by hand, so Vaider did not write them: the user approves them as they would.
  for (const id of ['greet', 'wrong']) {
    execFileSync(VAIDER_BIN, ['plan', 'approve', id, '--yes', '--dir', ctx.server.projectDir],
      { env: ctx.server.env(), stdio: ['ignore', 'pipe', 'pipe'] });
  }
});
test.afterAll(() => app && app.close());

async function runFromPage(page, planId) {
  await openUi(page, ctx.server, `#/plans?workspace=${encodeURIComponent(ctx.server.projectDir)}`);
  const row = page.locator(`#plan-${planId}`);
  await expect(row).toContainText('never');
  await row.getByRole('button', { name: 'Run' }).click();
  await expect(page).toHaveURL(/#\/i\/[0-9a-f]{32}$/);
  // The run's card appears when the run has ended.
  await expect(page.locator('#qa-run-status')).toHaveText(/^(passed|failed|error)$/, { timeout: 60_000 });
}

test('the plans are listed by project and Run opens the run, its steps and its video', async ({ page }) => {
  test.setTimeout(90_000);
  await runFromPage(page, 'greet');
  await expect(page.locator('#qa-run-status')).toHaveText('passed');
  const steps = page.locator('.qa-step');
  await expect(steps).toHaveCount(4);
  await expect(steps.nth(1)).toContainText('sign in');
  await expect(steps.nth(1).locator('.badge')).toHaveText('passed');
  // Each step's screenshot is served and decodes.
  const shot = steps.nth(2).locator('img');
  expect(await shot.evaluate(async (img) => { await img.decode(); return img.naturalWidth; })).toBe(1280);
  await steps.nth(1).locator('summary').click();
  await expect(steps.nth(1).locator('.qa-logs')).toContainText('click text=Sign in: ok');
  // The video plays beside the steps; a step's link seeks it to when that step started.
  const video = page.locator('#media-video');
  await expect(video).toHaveAttribute('src', /\/api\/interactions\/[0-9a-f]{32}\/media\?exp=\d+&sig=[0-9a-f]{64}$/);
  await expect.poll(() => video.evaluate((v) => v.readyState)).toBeGreaterThanOrEqual(1);
  const link = steps.nth(2).locator('a.ts');
  const t = Number(await link.getAttribute('data-t'));
  expect(t).toBeGreaterThan(0);
  await link.click();
  await expect.poll(() => video.evaluate((v) => v.currentTime)).toBeGreaterThanOrEqual(t - 0.05);
  // Back on the Plans page, the plan's last run is this one, passed.
  await page.getByRole('link', { name: 'Test plans' }).click();
  await expect(page.locator('#plan-greet .qa-last')).toContainText('passed');
});

test('a failing run shows where it failed, what was expected and the skipped step', async ({ page }) => {
  test.setTimeout(90_000);
  await runFromPage(page, 'wrong');
  await expect(page.locator('#qa-run-status')).toHaveText('failed');
  const failed = page.locator('#qa-step-3');
  await expect(failed.locator('.badge')).toHaveText('failed');
  await expect(failed.locator('.qa-expected')).toHaveText('Welcome, Bob');
  await expect(failed.locator('.qa-actual')).toHaveText('Welcome, Ada');
  await expect(page.locator('#qa-step-4 .badge')).toHaveText('skipped');
  await expect(page.locator('#qa-step-4 a.ts')).toHaveCount(0);
  // The plan did its job: a result naming the step, not "the analysis failed".
  await expect(page.locator('#failed-what')).toContainText('Step 3');
  await expect(page.locator('#error-box')).toHaveCount(0);
  // Run again runs the plan, not a prompt and expectations.
  await expect(page.locator('#run-prompt')).toHaveCount(0);
  await expect(page.locator('#run-again')).toHaveText('Run the plan again');
});

test('a folder without plans says so, and a plan that is not there is refused with its code', async ({ page }) => {
  const empty = fs.mkdtempSync(path.join(ctx.server.projectDir, 'empty-'));
  await openUi(page, ctx.server, `#/plans?workspace=${encodeURIComponent(empty)}`);
  await expect(page.locator('#qa-none')).toContainText('No plans');
  const res = await ctx.server.fetch('/api/qa/runs', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workspace: ctx.server.projectDir, planId: 'nope' }),
  });
  expect(res.status).toBe(404);
  expect((await res.json()).error.code).toBe('PLAN_NOT_FOUND');
  // A plan that cannot run is refused before the answer, with what is wrong.
  const broken = path.join(ctx.server.projectDir, '.qa-agent', 'plans', 'shop', 'broken.json');
  const plan = JSON.parse(fs.readFileSync(path.join(path.dirname(broken), 'greet.json'), 'utf8'));
  plan.id = 'broken';
  plan.steps[1].commands[0].value = '';
  fs.writeFileSync(broken, JSON.stringify(plan));
  const refused = await ctx.server.fetch('/api/qa/runs', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workspace: ctx.server.projectDir, planId: 'broken' }),
  });
  expect(refused.status).toBe(400);
  const body = await refused.json();
  expect(body.error.code).toBe('INVALID_INPUT');
  expect(body.error.message).toContain('type needs a value');
  // A plan nobody approved (one a cloned repository brought, reaching any host) is refused
  // with what it reaches and the command that approves it; the token alone approves nothing.
  const cloned = JSON.parse(fs.readFileSync(path.join(path.dirname(broken), 'greet.json'), 'utf8'));
  Object.assign(cloned, { id: 'cloned', allowedHosts: ['*'] });
  fs.writeFileSync(path.join(path.dirname(broken), 'cloned.json'), JSON.stringify(cloned));
  const unapproved = await ctx.server.fetch('/api/qa/runs', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workspace: ctx.server.projectDir, planId: 'cloned' }),
  });
  expect(unapproved.status).toBe(403);
  const refusal = (await unapproved.json()).error;
  expect(refusal.code).toBe('PLAN_NOT_APPROVED');
  expect(refusal.message).toContain('vaider plan approve cloned --dir');
  expect(refusal.details.reach).toContain('may also go to: *');
});

test('a plan Vaider did not write shows what it reaches, and only the signed-in page approves it', async ({ page }) => {
  const folder = path.join(ctx.server.projectDir, '.qa-agent', 'plans', 'shop');
  const plan = JSON.parse(fs.readFileSync(path.join(folder, 'greet.json'), 'utf8'));
  Object.assign(plan, { id: 'brought', name: 'Brought by a clone', allowedHosts: ['cdn.example.com'] });
  fs.writeFileSync(path.join(folder, 'brought.json'), JSON.stringify(plan));
  // The token alone approves nothing.
  const byToken = await ctx.server.fetch('/api/qa/plans/approve', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workspace: ctx.server.projectDir, planId: 'brought' }),
  });
  expect(byToken.status).toBe(403);
  expect((await byToken.json()).error.code).toBe('PERSON_REQUIRED');

  await openUi(page, ctx.server, `#/plans?workspace=${encodeURIComponent(ctx.server.projectDir)}`);
  const row = page.locator('#plan-brought');
  await expect(row.locator('.qa-approval')).toContainText('not approved');
  await expect(row.locator('.qa-reach')).toContainText('may also go to: cdn.example.com');
  await expect(row.getByRole('button', { name: 'Run' })).toBeDisabled();
  // The approved plans show no such note.
  await expect(page.locator('#plan-greet .qa-approval')).toHaveCount(0);
  await row.getByRole('button', { name: 'Approve' }).click();
  await expect(row.locator('.qa-approval')).toHaveCount(0);
  await expect(row.getByRole('button', { name: 'Run' })).toBeEnabled();
  const kept = JSON.parse(fs.readFileSync(path.join(ctx.server.dataDir, 'plan-approvals.json'), 'utf8'));
  const approval = kept.find((a) => a.planId === 'brought');
  expect(approval.decision.proof.kind).toBe('signedInUi');
});
