// Measures the history view with 10,000 interactions in the real server's history, in
// headless Chromium. A report, not a test: nothing fails on a missed target.
//
//   node bench-history.mjs [--rows 10000] [--paint-runs 5] [--search-runs 10] [--out FILE]
//
// 1. starts `vaider serve` once (it creates the schema) and makes one real analysis,
// 2. stops it and inserts the rows with python3's sqlite3 (columns read from the table),
// 3. starts it again and measures, in the page:
//    - first paint: navigation start to the frame that paints the first row (median),
//    - search: the search box's input event to the rows being replaced (median),
//    - typing: the last keystroke of a query typed at 60 ms a key to its final rows (a query
//      goes out at once after a pause, else when typing stops for 150 ms),
//    - load more: the button press to the next 100 rows in the table.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { VaiderServer, REPO_ROOT } from './lib/vaider.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run'];

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}
const ROWS = Number(arg('rows', 10_000));
const PAINT_RUNS = Number(arg('paint-runs', 5));
const SEARCH_RUNS = Number(arg('search-runs', 10));
const OUT = arg('out', path.join(process.env.CARGO_TARGET_DIR || path.join(REPO_ROOT, 'target'), 'bench-ui.md'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x) => `${x.toFixed(1)} ms`;

// Python: inserts ROWS interactions, newest first in time, spread over the last days, across
// 20 projects, 8 tools, every status; searchable words in sources, prompts and descriptions.
const SEED_PY = String.raw`
import sqlite3, sys, random, datetime, json, os
db, n, media = sys.argv[1], int(sys.argv[2]), sys.argv[3]
con = sqlite3.connect(db)
cols = [r[1] for r in con.execute("PRAGMA table_info(interactions)")]
rng = random.Random(42)
projects = ["shop", "admin", "billing", "checkout", "mobile-web", "docs-site", "crm", "inventory", "analytics",
            "auth", "search", "cart", "profile", "settings", "onboarding", "reports", "chat", "calendar", "maps", "media"]
tests = ["login", "signup", "checkout", "password-reset", "dashboard", "search-results", "cart-update", "profile-edit",
         "invoice-download", "dark-mode", "upload-avatar", "filters", "pagination", "modal-close", "toast-error"]
tools = [("analyze_video", 6), ("analyze_image", 2), ("ui_diff_check", 1), ("diagnose_error_screenshot", 1),
         ("extract_text_from_screenshot", 1), ("ui_to_artifact", 1), ("understand_technical_diagram", 1),
         ("analyze_data_visualization", 1)]
statuses = [("ok", 80), ("error", 6), ("timeout", 4), ("rejected", 6), ("running", 1)]
models = [("gemini", "gemini-3.5-flash-lite", 70), ("gemini", "gemini-3.5-flash", 10), ("openai", "gpt-4.1-mini", 10),
          ("anthropic", "claude-sonnet-4-5", 10)]
def pick(items):
    total = sum(i[-1] for i in items)
    x = rng.uniform(0, total)
    for i in items:
        x -= i[-1]
        if x <= 0:
            return i
    return items[-1]
now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
rows = []
for i in range(n):
    t = now - datetime.timedelta(seconds=i * 37 + rng.random())
    created = t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)
    ms = int(t.timestamp() * 1000)
    rid = "%012x7%03x%016x" % (ms, rng.getrandbits(12), rng.getrandbits(64))
    project = "/home/dev/" + projects[i % len(projects)]
    test = tests[rng.randrange(len(tests))]
    tool = pick(tools)[0]
    status = pick(statuses)[0] if i > 0 else "ok"
    provider, model, _ = pick(models)
    video = tool == "analyze_video"
    name = "video.webm" if video else rng.choice(["screenshot.png", "expected.png", "error.png", "chart.png"])
    source = "%s/test-results/%s-%d/%s" % (project, test, i % 97, name)
    dur = rng.randint(900, 14000) if status != "running" else None
    inp, out = (rng.randint(1500, 30000), rng.randint(100, 900)) if status == "ok" else (0, 0)
    cost = round(inp * 0.3e-6 + out * 2.5e-6, 6) if status == "ok" else 0.0
    err = {"error": ("UPSTREAM_ERROR", "The model service answered 503: the model is overloaded. Try again later."),
           "timeout": ("TIMEOUT", "The analysis took longer than 30 s."),
           "rejected": ("INVALID_PATH", "The file %s does not exist." % source)}.get(status, (None, None))
    desc = None
    if status == "ok":
        desc = "00:00 The %s page of %s is shown.\n00:0%d The user fills the form and clicks \"Continue\".\n00:0%d A %s message appears." % (
            test.replace("-", " "), project.rsplit("/", 1)[1], rng.randint(1, 4), rng.randint(5, 9),
            rng.choice(["success", "validation", "welcome", "confirmation"]))
    row = {
        "id": rid, "created_at": created,
        "finished_at": None if status == "running" else created,
        "tool": tool, "door": rng.choice(["mcp", "mcp", "rest", "cli"]), "source": source,
        "media_path": media if video else None, "media_type": "video/webm" if video else "image/png",
        "media_sha256": "%064x" % rng.getrandbits(256), "size_bytes": rng.randint(50_000, 5_000_000),
        "provider": provider, "model": model,
        "prompt": "Check the %s flow: describe each step and any error." % test.replace("-", " "),
        "expectations_json": "[]", "status": status, "cached": 1 if (status == "ok" and i % 13 == 0) else 0,
        "description": desc, "result_json": None, "error_code": err[0], "error_message": err[1],
        "input_tokens": inp, "output_tokens": out, "cost_usd": cost, "duration_ms": dur,
        "log_dir": None, "cache_key": None, "project": project,
    }
    rows.append(tuple(row.get(c) for c in cols))
con.executemany("INSERT INTO interactions (%s) VALUES (%s)" % (", ".join(cols), ", ".join("?" * len(cols))), rows)
con.commit()
print(len(rows), "rows;", "columns:", ", ".join(cols))
`;

async function main() {
  const server = new VaiderServer({ name: 'bench', keychain: false });
  await server.start();
  const video = await server.addMedia('login-flow.webm');
  await server.analyseOk({ videoPath: video });
  await server.stopServer();
  const db = path.join(server.dataDir, 'history.sqlite3');
  const t0 = Date.now();
  const seeded = execFileSync('python3', ['-c', SEED_PY, db, String(ROWS), video], { encoding: 'utf8' }).trim();
  console.log(`seeded ${seeded} (${Date.now() - t0} ms)`);
  await server.spawnServer();
  const total = (await server.json('/api/history?limit=1')).body.total;
  if (total !== ROWS + 1) throw new Error(`the history holds ${total} rows, expected ${ROWS + 1}`);

  const browser = await chromium.launch({
    executablePath: CHROMIUM, args: ARGS, headless: true,
    // Off the session bus: no desktop portals started for a headless run.
    env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/vaider-no-bus' },
  });
  const version = browser.version();
  try {
    // ---- first paint --------------------------------------------------------------------
    const paints = [];
    const inserted = [];
    const apiFirst = [];
    for (let i = 0; i < PAINT_RUNS + 1; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.addInitScript(() => {
        // The first row in the DOM, then the frame that paints it: a task posted from the
        // next requestAnimationFrame runs once that frame is drawn.
        window.__inserted = new Promise((resolve) => {
          new MutationObserver((_, obs) => {
            if (document.querySelector('#history-rows tr')) { obs.disconnect(); resolve(performance.now()); }
          }).observe(document, { childList: true, subtree: true });
        });
        window.__paint = window.__inserted.then(() => new Promise((resolve) => {
          requestAnimationFrame(() => {
            const ch = new MessageChannel();
            ch.port1.onmessage = () => resolve(performance.now());
            ch.port2.postMessage(0);
          });
        }));
      });
      await page.goto(await server.uiUrl());
      const [paint, insert] = await page.evaluate(() => Promise.race([
        Promise.all([window.__paint, window.__inserted]),
        new Promise((_, reject) => setTimeout(() => reject(new Error('no history row within 20 s')), 20_000)),
      ]));
      apiFirst.push(await page.evaluate(() => {
        const e = performance.getEntriesByType('resource').find((r) => r.name.includes('/api/history?limit=100'));
        return e ? e.responseEnd - e.startTime : NaN;
      }));
      const rows = await page.locator('#history-rows tr').count();
      if (rows !== 100) throw new Error(`the first page shows ${rows} rows, expected 100`);
      if (i > 0) { paints.push(paint); inserted.push(insert); } else apiFirst.pop(); // the first run warms up
      await context.close();
    }

    // ---- search ---------------------------------------------------------------------------
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(await server.uiUrl());
    await page.locator('#history-rows tr').first().waitFor();
    await page.evaluate(() => {
      const input = document.querySelector('#history-search');
      window.__search = { t0: null, times: [], lastInput: null, lastMutation: null };
      document.addEventListener('input', (e) => {
        if (e.target !== input) return;
        window.__search.t0 = performance.now();
        window.__search.lastInput = window.__search.t0;
      }, true);
      new MutationObserver(() => {
        const s = window.__search;
        s.lastMutation = performance.now();
        if (s.t0 !== null) { s.times.push(s.lastMutation - s.t0); s.t0 = null; }
      }).observe(document.querySelector('#history-rows'), { childList: true });
    });
    const queries = ['checkout', 'login', 'overloaded', 'gpt-4.1', 'password reset', 'billing', 'dark mode',
      'claude', 'invoice', 'welcome', 'toast', 'pagination'].slice(0, SEARCH_RUNS);
    while (queries.length < SEARCH_RUNS) queries.push(`${queries[queries.length % 12]}`);
    const searches = [];
    const searchApi = [];
    for (const [i, q] of queries.entries()) {
      await page.waitForTimeout(300); // past the debounce window: the query is sent at once
      await page.fill('#history-search', q);
      await page.waitForFunction((n) => window.__search.times.length >= n, i + 1);
      searches.push(await page.evaluate(() => window.__search.times[window.__search.times.length - 1]));
      searchApi.push(await page.evaluate((query) => {
        const e = performance.getEntriesByType('resource').filter((r) => r.name.includes(`q=${query}`)).pop();
        return e ? e.responseEnd - e.startTime : NaN;
      }, new URLSearchParams({ q }).toString().slice(2)));
      const expected = (await server.json(`/api/history?limit=1&q=${encodeURIComponent(q)}`)).body.total;
      const shown = await page.locator('#history-rows tr').count();
      if (shown !== Math.min(100, expected)) throw new Error(`search ${q}: ${shown} rows shown, ${expected} match`);
    }

    // ---- typing (debounced) -----------------------------------------------------------------
    const typed = [];
    for (const q of ['signup', 'profile', 'upload', 'modal', 'filters']) {
      await page.fill('#history-search', '');
      await page.waitForTimeout(400);
      await page.evaluate(() => { window.__search.lastMutation = null; window.__search.t0 = null; });
      await page.locator('#history-search').pressSequentially(q, { delay: 60 });
      await page.waitForTimeout(700);
      const { lastInput, lastMutation } = await page.evaluate(() => window.__search);
      if (lastMutation === null || lastMutation < lastInput) throw new Error(`typing ${q}: no update after the last key`);
      typed.push(lastMutation - lastInput);
    }

    // ---- load more -----------------------------------------------------------------------
    await page.fill('#history-search', '');
    await page.waitForTimeout(600);
    const more = [];
    for (let i = 0; i < 5; i++) {
      const took = await page.evaluate(() => new Promise((resolve) => {
        const body = document.querySelector('#history-rows');
        const before = body.children.length;
        const t = performance.now();
        new MutationObserver((_, obs) => {
          if (body.children.length >= before + 100) { obs.disconnect(); resolve(performance.now() - t); }
        }).observe(body, { childList: true });
        document.querySelector('#load-more').click();
      }));
      more.push(took);
    }
    const shownAfter = await page.locator('#history-rows tr').count();
    await context.close();

    const lines = [
      `# UI history benchmark`,
      '',
      `${(ROWS + 1).toLocaleString('en')} interactions in the history; Chromium ${version} headless, 1280x800; ${process.env.VAIDER_BUILD || 'vaider'} build.`,
      '',
      '| measure | median | runs |',
      '|---|---|---|',
      `| first paint: navigation start to the first row painted | ${ms(median(paints))} | ${paints.map((x) => x.toFixed(0)).join(', ')} |`,
      `| (first rows in the DOM) | ${ms(median(inserted))} | ${inserted.map((x) => x.toFixed(0)).join(', ')} |`,
      `| (of which GET /api/history, first page) | ${ms(median(apiFirst))} | ${apiFirst.map((x) => x.toFixed(0)).join(', ')} |`,
      `| search: input event to rows updated | ${ms(median(searches))} | ${searches.map((x) => x.toFixed(0)).join(', ')} |`,
      `| (of which GET /api/history?q=…) | ${ms(median(searchApi))} | ${searchApi.map((x) => x.toFixed(0)).join(', ')} |`,
      `| typing at 60 ms a key: last keystroke to final rows (waits up to 150 ms) | ${ms(median(typed))} | ${typed.map((x) => x.toFixed(0)).join(', ')} |`,
      `| load more: click to 100 more rows | ${ms(median(more))} | ${more.map((x) => x.toFixed(0)).join(', ')} |`,
      '',
      `Targets: first paint < 300 ms, search < 100 ms. After 5 "load more": ${shownAfter} rows in the table.`,
    ];
    const report = lines.join('\n');
    console.log(`\n${report}\n`);
    fs.mkdirSync(path.dirname(OUT), { recursive: true });
    fs.writeFileSync(OUT, `${report}\n`);
    console.log(`written to ${OUT}`);
  } finally {
    await browser.close();
    await server.stop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
