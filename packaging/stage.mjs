#!/usr/bin/env node
// Lays out what scripts/package.sh packs, from the templates beside this file and one built
// binary: the npm packages (main + one platform package), the MCP Bundle's folder (manifest
// with the version, the platform and the tools the binary really lists), and the registry's
// server.json (with each bundle's download URL and sha256). No network: the tools come from
// the binary itself over stdio.
//
//   node packaging/stage.mjs npm    --version V --platform linux-x64 --binary PATH --out DIR
//   node packaging/stage.mjs mcpb   --version V --platform linux-x64 --binary PATH --icon PNG --out DIR
//   node packaging/stage.mjs server --version V --out FILE BUNDLE.mcpb...
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPOSITORY = 'https://github.com/vaider-dev/vaider';
/** npm's platform names (process.platform-process.arch) → the package's `os` and `cpu`. */
const PLATFORMS = {
  'linux-x64': { os: 'linux', cpu: 'x64' },
  'linux-arm64': { os: 'linux', cpu: 'arm64' },
  'darwin-x64': { os: 'darwin', cpu: 'x64' },
  'darwin-arm64': { os: 'darwin', cpu: 'arm64' },
  'win32-x64': { os: 'win32', cpu: 'x64' },
};

function die(message) {
  console.error(`stage.mjs: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  const options = {};
  const rest = [];
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i].startsWith('--')) {
      if (i + 1 >= argv.length) die(`${argv[i]} needs a value`);
      options[argv[i].slice(2)] = argv[i + 1];
      i += 1;
    } else {
      rest.push(argv[i]);
    }
  }
  return { options, rest };
}

function need(options, ...names) {
  for (const name of names) if (!options[name]) die(`--${name} is required`);
  if (options.platform && !PLATFORMS[options.platform]) {
    die(`unknown platform ${options.platform} (known: ${Object.keys(PLATFORMS).join(', ')})`);
  }
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const writeJson = (file, value) => fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
const exe = (platform) => (platform.startsWith('win32') ? 'vaider.exe' : 'vaider');

function copyBinary(binary, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(binary, to);
  fs.chmodSync(to, 0o755);
}

/** The main package `vaider` and the platform package `@vaider/<platform>`, versions filled. */
function stageNpm({ version, platform, binary, out }) {
  const main = path.join(out, 'vaider');
  fs.rmSync(main, { recursive: true, force: true });
  fs.cpSync(path.join(HERE, 'npm', 'vaider'), main, { recursive: true });
  const pkg = readJson(path.join(main, 'package.json'));
  pkg.version = version;
  for (const name of Object.keys(pkg.optionalDependencies)) pkg.optionalDependencies[name] = version;
  writeJson(path.join(main, 'package.json'), pkg);
  fs.chmodSync(path.join(main, 'bin', 'vaider.js'), 0o755);

  const dir = path.join(out, platform);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const { os, cpu } = PLATFORMS[platform];
  const fill = (text) => text.replaceAll('PLATFORM', platform).replaceAll('"OS"', `"${os}"`)
    .replaceAll('"CPU"', `"${cpu}"`);
  const platformPkg = JSON.parse(fill(fs.readFileSync(path.join(HERE, 'npm', 'platform', 'package.json'), 'utf8')));
  platformPkg.version = version;
  writeJson(path.join(dir, 'package.json'), platformPkg);
  fs.writeFileSync(path.join(dir, 'README.md'),
    fill(fs.readFileSync(path.join(HERE, 'npm', 'platform', 'README.md'), 'utf8')));
  copyBinary(binary, path.join(dir, 'bin', exe(platform)));
  console.log(JSON.stringify({ main, platform: dir }));
}

/**
 * The tools `binary stdio` lists, as `[{name, description}]`: one MCP exchange over stdio
 * (initialize, initialized, tools/list), the way a client starts it.
 */
function listTools(binary, { timeoutMs = 30000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${binary} stdio gave no tools/list answer in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      let newline;
      while ((newline = stdout.indexOf('\n')) >= 0) {
        const line = stdout.slice(0, newline).trim();
        stdout = stdout.slice(newline + 1);
        if (!line) continue;
        const message = JSON.parse(line);
        if (message.id === 1) {
          if (message.error) { reject(new Error(`initialize: ${JSON.stringify(message.error)}`)); return; }
          send({ method: 'notifications/initialized' });
          send({ id: 2, method: 'tools/list' });
        } else if (message.id === 2) {
          clearTimeout(timer);
          child.stdin.end();
          if (message.error) { reject(new Error(`tools/list: ${JSON.stringify(message.error)}`)); return; }
          resolve(message.result.tools.map((t) => ({ name: t.name, description: t.description ?? '' })));
        }
      }
    });
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {},
      clientInfo: { name: 'vaider-packaging', version: '1' } } });
  });
}

/** A tool's description for the bundle's listing: its first sentence (the rest is for agents). */
function firstSentence(text) {
  const paragraph = text.trim().split(/\n\s*\n/)[0].replace(/\s+/g, ' ');
  const end = paragraph.search(/\.(\s|$)/);
  return end >= 0 ? paragraph.slice(0, end + 1) : paragraph;
}

/** The bundle's folder: manifest.json (version, platform, tools), server/<binary>, icon.png. */
async function stageMcpb({ version, platform, binary, icon, out }) {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const manifest = readJson(path.join(HERE, 'mcpb', 'manifest.json'));
  manifest.version = version;
  manifest.compatibility.platforms = [PLATFORMS[platform].os];
  const entry = `server/${exe(platform)}`;
  manifest.server.entry_point = entry;
  manifest.server.mcp_config.command = `\${__dirname}/${entry}`;
  manifest.tools = (await listTools(binary)).map((t) => ({ name: t.name, description: firstSentence(t.description) }));
  writeJson(path.join(out, 'manifest.json'), manifest);
  copyBinary(binary, path.join(out, entry));
  fs.copyFileSync(icon, path.join(out, manifest.icon));
  console.log(JSON.stringify({ dir: out, tools: manifest.tools.length }));
}

/** server.json for the registry: the version everywhere, one mcpb entry per bundle given. */
function stageServerJson({ version, out }, bundles) {
  const server = readJson(path.join(HERE, 'registry', 'server.json'));
  server.version = version;
  const npm = server.packages.find((p) => p.registryType === 'npm');
  npm.version = version;
  const template = server.packages.find((p) => p.registryType === 'mcpb');
  const mcpbs = bundles.map((bundle) => {
    const name = path.basename(bundle);
    if (!name.startsWith(`vaider-${version}-`) || !name.endsWith('.mcpb')) {
      die(`${name} is not named vaider-${version}-<platform>.mcpb`);
    }
    return {
      ...template,
      identifier: `${REPOSITORY}/releases/download/v${version}/${name}`,
      version,
      fileSha256: createHash('sha256').update(fs.readFileSync(bundle)).digest('hex'),
    };
  });
  server.packages = [npm, ...mcpbs];
  writeJson(out, server);
  console.log(JSON.stringify({ file: out, bundles: mcpbs.length }));
}

const [command, ...argv] = process.argv.slice(2);
const { options, rest } = parseArgs(argv);
switch (command) {
  case 'npm':
    need(options, 'version', 'platform', 'binary', 'out');
    stageNpm(options);
    break;
  case 'mcpb':
    need(options, 'version', 'platform', 'binary', 'icon', 'out');
    await stageMcpb(options);
    break;
  case 'server':
    need(options, 'version', 'out');
    if (rest.length === 0) die('give the .mcpb files whose URL and sha256 go into server.json');
    stageServerJson(options, rest);
    break;
  default:
    die(`unknown command ${command ?? '(none)'}: npm, mcpb or server`);
}
