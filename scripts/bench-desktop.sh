#!/usr/bin/env bash
# Measure the desktop tray app on Linux under Xvfb, beside the headless server, and print the
# figures (also written to target/bench-desktop.md). A report, not a test: nothing fails on a
# missed target.
#
#   bash scripts/bench-desktop.sh [--debug] [--launches N]
#     --debug      measure the debug builds (default: release, as users run it)
#     --launches   launches timed from exec to /v1/health answering, default 5 (median shown)
#
# Figures: launch to /v1/health (target < 1.5 s); idle memory of the whole app (its process and
# the WebKit network and web processes under it) with the window open on the history and after
# the window is closed; and `vaider serve` idle. Memory is given as RSS summed over the
# processes (shared libraries counted once per process) and as PSS (shared pages split between
# the processes sharing them; the fairer sum). Needs what scripts/desktop-test.sh installs; the
# first release build of the app takes about 10 minutes on 2 cores.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

# Temporary HOMEs of the app's sessions (added to SESSION_HOMES) are unmounted on exit.
on_exit unmount_session_homes

PROFILE=release
LAUNCHES=5
INNER=0
while [ $# -gt 0 ]; do
    case "$1" in
    --debug) PROFILE=debug ;;
    --launches)
        LAUNCHES="${2:?--launches needs a number}"
        shift
        ;;
    --inner) INNER=1 ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
done

APP="$TARGET_DIR/$PROFILE/vaider-desktop"
VAIDER="$TARGET_DIR/$PROFILE/vaider"
REPORT="$TARGET_DIR/bench-desktop.md"

# ---- helpers used inside Xvfb ------------------------------------------------------------
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# tree_pids PID: PID and all its descendants.
tree_pids() {
    ps -e -o pid=,ppid= | awk -v root="$1" '
        { parent[$1] = $2 }
        END {
            keep[root] = 1; changed = 1
            while (changed) {
                changed = 0
                for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 }
            }
            for (p in keep) print p
        }'
}

# memory_kib PID: "RSS PSS" in KiB, summed over PID's process tree.
memory_kib() {
    local rss=0 pss=0 pid r p
    for pid in $(tree_pids "$1"); do
        r="$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)"
        p="$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || true)"
        rss=$((rss + ${r:-0}))
        pss=$((pss + ${p:-0}))
    done
    echo "$rss $pss"
}

# process_names PID: the processes in PID's tree with each one's PSS, for the report.
process_names() {
    local pid name pss
    for pid in $(tree_pids "$1"); do
        name="$(cat "/proc/$pid/comm" 2>/dev/null)" || continue
        pss="$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)"
        printf '%s %s\n' "$name" "${pss:-0}"
    done | sort | awk '{printf "%s%s %.0f MiB", sep, $1, $2 / 1024; sep=", "}'
}

# settled_memory PID: waits until the tree's PSS changes by less than 1% over 3 s (at most
# 30 s), then prints "RSS PSS" in KiB.
settled_memory() {
    local previous=0 stable=0 deadline=$((SECONDS + 30)) rss pss
    while :; do
        read -r rss pss < <(memory_kib "$1")
        if [ "$previous" -gt 0 ] && [ $((pss > previous ? pss - previous : previous - pss)) -lt $((previous / 100)) ]; then
            stable=$((stable + 1))
        else
            stable=0
        fi
        previous=$pss
        if [ "$stable" -ge 3 ] || [ "$SECONDS" -ge "$deadline" ]; then
            echo "$rss $pss"
            return
        fi
        sleep 1
    done
}

wait_health() {
    local base="$1" pid="$2" deadline=$((SECONDS + 60))
    until curl -fsS -o /dev/null "$base/v1/health" 2>/dev/null; do
        kill -0 "$pid" 2>/dev/null || die "the process exited before /v1/health answered"
        [ "$SECONDS" -lt "$deadline" ] || die "/v1/health did not answer within 60 s"
        sleep 0.01
    done
}

stop_tree() {
    local pids
    pids="$(tree_pids "$1")"
    kill "$1" 2>/dev/null || true
    for pid in $pids; do
        while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    done
}

mib() { awk -v k="$1" 'BEGIN { printf "%.0f MiB", k / 1024 }'; }

inner() {
    local work port base gemini_pid launch_ms=() i t0 pid
    new_temp_dir work
    start_bg "$work/fake-gemini.out" "$work/fake-gemini.err" "$TARGET_DIR/$PROFILE/fake-gemini"
    gemini_pid=$LAST_BG_PID
    local gemini_url
    wait_for_line gemini_url "$work/fake-gemini.out" 's/^FAKE_GEMINI_URL=//p' "$gemini_pid" 30 fake-gemini "$work/fake-gemini.err"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    base="http://127.0.0.1:$port"
    export HOME="$work/home" VAIDER_CONFIG_DIR="$work/config" VAIDER_DATA_DIR="$work/data" \
        VAIDER_PORT="$port" VAIDER_GEMINI_BASE_URL="$gemini_url" GEMINI_API_KEY=test-gemini-key \
        VAIDER_LOG=warn
    mkdir -p "$HOME"

    step "launch → /v1/health, $LAUNCHES launches of $APP"
    for ((i = 1; i <= LAUNCHES; i++)); do
        t0="$(now_ms)"
        start_bg "$work/app-$i.out" "$work/app-$i.err" "$APP"
        pid=$LAST_BG_PID
        wait_health "$base" "$pid"
        launch_ms+=($(($(now_ms) - t0)))
        info "launch $i: ${launch_ms[-1]} ms"
        if [ "$i" -lt "$LAUNCHES" ]; then stop_tree "$pid"; fi
    done
    local median
    median="$(printf '%s\n' "${launch_ms[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}')"

    step "idle memory with the window open (waiting for it to settle)"
    local open_rss open_pss open_names
    until /usr/bin/python3 tests/desktop/xwin.py list | grep -qx Vaider; do sleep 0.1; done
    read -r open_rss open_pss < <(settled_memory "$pid")
    open_names="$(process_names "$pid")"
    info "$(mib "$open_rss") RSS, $(mib "$open_pss") PSS ($open_names)"

    step "idle memory after closing the window"
    /usr/bin/python3 tests/desktop/xwin.py close Vaider
    while process_names "$pid" | grep -q 'WebKitWebProces'; do sleep 0.1; done
    local closed_rss closed_pss closed_names
    read -r closed_rss closed_pss < <(settled_memory "$pid")
    closed_names="$(process_names "$pid")"
    info "$(mib "$closed_rss") RSS, $(mib "$closed_pss") PSS ($closed_names)"
    stop_tree "$pid"

    step "idle memory of the headless server (vaider serve)"
    start_bg "$work/serve.out" "$work/serve.err" "$VAIDER" serve
    local serve_pid=$LAST_BG_PID serve_rss serve_pss
    wait_health "$base" "$serve_pid"
    read -r serve_rss serve_pss < <(settled_memory "$serve_pid")
    info "$(mib "$serve_rss") RSS, $(mib "$serve_pss") PSS"
    stop_tree "$serve_pid"

    {
        echo "## Desktop app ($PROFILE build, Xvfb, $(nproc) cores)"
        echo
        echo "| measure | value |"
        echo "|---|---|"
        echo "| launch → /v1/health, median of $LAUNCHES (target < 1.5 s) | ${median} ms (${launch_ms[*]} ms) |"
        echo "| idle, window open on the history: RSS sum / PSS sum | $(mib "$open_rss") / $(mib "$open_pss") |"
        echo "| idle, window closed (in the tray): RSS sum / PSS sum | $(mib "$closed_rss") / $(mib "$closed_pss") |"
        echo "| \`vaider serve\` idle: RSS / PSS | $(mib "$serve_rss") / $(mib "$serve_pss") |"
        echo
        echo "PSS by process with the window open: $open_names. After closing it: $closed_names."
    } | tee "$REPORT"
    echo
    info "written to $REPORT"
}

if [ "$INNER" -eq 1 ]; then
    inner
    exit 0
fi

command -v xvfb-run >/dev/null && command -v dbus-run-session >/dev/null && /usr/bin/python3 -c 'import Xlib' 2>/dev/null ||
    die "needs xvfb-run, dbus-run-session and python3-xlib: run scripts/desktop-test.sh once (it installs them)"
step "building vaider-desktop, vaider and fake-gemini ($PROFILE)"
if [ "$PROFILE" = release ]; then
    cargo build --quiet --release -p vaider-desktop -p vaider-cli -p fake-gemini
else
    cargo build --quiet -p vaider-desktop -p vaider-cli -p fake-gemini
fi
bench_home=""
new_temp_dir bench_home
SESSION_HOMES+=("$bench_home")
dbus_log="$bench_home.dbus.log"
_TEMP_DIRS+=("$dbus_log")
# A private X server and session bus, as in scripts/desktop-test.sh; the chatter of the bus and
# the services it starts (stdout and stderr) goes to a log shown on failure, the figures to
# stdout (fd 4 inside).
# shellcheck disable=SC2016 # expanded by the inner shell
if ! env -u DBUS_SESSION_BUS_ADDRESS -u XDG_RUNTIME_DIR -u WAYLAND_DISPLAY HOME="$bench_home" \
    xvfb-run -a -s "-screen 0 1280x800x24" \
    dbus-run-session -- bash -c 'exec 1>&4 2>&3 3>&- 4>&-; exec bash "$@"' bench \
    "$0" --inner --launches "$LAUNCHES" $([ "$PROFILE" = debug ] && echo --debug) \
    3>&2 4>&1 >"$dbus_log" 2>&1; then
    grep -v 'Failed to set fd limit' "$dbus_log" >&2 || true
    die "the benchmark failed"
fi
