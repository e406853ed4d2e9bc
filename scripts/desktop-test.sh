#!/usr/bin/env bash
# End-to-end tests of the desktop tray app (src-tauri), on Linux under Xvfb. Fail-fast.
#
#   bash scripts/desktop-test.sh          install what is missing, build, run every check
#   bash scripts/desktop-test.sh --no-lint   skip cargo fmt/clippy/unit tests of vaider-desktop
#
# Checks: cargo fmt and clippy of vaider-desktop, its unit tests, then tests/desktop/app.test.mjs
# inside `xvfb-run` and a private D-Bus session with an unlocked gnome-keyring: the app starts
# its server (HOME, config and data in a temporary folder, the fake Gemini as provider), an
# analysis through /mcp with the MCP SDK client shows up in the app's window and its video
# plays in WebKitGTK, PUT /api/desktop adds and removes ~/.config/autostart/Vaider.desktop, a
# second launch hands over and exits, closing the window keeps the app in the tray (and a launch
# or the tray brings the window back); the tray menu (read and clicked over D-Bus as a panel
# does) shows the status, pauses and resumes, toggles start at login, copies each client's MCP
# config to the clipboard, moves the window to Settings and History, and Quit ends the app;
# with its port taken, the window says so and "Use port N instead"
# saves N in config.toml and opens the UI there. About 30 s once built.
#
# Installs (each only when missing): the Tauri build packages and test packages via apt,
# tauri-driver 2 into .tools/tauri-driver, a Python venv with Node >= 22 at .tools/venv (as
# test.sh does), and the npm packages of tests/desktop (package-lock.json). Needs the shared
# media at ../shared/media. A first run builds Tauri (about 8 minutes on 2 cores).
# On failure, screenshots and logs are kept in target/desktop-test-artifacts.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

# Temporary HOMEs of the app's sessions (added to SESSION_HOMES) are unmounted on exit.
on_exit unmount_session_homes

LINT=1
for arg in "$@"; do
    case "$arg" in
    --no-lint) LINT=0 ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    *) die "unknown argument: $arg (try --help)" ;;
    esac
done

MEDIA_DIR="$REPO_ROOT/../shared/media"
ARTIFACTS_DIR="$TARGET_DIR/desktop-test-artifacts"
START=$SECONDS

# What it needs from apt is DESKTOP_APT_PACKAGES in lib.sh (test.sh installs it up front).
install_deps() {
    apt_ensure "${DESKTOP_APT_PACKAGES[@]}"
    ensure_fmt_clippy
    ensure_tauri_driver
    ensure_venv
    ensure_desktop_npm_packages
    [ -d "$MEDIA_DIR" ] || die "shared media not found at $MEDIA_DIR (expected ../shared/media beside the repo)"
}

lint_and_unit_tests() {
    cargo fmt -p vaider-desktop -- --check
    cargo clippy --quiet -p vaider-desktop --all-targets -- -D warnings
    cargo test --quiet -p vaider-desktop
}

build() {
    cargo build --quiet -p vaider-desktop -p fake-gemini
}

end_to_end() {
    local home node dbus_log
    new_temp_dir home
    SESSION_HOMES+=("$home")
    dbus_log="$home.dbus.log"
    _TEMP_DIRS+=("$dbus_log")
    node="$(node22_path)"
    rm -rf "$ARTIFACTS_DIR"
    # A private X server and session bus; gnome-keyring answers the Secret Service so nothing
    # waits on a keychain prompt. Each app gets its own HOME, config and data (set by the test).
    # dbus-run-session's output (the chatter of the bus and of the services it starts: portals,
    # accessibility) goes to a log shown on failure; the tests keep the real stdout and stderr
    # (fds 4 and 3).
    # shellcheck disable=SC2016 # expanded by the inner shell
    if ! env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME -u XDG_RUNTIME_DIR \
        -u DBUS_SESSION_BUS_ADDRESS -u GNOME_KEYRING_CONTROL -u WAYLAND_DISPLAY \
        HOME="$home" NO_AT_BRIDGE=1 \
        VAIDER_DESKTOP_BIN="$TARGET_DIR/debug/vaider-desktop" \
        FAKE_GEMINI_BIN="$TARGET_DIR/debug/fake-gemini" \
        TAURI_DRIVER_BIN="$TAURI_DRIVER" \
        MEDIA_DIR="$MEDIA_DIR" \
        XWIN="$REPO_ROOT/tests/desktop/xwin.py" \
        TRAY="$REPO_ROOT/tests/desktop/tray.py" \
        ARTIFACTS_DIR="$ARTIFACTS_DIR" \
        NODE="$node" \
        xvfb-run -a -s "-screen 0 1280x800x24" \
        dbus-run-session -- bash -c '
exec 1>&4 2>&3 3>&- 4>&-
set -euo pipefail
echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null
cd tests/desktop
exec "$NODE" --test --test-concurrency=1 --test-reporter=spec app.test.mjs
' 3>&2 4>&1 >"$dbus_log" 2>&1; then
        if [ -s "$dbus_log" ]; then
            echo "---- dbus-run-session log ----" >&2
            grep -v 'Failed to set fd limit' "$dbus_log" >&2 || true
        fi
        return 1
    fi
}

step "dependencies (apt packages, tauri-driver, .tools/venv, tests/desktop npm packages)"
install_deps
if [ "$LINT" -eq 1 ]; then
    step "cargo fmt, clippy -D warnings and unit tests of vaider-desktop"
    lint_and_unit_tests
fi
step "building vaider-desktop and fake-gemini (debug; the first build takes about 8 minutes)"
build
step "end to end: tests/desktop/app.test.mjs under xvfb-run and dbus-run-session"
if ! end_to_end; then
    [ -d "$ARTIFACTS_DIR" ] && info "screenshots and logs: $ARTIFACTS_DIR"
    die "desktop end-to-end tests failed (after $((SECONDS - START))s)"
fi
printf '\n==> desktop tests passed in %ss\n' "$((SECONDS - START))"
