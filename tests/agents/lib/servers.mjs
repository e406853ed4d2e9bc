// The real parts the agent tests run against, all on loopback: the fake Gemini (the only
// faked service: Vaider's model), `vaider serve` with its own data and config folders and
// token, and a project folder holding a real Playwright recording at a relative path.
// Binaries come from VAIDER_BIN and FAKE_GEMINI_BIN (scripts/agents-test.sh sets them); the
// recording from MEDIA_DIR.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const VIDEO = 'test-results/login/video.webm';

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the lane through scripts/agents-test.sh`);
  return value;
}

/** A temporary folder removed by the returned cleanup. */
export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `vaider-agents-${prefix}-`));
}

/** Starts a child and resolves with `{child, value}` once a line matches `pattern`. */
function startAndWaitFor(command, args, options, pattern, what) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${what} printed nothing ready in 60 s\n${out}\n${err}`));
    }, 60_000);
    child.stdout.on('data', (data) => {
      out += data;
      const match = out.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve({ child, value: match[1], stderr: () => err });
      }
    });
    child.stderr.on('data', (data) => { err += data; });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it was ready\n${out}\n${err}`));
    });
  });
}

/**
 * The fake Gemini and `vaider serve`, plus a project folder with the recording at `VIDEO`.
 * Resolves to `{url, token, project, videoSha256, env, stop}`; `env` is what a child needs to
 * share Vaider's config (for `vaider init`).
 */
export async function startVaider() {
  const vaiderBin = required('VAIDER_BIN');
  const fakeBin = required('FAKE_GEMINI_BIN');
  const media = required('MEDIA_DIR');
  const root = tempDir('server');
  const project = path.join(root, 'project');
  fs.mkdirSync(path.join(project, path.dirname(VIDEO)), { recursive: true });
  fs.copyFileSync(path.join(media, 'login-flow.webm'), path.join(project, VIDEO));
  const videoSha256 = createHash('sha256').update(fs.readFileSync(path.join(project, VIDEO))).digest('hex');

  const fake = await startAndWaitFor(fakeBin, ['--port', '0'], {}, /FAKE_GEMINI_URL=(\S+)/, 'fake-gemini');
  const token = createHash('sha256').update(`${process.pid}-${Date.now()}`).digest('hex').slice(0, 40);
  const env = {
    ...process.env,
    VAIDER_DATA_DIR: path.join(root, 'data'),
    VAIDER_CONFIG_DIR: path.join(root, 'config'),
    VAIDER_TOKEN: token,
    GEMINI_API_KEY: 'test-gemini-key',
    VAIDER_GEMINI_BASE_URL: fake.value,
  };
  delete env.VAIDER_PORT;
  const port = await freePort();
  env.VAIDER_PORT = String(port);
  const vaider = await startAndWaitFor(vaiderBin, ['serve'], { env },
    /listening on (http:\/\/\S+?) /, 'vaider serve');
  const stop = () => {
    vaider.child.kill();
    fake.child.kill();
    fs.rmSync(root, { recursive: true, force: true });
  };
  return { url: `${vaider.value}/mcp`, token, project, root, videoSha256, env, vaiderBin, stop,
    vaiderStderr: vaider.stderr };
}

/** A port free on 127.0.0.1 now (Vaider's config must name it for `vaider init`). */
async function freePort() {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs `vaider init` in `project` with `args`, as a user would; resolves to its stdout. */
export function vaiderInit(server, args, extraEnv = {}) {
  return run(server.vaiderBin, ['init', ...args, '--dir', server.project],
    { env: { ...server.env, ...extraEnv } });
}

/** Runs a command to its end; resolves `{code, stdout, stderr}` (rejects after `timeoutMs`). */
export function run(command, args, options = {}, timeoutMs = 120_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} took over ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}
