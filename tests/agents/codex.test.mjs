// Codex CLI (npm @openai/codex), configured by `vaider init --client codex` as a user would,
// with its model replaced by a scripted stand-in on loopback (a custom model provider with a
// base_url). Codex must list every Vaider tool to its model, with no warning, and complete one
// tool call whose result is Vaider's real answer (the fake Gemini's description names the
// video's sha256).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, startVaider, VIDEO, vaiderInit } from './lib/servers.mjs';
import { startStandIn } from './lib/stand-in.mjs';
import { VAIDER_TOOLS, warnings } from './lib/expect.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const codexBin = path.join(here, 'node_modules', '.bin', 'codex');

let server;
let standIn;
let codexHome;
before(async () => {
  server = await startVaider();
  standIn = await startStandIn({ tool: 'analyze_video',
    args: { video_source: VIDEO, cwd: server.project, no_cache: true } });
  // Codex refuses helper binaries under the temporary folder, with a warning: its home is
  // kept under /var/tmp, out of TMPDIR.
  codexHome = fs.mkdtempSync('/var/tmp/vaider-codex-home-');
  fs.writeFileSync(path.join(codexHome, 'config.toml'), [
    'model = "gpt-5.2-codex"',
    'model_provider = "stand-in"',
    'approval_policy = "never"',
    'sandbox_mode = "read-only"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.stand-in]',
    'name = "Scripted stand-in"',
    `base_url = "${standIn.url}/v1"`,
    'env_key = "STAND_IN_KEY"',
    'wire_api = "responses"',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    // A project's .codex/config.toml counts only in a project Codex trusts.
    `[projects."${server.project}"]`,
    'trust_level = "trusted"',
    '',
  ].join('\n'));
});
after(async () => {
  await standIn?.close();
  server?.stop();
  if (codexHome) fs.rmSync(codexHome, { recursive: true, force: true });
});

function codex(args) {
  return run(codexBin, args, {
    cwd: server.project,
    env: { ...process.env, CODEX_HOME: codexHome, STAND_IN_KEY: 'stand-in', VAIDER_TOKEN: server.token,
      NO_COLOR: '1', RUST_LOG: 'warn' },
  }, 180_000);
}

test('Codex, configured by vaider init, lists every tool and completes a call', async () => {
  const init = await vaiderInit(server, ['--client', 'codex']);
  assert.equal(init.code, 0, init.stderr);
  assert.ok(fs.readFileSync(path.join(server.project, '.codex/config.toml'), 'utf8')
    .includes('bearer_token_env_var = "VAIDER_TOKEN"'));

  const listed = await codex(['mcp', 'list', '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  const vaider = JSON.parse(listed.stdout).find((s) => s.name === 'vaider');
  assert.ok(vaider, listed.stdout);

  const started = Date.now();
  // The user approves Vaider's tools for this run (exec has no one to ask).
  const done = await codex(['exec', '--skip-git-repo-check',
    '-c', 'mcp_servers.vaider.default_tools_approval_mode="approve"',
    'What does the login recording show?']);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  assert.equal(done.code, 0, `${done.stdout}\n${done.stderr}`);
  assert.deepEqual(warnings(done.stderr), [], done.stderr);

  const turns = standIn.requests.filter((r) => r.path.endsWith('/responses'));
  const offered = turns[0]?.tools ?? [];
  for (const tool of VAIDER_TOOLS) {
    assert.ok(offered.some((name) => name.endsWith(tool)), `${tool} not offered: ${offered}`);
  }
  assert.ok(turns.some((t) => t.called?.endsWith('analyze_video')), 'the stand-in called the tool');
  const result = turns.map((t) => t.toolResult).find(Boolean) ?? '';
  assert.ok(result.includes(server.videoSha256), `Vaider's answer reached the model: ${result}`);
  assert.ok(done.stdout.includes('Vaider answered'), done.stdout);
  console.log(`codex exec: ${seconds} s`);
});
