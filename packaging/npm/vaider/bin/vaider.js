#!/usr/bin/env node
// The `vaider` command of the npm package: runs the native binary from the platform package
// npm installed beside this one (@vaider/<os>-<cpu>, an optional dependency: npm installs only
// the one whose `os` and `cpu` fit). The binary gets the user's arguments and this process's
// stdin, stdout and stderr (the MCP channel of `vaider stdio`); its exit code, or the signal
// that ended it, becomes ours.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

/** `process.platform process.arch` → the package that holds the binary for it. */
const PACKAGES = {
  'linux x64': '@vaider/linux-x64',
  'linux arm64': '@vaider/linux-arm64',
  'darwin x64': '@vaider/darwin-x64',
  'darwin arm64': '@vaider/darwin-arm64',
  'win32 x64': '@vaider/win32-x64',
};

function fail(message) {
  process.stderr.write(`vaider: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PACKAGES[`${process.platform} ${process.arch}`];
  const known = Object.values(PACKAGES).join(', ');
  if (!pkg) {
    fail(`no Vaider binary is published for ${platform}. The npm packages exist for: ${known}. ` +
      'Elsewhere, build it from source: cargo install --git https://github.com/vaider-dev/vaider vaider-cli');
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail(`the package ${pkg}, which holds the binary for ${platform}, is not installed. ` +
      'npm installs it as an optional dependency of vaider: reinstall without --omit=optional ' +
      `(or --no-optional), or install it yourself: npm install ${pkg}`);
  }
  return path.join(dir, 'bin', process.platform === 'win32' ? 'vaider.exe' : 'vaider');
}

const binary = binaryPath();
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });

// A signal sent to this launcher (an MCP client stopping its server, a terminal's Ctrl-C) is
// passed on; the child decides when it is done.
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of FORWARDED) process.on(signal, forward);

child.on('error', (err) => fail(`could not start ${binary}: ${err.message}`));
child.on('exit', (code, signal) => {
  for (const s of FORWARDED) process.removeListener(s, forward);
  if (signal) {
    // End the way the binary ended, so a caller sees the same signal.
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
