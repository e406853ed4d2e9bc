// The media route's guard and Range support, and the UI assets, over plain HTTP.
import { test, expect, serverPerFile } from './fixtures.mjs';
import fs from 'node:fs';

test.describe.configure({ mode: 'serial' });
const ctx = serverPerFile({ name: 'media' });
let id;
let size;

test.beforeAll(async () => {
  const video = await ctx.server.addMedia('login-flow.webm');
  size = fs.statSync(video).size;
  id = (await ctx.server.analyseOk({ videoPath: video })).interactionId;
});

test('without a token or a cookie the media route answers 401', async () => {
  const res = await ctx.server.fetch(`/api/interactions/${id}/media`, { token: null });
  expect(res.status).toBe(401);
  const body = await res.json();
  expect(body.error.code).toBe('UNAUTHORIZED');
  const wrong = await ctx.server.fetch(`/api/interactions/${id}/media`, { token: null, headers: { Cookie: 'vaider_session=wrong' } });
  expect(wrong.status).toBe(401);
  const wrongBearer = await ctx.server.fetch(`/api/interactions/${id}/media`, { token: 'vdr_wrong' });
  expect(wrongBearer.status).toBe(401);
});

test('an unknown id answers 404', async () => {
  const res = await ctx.server.fetch('/api/interactions/0000000000000000000000000000dead/media');
  expect(res.status).toBe(404);
  expect((await res.json()).error.code).toBeTruthy();
  const traversal = await ctx.server.fetch('/api/interactions/..%2F..%2Fetc%2Fpasswd/media');
  expect([400, 404]).toContain(traversal.status);
});

test('the whole file comes with its type and Accept-Ranges', async () => {
  const res = await ctx.server.fetch(`/api/interactions/${id}/media`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('video/webm');
  expect(res.headers.get('accept-ranges')).toBe('bytes');
  expect((await res.arrayBuffer()).byteLength).toBe(size);
});

test('a Range request answers 206 with Content-Range', async () => {
  const res = await ctx.server.fetch(`/api/interactions/${id}/media`, { headers: { Range: 'bytes=0-99' } });
  expect(res.status).toBe(206);
  expect(res.headers.get('content-range')).toBe(`bytes 0-99/${size}`);
  const body = Buffer.from(await res.arrayBuffer());
  expect(body.length).toBe(100);
  // A WebM starts with the EBML magic.
  expect(body.subarray(0, 4).toString('hex')).toBe('1a45dfa3');
  const tail = await ctx.server.fetch(`/api/interactions/${id}/media`, { headers: { Range: 'bytes=-10' } });
  expect(tail.status).toBe(206);
  expect(tail.headers.get('content-range')).toBe(`bytes ${size - 10}-${size - 1}/${size}`);
});

test('the session cookie from POST /api/session opens the media route', async () => {
  const noToken = await ctx.server.fetch('/api/session', { method: 'POST', token: null });
  expect(noToken.status).toBe(401);
  const res = await ctx.server.fetch('/api/session', { method: 'POST' });
  expect(res.status).toBe(204);
  const cookie = res.headers.get('set-cookie');
  expect(cookie).toMatch(/^vaider_session=/);
  expect(cookie).toMatch(/HttpOnly/i);
  expect(cookie).toMatch(/SameSite=Strict/i);
  const pair = cookie.split(';')[0];
  const media = await ctx.server.fetch(`/api/interactions/${id}/media`, { token: null, headers: { Cookie: pair, Range: 'bytes=0-0' } });
  expect(media.status).toBe(206);
});

test('another web origin is refused even with the cookie', async () => {
  const res = await ctx.server.fetch('/api/session', { method: 'POST' });
  const pair = res.headers.get('set-cookie').split(';')[0];
  const foreign = await ctx.server.fetch('/api/history', { token: null, headers: { Cookie: pair, Origin: 'https://evil.example' } });
  expect(foreign.status).toBe(403);
});

test('the UI assets need no token and carry their types', async () => {
  const types = { '/': 'text/html', '/ui/app.js': 'javascript', '/ui/style.css': 'text/css', '/ui/icon.svg': 'image/svg+xml' };
  for (const [route, type] of Object.entries(types)) {
    const res = await ctx.server.fetch(route, { token: null });
    expect(res.status, route).toBe(200);
    expect(res.headers.get('content-type'), route).toContain(type);
  }
  const html = await (await ctx.server.fetch('/', { token: null })).text();
  expect(html).toContain('/ui/app.js');
  expect(html).not.toMatch(/https?:\/\//);
});
