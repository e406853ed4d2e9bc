// Checks the MCP registry entry scripts/package.sh wrote, offline: valid against the
// registry's published JSON schema (the 2025-12-11 copy, its sha256 pinned), and true to the
// packages beside it: each bundle's fileSha256 is the file's, the versions are the release's,
// and the npm package names the entry in `mcpName` (the registry's ownership check).
//
//   node validate-server-json.mjs SCHEMA SERVER_JSON PACKAGES_DIR VERSION NPM_PACKAGE_JSON
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const SCHEMA_URL = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
const SCHEMA_SHA256 = '3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0';

const [schemaFile, serverFile, packagesDir, version, npmPackageJson] = process.argv.slice(2);
if (!npmPackageJson) {
  console.error('usage: validate-server-json.mjs SCHEMA SERVER_JSON PACKAGES_DIR VERSION NPM_PACKAGE_JSON');
  process.exit(2);
}
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const problems = [];

const server = JSON.parse(fs.readFileSync(serverFile, 'utf8'));
// SCHEMA "-": no copy of the registry's schema here; the rest is still checked.
if (schemaFile !== '-') {
  const schemaBytes = fs.readFileSync(schemaFile);
  if (sha256(schemaBytes) !== SCHEMA_SHA256) {
    problems.push(`${schemaFile} is not the registry's 2025-12-11 schema (sha256 ${sha256(schemaBytes)}, expected ${SCHEMA_SHA256})`);
  }
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  if (!ajv.validate(JSON.parse(schemaBytes), server)) {
    for (const e of ajv.errors) problems.push(`schema: ${e.instancePath || '/'} ${e.message}`);
  }
}
if (server.$schema !== SCHEMA_URL) problems.push(`$schema is ${server.$schema}, not ${SCHEMA_URL}`);
if (server.version !== version) problems.push(`version ${server.version} is not ${version}`);

const npm = server.packages.filter((p) => p.registryType === 'npm');
const pkg = JSON.parse(fs.readFileSync(npmPackageJson, 'utf8'));
if (npm.length !== 1) problems.push(`${npm.length} npm packages, expected 1`);
for (const p of npm) {
  if (p.identifier !== pkg.name || p.version !== pkg.version) {
    problems.push(`npm ${p.identifier}@${p.version} is not the packed ${pkg.name}@${pkg.version}`);
  }
  if (p.transport?.type !== 'stdio') problems.push('the npm package must be stdio');
  if (!p.packageArguments?.some((a) => a.value === 'stdio')) problems.push('the npm package must run `vaider stdio`');
}
if (pkg.mcpName !== server.name) problems.push(`package.json mcpName ${pkg.mcpName} is not ${server.name}`);

const bundles = server.packages.filter((p) => p.registryType === 'mcpb');
if (bundles.length === 0) problems.push('no mcpb package');
for (const b of bundles) {
  const file = path.join(packagesDir, path.basename(new URL(b.identifier).pathname));
  if (!b.identifier.startsWith(`https://github.com/vaider-dev/vaider/releases/download/v${version}/`)) {
    problems.push(`${b.identifier} is not a download of release v${version}`);
  }
  if (!fs.existsSync(file)) {
    problems.push(`${file} (named by ${b.identifier}) is missing`);
  } else if (sha256(fs.readFileSync(file)) !== b.fileSha256) {
    problems.push(`fileSha256 of ${path.basename(file)} is ${b.fileSha256}, the file's is ${sha256(fs.readFileSync(file))}`);
  }
}

if (problems.length) {
  console.error(`${serverFile}: INVALID`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
console.log(`${serverFile}: ${schemaFile === '-' ? 'schema not checked' : 'valid against the 2025-12-11 schema'}; ${server.name} ${server.version}, ` +
  `${npm.length} npm + ${bundles.length} mcpb package(s), sha256 of each bundle checked`);
