#!/usr/bin/env bash
# Regenerates Vaider's eval set (docs/eval.md) into eval/set/ (or --out DIR): the labelled
# GUI recordings and screenshot pairs `vaider eval` scores against. Uses tests/playwright-
# project's Playwright, the system's Chromium, and Debian's ffmpeg as Playwright's video
# encoder (no browser or ffmpeg download).
#
# Usage: bash scripts/eval-set.sh [--out DIR] [--seed N] [--part all|failures]
# (--part failures: only the failing runs and flaky pairs, keeping the other items in DIR)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out="$REPO_ROOT/eval/set"
seed=25
part=all
while [ $# -gt 0 ]; do
    case "$1" in
    --out) out="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --part) part="$2"; shift 2 ;;
    *) die "unknown argument: $1 (usage: bash scripts/eval-set.sh [--out DIR] [--seed N] [--part all|failures])" ;;
    esac
done
command -v chromium >/dev/null 2>&1 || apt_ensure chromium
# The failing runs' traces are read (unzip) and slimmed (zip).
command -v zip >/dev/null 2>&1 || apt_ensure zip
command -v unzip >/dev/null 2>&1 || apt_ensure unzip
ensure_validate_packages
export PLAYWRIGHT_BROWSERS_PATH="$PLAYWRIGHT_BROWSERS_DIR"
step "generating the eval set (seed $seed) into $out"
node "$REPO_ROOT/eval/generate/generate.mjs" --out "$out" --seed "$seed" \
    --playwright "$REPO_ROOT/tests/playwright-project" --part "$part"
du -sh "$out" | sed 's/^/    /'
