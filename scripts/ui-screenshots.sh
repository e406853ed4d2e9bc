#!/usr/bin/env bash
# Make the README's pictures of the web UI: docs/history.png, docs/detail.png and
# docs/settings.png (1280x800), from the real server with a few analyses in its history
# (tests/ui/screenshots.mjs), in headless Chromium inside a D-Bus session with gnome-keyring.
# scripts/test.sh runs it after the web UI's tests, so the pictures are made again by every
# full test run and show the UI and the default model of the commit they belong to.
#
#   bash scripts/ui-screenshots.sh
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

case "${1:-}" in
-h | --help)
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
    exit 0
    ;;
esac
UI_DIR="$REPO_ROOT/tests/ui"
export MEDIA_DIR="${MEDIA_DIR:-$REPO_ROOT/../shared/media}"
[ -d "$MEDIA_DIR" ] || die "test media not found at $MEDIA_DIR (expected ../shared/media beside the repo)"

apt_ensure build-essential pkg-config chromium gnome-keyring dbus dbus-x11 libsecret-tools python3 fonts-dejavu-core
command -v cargo >/dev/null 2>&1 || die "cargo is missing: install Rust first (bash scripts/install.sh does)"
ensure_ui_packages

step "target/debug/vaider and fake-gemini (as the Rust tests build them)"
build_test_binaries
export VAIDER_BIN="$TARGET_DIR/debug/vaider" FAKE_GEMINI_BIN="$TARGET_DIR/debug/fake-gemini" CHROMIUM=/usr/bin/chromium
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"

khome=""
new_temp_dir khome
step "screenshots into docs/"
# shellcheck disable=SC2016 # expanded by the inner shell
env -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u XDG_RUNTIME_DIR \
    -u DBUS_SESSION_BUS_ADDRESS -u GNOME_KEYRING_CONTROL -u DISPLAY HOME="$khome" UI_DIR="$UI_DIR" \
    dbus-run-session -- bash -c '
echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
cd "$UI_DIR" && exec node screenshots.mjs
' 2> >(grep -Ev 'dbus-daemon|portal|Gtk-WARNING|PipeWire|pw\.conf|max threads|^\s*$' >&2)
