#!/usr/bin/env node
// A tiny reverse proxy that plays the part of a configured MCP client: it forwards every
// request to Vaider unchanged (method, path, every header as sent, including Host and
// Origin, and the body streamed both ways, so SSE streams are not buffered) and adds
// `Authorization: Bearer $VAIDER_TOKEN`. Used by scripts/conformance.sh, because the MCP
// conformance suite cannot send an Authorization header itself.
//
// Usage: VAIDER_TOKEN=<token> node scripts/auth-proxy.mjs <upstream base URL> [listen port]
// Listens on 127.0.0.1 (port 0 = any free port) and prints `AUTH_PROXY_PORT=<port>`.
// Node's built-in `http` module only.
import http from 'node:http';

const upstreamArg = process.argv[2];
const token = process.env.VAIDER_TOKEN;
if (!upstreamArg || !token) {
  console.error('usage: VAIDER_TOKEN=<token> node auth-proxy.mjs <upstream URL> [port]');
  process.exit(2);
}
const upstream = new URL(upstreamArg);
if (upstream.protocol !== 'http:') {
  console.error(`auth-proxy: only http:// upstreams are supported, got ${upstreamArg}`);
  process.exit(2);
}
const listenPort = Number(process.argv[3] ?? 0);
const agent = new http.Agent({ keepAlive: true });

const server = http.createServer((req, res) => {
  // rawHeaders keeps names, order, duplicates and values exactly as received.
  const headers = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i].toLowerCase() === 'authorization') continue;
    headers.push(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  headers.push('Authorization', `Bearer ${token}`);

  // With an array of headers Node sends exactly these (it adds no Host of its own).
  const upReq = http.request({
    agent,
    host: upstream.hostname,
    port: upstream.port || 80,
    method: req.method,
    path: req.url,
    headers,
  });

  upReq.on('response', (upRes) => {
    res.writeHead(upRes.statusCode, upRes.statusMessage, upRes.rawHeaders);
    res.flushHeaders();
    upRes.pipe(res);
    upRes.on('error', () => res.destroy());
  });
  upReq.on('error', (err) => {
    if (res.headersSent) {
      res.destroy();
    } else {
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`auth-proxy: upstream error: ${err.message}\n`);
    }
  });
  // If the client goes away first (e.g. it cancels an SSE stream), drop the upstream too.
  res.on('close', () => {
    if (!res.writableFinished) upReq.destroy();
  });
  req.on('error', () => upReq.destroy());
  req.pipe(upReq);
});

// Long-lived SSE streams must not be cut by Node's default request timeouts.
server.requestTimeout = 0;
server.headersTimeout = 60_000;
server.on('clientError', (_err, socket) => socket.destroy());

server.listen(listenPort, '127.0.0.1', () => {
  console.log(`AUTH_PROXY_PORT=${server.address().port}`);
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close();
    process.exit(0);
  });
}
