// End-to-end tests of the Vaider tray app, as a user and an agent meet it: the app is started
// by tauri-driver (WebDriver for WebKitGTK), its embedded server is reached over HTTP, an
// analysis is made through /mcp with the official MCP client, and the window is driven with
// WebDriver. Run by scripts/desktop-test.sh inside Xvfb and a private D-Bus session; the
// environment variables below say where everything is.
//
//   VAIDER_DESKTOP_BIN  the app binary          FAKE_GEMINI_BIN  the fake Gemini binary
//   TAURI_DRIVER_BIN    tauri-driver            MEDIA_DIR        holds login-flow.webm
//   XWIN                tests/desktop/xwin.py (window list/close, screenshots)
//   TRAY                tests/desktop/tray.py (the tray menu over D-Bus, as a panel sees it)
//   ARTIFACTS_DIR       where screenshots and app logs go on failure (optional)

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const need = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run the tests with scripts/desktop-test.sh)`);
  return value;
};
const APP = need('VAIDER_DESKTOP_BIN');
const FAKE_GEMINI = need('FAKE_GEMINI_BIN');
const TAURI_DRIVER = need('TAURI_DRIVER_BIN');
const MEDIA_DIR = need('MEDIA_DIR');
const XWIN = need('XWIN');
const TRAY = need('TRAY');
const ARTIFACTS = process.env.ARTIFACTS_DIR || '';

// The MCP SDK's schema validator (ajv) warns on every call about the integer formats that
// Rust's schemas carry (uint64, uint): valid JSON Schema, only unknown to ajv.
const warn = console.warn;
console.warn = (...args) => {
  if (!/^unknown format "u?int\d*"/.test(String(args[0]))) warn(...args);
};

// ---- small helpers ------------------------------------------------------------------------

/** Polls `probe` every 100 ms until it returns a truthy value; fails after `seconds`. */
async function waitFor(what, probe, seconds = 30) {
  const deadline = Date.now() + seconds * 1000;
  let last = 'nothing yet';
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
      last = `got ${JSON.stringify(value)}`;
    } catch (error) {
      last = error.message;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds}s waiting for ${what} (last: ${last})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Ports handed out so far. The kernel may give a just-closed port again, and none of these is
// bound until tauri-driver, WebKitWebDriver or the app starts: without this, the app's port and
// the driver's could be the same one (the app then reports "port in use" and the driver answers
// the app's routes with "unknown command").
const handedOut = new Set();

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => {
        if (handedOut.has(port)) {
          freePort().then(resolve, reject);
        } else {
          handedOut.add(port);
          resolve(port);
        }
      });
    });
  });
}

/** Children of each process, from /proc. */
function processTree() {
  const children = new Map();
  const names = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid ...: comm may hold spaces and parentheses.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    names.set(Number(entry), comm);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(entry));
  }
  return { children, names };
}

function descendants(pid) {
  const { children, names } = processTree();
  const found = [];
  const stack = [...(children.get(pid) || [])];
  while (stack.length) {
    const p = stack.pop();
    found.push({ pid: p, name: names.get(p) });
    stack.push(...(children.get(p) || []));
  }
  return found;
}

/** Whether `pid` runs (a zombie, exited but not yet reaped by its parent, does not). */
const alive = (pid) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

function xwin(...args) {
  return execFileSync('/usr/bin/python3', [XWIN, ...args], { encoding: 'utf8' });
}
const windowTitles = () => xwin('list').split('\n').filter(Boolean);

/**
 * Closes the app's window as a user does (the window manager's close), and waits until it is
 * gone. A window shown a moment ago may not yet handle the close on a loaded machine, so the
 * close is sent again every 3 s, as a user clicks again.
 */
async function closeWindow() {
  let polls = 0;
  xwin('close', 'Vaider');
  await waitFor('the window to go', () => {
    if (!windowTitles().includes('Vaider')) return true;
    if (++polls % 30 === 0) xwin('close', 'Vaider');
    return false;
  });
}

/** The app's tray menu, read over D-Bus as the desktop panel reads it. */
const trayMenu = (pid) => JSON.parse(execFileSync('/usr/bin/python3', [TRAY, String(pid), 'menu'], { encoding: 'utf8' }));
const trayItem = (pid, label) => trayMenu(pid).find((item) => item.label === label);
/** Clicks a tray menu item, as a user does in the panel. */
const trayClick = (pid, label) => execFileSync('/usr/bin/python3', [TRAY, String(pid), 'click', label], { encoding: 'utf8' });
const clipboard = () => execFileSync('xclip', ['-o', '-selection', 'clipboard'], { encoding: 'utf8', timeout: 10_000 });

/** Starts a child whose output goes to a log file; resolves once `ready(text)` matches. */
function startLogged(name, command, args, options, ready) {
  const log = path.join(work, `${name}.log`);
  const out = fs.openSync(log, 'w');
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', out] });
  children.push(child);
  let text = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      fs.appendFileSync(log, chunk);
      text += chunk;
      const match = ready(text);
      if (match) resolve({ child, match });
    });
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready; see ${log}`)));
    // A program that cannot start (a wrong path) emits 'error', never 'exit'.
    child.on('error', (error) => reject(new Error(`${name} did not start: ${error.message}`)));
  });
}

// ---- a minimal W3C WebDriver client -------------------------------------------------------

const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'; // the W3C element reference key

class WebDriver {
  constructor(base) {
    this.base = base;
    this.id = null;
  }

  async call(method, route, body) {
    const response = await fetch(this.base + route, {
      method,
      signal: AbortSignal.timeout(60_000),
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw new Error(`WebDriver ${method} ${route}: ${response.status} ${JSON.stringify(json.value ?? json).slice(0, 400)}`);
    }
    return json.value;
  }

  async start(application) {
    const value = await this.call('POST', '/session', {
      capabilities: { alwaysMatch: { 'tauri:options': { application } } },
    });
    this.id = value.sessionId;
  }

  session(route, method = 'GET', body) {
    return this.call(method, `/session/${this.id}${route}`, body);
  }

  url() {
    return this.session('/url');
  }

  exec(script, ...args) {
    return this.session('/execute/sync', 'POST', { script, args });
  }

  async find(css) {
    const found = await this.session('/elements', 'POST', { using: 'css selector', value: css });
    return found.map((e) => e[ELEMENT]);
  }

  click(element) {
    return this.session(`/element/${element}/click`, 'POST', {});
  }

  async quit() {
    if (this.id) await this.session('', 'DELETE').catch(() => {});
    this.id = null;
  }
}

// ---- the app under test ---------------------------------------------------------------------

const children = [];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vaider-desktop-test.'));
let geminiUrl;

/** A fresh HOME, config and data folder for one app, with the fake Gemini as provider. */
function appEnvironment(name, extra = {}) {
  const root = path.join(work, name);
  const env = {
    ...process.env,
    HOME: path.join(root, 'home'),
    VAIDER_CONFIG_DIR: path.join(root, 'config'),
    VAIDER_DATA_DIR: path.join(root, 'data'),
    VAIDER_GEMINI_BASE_URL: geminiUrl,
    GEMINI_API_KEY: 'test-gemini-key',
    VAIDER_LOG: 'info',
    // GStreamer's warnings and errors reach the app's log, which a stalled video's failure shows.
    GST_DEBUG: '2',
    ...extra,
  };
  for (const name of ['VAIDER_TOKEN', 'VAIDER_PORT', 'GOOGLE_API_KEY']) if (!(name in extra)) delete env[name];
  fs.mkdirSync(env.HOME, { recursive: true });
  return env;
}

/** The app, launched by tauri-driver (through WebKitWebDriver) and driven over WebDriver. */
class App {
  constructor(name, env) {
    this.name = name;
    this.env = env;
    this.driver = null;
    this.pid = null;
  }

  async start() {
    const driverPort = await freePort();
    const nativePort = await freePort();
    const log = fs.openSync(path.join(work, `${this.name}.log`), 'w');
    this.tauriDriver = spawn(
      TAURI_DRIVER,
      ['--port', String(driverPort), '--native-port', String(nativePort)],
      { env: this.env, stdio: ['ignore', log, log] },
    );
    children.push(this.tauriDriver);
    this.driver = new WebDriver(`http://127.0.0.1:${driverPort}`);
    await waitFor('tauri-driver to answer /status', () => this.driver.call('GET', '/status').then(() => true));
    await this.driver.start(APP);
    // The app is a child of WebKitWebDriver, itself a child of tauri-driver.
    const comm = path.basename(APP).slice(0, 15);
    this.pid = descendants(this.tauriDriver.pid).find((p) => p.name === comm)?.pid;
    assert.ok(this.pid, `no ${comm} process under tauri-driver`);
    return this;
  }

  async stop() {
    await this.driver?.quit();
    if (this.tauriDriver?.exitCode === null) this.tauriDriver.kill();
    if (this.pid && alive(this.pid)) process.kill(this.pid);
    if (this.pid) await waitFor(`${this.name} to exit`, () => !alive(this.pid), 10);
  }

  /** Another launch with the same environment; resolves with how it exited. */
  launchAgain() {
    const log = path.join(work, `${this.name}-second-launch.log`);
    const out = fs.openSync(log, 'w');
    const child = spawn(APP, [], { env: this.env, stdio: ['ignore', out, out] });
    children.push(child);
    return new Promise((resolve) => {
      const timer = setTimeout(() => child.kill(), 30_000); // it should hand over within ms
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal: signal && `${signal} (still running after 30 s)`, log });
      });
    });
  }
}

/** The lines of an app's log that speak of GStreamer or media requests (the last 40). */
function mediaLog(name) {
  try {
    const lines = fs.readFileSync(path.join(work, `${name}.log`), 'utf8').split('\n');
    return lines.filter((l) => /gst|GStreamer|media|WebKit/i.test(l)).slice(-40).join('\n') || '(none)';
  } catch (error) {
    return `(no log: ${error.message})`;
  }
}

function saveArtifacts(label) {
  if (!ARTIFACTS) return;
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  try {
    xwin('screenshot', path.join(ARTIFACTS, `${label}.png`));
  } catch (error) {
    console.error(`screenshot failed: ${error.message}`);
  }
  for (const name of fs.readdirSync(work).filter((n) => n.endsWith('.log'))) {
    fs.copyFileSync(path.join(work, name), path.join(ARTIFACTS, name));
  }
}

/** A test that keeps a screenshot and the logs (ARTIFACTS_DIR) when it fails. */
const step = (name, fn) =>
  test(name, async (t) => {
    try {
      await fn(t);
    } catch (error) {
      saveArtifacts(name.replace(/[^a-z0-9]+/gi, '-').toLowerCase());
      throw error;
    }
  });

before(async () => {
  const gemini = await startLogged('fake-gemini', FAKE_GEMINI, [], {}, (text) =>
    text.match(/^FAKE_GEMINI_URL=(\S+)$/m));
  geminiUrl = gemini.match[1];
});

after(async () => {
  // Each child's own children (the app, WebKit's web processes) go first, then the child; all are
  // waited for, because a process still writing its cache into `work` makes the removal fail.
  const running = [];
  for (const child of children.reverse()) {
    if (child.exitCode !== null) continue;
    for (const { pid } of descendants(child.pid)) {
      try {
        process.kill(pid, 'SIGTERM');
        running.push(pid);
      } catch {}
    }
    child.kill();
    running.push(child.pid);
  }
  const deadline = Date.now() + 10_000;
  while (running.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  fs.rmSync(work, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
});

describe('the tray app with its server', { concurrency: 1 }, () => {
  let app;
  let base;
  let token;
  let analysis;
  let autostartEntry;

  const api = async (method, route, body) => {
    const response = await fetch(base + route, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : null };
  };

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = appEnvironment('app', { VAIDER_PORT: String(port) });
    autostartEntry = path.join(env.HOME, '.config', 'autostart', 'Vaider.desktop');
    app = await new App('app', env).start();
  });

  after(() => app?.stop());

  step('the app starts its server: /v1/health answers', async () => {
    const health = await waitFor('GET /v1/health', async () => {
      const response = await fetch(`${base}/v1/health`);
      return response.ok && response.json();
    });
    assert.equal(health.status, 'ok');
    token = fs.readFileSync(path.join(app.env.VAIDER_DATA_DIR, 'token'), 'utf8').trim();
    assert.match(token, /^vdr_/);
  });

  step('the first run turns start at login on ($HOME/.config/autostart/Vaider.desktop)', async () => {
    const entry = fs.readFileSync(autostartEntry, 'utf8');
    assert.match(entry, new RegExp(`^Exec=${APP.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --hidden$`, 'm'));
  });

  step('the window shows the web UI from the embedded server, signed in', async () => {
    // The page takes the token out of the address once it has it.
    await waitFor('the window to load the UI and take the token', async () => {
      const current = await app.driver.url();
      return current.startsWith(`${base}/`) && !current.includes('token=');
    });
    const history = await waitFor('the history page', () =>
      app.driver.exec("return document.querySelector('h1')?.textContent || ''"));
    assert.equal(history, 'History');
  });

  step('an analysis through /mcp with the MCP SDK client', async () => {
    const project = path.join(work, 'project', 'test-results');
    fs.mkdirSync(project, { recursive: true });
    const video = path.join(project, 'login-flow.webm');
    fs.copyFileSync(path.join(MEDIA_DIR, 'login-flow.webm'), video);

    const client = new Client({ name: 'vaider-desktop-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'analyze_video'), 'analyze_video is listed');
      const result = await client.callTool({
        name: 'analyze_video',
        arguments: { video_source: video, prompt: 'Describe the login flow step by step.' },
      });
      assert.ok(!result.isError, `analyze_video failed: ${JSON.stringify(result.content)}`);
      analysis = result.structuredContent;
      assert.ok(analysis?.interactionId, `no interactionId in ${JSON.stringify(analysis)}`);
      assert.ok(analysis.description?.length > 0, 'a description came back');
    } finally {
      await client.close();
    }
  });

  step('the window\'s history lists the analysis; its detail plays the video', async (t) => {
    const id = analysis.interactionId;
    const row = `tr[data-id="${id}"][data-status="ok"] a`;
    await waitFor('the analysis in the history list', async () => {
      const [found] = await app.driver.find(row);
      if (!found) {
        const ids = await app.driver.exec("return [...document.querySelectorAll('tr[data-id]')].map((tr) => tr.dataset.id + ' ' + tr.dataset.status)");
        throw new Error(`rows ${JSON.stringify(ids)}, none is ${id} ok`);
      }
      return found;
    });
    // The list re-renders on live events; a stale row is looked up and clicked again.
    await waitFor('a click on the analysis', async () => {
      const [link] = await app.driver.find(row);
      assert.equal(await app.driver.session(`/element/${link}/text`), 'login-flow.webm');
      await app.driver.click(link);
      return true;
    });
    await waitFor('the detail page', async () => (await app.driver.url()).includes(`#/i/${id}`));
    await waitFor('the video element with its source', () =>
      app.driver.exec("const v = document.querySelector('video'); return Boolean(v && v.currentSrc);"));
    // What the element says, and whether play() was turned down, for the failure message.
    await app.driver.exec(`const v = document.querySelector('video'); v.muted = true;
      window.__playError = null;
      v.play().catch((e) => { window.__playError = String(e && e.name || e); });`);
    const state = () =>
      app.driver.exec(`const v = document.querySelector('video');
        const b = v.buffered;
        return { readyState: v.readyState, networkState: v.networkState, paused: v.paused,
                 currentTime: v.currentTime, duration: v.duration,
                 buffered: b.length ? b.end(b.length - 1) : 0, playError: window.__playError,
                 error: v.error && v.error.code, same: v === window.__video, src: v.currentSrc };`);
    await app.driver.exec("window.__video = document.querySelector('video');");
    // A limit, not a timing check: GStreamer's first frames took over 30 s on a machine whose
    // two cores ran ten jobs (a fresh-machine run beside four builds); a video that cannot play
    // fails with its MediaError at once, whatever the limit.
    const playing = async (what, seconds) => {
      let last = null;
      try {
        return await waitFor(what, async () => {
          last = await state();
          if (last.error) throw new Error(`the video failed with MediaError ${last.error} (${last.src})`);
          return last.readyState >= 3 && last;
        }, seconds);
      } catch (error) {
        throw new Error(`${error.message}; the element: ${JSON.stringify(last)}; ` +
          `GStreamer and media lines of the app's log:\n${mediaLog(app.name)}`);
      }
    };
    let first;
    try {
      first = await playing('readyState >= 3 (HAVE_FUTURE_DATA)', 45);
    } catch (error) {
      // Twice on fresh machines (never here) the element stayed below HAVE_FUTURE_DATA with
      // no error. Say so, then do what a user would: reload the video and press play again.
      t.diagnostic(`stalled, reloading once: ${error.message}`);
      await app.driver.exec("const v = document.querySelector('video'); v.load(); v.play().catch(() => {});");
      first = await playing('readyState >= 3 after a reload', 90);
    }
    const later = await waitFor('currentTime to advance', async () => {
      const s = await state();
      if (s.error) throw new Error(`the video failed with MediaError ${s.error}`);
      return s.currentTime > first.currentTime + 0.2 && s;
    }, 120);
    assert.ok(later.currentTime > first.currentTime);
    t.diagnostic(`video: readyState ${first.readyState} at ${first.currentTime.toFixed(2)} s, ` +
      `then ${later.readyState} at ${later.currentTime.toFixed(2)} s (${later.src})`);
  });

  step('PUT /api/desktop turns start at login off and on again', async () => {
    assert.deepEqual((await api('GET', '/api/desktop')).json, { available: true, autostart: true });
    const off = await api('PUT', '/api/desktop', { autostart: false });
    assert.ok(off.status < 300, `PUT false answered ${off.status} ${JSON.stringify(off.json)}`);
    assert.ok(!fs.existsSync(autostartEntry), 'the autostart entry is removed');
    assert.equal((await api('GET', '/api/desktop')).json.autostart, false);
    const on = await api('PUT', '/api/desktop', { autostart: true });
    assert.ok(on.status < 300, `PUT true answered ${on.status} ${JSON.stringify(on.json)}`);
    assert.ok(fs.existsSync(autostartEntry), 'the autostart entry is back');
    assert.equal((await api('GET', '/api/desktop')).json.autostart, true);
  });

  step('the tray shows where the server runs; Pause/Resume there and in the UI stay in step', async () => {
    const where = base.replace('http://', '');
    const labels = trayMenu(app.pid).map((item) => item.label);
    // A source build checks no release feed: the item names the version and does nothing.
    assert.match(labels[1], /^Vaider \d+\.\d+\.\d+$/);
    assert.equal(trayItem(app.pid, labels[1]).enabled, false, 'no newer release is known');
    assert.deepEqual(labels, [
      `Running on ${where}`, labels[1], 'Open history', 'Settings',
      'Copy MCP config for Cursor', 'Copy MCP config for Claude Code', 'Copy MCP config for VS Code',
      'Pause server', 'Start at login', 'Quit Vaider',
    ]);
    assert.equal(trayItem(app.pid, `Running on ${where}`).enabled, false, 'the status line is not clickable');

    trayClick(app.pid, 'Pause server');
    await waitFor('the tray to say paused', () => trayItem(app.pid, `Paused on ${where}`));
    assert.ok(trayItem(app.pid, 'Resume server'));
    assert.equal((await api('GET', '/api/settings')).json.paused, true, 'the engine is paused');
    trayClick(app.pid, 'Resume server');
    await waitFor('the tray to say running', () => trayItem(app.pid, `Running on ${where}`));
    assert.equal((await api('GET', '/api/settings')).json.paused, false);

    // Paused from the web UI's API: the tray follows by itself.
    assert.equal((await api('POST', '/api/server/pause')).json.paused, true);
    await waitFor('the tray to follow a pause made in the UI', () => trayItem(app.pid, 'Resume server'));
    await api('POST', '/api/server/resume');
    await waitFor('the tray to follow the resume', () => trayItem(app.pid, 'Pause server'));
  });

  step('the tray\'s Start at login removes and restores the login entry', async () => {
    assert.equal(trayItem(app.pid, 'Start at login').checked, true);
    trayClick(app.pid, 'Start at login');
    await waitFor('the entry to go', () => !fs.existsSync(autostartEntry));
    await waitFor('the mark to go', () => trayItem(app.pid, 'Start at login').checked === false);
    assert.equal((await api('GET', '/api/desktop')).json.autostart, false);
    trayClick(app.pid, 'Start at login');
    await waitFor('the entry to come back', () => fs.existsSync(autostartEntry));
    await waitFor('the mark to come back', () => trayItem(app.pid, 'Start at login').checked === true);
    // Changed from the UI's settings: the mark follows.
    await api('PUT', '/api/desktop', { autostart: false });
    await waitFor('the mark to follow the UI', () => trayItem(app.pid, 'Start at login').checked === false);
    await api('PUT', '/api/desktop', { autostart: true });
    await waitFor('the mark to follow the UI again', () => trayItem(app.pid, 'Start at login').checked === true);
  });

  step('Copy MCP config puts each client\'s config, with URL and token, on the clipboard', async () => {
    const url = `${base}/mcp`;
    const headers = { Authorization: `Bearer ${token}` };
    const expected = {
      'Copy MCP config for Cursor': { mcpServers: { vaider: { url, headers } } },
      'Copy MCP config for Claude Code': { mcpServers: { vaider: { type: 'http', url, headers } } },
      'Copy MCP config for VS Code': { servers: { vaider: { type: 'http', url, headers } } },
    };
    for (const [label, config] of Object.entries(expected)) {
      trayClick(app.pid, label);
      let text;
      await waitFor(`the clipboard after "${label}"`, () => {
        text = clipboard();
        assert.deepStrictEqual(JSON.parse(text), config);
        return true;
      }, 10);
      assert.ok(text.includes('\n  '), 'pretty JSON');
    }
  });

  step('the tray\'s Settings and Open history move the window', async () => {
    trayClick(app.pid, 'Settings');
    await waitFor('the settings page', async () => (await app.driver.url()).endsWith('#/settings'));
    assert.equal(await waitFor('its heading', () =>
      app.driver.exec("return document.querySelector('h1')?.textContent || ''")), 'Settings');
    trayClick(app.pid, 'Open history');
    await waitFor('the history page', async () => (await app.driver.url()).endsWith('#/'));
  });

  step('a second launch hands over to the running app and exits', async () => {
    const second = await app.launchAgain();
    assert.equal(second.code, 0, `the second launch exited with ${second.code ?? second.signal}; see ${second.log}`);
    assert.ok(alive(app.pid), 'the first app still runs');
    assert.equal((await fetch(`${base}/v1/health`)).status, 200);
    assert.deepEqual(windowTitles().filter((t) => t === 'Vaider'), ['Vaider'], 'still one window');
  });

  step('closing the window keeps the app in the tray, without the web process', async () => {
    await closeWindow();
    await waitFor('the WebKit web process to exit', () =>
      !descendants(app.pid).some((p) => p.name.startsWith('WebKitWebProces')));
    assert.ok(alive(app.pid), 'the app still runs');
    assert.equal((await fetch(`${base}/v1/health`)).status, 200);
  });

  step('a second launch opens the window again', async () => {
    const second = await app.launchAgain();
    assert.equal(second.code, 0, `the second launch exited with ${second.code ?? second.signal}; see ${second.log}`);
    await waitFor('the window to come back', () => windowTitles().includes('Vaider'));
    assert.ok(alive(app.pid), 'the first app still runs');
  });

  step('the tray\'s Open history also brings a closed window back', async () => {
    await closeWindow();
    trayClick(app.pid, 'Open history');
    await waitFor('the window to come back', () => windowTitles().includes('Vaider'));
  });

  step('the tray\'s Quit ends the app and its server', async () => {
    trayClick(app.pid, 'Quit Vaider');
    await waitFor('the app to exit', () => !alive(app.pid), 15);
    await assert.rejects(fetch(`${base}/v1/health`), 'nothing listens on the port any more');
  });
});

describe('the tray app when its port is taken', { concurrency: 1 }, () => {
  let app;
  let blocker;
  let taken;
  let offered;

  before(async () => {
    // Another program (not a Vaider) holds the configured port.
    taken = await freePort();
    blocker = net.createServer((socket) => socket.destroy());
    await new Promise((resolve) => blocker.listen(taken, '127.0.0.1', resolve));
    const env = appEnvironment('port-taken');
    fs.mkdirSync(env.VAIDER_CONFIG_DIR, { recursive: true });
    fs.writeFileSync(path.join(env.VAIDER_CONFIG_DIR, 'config.toml'), `port = ${taken}\n`);
    app = await new App('port-taken', env).start();
  });

  after(async () => {
    await app?.stop();
    blocker?.close();
  });

  step('the window says the port is taken and offers a free one', async () => {
    const title = await waitFor('the fallback page to explain', async () => {
      const text = await app.driver.exec("return document.getElementById('title')?.textContent || ''");
      return text.includes('in use') && text;
    });
    assert.equal(title, `Port ${taken} is already in use`);
    const [button] = await app.driver.find('#use-port');
    const label = await app.driver.session(`/element/${button}/text`);
    const match = label.match(/^Use port (\d+) instead$/);
    assert.ok(match, `button says ${JSON.stringify(label)}`);
    offered = Number(match[1]);
    assert.notEqual(offered, taken);
  });

  step('"Use port N instead" saves N in config.toml and shows the UI from there', async () => {
    const [button] = await app.driver.find('#use-port');
    await app.driver.click(button);
    const base = `http://127.0.0.1:${offered}`;
    await waitFor('the window to move to the UI', async () => (await app.driver.url()).startsWith(`${base}/`));
    assert.equal((await fetch(`${base}/v1/health`)).status, 200);
    const config = fs.readFileSync(path.join(app.env.VAIDER_CONFIG_DIR, 'config.toml'), 'utf8');
    assert.match(config, new RegExp(`^port = ${offered}$`, 'm'));
    const heading = await waitFor('the history page', () =>
      app.driver.exec("return document.querySelector('h1')?.textContent || ''"));
    assert.equal(heading, 'History');
  });
});
