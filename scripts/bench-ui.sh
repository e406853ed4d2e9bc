#!/usr/bin/env bash
# Benchmark the web UI's history view with 10,000 interactions: first paint and search time
# in headless Chromium against the real `vaider serve` (tests/ui/bench-history.mjs). Prints a
# table and writes target/bench-ui.md. A report, not a test: nothing fails on a missed target.
#
#   bash scripts/bench-ui.sh            release build (what users run)
#   bash scripts/bench-ui.sh --debug    the debug build (faster to build, slower to run)
#   extra arguments go to bench-history.mjs: --rows N --paint-runs N --search-runs N
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

PROFILE=release
ARGS=()
for arg in "$@"; do
    case "$arg" in
    --debug) PROFILE=debug ;;
    -h | --help)
        sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *) ARGS+=("$arg") ;;
    esac
done
UI_DIR="$REPO_ROOT/tests/ui"

apt_ensure build-essential pkg-config chromium python3
command -v cargo >/dev/null 2>&1 || die "cargo is missing: install Rust first (bash scripts/install.sh does)"
ensure_ui_packages

step "cargo build ($PROFILE) -p vaider-cli -p fake-gemini"
if [ "$PROFILE" = release ]; then
    cargo build --quiet --release -p vaider-cli -p fake-gemini
else
    cargo build --quiet -p vaider-cli -p fake-gemini
fi

step "history benchmark (10,000 rows seeded with python3's sqlite3)"
cd "$UI_DIR"
VAIDER_BIN="$TARGET_DIR/$PROFILE/vaider" FAKE_GEMINI_BIN="$TARGET_DIR/$PROFILE/fake-gemini" \
    VAIDER_BUILD="$PROFILE" CHROMIUM=/usr/bin/chromium \
    node bench-history.mjs ${ARGS[@]+"${ARGS[@]}"}
