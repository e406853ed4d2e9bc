// Both MCP revisions with the official TypeScript SDK (v2, which speaks 2025-11-25 with
// sessions and the stateless 2026-07-28): a client of each calls analyze_video with the same
// path relative to its workspace root and gets the same answer from the fake Gemini. The
// 2025 client gives its root through roots/list on its session; the 2026 client is asked with
// an input_required roots/list and retries the call with them (the SDK does that itself).
// Also over stdio (`vaider stdio --tools core`), where a 2026 client sees only the core tools.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startVaider, VIDEO } from './lib/servers.mjs';

let server;
before(async () => { server = await startVaider(); });
after(() => server?.stop());

/** A client with the project as its one root, in the legacy (2025) or modern (2026) era. */
function clientOf(era, root) {
  const versionNegotiation = era === 'modern' ? { mode: { pin: '2026-07-28' } } : undefined;
  const client = new Client({ name: `sdk-${era}`, version: '1.0.0' },
    { capabilities: { roots: {} }, versionNegotiation });
  let asked = 0;
  client.setRequestHandler('roots/list', async () => {
    asked += 1;
    return { roots: [{ uri: pathToFileURL(root).href, name: 'project' }] };
  });
  return { client, asked: () => asked };
}

function http(url, token) {
  return new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
}

async function analyse(client) {
  const result = await client.callTool({ name: 'analyze_video',
    arguments: { video_source: VIDEO, no_cache: true,
      expectations: ['the login form is shown'] } });
  assert.ok(!result.isError, JSON.stringify(result.content));
  return result.structuredContent;
}

test('a 2025-11-25 and a stateless 2026-07-28 client get the same answer for a relative path', async () => {
  const legacy = clientOf('legacy', server.project);
  await legacy.client.connect(http(server.url, server.token));
  assert.equal(legacy.client.getNegotiatedProtocolVersion(), '2025-11-25');
  const modern = clientOf('modern', server.project);
  await modern.client.connect(http(server.url, server.token));
  assert.equal(modern.client.getNegotiatedProtocolVersion(), '2026-07-28');

  const old = await analyse(legacy.client);
  const stateless = await analyse(modern.client);
  await legacy.client.close();
  await modern.client.close();

  assert.ok(legacy.asked() >= 1, 'the 2025 client was asked for its roots on its session');
  assert.ok(modern.asked() >= 1, 'the 2026 client was asked for its roots with input_required');
  const file = `${server.project}/${VIDEO}`;
  for (const answer of [old, stateless]) {
    assert.equal(answer.mediaPath, file);
    assert.ok(answer.description.includes(server.videoSha256), answer.description);
    assert.equal(answer.cached, false);
    assert.ok(answer.summary.includes(answer.interactionId), answer.summary);
  }
  assert.equal(stateless.description, old.description);
  assert.deepEqual(stateless.expectations, old.expectations);
});

test('a 2026-07-28 client over stdio sees the core tools and resolves against its roots', async () => {
  const modern = clientOf('modern', server.project);
  const transport = new StdioClientTransport({ command: server.vaiderBin,
    args: ['stdio', '--tools', 'core'], env: server.env, cwd: server.root, stderr: 'pipe' });
  await modern.client.connect(transport);
  const { tools } = await modern.client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['analyze_image', 'analyze_video',
    'ui_diff_check', 'vaider_status', 'validate_test', 'visual_capture', 'visual_compare']);
  const answer = await analyse(modern.client);
  assert.equal(answer.mediaPath, `${server.project}/${VIDEO}`);
  assert.ok(modern.asked() >= 1);
  await modern.client.close();
});
