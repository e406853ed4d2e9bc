// Makes docs/history.png, docs/detail.png and docs/settings.png (1280x800) from the real
// server with a few analyses in its history. Run by scripts/ui-screenshots.sh.
//
// The analyses go through the real doors (REST and MCP) to the fake Gemini. The fake answers
// with proof lines (sizes and sha256 of what it received) rather than prose, so before the
// pictures are taken the descriptions of a few rows are replaced, in the history, by what a
// real model says about these recordings: the pictures should show what a person sees.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { VaiderServer, REPO_ROOT, media } from './lib/vaider.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const OUT_DIR = process.env.OUT_DIR || path.join(REPO_ROOT, 'docs');
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--hide-scrollbars', '--font-render-hinting=none'];

const LOGIN_DESCRIPTION = [
  '00:00 The "Sign in" page shows empty **Email** and **Password** fields and a blue "Log in" button.',
  '00:01 The user clicks "Log in" with both fields empty; the red message "Email is required" appears under the button.',
  '00:02 The user types "ada@example.com" into Email and a password (masked) into Password.',
  '00:03 The user clicks "Log in" and the page changes to "Dashboard".',
  '00:04 The dashboard says "Welcome back, Ada!" and lists:',
  '- "3 new messages"',
  '- "Invoice #1042 paid"',
  '',
  'Final state: the dashboard, with no error on screen.',
].join('\n');

const REWRITES = (ids) => ({
  [ids.login]: {
    description: LOGIN_DESCRIPTION,
    evidence: [
      'At 00:04 the heading "Dashboard" and the text "Welcome back, Ada!" are visible.',
      'At 00:01 the red message "Email is required" is shown after the empty form is sent; it is gone once the dashboard loads at 00:03.',
    ],
    verdicts: ['met', 'not_met'],
  },
  [ids.checkout]: {
    description: '00:00 The cart lists two items and a "Checkout" button.\n00:02 The user clicks "Checkout"; a spinner shows for about a second.\n00:04 The order confirmation "Thank you, order #5521" appears.',
  },
  [ids.image]: {
    description: 'A "Sign in" card on a light grey page: **Email** and **Password** fields, a blue "Log in" button, and below it the red text "Email is required". No other errors or warnings are visible.',
  },
  [ids.diff]: {
    description: 'The actual screenshot shows one difference from the expected one: a red validation message under the button.',
    details: {
      differences: [
        { region: 'below the "Log in" button', severity: 'medium', description: 'Extra red text "Email is required" that the expected screenshot does not have.', suggested_fix: 'Show the validation message only after the user submits the form.' },
        { region: 'Sign in card', severity: 'low', description: 'The card is 24 px taller to make room for the message.', suggested_fix: 'Reserve the message\'s space so the layout does not shift.' },
      ],
      matches: false,
    },
  },
});

const REWRITE_PY = String.raw`
import sqlite3, sys, json
db, spec = sys.argv[1], json.loads(sys.argv[2])
con = sqlite3.connect(db)
for rid, change in spec.items():
    row = con.execute("SELECT result_json FROM interactions WHERE id = ?", (rid,)).fetchone()
    if row is None:
        raise SystemExit("no row " + rid)
    result = json.loads(row[0]) if row[0] else {}
    result["description"] = change["description"]
    for i, e in enumerate(result.get("expectations") or []):
        if "evidence" in change:
            e["evidence"] = change["evidence"][i]
        if "verdicts" in change:
            e["verdict"] = change["verdicts"][i]
    if "verdicts" in change:
        result["allExpectationsMet"] = all(v == "met" for v in change["verdicts"])
    if "details" in change:
        result["details"] = change["details"]
    con.execute("UPDATE interactions SET description = ?, result_json = ? WHERE id = ?",
                (change["description"], json.dumps(result), rid))
con.commit()
`;

async function main() {
  const server = new VaiderServer({ name: 'shots' });
  await server.start();
  try {
    const ids = {};
    // Oldest first: the history lists them newest first.
    // A second project, as when several workspaces use one Vaider.
    const admin = path.join(path.dirname(server.projectDir), 'admin');
    await fs.mkdir(path.join(admin, 'test-results', 'users'), { recursive: true });
    const adminVideo = path.join(admin, 'test-results', 'users', 'video.webm');
    await fs.copyFile(media('login-flow.webm'), adminVideo);
    ids.admin = (await server.analyseOk({ videoPath: adminVideo, cwd: admin, prompt: 'Does the user list load?' })).interactionId;
    const adminShot = path.join(admin, 'test-results', 'users', 'dashboard.png');
    await fs.copyFile(media('dashboard.png'), adminShot);
    await server.mcpTool('analyze_data_visualization', { image_source: adminShot, cwd: admin });
    const diagram = await server.addMedia('dashboard.png', 'dashboard.png', 'dashboard');
    ids.text = (await server.mcpTool('extract_text_from_screenshot', { image_source: diagram, cwd: server.projectDir })).structuredContent?.interactionId;
    const missing = path.join(server.projectDir, 'test-results', 'signup', 'video.webm');
    await server.analyse({ videoPath: missing });
    const checkout = await server.addMedia('login-flow.mp4', 'video.mp4', 'checkout');
    ids.checkout = (await server.analyseOk({ videoPath: checkout, prompt: 'Describe the checkout test step by step.' })).interactionId;
    const expected = await server.addMedia('login.png', 'expected.png', 'login-visual');
    const actual = await server.addMedia('login-error.png', 'actual.png', 'login-visual');
    ids.diff = (await server.mcpTool('ui_diff_check', { expected_image_source: expected, actual_image_source: actual, cwd: server.projectDir })).structuredContent?.interactionId;
    const shot = await server.addMedia('login-error.png', 'screenshot.png', 'login-error');
    ids.image = (await server.mcpTool('analyze_image', { image_source: shot, prompt: 'Which error does the form show?', cwd: server.projectDir })).structuredContent?.interactionId;
    const video = await server.addMedia('login-flow.webm', 'video.webm', 'login');
    ids.login = (await server.analyseOk({
      videoPath: video,
      expectations: ['the dashboard shows "Welcome"', 'no error message is shown'],
    })).interactionId;
    for (const [k, v] of Object.entries(ids)) if (!v) throw new Error(`no interaction id for ${k}`);

    await server.stopServer();
    const spec = REWRITES(ids);
    execFileSync('python3', ['-c', REWRITE_PY, path.join(server.dataDir, 'history.sqlite3'), JSON.stringify(spec)]);
    await server.spawnServer();

    const browser = await chromium.launch({
    executablePath: CHROMIUM, args: ARGS, headless: true,
    // Off the session bus: no desktop portals started for a headless run.
    env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/vaider-no-bus' },
  });
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', deviceScaleFactor: 1 });
      const page = await context.newPage();
      await page.goto(await server.uiUrl());
      await page.locator(`#history-rows tr[data-id="${ids.login}"]`).waitFor();
      await page.mouse.move(0, 0);
      await fs.mkdir(OUT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(OUT_DIR, 'history.png') });

      await page.evaluate((id) => { location.hash = `#/i/${id}`; }, ids.login);
      await page.locator('#description').waitFor();
      await page.waitForFunction(() => document.querySelector('#media-video')?.readyState >= 2);
      // A frame from the middle of the recording, the player paused on it.
      await page.evaluate(() => new Promise((resolve) => {
        const v = document.querySelector('#media-video');
        v.addEventListener('seeked', () => resolve(), { once: true });
        v.pause();
        v.currentTime = 2.6;
      }));
      await page.waitForFunction(() => document.querySelector('#media-video').readyState === 4);
      await page.waitForTimeout(1500);
      await page.screenshot({ path: path.join(OUT_DIR, 'detail.png') });

      await page.evaluate(() => { location.hash = '#/settings'; });
      await page.locator('#key-status-gemini').waitFor();
      await page.waitForTimeout(200);
      await page.screenshot({ path: path.join(OUT_DIR, 'settings.png') });
      await context.close();
    } finally {
      await browser.close();
    }
    for (const name of ['history.png', 'detail.png', 'settings.png']) {
      const { size } = await fs.stat(path.join(OUT_DIR, name));
      console.log(`docs/${name}: ${(size / 1024).toFixed(0)} KB`);
    }
  } finally {
    await server.stop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
