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

test('without a credential the media route answers 401', async () => {
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

/** The signed URL the detail hands the page for the video, as its <video> loads it. */
async function signedMediaUrl() {
  const { body } = await ctx.server.json(`/api/interactions/${id}`);
  return body.mediaUrl;
}

test('the page loads media through a signed URL: no header, no cookie, the file cannot run', async () => {
  const url = await signedMediaUrl();
  expect(url).toMatch(new RegExp(`^/api/interactions/${id}/media\\?exp=\\d+&sig=[0-9a-f]{64}$`));
  const media = await ctx.server.fetch(url, { token: null, headers: { Range: 'bytes=0-0' } });
  expect(media.status).toBe(206);
  expect(media.headers.get('x-content-type-options')).toBe('nosniff');
  expect(media.headers.get('content-security-policy')).toMatch(/^sandbox;.*default-src 'none'/);
  // Altered (the last hex digit), or on another interaction: refused with a clear code.
  const flipped = url.slice(0, -1) + (url.endsWith('0') ? '1' : '0');
  for (const altered of [flipped, url.replace(`/interactions/${id}/`, '/interactions/other/')]) {
    const res = await ctx.server.fetch(altered, { token: null });
    expect(res.status, altered).toBe(403);
    expect((await res.json()).error.code).toBe('SIGNED_LINK_REFUSED');
  }
});

test('a cookie opens nothing, not even the media route', async () => {
  const session = (await ctx.server.json('/api/login', {
    method: 'POST', token: null, headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ code: await ctx.server.loginCode() }),
  })).body.session;
  expect(session).toMatch(/^[0-9a-f]{64}$/);
  for (const cookie of [`vaider_session=${session}`, `vaider_session=${ctx.server.token}`]) {
    const media = await ctx.server.fetch(`/api/interactions/${id}/media`, { token: null, headers: { Cookie: cookie } });
    expect(media.status).toBe(401);
    const events = await ctx.server.fetch('/api/events', { token: null, headers: { Cookie: cookie } });
    expect(events.status).toBe(401);
  }
  // The session counts in its header, and from another web origin nothing counts.
  const own = await ctx.server.fetch('/api/history', { token: null, headers: { 'X-Vaider-Session': session } });
  expect(own.status).toBe(200);
  const foreign = await ctx.server.fetch('/api/history', { token: null, headers: { 'X-Vaider-Session': session, Origin: 'https://evil.example' } });
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
