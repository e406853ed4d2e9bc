// Another local web page cannot use Vaider through anything the history page's browser holds.
// The app under test runs on another loopback port; cookies are not port-scoped and
// SameSite=Strict counts every loopback port as the same site, so a cookie for Vaider would
// go along with what that page sends (and to that page's own server). So Vaider sets none:
// the history page sends its session in a header, and its media load through signed URLs.
// Every request of the other page must fail, while Vaider's own page keeps working.
import http from 'node:http';
import { test, expect, serverPerFile, openUi, historyRow } from './fixtures.mjs';
import { keychainClear } from './lib/vaider.mjs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'foreign' });
let videoId;
let imageId;
let imagePath;
let attacker;

/** The other local app: a plain page on its own loopback port, started by this test. */
async function startAttackerSite() {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><title>The app under test</title></head><body><h1>Shop</h1></body></html>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

test.beforeAll(async () => {
  const video = await ctx.server.addMedia('login-flow.webm', 'login-flow.webm');
  videoId = (await ctx.server.analyseOk({ videoPath: video })).interactionId;
  imagePath = await ctx.server.addMedia('login.png', 'login.png', 'login');
  imageId = (await ctx.server.mcpTool('analyze_image', { image_source: imagePath, cwd: ctx.server.projectDir }))
    .structuredContent.interactionId;
  attacker = await startAttackerSite();
});

test.afterAll(async () => {
  if (attacker) await attacker.stop();
  // Should the page have got through (an old guard did let it), its key must not outlive
  // this file in the keyring the other files share.
  await keychainClear('gemini');
});

test('a page on another loopback port gets nothing, and the own page still works', async ({ page, context }) => {
  const vaider = ctx.server.baseUrl;
  // The history page signs in with a one-time code: no cookie for any port to receive.
  await openUi(page, ctx.server);
  await expect(historyRow(page, videoId)).toBeVisible();
  expect(await context.cookies(vaider)).toEqual([]);
  const historyBefore = (await ctx.server.json('/api/history')).body.total;

  // The other app, in the same browser: its own page, with no listener that fails the test
  // on its console errors (the refused loads log some).
  const other = await context.newPage();
  // What Vaider answered to each request of that page, from Chromium's own network log: it
  // has the status and the cookie sent even where CORS or ORB keep the answer from the page.
  const seen = new Map();
  const note = (id, fields) => seen.set(id, { ...seen.get(id), ...fields });
  const cdp = await context.newCDPSession(other);
  cdp.on('Network.requestWillBeSent', (e) => {
    if (e.request.url.startsWith(vaider)) note(e.requestId, { method: e.request.method, path: new URL(e.request.url).pathname });
  });
  cdp.on('Network.requestWillBeSentExtraInfo', (e) => {
    note(e.requestId, { cookie: e.headers.Cookie || e.headers.cookie || '' });
  });
  cdp.on('Network.responseReceivedExtraInfo', (e) => note(e.requestId, { status: e.statusCode }));
  cdp.on('Network.responseReceived', (e) => note(e.requestId, { status: e.response.status }));
  await cdp.send('Network.enable');
  await other.goto(attacker.url);
  expect(new URL(other.url()).port).not.toBe(String(ctx.server.port));

  const attempts = await other.evaluate(async ({ target, videoId, imageId, imagePath }) => {
    const out = {};
    const attempt = async (name, run) => {
      try { out[name] = { outcome: 'answered', ...(await run()) }; } catch (e) { out[name] = { outcome: 'failed', error: String(e) }; }
    };
    const json = { 'Content-Type': 'application/json' };
    const mcpHeaders = { ...json, Accept: 'application/json, text/event-stream' };
    const rpc = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

    // Credentialed CORS reads and writes.
    await attempt('read settings', async () => {
      const res = await fetch(`${target}/api/settings`, { credentials: 'include' });
      return { status: res.status, body: await res.text() };
    });
    await attempt('read history', async () => {
      const res = await fetch(`${target}/api/history`, { credentials: 'include' });
      return { status: res.status, body: await res.text() };
    });
    await attempt('pause', async () => {
      const res = await fetch(`${target}/api/server/pause`, { method: 'POST', credentials: 'include' });
      return { status: res.status, body: await res.text() };
    });
    await attempt('replace a key', async () => {
      const res = await fetch(`${target}/api/keys/gemini`, {
        method: 'PUT', credentials: 'include', headers: json, body: JSON.stringify({ key: 'attacker-key' }),
      });
      return { status: res.status, body: await res.text() };
    });
    // An MCP tool on a local image path, as an agent would call it.
    await attempt('mcp tools/call', async () => {
      const init = await fetch(`${target}/mcp`, {
        method: 'POST', credentials: 'include', headers: mcpHeaders,
        body: rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'shop', version: '1' } }),
      });
      const session = init.headers.get('mcp-session-id');
      const withSession = { ...mcpHeaders, ...(session ? { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' } : {}) };
      await fetch(`${target}/mcp`, { method: 'POST', credentials: 'include', headers: withSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
      const call = await fetch(`${target}/mcp`, {
        method: 'POST', credentials: 'include', headers: withSession,
        body: rpc(2, 'tools/call', { name: 'analyze_image', arguments: { image_source: imagePath } }),
      });
      return { status: call.status, body: await call.text() };
    });

    // Requests the page cannot read but that still do something on the server: a no-cors
    // fetch and a form POST carry the cookie and need no CORS at all.
    await attempt('no-cors pause', async () => {
      const res = await fetch(`${target}/api/server/pause`, { method: 'POST', credentials: 'include', mode: 'no-cors' });
      return { type: res.type };
    });
    await attempt('no-cors mcp', async () => {
      const res = await fetch(`${target}/mcp`, {
        method: 'POST', credentials: 'include', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' },
        body: rpc(2, 'tools/call', { name: 'analyze_image', arguments: { image_source: imagePath } }),
      });
      return { type: res.type };
    });
    await attempt('form pause', () => new Promise((resolve) => {
      const sink = document.createElement('iframe');
      sink.name = 'sink';
      document.body.append(sink);
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = `${target}/api/server/pause`;
      form.target = 'sink';
      document.body.append(form);
      sink.addEventListener('load', () => resolve({ loaded: true }), { once: true });
      form.submit();
    }));

    // Loads that embed the media: an image and a video.
    const load = (el, okEvent) => new Promise((resolve) => {
      el.addEventListener(okEvent, () => resolve('loaded'), { once: true });
      el.addEventListener('error', () => resolve('error'), { once: true });
      document.body.append(el);
    });
    const img = document.createElement('img');
    img.src = `${target}/api/interactions/${imageId}/media`;
    out.img = await load(img, 'load');
    const video = document.createElement('video');
    video.preload = 'auto';
    video.src = `${target}/api/interactions/${videoId}/media`;
    out.video = await load(video, 'loadedmetadata');
    const script = document.createElement('script');
    script.src = `${target}/api/settings`;
    out.script = await load(script, 'load');
    return out;
  }, { target: vaider, videoId, imageId, imagePath });

  // The page read nothing and changed nothing.
  for (const name of ['read settings', 'read history', 'pause', 'replace a key', 'mcp tools/call']) {
    expect(attempts[name].outcome, `${name}: ${JSON.stringify(attempts[name])}`).toBe('failed');
  }
  expect(attempts.img).toBe('error');
  expect(attempts.video).toBe('error');
  expect(attempts.script).toBe('error');
  expect(attempts['form pause'].outcome).toBe('answered');

  // Every request that reached Vaider (preflights aside) got 401, and carried no cookie of
  // Vaider's: there is none to attach.
  const expectedPaths = ['/api/settings', '/api/history', '/api/server/pause', '/mcp',
    `/api/interactions/${imageId}/media`, `/api/interactions/${videoId}/media`];
  const reached = () => [...seen.values()].filter((r) => r.path && r.method !== 'OPTIONS' && r.status);
  await expect.poll(() => [...new Set(reached().map((r) => r.path))], { message: 'each kind of request reached Vaider' })
    .toEqual(expect.arrayContaining(expectedPaths));
  for (const r of reached()) {
    expect(r.status, `${r.method} ${r.path}`).toBe(401);
    expect(r.cookie || '', `${r.method} ${r.path}: a cookie went along`).not.toContain('vaider_session=');
  }
  const posts = reached().filter((r) => r.method === 'POST').map((r) => r.path);
  expect(posts.filter((p) => p === '/api/server/pause').length, 'fetch, no-cors fetch and form').toBeGreaterThanOrEqual(3);

  const settings = await ctx.server.json('/api/settings');
  expect(settings.body.paused).toBe(false);
  expect((await ctx.server.json('/api/history')).body.total).toBe(historyBefore);
  await other.close();

  // Vaider's own page: its calls send the session header and its video loads through a signed
  // URL; a request without the header opens nothing, even there.
  await expect(page.locator('#server-state')).toHaveAttribute('data-state', 'running');
  const own = await page.evaluate(async () => (await fetch('/api/settings', { credentials: 'same-origin' })).status);
  expect(own).toBe(401);
  await page.evaluate((id) => { location.hash = `#/i/${id}`; }, videoId);
  await expect.poll(() => page.locator('#media-video').evaluate((v) => v.readyState), { timeout: 20_000 })
    .toBeGreaterThanOrEqual(1);
  await page.evaluate(() => { location.hash = '#/'; });
  const video = await ctx.server.addMedia('login-flow.webm', 'after.webm', 'after');
  const later = await ctx.server.analyseOk({ videoPath: video, noCache: true });
  await expect(historyRow(page, later.interactionId)).toBeVisible();
});

test('signing out ends the page session: its secret opens nothing afterwards', async ({ page }) => {
  await openUi(page, ctx.server);
  const session = await page.evaluate(() => sessionStorage.getItem('vaider.session'));
  expect(session).toMatch(/^[0-9a-f]{64}$/);
  const status = (secret) => page.evaluate(async (s) => (await fetch('/api/history', { headers: { 'X-Vaider-Session': s } })).status, secret);
  expect(await status(session)).toBe(200);
  await page.locator('#sign-out').click();
  await expect(page.locator('#unauthorized')).toBeVisible();
  expect(await page.evaluate(() => sessionStorage.getItem('vaider.session'))).toBeNull();
  // The old secret, sent again as the page would have, is refused.
  expect(await status(session)).toBe(401);
});
