#!/usr/bin/env bash
# The user's session of scripts/linux-packages-test.sh: run by it inside xvfb-run and
# dbus-run-session, with a throwaway HOME (apt-get as root, through sudo when not root), with DEB, UPGRADE, VERSION, FAKE_GEMINI_BIN,
# MEDIA_DIR and TRAY set. Not meant to be run by hand.
set -euo pipefail
[ "${1:-}" = "--inside" ] || {
    echo "run scripts/linux-packages-test.sh instead" >&2
    exit 2
}
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

PORT=3581
APP_PID=""
echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null

# ---- the model service and the release feed, both on loopback ------------------------------
start_bg "$HOME/fake.out" "$HOME/fake.err" "$FAKE_GEMINI_BIN"
wait_for_line FAKE_URL "$HOME/fake.out" 's/^FAKE_GEMINI_URL=//p' "$LAST_BG_PID" 30 "the fake Gemini" "$HOME/fake.err"

FEED_DIR="$HOME/feed"
mkdir -p "$FEED_DIR"
feed_version() {
    printf '{"version": "%s", "notes": "the test feed", "pub_date": "2026-11-28T00:00:00Z", "platforms": {}}' \
        "$1" >"$FEED_DIR/latest.json"
}
feed_version 99.0.0
start_bg "$HOME/feed.out" "$HOME/feed.err" python3 -m http.server --bind 127.0.0.1 --directory "$FEED_DIR" 3582
export VAIDER_UPDATE_FEED="http://127.0.0.1:3582/latest.json"
for _ in $(seq 1 100); do
    curl -sf "$VAIDER_UPDATE_FEED" >/dev/null && break
    sleep 0.1
done
export VAIDER_PORT=$PORT VAIDER_GEMINI_BASE_URL="$FAKE_URL"

# ---- the app -----------------------------------------------------------------------------
start_app() {
    /usr/bin/vaider-desktop >"$HOME/app.log" 2>&1 &
    APP_PID=$!
    for _ in $(seq 1 600); do
        curl -sf "http://127.0.0.1:$PORT/v1/health" >/dev/null && return 0
        kill -0 "$APP_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$HOME/app.log" >&2
    die "the installed tray app did not answer /v1/health"
}

tray_menu() { /usr/bin/python3 "$TRAY" "$APP_PID" menu; }

# Waits until the tray's menu holds an item with this label (the update check runs in the
# background after the start).
wait_for_tray_item() {
    local label="$1" menu=""
    for _ in $(seq 1 100); do
        menu="$(tray_menu 2>/dev/null || true)"
        python3 -c 'import json,sys; sys.exit(0 if any(i["label"] == sys.argv[2] for i in json.loads(sys.argv[1] or "[]")) else 1)' \
            "$menu" "$label" && return 0
        sleep 0.2
    done
    die "the tray menu has no item \"$label\"; it shows: $menu"
}

quit_app() {
    /usr/bin/python3 "$TRAY" "$APP_PID" click "Quit Vaider" >/dev/null
    for _ in $(seq 1 100); do
        kill -0 "$APP_PID" 2>/dev/null || return 0
        sleep 0.1
    done
    die "the app did not end after Quit"
}

# One analysis of a recording over REST (a copy: its interaction files go beside it); prints
# the answer.
mkdir -p "$HOME/work"
cp "$MEDIA_DIR/login-flow.webm" "$HOME/work/login-flow.webm"
analyse() {
    curl -sf -X POST "http://127.0.0.1:$PORT/v1/analyse" \
        -H "Authorization: Bearer $(vaider token)" -H 'Content-Type: application/json' \
        -d "{\"videoPath\": \"$HOME/work/login-flow.webm\"}"
}

expect_in() {
    local what="$1" text="$2" wanted="$3"
    grep -qF -- "$wanted" <<<"$text" || die "$what does not say \"$wanted\"; it says:
$text"
}

# ---- install, start -----------------------------------------------------------------------
step "apt-get install ./$(basename "$DEB"), then the tray app until /v1/health answers"
t0=$(date +%s.%N)
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$DEB" >/dev/null
t_installed=$(date +%s.%N)
# The key first (not timed): the user's own step, with the CLI the package brought.
echo -n test-gemini-key | vaider key set >/dev/null
t_start=$(date +%s.%N)
start_app
t_healthy=$(date +%s.%N)
info "$(python3 -c "import sys; a,b,c,d=map(float,sys.argv[1:]); print(f'from the downloaded .deb to the tray app healthy: {b-a+d-c:.1f} s (apt-get install {b-a:.1f} s, start {d-c:.1f} s)')" "$t0" "$t_installed" "$t_start" "$t_healthy")"

for f in /usr/bin/vaider /usr/bin/vaider-desktop /usr/share/applications/Vaider.desktop \
    /usr/share/vaider/eval/set/manifest.json; do
    [ -e "$f" ] || die "the installed package has no $f"
done
# Every library the installed programs load comes from a package the .deb depends on, directly
# or through its dependencies: on a machine without the build packages they still start.
closure="$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances vaider 2>/dev/null | grep -v '^ ' | sed 's/:.*//' | sort -u)"
for bin in /usr/bin/vaider /usr/bin/vaider-desktop; do
    for lib in $(ldd "$bin" | awk '/=> \// { print $3 }'); do
        owner="$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1 || true)"
        [ -z "$owner" ] && owner="$(dpkg -S "$lib" 2>/dev/null | head -1 | cut -d: -f1 || true)"
        [ -n "$owner" ] || die "$bin loads $lib, which no package owns"
        grep -qx "$owner" <<<"$closure" || die "$bin loads $lib from $owner, which the .deb does not depend on"
    done
done
desktop-file-validate /usr/share/applications/Vaider.desktop
expect_in "the menu entry" "$(cat /usr/share/applications/Vaider.desktop)" "Exec=vaider-desktop"
[ "$(command -v vaider)" = /usr/bin/vaider ] || die "vaider on the PATH is $(command -v vaider), not /usr/bin/vaider"

step "the tray item, start at login and the newer release the loopback feed offers"
wait_for_tray_item "Quit Vaider"
wait_for_tray_item "Update available: Vaider 99.0.0…"
autostart="$HOME/.config/autostart/Vaider.desktop"
[ -f "$autostart" ] || die "start at login was not switched on at the first run ($autostart is missing)"
expect_in "$autostart" "$(cat "$autostart")" "/usr/bin/vaider-desktop"

step "vaider doctor: where Vaider came from, and the feed's newer and equal versions"
doctor="$(vaider doctor 2>&1 || true)"
expect_in "vaider doctor" "$doctor" "from the vaider .deb package"
expect_in "vaider doctor" "$doctor" "Vaider 99.0.0 is available"
expect_in "vaider doctor" "$doctor" "API key: set, from the OS keychain"
feed_version "$VERSION"
doctor="$(vaider doctor 2>&1 || true)"
expect_in "vaider doctor with an equal feed" "$doctor" "updates: up to date"
[ "$(vaider eval --help >/dev/null 2>&1 && echo ok)" = ok ] || die "vaider eval --help failed"

step "an analysis against the fake Gemini, kept in the history"
first="$(analyse)" || die "the analysis failed: $(tail -5 "$HOME/app.log")"
expect_in "the first analysis" "$first" '"cached":false'
quit_app

# ---- upgrade ------------------------------------------------------------------------------
step "upgrade in place to $(basename "$UPGRADE") (version ${VERSION}+repack1)"
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$UPGRADE" >/dev/null
[ "$(dpkg-query -W -f='${Version}' vaider)" = "${VERSION}+repack1" ] || die "the upgrade did not install"
start_app
again="$(analyse)" || die "the analysis after the upgrade failed"
expect_in "the same analysis after the upgrade" "$again" '"cached":true'
doctor="$(vaider doctor 2>&1 || true)"
expect_in "vaider doctor after the upgrade" "$doctor" "API key: set, from the OS keychain"
quit_app

# ---- remove -------------------------------------------------------------------------------
step "apt-get remove vaider: its files go, the user's data stays"
as_root env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq vaider >/dev/null
for f in /usr/bin/vaider /usr/bin/vaider-desktop /usr/share/applications/Vaider.desktop /usr/share/vaider; do
    [ ! -e "$f" ] || die "$f is still there after apt-get remove"
done
[ -s "$HOME/.local/share/vaider/token" ] || die "the user's data folder did not survive the removal"
info "ok: installed, started, upgraded and removed"
