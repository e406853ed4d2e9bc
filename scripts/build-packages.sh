#!/usr/bin/env bash
# Build what users download, on Linux x86_64, into target/packages/ (one build, reused by
# every package):
#
#   bash scripts/build-packages.sh [--skip-app]
#
#   1. the headless `vaider` with the dist profile (Cargo.toml: fat LTO, stripped, its debug
#      info split off into target/dist/vaider.dwp), without the desktop-capture part, for the
#      tarball, npm and the MCP Bundle;
#   2. the tray app's .deb and .rpm, made by Tauri's own bundler (@tauri-apps/cli from npm,
#      into .tools/tauri-cli), holding the tray app, `vaider` with every part (desktop capture
#      too, as the tray has it) as /usr/bin/vaider and the labelled eval set in
#      /usr/share/vaider/eval/set (--skip-app leaves them out);
#   3. through scripts/package.sh: the release tarball with its .sha256, the npm packages and
#      the MCP Bundle.
#
# AppImage is not made: Tauri's bundler downloads linuxdeploy and its plugins at build time,
# which a machine without internet cannot. macOS and Windows bundles come from the release
# workflow (.github/workflows/release.yml). VAIDER_RELEASE_FEED (default: the GitHub
# releases' latest.json) is the update feed built into both binaries.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

SKIP_APP=0
for arg in "$@"; do
    case "$arg" in
    --skip-app) SKIP_APP=1 ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    *) die "unknown argument: $arg (try --help)" ;;
    esac
done

TAURI_CLI_VERSION="2.12.5"
TAURI_CLI_DIR="$TOOLS_DIR/tauri-cli"
PACKAGES_DIR="$TARGET_DIR/packages"
STAGE="$PACKAGES_DIR/built"
export VAIDER_RELEASE_FEED="${VAIDER_RELEASE_FEED:-https://github.com/vaider-dev/vaider/releases/latest/download/latest.json}"
VERSION="$(awk -F'"' '/^\[workspace.package\]/ { p = 1 } p && /^version/ { print $2; exit }' Cargo.toml)"
START=$SECONDS

ensure_tauri_cli() {
    if [ "$("$TAURI_CLI_DIR/node_modules/.bin/tauri" --version 2>/dev/null)" != "tauri-cli $TAURI_CLI_VERSION" ]; then
        step "installing @tauri-apps/cli $TAURI_CLI_VERSION into .tools/tauri-cli (npm)"
        mkdir -p "$TAURI_CLI_DIR"
        npm install --prefix "$TAURI_CLI_DIR" --no-audit --no-fund --loglevel=error \
            "@tauri-apps/cli@$TAURI_CLI_VERSION"
    fi
}

# build_cli KIND [CARGO FLAGS]: the dist `vaider`, kept as target/packages/built/KIND/vaider (the next build
# overwrites target/dist/vaider).
build_cli() {
    local kind="$1" t0=$SECONDS
    shift
    step "cargo build --profile dist -p vaider-cli $* ($kind; fat LTO: several minutes)"
    cargo build --quiet --profile dist -p vaider-cli "$@"
    mkdir -p "$STAGE/$kind"
    cp "$TARGET_DIR/dist/vaider" "$STAGE/$kind/vaider"
    info "$kind vaider: $(du -m "$STAGE/$kind/vaider" | cut -f1) MB, built in $((SECONDS - t0)) s"
}

# The files the Linux packages carry beside the tray app, with absolute paths (the bundler
# reads them relative to src-tauri otherwise), as a JSON merge patch of tauri.conf.json.
package_files_config() {
    local files
    files="$(printf '{"/usr/bin/vaider": "%s", "/usr/share/vaider/eval/set": "%s"}' \
        "$STAGE/desktop/vaider" "$REPO_ROOT/eval/set")"
    printf '{"bundle": {"linux": {"deb": {"files": %s}, "rpm": {"files": %s}}}}' "$files" "$files"
}

build_app() {
    ensure_tauri_cli
    step "tauri build --bundles deb,rpm (the tray app with the dist profile: about 10 minutes the first time)"
    local t0=$SECONDS config
    config="$(package_files_config)"
    "$TAURI_CLI_DIR/node_modules/.bin/tauri" build --ci --bundles deb,rpm --config "$config" \
        -- --profile dist
    local bundle="$TARGET_DIR/dist/bundle"
    cp "$bundle/deb/Vaider_${VERSION}_amd64.deb" "$bundle/rpm/Vaider-${VERSION}-1.x86_64.rpm" "$PACKAGES_DIR/"
    info "Vaider_${VERSION}_amd64.deb: $(du -m "$PACKAGES_DIR/Vaider_${VERSION}_amd64.deb" | cut -f1) MB," \
        "Vaider-${VERSION}-1.x86_64.rpm: $(du -m "$PACKAGES_DIR/Vaider-${VERSION}-1.x86_64.rpm" | cut -f1) MB," \
        "built in $((SECONDS - t0)) s"
}

mkdir -p "$PACKAGES_DIR"
# The tarball, npm and the MCP Bundle get the headless build (no desktop capture: fewer
# libraries on the user's machine); the Linux packages the full one, as the tray app has it.
build_cli headless --no-default-features
if [ "$SKIP_APP" -eq 0 ]; then
    apt_ensure "${DESKTOP_APT_PACKAGES[@]}"
    build_cli desktop
    build_app
fi
step "the tarball, npm packages and MCP Bundle (scripts/package.sh)"
bash scripts/package.sh --binary "$STAGE/headless/vaider"
printf '\n==> packages in %s (%ss)\n' "$PACKAGES_DIR" "$((SECONDS - START))"
ls -la "$PACKAGES_DIR"
