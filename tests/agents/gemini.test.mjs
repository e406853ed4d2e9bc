// Gemini CLI (npm @google/gemini-cli), configured by `vaider init --client gemini` as a user
// would, with its model replaced by a scripted stand-in on loopback (GOOGLE_GEMINI_BASE_URL).
// Gemini CLI must offer its model every Vaider tool, with no warning, and complete one tool
// call whose result is Vaider's real answer (the fake Gemini's description names the video's
// sha256). Its bundled MCP client drops a server whose SSE events it cannot parse as JSON
// while `gemini mcp list` still says "Connected", so the tools reaching the model is the test.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, startVaider, tempDir, VIDEO, vaiderInit } from './lib/servers.mjs';
import { startStandIn } from './lib/stand-in.mjs';
import { VAIDER_TOOLS, warnings } from './lib/expect.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const geminiBin = path.join(here, 'node_modules', '.bin', 'gemini');

let server;
let standIn;
let home;
before(async () => {
  server = await startVaider();
  standIn = await startStandIn({ tool: 'analyze_video',
    args: { video_source: VIDEO, cwd: server.project, no_cache: true } });
  // The user's own settings: an API key login, and nothing that calls home.
  home = tempDir('gemini-home');
  fs.mkdirSync(path.join(home, '.gemini'));
  fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    ide: { enabled: false },
  }, null, 2));
});
after(async () => {
  await standIn?.close();
  server?.stop();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

function gemini(args) {
  return run(process.execPath, [geminiBin, ...args], {
    cwd: server.project,
    env: { ...process.env, HOME: home, GEMINI_API_KEY: 'stand-in-key',
      GOOGLE_GEMINI_BASE_URL: standIn.url, VAIDER_TOKEN: server.token, NO_COLOR: '1',
      GEMINI_CLI_NO_RELAUNCH: 'true' },
  }, 180_000);
}

test('Gemini CLI, configured by vaider init, offers every tool and completes a call', async () => {
  const init = await vaiderInit(server, ['--client', 'gemini']);
  assert.equal(init.code, 0, init.stderr);
  const settings = JSON.parse(fs.readFileSync(path.join(server.project, '.gemini/settings.json'), 'utf8'));
  assert.equal(settings.mcpServers.vaider.headers.Authorization, 'Bearer ${VAIDER_TOKEN}');

  const listed = await gemini(['mcp', 'list']);
  assert.match(listed.stdout + listed.stderr, /vaider.*Connected/);

  const started = Date.now();
  const done = await gemini(['-p', 'What does the login recording show?', '--approval-mode', 'yolo',
    '-m', 'gemini-3.5-flash-lite']);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  assert.equal(done.code, 0, `${done.stdout}\n${done.stderr}`);
  assert.deepEqual(warnings(`${done.stdout}\n${done.stderr}`), [], done.stderr);

  const turns = standIn.requests.filter((r) => r.tools);
  const offered = turns[0]?.tools ?? [];
  for (const tool of VAIDER_TOOLS) {
    assert.ok(offered.some((name) => name.endsWith(tool)), `${tool} not offered: ${offered}`);
  }
  const declarations = JSON.stringify(turns[0].declarations.filter((d) =>
    VAIDER_TOOLS.some((tool) => d.name.endsWith(tool))));
  console.log(`Vaider's ${VAIDER_TOOLS.length} tool definitions as Gemini CLI sends them: ${declarations.length} bytes`);
  assert.ok(standIn.requests.some((r) => r.called?.endsWith('analyze_video')), 'the stand-in called the tool');
  const result = standIn.requests.map((r) => r.toolResult).find(Boolean) ?? '';
  assert.ok(result.includes(server.videoSha256), `Vaider's answer reached the model: ${result}`);
  assert.ok(done.stdout.includes('Vaider answered'), done.stdout);
  console.log(`gemini -p: ${seconds} s`);
});
