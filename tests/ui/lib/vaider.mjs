// Runs the real `vaider serve` (and the fake Gemini it talks to) for the UI tests, the
// screenshots and the benchmark. Every server gets its own temporary HOME, config and data
// folders and a free port; `restart()` keeps all of them, so settings must survive it.

import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const execFileP = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '..', '..', '..');
const TARGET_DIR = process.env.CARGO_TARGET_DIR
  ? path.resolve(REPO_ROOT, process.env.CARGO_TARGET_DIR)
  : path.join(REPO_ROOT, 'target');
export const VAIDER_BIN = process.env.VAIDER_BIN || path.join(TARGET_DIR, 'debug', 'vaider');
export const FAKE_GEMINI_BIN = process.env.FAKE_GEMINI_BIN || path.join(TARGET_DIR, 'debug', 'fake-gemini');
export const MEDIA_DIR = process.env.MEDIA_DIR || path.resolve(REPO_ROOT, '..', 'shared', 'media');
export const FAKE_GEMINI_KEY = 'test-gemini-key';

function need(file, what) {
  if (!fs.existsSync(file)) {
    throw new Error(`${what} not found at ${file}: build it with \`cargo build -p vaider-cli -p fake-gemini\` `
      + '(scripts/ui-test.sh does), or point VAIDER_BIN / FAKE_GEMINI_BIN / MEDIA_DIR at it.');
  }
}

export function media(name) {
  const file = path.join(MEDIA_DIR, name);
  need(file, `test media ${name}`);
  return file;
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The environment a child gets: ours minus what would leak a real setup into the test. */
function baseEnv() {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith('VAIDER_') || /_API_KEY$/.test(k)) delete env[k];
  }
  delete env.FAKE_GEMINI_LOG;
  return env;
}

/** Starts the fake Gemini binary; resolves to {url, stop()} once it prints its URL. */
export async function startFakeGemini({ logFile, args = [] } = {}) {
  need(FAKE_GEMINI_BIN, 'the fake-gemini binary');
  const child = spawn(FAKE_GEMINI_BIN, args, { env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const log = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
  if (log) child.stderr.pipe(log);
  else child.stderr.resume();
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('fake-gemini printed no URL within 15 s')), 15_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/FAKE_GEMINI_URL=(\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`fake-gemini exited (${code}) before it was ready`)); });
  });
  child.stdout.resume();
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => { child.once('exit', r); setTimeout(r, 3000); });
    },
  };
}

export class VaiderServer {
  /**
   * @param {object} o
   * @param {boolean} [o.keychain=true] false: no D-Bus session bus, so no Secret Service.
   * @param {boolean} [o.geminiKeyInEnv=true] GEMINI_API_KEY=test-gemini-key in the environment.
   * @param {boolean} [o.portInConfig=false] the port goes into config.toml, not VAIDER_PORT.
   * @param {object} [o.env] more environment variables.
   * @param {string} [o.name] a label for the temp folder.
   * @param {string[]} [o.fakeArgs] arguments for the fake Gemini (e.g. --generate-delay-ms).
   */
  constructor({ keychain = true, geminiKeyInEnv = true, portInConfig = false, env = {}, name = 'ui', fakeArgs = [] } = {}) {
    this.opts = { keychain, geminiKeyInEnv, portInConfig, env, name, fakeArgs };
    this.child = null;
    this.fake = null;
    this.port = null;
    this.token = null;
    this.dir = null;
    this.exits = [];
  }

  get baseUrl() { return `http://127.0.0.1:${this.port}`; }
  get configDir() { return path.join(this.dir, 'config'); }
  get dataDir() { return path.join(this.dir, 'data'); }
  get home() { return path.join(this.dir, 'home'); }
  get configFile() { return path.join(this.configDir, 'config.toml'); }
  get logFile() { return path.join(this.dir, 'vaider.log'); }
  /** A project folder with test media, like an agent's workspace. */
  get projectDir() { return path.join(this.dir, 'projects', 'shop'); }

  /** A one-time login code, asked for with the token as `vaider ui` does. */
  async loginCode() {
    // The data folder's login key, as `vaider ui` reads it: the token alone mints no code.
    const key = fs.readFileSync(path.join(this.dataDir, 'login-key'), 'utf8').trim();
    const { status, body } = await this.json('/api/login-code', { method: 'POST', headers: { 'x-vaider-login-key': key } });
    if (status !== 200) throw new Error(`POST /api/login-code answered ${status}: ${JSON.stringify(body)}`);
    return body.code;
  }

  /** The page address that `vaider ui` opens: a fresh one-time login code in the fragment. */
  async uiUrl(route = '#/') {
    const code = await this.loginCode();
    const r = route.replace(/^#/, '') || '/';
    return `${this.baseUrl}/#${r}${r.includes('?') ? '&' : '?'}code=${code}`;
  }

  env() {
    const env = baseEnv();
    Object.assign(env, {
      HOME: this.home,
      XDG_CONFIG_HOME: path.join(this.home, '.config'),
      XDG_DATA_HOME: path.join(this.home, '.local', 'share'),
      VAIDER_CONFIG_DIR: this.configDir,
      VAIDER_DATA_DIR: this.dataDir,
      VAIDER_GEMINI_BASE_URL: this.fake.url,
      VAIDER_GEMINI_POLL_INTERVAL_MS: '50',
      VAIDER_GEMINI_RETRY_BASE_MS: '50',
      VAIDER_LOG: process.env.VAIDER_LOG || 'info',
    });
    if (!this.opts.portInConfig) env.VAIDER_PORT = String(this.port);
    if (this.opts.geminiKeyInEnv) env.GEMINI_API_KEY = FAKE_GEMINI_KEY;
    if (!this.opts.keychain) {
      // No session bus at all: the keyring finds no Secret Service and must say so.
      delete env.DBUS_SESSION_BUS_ADDRESS;
      delete env.DISPLAY;
      env.XDG_RUNTIME_DIR = path.join(this.dir, 'no-bus-runtime');
    }
    Object.assign(env, this.opts.env);
    return env;
  }

  async start() {
    need(VAIDER_BIN, 'the vaider binary');
    if (!this.dir) {
      this.dir = await fsp.mkdtemp(path.join(os.tmpdir(), `vaider-${this.opts.name}-`));
      for (const d of [this.home, this.configDir, this.dataDir, this.projectDir, path.join(this.dir, 'no-bus-runtime')]) {
        await fsp.mkdir(d, { recursive: true, mode: 0o700 });
      }
      this.port = await freePort();
      this.fake = await startFakeGemini({ logFile: path.join(this.dir, 'fake-gemini.log'), args: this.opts.fakeArgs });
      if (this.opts.portInConfig) await fsp.writeFile(this.configFile, `port = ${this.port}\n`);
    }
    await this.spawnServer();
    if (!this.token) {
      const { stdout } = await execFileP(VAIDER_BIN, ['token'], { env: this.env() });
      this.token = stdout.trim();
      if (!this.token) throw new Error('`vaider token` printed nothing');
    }
    return this;
  }

  async spawnServer() {
    const log = fs.openSync(this.logFile, 'a');
    fs.writeSync(log, `\n---- vaider serve started ${new Date().toISOString()} ----\n`);
    const child = spawn(VAIDER_BIN, ['serve'], {
      env: this.env(), cwd: this.projectDir, stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    this.child = child;
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    this.exited = exited;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`vaider serve exited (${child.exitCode ?? child.signalCode}) before it answered:\n${this.logTail()}`);
      }
      try {
        const res = await fetch(`${this.baseUrl}/v1/health`, { signal: AbortSignal.timeout(1000) });
        if (res.ok) return;
      } catch { /* not yet */ }
      if (Date.now() > deadline) throw new Error(`vaider serve did not answer /v1/health within 30 s:\n${this.logTail()}`);
      await sleep(100);
    }
  }

  logTail(lines = 40) {
    try {
      return fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch { return '(no log)'; }
  }

  async stopServer() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }

  /** Kills the server as a crash would (SIGKILL: no chance to clean up). */
  async kill() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await this.exited;
  }

  /** Stops the server process and starts a new one on the same port, folders and token. */
  async restart() {
    await this.stopServer();
    await this.spawnServer();
  }

  async stop({ keep = false } = {}) {
    await this.stopServer();
    if (this.fake) await this.fake.stop();
    this.fake = null;
    if (this.dir && !keep && !process.env.KEEP_TEMP) await fsp.rm(this.dir, { recursive: true, force: true });
  }

  /** fetch() against the server with the bearer token (unless token: null). */
  async fetch(route, { token = this.token, headers = {}, ...init } = {}) {
    const h = { ...headers };
    if (token) h.Authorization = `Bearer ${token}`;
    return fetch(`${this.baseUrl}${route}`, { ...init, headers: h });
  }

  async json(route, init = {}) {
    const res = await this.fetch(route, init);
    const text = await res.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch { body = text; }
    return { status: res.status, body, headers: res.headers };
  }

  /** Copies a test file into the project folder (under test-results/NAME/) and returns its path. */
  async addMedia(sourceName, destName = sourceName, sub = 'login') {
    const dir = path.join(this.projectDir, 'test-results', sub);
    await fsp.mkdir(dir, { recursive: true });
    const dest = path.join(dir, destName);
    await fsp.copyFile(media(sourceName), dest);
    return dest;
  }

  /** POST /v1/analyse through the real REST door; resolves to {status, body}. */
  async analyse(body) {
    return this.json('/v1/analyse', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      // cwd: the agent's workspace, which the history files the analysis under (its project).
      body: JSON.stringify({ timeoutSec: 60, cwd: this.projectDir, ...body }),
    });
  }

  /** An analysis that must succeed; returns its result. */
  async analyseOk(body) {
    const res = await this.analyse(body);
    if (res.status !== 200) {
      throw new Error(`POST /v1/analyse answered ${res.status}: ${JSON.stringify(res.body)}\n${this.logTail()}`);
    }
    return res.body;
  }

  /** Calls an MCP tool over Streamable HTTP (for the image tools, which REST does not have). */
  async mcpTool(name, args) {
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${this.token}`,
    };
    const post = async (message, session) => {
      const res = await fetch(`${this.baseUrl}/mcp`, {
        method: 'POST',
        headers: { ...headers, ...(session ? { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' } : {}) },
        body: JSON.stringify(message),
      });
      const text = await res.text();
      if (res.status >= 400) throw new Error(`MCP ${message.method} answered ${res.status}: ${text}`);
      let payload = null;
      if ((res.headers.get('content-type') || '').includes('text/event-stream')) {
        for (const line of text.split('\n')) {
          if (!line.startsWith('data:')) continue;
          try {
            const msg = JSON.parse(line.slice(5));
            if (msg.id === message.id) payload = msg;
          } catch { /* keep-alive or progress */ }
        }
      } else if (text) payload = JSON.parse(text);
      return { session: res.headers.get('mcp-session-id'), payload };
    };
    const init = await post({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'vaider-ui-tests', version: '1' } },
    });
    const session = init.session;
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }, session);
    if (session) {
      await fetch(`${this.baseUrl}/mcp`, { method: 'DELETE', headers: { ...headers, 'Mcp-Session-Id': session } }).catch(() => {});
    }
    if (!call.payload || call.payload.error) throw new Error(`MCP ${name} failed: ${JSON.stringify(call.payload)}`);
    return call.payload.result;
  }
}

/** secret-tool lookup for a Vaider keychain entry; null when there is none. */
export async function keychainLookup(provider) {
  try {
    const { stdout } = await execFileP('secret-tool', ['lookup', 'service', 'vaider', 'username', provider]);
    return stdout.replace(/\n$/, '');
  } catch (e) {
    if (e.code === 'ENOENT') throw new Error('secret-tool is missing: apt-get install libsecret-tools (scripts/ui-test.sh does)');
    return null; // exit 1: no such item
  }
}

export async function keychainClear(provider) {
  try { await execFileP('secret-tool', ['clear', 'service', 'vaider', 'username', provider]); } catch { /* none */ }
}

/** Whether a Secret Service answers on this session bus. */
export async function secretServiceWorks() {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) return false;
  const probe = ['service', 'vaider-ui-probe', 'username', 'probe'];
  try {
    const child = execFile('secret-tool', ['store', '--label=vaider-ui-probe', ...probe]);
    child.stdin.end('x');
    await new Promise((resolve, reject) => child.on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`exit ${c}`)))));
    const { stdout } = await execFileP('secret-tool', ['lookup', ...probe]);
    await execFileP('secret-tool', ['clear', ...probe]);
    return stdout.trim() === 'x';
  } catch {
    return false;
  }
}
