#!/usr/bin/env bash
# Measure Vaider's performance targets (peak memory on large videos, loopback overhead, idle
# memory, upload speed against curl, which must be installed) against the fake Gemini, and print a markdown table (also written to
# target/bench-report.md). A report, not a test: nothing fails on a missed target.
#
# Usage: bash scripts/bench.sh [--sizes 100M,1G] [--runs 20] [--vaider PATH] [--tmp DIR]
#   --sizes  large test videos to analyse (K/M/G = KiB/MiB/GiB), default 100M,1G
#   --runs   timed analyses of the small recording for the overhead numbers, default 20
#   --tmp    where the test videos are written (needs the sum of --sizes free, on disk)
#   --upload-only  only the upload comparison with curl (see --help for its options)
#   --whole-only   only whole calls on a raw recording, sampling auto and full, against curl
#                  [--whole-video FILE: on this video instead, e.g. a long WebM or MP4]
#   --sampling     only what change-aware video sampling saves (tokens, time before upload)
#   --scan         only the scan's speed (seconds of video a second) on 10-minute 1080p screen
#                  recordings in H.264, VP8 (as Playwright writes it) and HEVC
#                  [--runs N] [--minutes M] [--codecs h264,vp8,hevc] [--tmp DIR]
#   --never-still  only whole calls on recordings that never stand still (raw ~800 MB and
#                  compressed), sampling auto and full, against curl [--whole-runs N] [--tmp DIR]
#   --quota        only calls a minute and 429s a minute under a learned per-minute quota
#                  [--quota N] [--minutes M] [--agents A] (about M minutes)
#   --validate     only validate_test's overhead over `npx playwright test` alone [--runs N]
#                  (needs tests/playwright-project's npm packages: scripts/test.sh installs them)
#   --visual       only the screenshot comparison against odiff and pixelmatch (tests/visual's
#                  npm packages) on large page-like pairs [--sizes 3000x10000,3840x2160,7680x4320]
#                  [--runs N] [--no-pixelmatch] [--tmp DIR]: time, peak memory, counts
#   --qa           only a 10-step test plan against the same steps as a Playwright test, the
#                  browser's start and Vaider's memory during a run [--runs N] (same needs)
# Takes about a minute on 2 cores once built; the first release build takes longer.
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO_ROOT/target}"
cd "$REPO_ROOT"
cargo build --release -p vaider-cli -p vaider-bench
if [ "${1:-}" = "--sampling" ]; then
    exec "$TARGET_DIR/release/vaider-sampling-bench"
fi
if [ "${1:-}" = "--scan" ]; then
    shift
    exec "$TARGET_DIR/release/vaider-scan-bench" "$@"
fi
if [ "${1:-}" = "--quota" ]; then
    shift
    exec "$TARGET_DIR/release/vaider-quota-bench" "$@"
fi
if [ "${1:-}" = "--visual" ]; then
    shift
    exec "$TARGET_DIR/release/vaider-visual-bench" "$@"
fi
if [ "${1:-}" = "--qa" ]; then
    shift
    exec "$TARGET_DIR/release/vaider-qa-bench" "$@"
fi
if [ "${1:-}" = "--validate" ]; then
    shift
    exec "$TARGET_DIR/release/vaider-validate-bench" "$@"
fi
exec "$TARGET_DIR/release/vaider-bench" "$@"
