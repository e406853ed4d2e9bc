// Starts an MCP server over stdio the way a client does and lists its tools with the official
// TypeScript SDK's client (initialize, then tools/list); fails unless the expected tools are
// there and the server reports the expected version.
//
//   node list-tools.mjs [--cwd DIR] [--expect-version V] [--expect TOOL]... -- COMMAND ARG...
//   node list-tools.mjs --mcpb DIR [--gemini-key KEY] [--expect-version V] [--expect TOOL]...
// With --mcpb, DIR is an unpacked MCP Bundle: the command, arguments and environment come from
// its manifest.json as Claude Desktop fills them in (${__dirname} is DIR, ${user_config.*} the
// user's answers), and the tools listed must be exactly the ones the manifest declares.
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const options = { expect: [] };
const flags = split >= 0 ? argv.slice(0, split) : argv;
for (let i = 0; i < flags.length; i += 2) {
  const [name, value] = [flags[i].replace(/^--/, ''), flags[i + 1]];
  if (value === undefined) throw new Error(`--${name} needs a value`);
  if (name === 'expect') options.expect.push(value);
  else options[name.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = value;
}

let command;
let args;
let env = { ...process.env };
let declared;
let cwd = options.cwd ?? process.cwd();
if (options.mcpb) {
  const dir = path.resolve(options.mcpb);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const answers = { gemini_api_key: options.geminiKey ?? '' };
  const fill = (text) => text.replaceAll('${__dirname}', dir)
    .replace(/\$\{user_config\.(\w+)\}/g, (_, key) => answers[key] ?? '');
  const config = manifest.server.mcp_config;
  command = fill(config.command);
  args = (config.args ?? []).map(fill);
  for (const [key, value] of Object.entries(config.env ?? {})) env[key] = fill(value);
  declared = (manifest.tools ?? []).map((t) => t.name).sort();
  cwd = dir;
} else {
  assert.ok(split >= 0 && argv.length > split + 1, 'give the server command after --');
  [command, ...args] = argv.slice(split + 1);
}

const transport = new StdioClientTransport({ command, args, env, cwd, stderr: 'pipe' });
let stderr = '';
transport.stderr?.on('data', (chunk) => { stderr += chunk; });
const client = new Client({ name: 'vaider-package-test', version: '1.0.0' });
try {
  await client.connect(transport);
  const server = client.getServerVersion();
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  console.log(`${command} ${args.join(' ')}: ${server?.name} ${server?.version}, ${names.length} tools`);
  if (options.expectVersion) assert.equal(server?.version, options.expectVersion, 'server version');
  for (const name of options.expect) assert.ok(names.includes(name), `${name} is not listed: ${names.join(', ')}`);
  if (declared) assert.deepEqual(names, declared, 'the tools listed are the tools the manifest declares');
  await client.close();
} catch (err) {
  if (stderr) console.error(`server stderr:\n${stderr}`);
  throw err;
}
