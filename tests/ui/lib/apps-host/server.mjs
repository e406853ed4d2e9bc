// Serves the test host (lib/apps-host/host.mjs, bundled with esbuild) on one loopback origin
// and its sandbox proxy on another, the sandbox with the Content-Security-Policy header that
// MCP Apps has hosts build from a view's `_meta.ui.csp`.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The CSP of a view's sandbox, as the spec has hosts build it from the declared domains. */
export function cspOf(csp = {}) {
  const resources = (csp.resourceDomains || []).join(' ');
  const connect = (csp.connectDomains || []).join(' ');
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `connect-src 'self' ${connect}`,
    `img-src 'self' data: ${resources}`,
    `media-src 'self' data: ${resources}`,
    "frame-src 'self'",
    "object-src 'none'",
  ].join('; ');
}

function listen(handler) {
  const server = http.createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Starts both origins; resolves to { hostUrl, sandboxUrl, stop() }. */
export async function startAppsHost() {
  const bundle = await build({
    entryPoints: [path.join(here, 'host.mjs')], bundle: true, format: 'esm', platform: 'browser',
    write: false, target: 'chrome120', logLevel: 'silent',
  });
  const script = bundle.outputFiles[0].text;
  const page = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Test MCP Apps host</title></head>'
    + '<body><h1>Test host</h1><div id="views"></div><script type="module" src="/host.js"></script></body></html>';
  const host = await listen((req, res) => {
    if (req.url === '/host.js') { res.writeHead(200, { 'content-type': 'text/javascript' }); res.end(script); return; }
    res.writeHead(200, { 'content-type': 'text/html' }); res.end(page);
  });
  const sandboxPage = fs.readFileSync(path.join(here, 'sandbox.html'), 'utf8');
  const sandbox = await listen((req, res) => {
    const url = new URL(req.url, 'http://x');
    let csp = {};
    try { csp = JSON.parse(url.searchParams.get('csp') || '{}'); } catch { /* the restrictive default */ }
    res.writeHead(200, { 'content-type': 'text/html', 'content-security-policy': cspOf(csp) });
    res.end(sandboxPage);
  });
  // Two origins: localhost for the host page, 127.0.0.1 for the sandbox.
  return {
    hostUrl: `http://localhost:${host.address().port}/`,
    sandboxUrl: `http://127.0.0.1:${sandbox.address().port}/sandbox.html`,
    async stop() { host.close(); sandbox.close(); },
  };
}
