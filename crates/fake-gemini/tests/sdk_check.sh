#!/usr/bin/env bash
# Build and start fake-gemini, run the official Python SDK against it (sdk_check.py),
# and stop the server. Needs `pip install google-genai`.
# MEDIA_DIR defaults to <repo root>/../shared/media.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
export MEDIA_DIR="${MEDIA_DIR:-$ROOT/../shared/media}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PYTHON="${PYTHON:-python3}"

(cd "$ROOT" && cargo build --quiet -p fake-gemini --bin fake-gemini)

OUT="$(mktemp)"
"$TARGET_DIR/debug/fake-gemini" >"$OUT" &
PID=$!
cleanup() {
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    rm -f "$OUT"
}
trap cleanup EXIT

URL=""
for _ in $(seq 1 100); do
    URL="$(sed -n 's/^FAKE_GEMINI_URL=//p' "$OUT")"
    [ -n "$URL" ] && break
    kill -0 "$PID" 2>/dev/null || { echo "fake-gemini exited early" >&2; exit 1; }
    sleep 0.1
done
[ -n "$URL" ] || { echo "fake-gemini printed no URL" >&2; exit 1; }

FAKE_GEMINI_URL="$URL" "$PYTHON" "$HERE/sdk_check.py"
