#!/usr/bin/env bash
# Install and start Vaider (the README's first command), on a fresh Debian or Ubuntu machine.
#
#   bash scripts/install.sh [serve options, e.g. --port 3456]
#
# Installs only what is missing (build tools via apt, Rust via rustup when cargo is missing or
# older than 1.88), builds the release binary, then runs `vaider serve` in the foreground with
# the given arguments. Run it again at any time: it is quick when everything is in place.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MIN_RUST="1.88"
APT_PACKAGES=(build-essential pkg-config curl ca-certificates)

step() { printf '==> %s\n' "$*"; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root for: $* (run as root or install sudo)"
    fi
}

install_system_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        step "not a Debian/Ubuntu system: make sure these are installed: ${APT_PACKAGES[*]}"
        return 0
    fi
    local missing=() p
    for p in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        step "system packages: all present"
        return 0
    fi
    step "installing ${missing[*]} (apt)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# version_ge A B: true when version A >= version B (dotted numbers).
version_ge() {
    [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

install_rust() {
    # A rustup installed earlier may not be on PATH yet.
    if ! command -v cargo >/dev/null 2>&1 && [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
        export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
    fi
    local have=""
    if command -v cargo >/dev/null 2>&1; then
        have="$(cargo --version | awk '{print $2}')"
        have="${have%%-*}"
    fi
    if [ -n "$have" ] && version_ge "$have" "$MIN_RUST"; then
        step "Rust: cargo $have (>= $MIN_RUST)"
        return 0
    fi
    if [ -n "$have" ] && command -v rustup >/dev/null 2>&1; then
        step "installing Rust stable with rustup (cargo $have is older than $MIN_RUST)"
        rustup toolchain install stable --profile minimal
        rustup default stable
    else
        if [ -n "$have" ]; then
            step "installing Rust with rustup (cargo $have is older than $MIN_RUST; the rustup one will come first on PATH)"
        else
            step "installing Rust with rustup (no cargo found) from https://sh.rustup.rs"
        fi
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
            sh -s -- -y --profile minimal --default-toolchain stable --no-modify-path
        export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
        step "Rust installed in ${CARGO_HOME:-$HOME/.cargo}; add ${CARGO_HOME:-$HOME/.cargo}/bin to your PATH to use cargo yourself"
    fi
    have="$(cargo --version | awk '{print $2}')"
    version_ge "${have%%-*}" "$MIN_RUST" || die "cargo is still $have after installing; need >= $MIN_RUST"
}

build_vaider() {
    step "building Vaider (cargo build --release -p vaider-cli; the first build takes a few minutes)"
    (cd "$REPO_ROOT" && cargo build --release --quiet -p vaider-cli)
}

# The desktop app (tray + window) will be launched here instead of the headless server when a
# display is available. Not implemented yet: always false, so the server below always runs.
desktop_available() {
    return 1
}

launch_desktop_app() {
    die "the desktop app is not available yet"
}

main() {
    install_system_packages
    install_rust
    build_vaider
    local bin="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/vaider"
    [ -x "$bin" ] || die "build finished but $bin is missing"
    # `vaider key set`, `vaider init` and the rest should work from any folder.
    mkdir -p "$HOME/.local/bin"
    ln -sf "$bin" "$HOME/.local/bin/vaider"
    case ":$PATH:" in
    *":$HOME/.local/bin:"*) step "linked $HOME/.local/bin/vaider" ;;
    *) step "linked $HOME/.local/bin/vaider (add $HOME/.local/bin to your PATH to type \`vaider\`)" ;;
    esac
    if desktop_available; then
        launch_desktop_app "$@"
    fi
    step "starting the Vaider server (Ctrl-C stops it; \`$bin token\` prints the token agents need)"
    exec "$bin" serve "$@"
}

main "$@"
