#!/usr/bin/env bash
# Measure the shipping targets and print a Markdown table (also written to
# target/bench-packages.md). A report, not a test: nothing fails on a missed target.
#
#   bash scripts/bench-packages.sh [--install] [--deb]
#
# Always: the headless binary as shipped (target/dist/vaider, built if missing) against the
# release profile's, as built and stripped, and the packages' sizes (target/packages/).
#   --install  a fresh headless install from source: `cargo build --release -p vaider-cli
#              --no-default-features`, install.sh's build, into an empty target folder with the
#              crates already downloaded (what a second machine behind the same cache sees;
#              the download itself depends on the network). Target: 6 minutes on 2 cores.
#   --deb      from the downloaded .deb to the tray app healthy, dependencies installed: runs
#              scripts/linux-packages-test.sh and reads its figure. Target: 60 s.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

INSTALL=0
DEB=0
for arg in "$@"; do
    case "$arg" in
    --install) INSTALL=1 ;;
    --deb) DEB=1 ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
        exit 0
        ;;
    *) die "unknown argument: $arg (try --help)" ;;
    esac
done

REPORT="$TARGET_DIR/bench-packages.md"
ROWS=()
mb() { python3 -c "import os,sys; print(f'{os.path.getsize(sys.argv[1]) / 1e6:.1f} MB')" "$1"; }
row() { ROWS+=("| $1 | $2 | $3 |"); }

if [ ! -x "$TARGET_DIR/dist/vaider" ]; then
    step "cargo build --profile dist -p vaider-cli --no-default-features"
    cargo build --quiet --profile dist -p vaider-cli --no-default-features
fi
row "headless \`vaider\` as shipped (dist profile)" "$(mb "$TARGET_DIR/dist/vaider")" "≤ 30 MB"
if [ -x "$TARGET_DIR/release/vaider" ]; then
    stripped="$(mktemp)"
    _TEMP_DIRS+=("$stripped")
    strip -o "$stripped" "$TARGET_DIR/release/vaider"
    row "\`vaider\`, release profile, as built (may have other features)" "$(mb "$TARGET_DIR/release/vaider")" "–"
    row "\`vaider\`, release profile, stripped" "$(mb "$stripped")" "–"
fi
for f in "$TARGET_DIR"/packages/*.{deb,rpm,tar.gz,mcpb,tgz}; do
    [ -f "$f" ] && row "$(basename "$f")" "$(mb "$f")" "–"
done

if [ "$INSTALL" -eq 1 ]; then
    step "a fresh headless build from source into an empty target folder (several minutes)"
    cargo fetch --quiet
    fresh=""
    new_temp_dir fresh
    t0=$SECONDS
    CARGO_TARGET_DIR="$fresh" cargo build --quiet --release -p vaider-cli --no-default-features
    row "fresh headless install from source (the build, $(nproc) cores, crates downloaded)" "$((SECONDS - t0)) s" "≤ 360 s"
fi

if [ "$DEB" -eq 1 ]; then
    step "the .deb to the tray app healthy (scripts/linux-packages-test.sh)"
    line="$(bash scripts/linux-packages-test.sh 2>&1 | grep -o 'from the downloaded .deb to the tray app healthy: [0-9.]* s.*' | head -1)"
    [ -n "$line" ] || die "scripts/linux-packages-test.sh printed no figure"
    row "from the downloaded .deb to the tray app healthy" "${line#*healthy: }" "≤ 60 s"
fi

{
    echo "| what | measured | target |"
    echo "|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
} | tee "$REPORT"
