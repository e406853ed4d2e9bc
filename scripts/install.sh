#!/usr/bin/env bash
# Install and start Vaider (the README's first command), on a fresh Debian or Ubuntu machine.
#
#   bash scripts/install.sh [--with PARTS] [serve options, e.g. --port 3456]
#
# Installs only what is missing (build tools via apt, Rust via rustup when cargo is missing or
# older than 1.89) and builds the release binary. The default build is headless and lean;
# `--with desktop-capture` adds screen and window capture (its system libraries, and minutes of
# build). The parts chosen are remembered for later runs; `--with none` goes back to the default. Then, on a graphical session (DISPLAY or
# WAYLAND_DISPLAY), it installs the tray app's system packages, builds the app, starts it in
# the background and returns; elsewhere, or with serve options, or when the app cannot be
# built, it runs `vaider serve` in the foreground with the given arguments. VAIDER_DESKTOP=0
# (or 1) forces the headless server (or the app). Run it again at any time: it is quick when
# everything is in place.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MIN_RUST="1.89"
# libssl-dev: HTTPS to the model services goes through the system's OpenSSL.
APT_PACKAGES=(build-essential pkg-config curl ca-certificates libssl-dev)
# Optional parts (cargo features of vaider-cli and vaider-desktop) and what each needs from apt.
# desktop-capture: xcap builds its X11, Wayland and PipeWire sides, with bindgen (libclang).
OPTIONAL_PARTS=(desktop-capture)
DESKTOP_CAPTURE_APT_PACKAGES=(libclang-dev libpipewire-0.3-dev libspa-0.2-dev libwayland-dev
    libegl-dev libgbm-dev libxcb1-dev)
# The parts the last install built, kept beside the build.
PARTS_FILE="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/install-parts"
PARTS=""

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

# choose_parts LIST: checks `--with`'s list (comma-separated, or "none") and remembers it;
# without `--with`, the list the last install remembered.
choose_parts() {
    local given="$1" part known
    if [ "$given" = "-" ]; then
        PARTS="$(cat "$PARTS_FILE" 2>/dev/null || true)"
        return 0
    fi
    [ "$given" = "none" ] && given=""
    for part in ${given//,/ }; do
        known=0
        for p in "${OPTIONAL_PARTS[@]}"; do [ "$part" = "$p" ] && known=1; done
        [ "$known" -eq 1 ] || die "--with $part: not a part of Vaider (parts: ${OPTIONAL_PARTS[*]}, or none)"
    done
    PARTS="${given// /}"
    mkdir -p "$(dirname "$PARTS_FILE")"
    printf '%s\n' "$PARTS" >"$PARTS_FILE"
}

# The cargo flags of the chosen parts: the lean default plus each part's feature.
feature_flags() {
    printf '%s\n' --no-default-features
    [ -n "$PARTS" ] && printf '%s\n' --features "$PARTS"
    return 0
}

build_vaider() {
    local flags
    mapfile -t flags < <(feature_flags)
    step "building Vaider (cargo build --release -p vaider-cli ${flags[*]}; the first build takes a few minutes)"
    (cd "$REPO_ROOT" && cargo build --release --quiet -p vaider-cli "${flags[@]}")
}

# ---- the desktop app (tray + window) --------------------------------------------------------
# Run instead of the headless server on a graphical session. VAIDER_DESKTOP=0 keeps the
# headless server; VAIDER_DESKTOP=1 insists on the app. Serve options on the command line (such
# as --port) mean the headless server: the app reads its port from the config instead.
DESKTOP_APT_PACKAGES=(libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev
    libssl-dev gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav)

desktop_available() {
    case "${VAIDER_DESKTOP:-}" in
    0 | no | false) return 1 ;;
    1 | yes | true) return 0 ;;
    esac
    if [ $# -gt 0 ]; then
        step "serve options given ($*): starting the headless server, not the desktop app"
        return 1
    fi
    [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]
}

# Builds and starts the tray app in the background, then exits; returns (so the headless server
# starts instead) when it cannot be built or does not come up.
launch_desktop_app() {
    local apt_missing=() p
    if command -v dpkg-query >/dev/null 2>&1; then
        for p in "${DESKTOP_APT_PACKAGES[@]}"; do
            dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
                apt_missing+=("$p")
        done
        if [ ${#apt_missing[@]} -gt 0 ]; then
            step "installing ${apt_missing[*]} for the desktop app (apt)"
            if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
                ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_missing[@]}" >/dev/null; then
                warn_desktop "apt could not install the desktop app's packages"
                return 1
            fi
        fi
    fi
    local flags
    mapfile -t flags < <(feature_flags)
    step "building the desktop app (cargo build --release -p vaider-desktop ${flags[*]}; the first build takes about 10 minutes)"
    (cd "$REPO_ROOT" && cargo build --release --quiet -p vaider-desktop "${flags[@]}") ||
        { warn_desktop "the desktop app did not build"; return 1; }
    local app="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/vaider-desktop"
    ln -sf "$app" "$HOME/.local/bin/vaider-desktop"
    local log="${XDG_STATE_HOME:-$HOME/.local/state}/vaider/desktop.log"
    mkdir -p "$(dirname "$log")"
    step "starting the desktop app (tray icon and window; log: $log)"
    nohup "$app" >"$log" 2>&1 </dev/null &
    local pid=$! waited=0
    # It either hands over to a running copy and exits 0, or keeps running with its server.
    while [ "$waited" -lt 50 ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            if wait "$pid"; then
                step "Vaider was already running: its window is in front"
                exit 0
            fi
            sed 's/^/    | /' "$log" >&2
            warn_desktop "the desktop app stopped at once"
            return 1
        fi
        if grep -q 'listening on' "$log" 2>/dev/null; then
            step "Vaider runs in the tray: $(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$log" | tail -n 1)"
            step "it starts at login (the tray menu's \"Start at login\" turns that off); \`vaider token\` prints the token agents need"
            exit 0
        fi
        if grep -q 'the server could not start' "$log" 2>/dev/null; then
            step "the desktop app runs, but its server did not start: its window says why and offers a way out (log: $log)"
            exit 0
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
    step "the desktop app is starting (see $log)"
    exit 0
}

warn_desktop() {
    printf 'warning: %s; starting the headless server instead (VAIDER_DESKTOP=0 skips the app)\n' "$1" >&2
}

main() {
    local with="-"
    while [ $# -gt 0 ]; do
        case "$1" in
        --with) [ $# -ge 2 ] || die "--with needs a list, e.g. --with desktop-capture"; with="$2"; shift 2 ;;
        --with=*) with="${1#--with=}"; shift ;;
        *) break ;;
        esac
    done
    choose_parts "$with"
    case ",$PARTS," in
    *,desktop-capture,*) APT_PACKAGES+=("${DESKTOP_CAPTURE_APT_PACKAGES[@]}") ;;
    esac
    [ -n "$PARTS" ] && step "optional parts: $PARTS"
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
    if desktop_available "$@"; then
        launch_desktop_app || true
    fi
    step "starting the Vaider server (Ctrl-C stops it; \`$bin token\` prints the token agents need)"
    exec "$bin" serve "$@"
}

main "$@"
