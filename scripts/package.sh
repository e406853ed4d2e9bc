#!/usr/bin/env bash
# Make the packages that ship one built `vaider` to users and agents, into target/packages/:
#   vaider-VERSION-TARGET.tar.gz (+ .sha256)   bin/vaider, share/vaider/eval/set, README.md, LICENSE (if any), INSTALL
#   vaider-VERSION.tgz, vaider-PLATFORM-VERSION.tgz   the npm packages (`npm pack`): the main
#                                              package `vaider` (a launcher) and @vaider/PLATFORM
#   vaider-VERSION-PLATFORM.mcpb               the MCP Bundle (`mcpb pack`), for Claude Desktop
#   server.json                                the MCP registry's entry, with the bundle's sha256
# VERSION is `[workspace.package] version` in Cargo.toml; PLATFORM is npm's name for TARGET
# (linux-x64 for x86_64-unknown-linux-gnu). Nothing is built unless asked, nothing published;
# scripts/package-test.sh tests the result as a user would. docs/packaging.md explains it all.
#
# Usage: bash scripts/package.sh [--binary PATH] [--target TRIPLE] [--build] [--out DIR]
#   --binary PATH    the binary to package (default: $CARGO_TARGET_DIR/dist/vaider, the `dist`
#                    profile's build; with --target, $CARGO_TARGET_DIR/TRIPLE/dist/vaider)
#   --target TRIPLE  the Rust target it was built for (default: this machine's)
#   --build          build it first: cargo build --profile dist -p vaider-cli [--target TRIPLE]
#   --out DIR        where the packages go (default: $CARGO_TARGET_DIR/packages)
# Needs Node >= 20 with npm (the machine's, else the one from .tools/venv); installs the mcpb
# CLI into packaging/tools/node_modules (npm ci) when missing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

BINARY=""
TARGET=""
TARGET_GIVEN=0
BUILD=0
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
    --binary) BINARY="${2:?--binary needs a path}"; shift 2 ;;
    --target) TARGET="${2:?--target needs a triple}"; TARGET_GIVEN=1; shift 2 ;;
    --build) BUILD=1; shift ;;
    --out) OUT="${2:?--out needs a folder}"; shift 2 ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    *) die "unknown argument: $1 (try --help)" ;;
    esac
done

# The Rust target of this machine, from rustc when it is there, else from uname.
host_target() {
    if command -v rustc >/dev/null 2>&1; then
        rustc -vV | sed -n 's/^host: //p'
        return
    fi
    case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo x86_64-unknown-linux-gnu ;;
    Linux-aarch64) echo aarch64-unknown-linux-gnu ;;
    Darwin-x86_64) echo x86_64-apple-darwin ;;
    Darwin-arm64) echo aarch64-apple-darwin ;;
    MINGW*-x86_64 | MSYS*-x86_64) echo x86_64-pc-windows-msvc ;;
    *) die "cannot tell this machine's Rust target: give --target" ;;
    esac
}

# npm's name (process.platform-process.arch) for a Rust target.
npm_platform() {
    case "$1" in
    x86_64-unknown-linux-gnu) echo linux-x64 ;;
    aarch64-unknown-linux-gnu) echo linux-arm64 ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    x86_64-pc-windows-msvc) echo win32-x64 ;;
    *) die "no npm package is defined for $1 (linux x64/arm64, macOS x64/arm64, Windows x64)" ;;
    esac
}

# sha256sum's output (`HASH  NAME`); macOS has only shasum.
sha256() {
    if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

# `[workspace.package] version = "…"` from Cargo.toml.
workspace_version() {
    awk '/^\[workspace\.package\]/ { inside = 1; next }
         /^\[/ { inside = 0 }
         inside && /^version *=/ { gsub(/.*= *"|".*/, ""); print; exit }' Cargo.toml
}

[ -n "$TARGET" ] || TARGET="$(host_target)"
PLATFORM="$(npm_platform "$TARGET")"
EXE=""
case "$TARGET" in *-windows-*) EXE=".exe" ;; esac
VERSION="$(workspace_version)"
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || die "no [workspace.package] version in Cargo.toml (found '$VERSION')"
OUT="${OUT:-$TARGET_DIR/packages}"
# Cargo puts a build for an explicit --target under target/TRIPLE/.
BUILD_ARGS=(build --profile dist -p vaider-cli)
DEFAULT_BINARY="$TARGET_DIR/dist/vaider$EXE"
if [ "$TARGET_GIVEN" -eq 1 ]; then
    BUILD_ARGS+=(--target "$TARGET")
    DEFAULT_BINARY="$TARGET_DIR/$TARGET/dist/vaider$EXE"
fi
BINARY="${BINARY:-$DEFAULT_BINARY}"

if [ "$BUILD" -eq 1 ]; then
    step "building vaider (cargo ${BUILD_ARGS[*]})"
    cargo "${BUILD_ARGS[@]}"
fi
[ -f "$BINARY" ] || die "no binary at $BINARY: build it (--build, or cargo build --profile dist -p vaider-cli) or give --binary PATH"
[ -x "$BINARY" ] || die "$BINARY is not executable"
BINARY="$(cd "$(dirname "$BINARY")" && pwd)/$(basename "$BINARY")"

ensure_node20
if [ ! -x packaging/tools/node_modules/.bin/mcpb ] ||
    [ packaging/tools/package-lock.json -nt packaging/tools/node_modules/.package-lock.json ]; then
    step "npm ci in packaging/tools (the mcpb CLI)"
    (cd packaging/tools && npm ci --no-audit --no-fund --loglevel=error)
fi
MCPB=("$REPO_ROOT/packaging/tools/node_modules/.bin/mcpb")

step "packaging vaider $VERSION for $TARGET ($PLATFORM) from $BINARY"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
STAGE="$OUT/stage"
rm -rf "$STAGE"
mkdir -p "$STAGE"
# What running the binary (the bundle's tool list) may create stays in the stage, not in the
# user's data and config folders.
export VAIDER_DATA_DIR="$STAGE/run/data" VAIDER_CONFIG_DIR="$STAGE/run/config"
mkdir -p "$VAIDER_DATA_DIR" "$VAIDER_CONFIG_DIR"

# ---- the tarball -------------------------------------------------------------------------
NAME="vaider-$VERSION-$TARGET"
step "tarball $NAME.tar.gz"
# bin/vaider with the eval set in share/vaider/eval/set beside it, where `vaider eval` looks
# (<prefix>/bin/vaider → <prefix>/share/vaider/eval/set).
mkdir -p "$STAGE/$NAME/bin" "$STAGE/$NAME/share/vaider/eval"
cp "$BINARY" "$STAGE/$NAME/bin/vaider$EXE"
chmod 755 "$STAGE/$NAME/bin/vaider$EXE"
cp -r eval/set "$STAGE/$NAME/share/vaider/eval/set"
cp README.md "$STAGE/$NAME/"
[ -f LICENSE ] && cp LICENSE "$STAGE/$NAME/"
cat >"$STAGE/$NAME/INSTALL" <<EOF
Vaider $VERSION for $TARGET

Unpack it where programs live and put bin/vaider on your PATH, for example:
    mkdir -p ~/.local/opt && tar xzf $NAME.tar.gz -C ~/.local/opt
    ln -s ~/.local/opt/$NAME/bin/vaider$EXE ~/.local/bin/vaider
(share/vaider/eval/set, beside bin/, is the labelled set \`vaider eval\` scores; it finds it
through the link.)

Then store a Gemini API key once (kept in the OS keychain) and set up your agent:
    vaider key set                 # reads the key from standard input
    vaider init --client claude    # or cursor, vscode, codex, gemini, windsurf, zed: that
                                   # agent's MCP config and VaiderRules.txt in this project
    vaider doctor                  # what is set, what is missing and how to fix it

MCP clients that start their servers as processes run \`vaider stdio\`; others use
\`vaider serve\` (http://127.0.0.1:3456/mcp). README.md says more.
EOF
if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    # Reproducible: sorted names, no owner, the binary's modification time.
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$(date -r "$BINARY" +%s)" \
        -C "$STAGE" -czf "$OUT/$NAME.tar.gz" "$NAME"
else
    tar -C "$STAGE" -czf "$OUT/$NAME.tar.gz" "$NAME" # macOS: bsdtar
fi
(cd "$OUT" && sha256 "$NAME.tar.gz" >"$NAME.tar.gz.sha256")
info "$(cat "$OUT/$NAME.tar.gz.sha256")"

# ---- npm ----------------------------------------------------------------------------------
step "npm packages vaider@$VERSION and @vaider/$PLATFORM@$VERSION (npm pack)"
node packaging/stage.mjs npm --version "$VERSION" --platform "$PLATFORM" --binary "$BINARY" \
    --out "$STAGE/npm" >/dev/null
rm -f "$OUT/vaider-$VERSION.tgz" "$OUT/vaider-$PLATFORM-$VERSION.tgz"
(cd "$OUT" && npm pack --silent --pack-destination "$OUT" "$STAGE/npm/vaider" "$STAGE/npm/$PLATFORM" >/dev/null)
for f in "vaider-$VERSION.tgz" "vaider-$PLATFORM-$VERSION.tgz"; do
    [ -f "$OUT/$f" ] || die "npm pack did not write $OUT/$f"
    info "$f"
done

# ---- the MCP Bundle -----------------------------------------------------------------------
BUNDLE="vaider-$VERSION-$PLATFORM.mcpb"
step "MCP Bundle $BUNDLE (mcpb pack; the tools are the binary's own tools/list)"
node packaging/stage.mjs mcpb --version "$VERSION" --platform "$PLATFORM" --binary "$BINARY" \
    --icon icons/icon.png --out "$STAGE/mcpb" | sed 's/^/    /'
"${MCPB[@]}" pack "$STAGE/mcpb" "$OUT/$BUNDLE" >"$STAGE/mcpb-pack.log" 2>&1 ||
    { sed 's/^/    | /' "$STAGE/mcpb-pack.log" >&2; die "mcpb pack failed"; }
info "$BUNDLE"

# ---- the MCP registry's server.json ---------------------------------------------------------
step "server.json (the MCP registry's entry: npm package and bundle with its sha256)"
node packaging/stage.mjs server --version "$VERSION" --out "$OUT/server.json" "$OUT/$BUNDLE" >/dev/null
info "$OUT/server.json"

rm -rf "$STAGE" # copies of the binary; the packages hold all of it
step "done: $OUT"
for f in "$NAME.tar.gz" "$NAME.tar.gz.sha256" "vaider-$VERSION.tgz" "vaider-$PLATFORM-$VERSION.tgz" \
    "$BUNDLE" server.json; do
    printf '    %10s  %s\n' "$(wc -c <"$OUT/$f" | tr -d ' ')" "$f"
done
