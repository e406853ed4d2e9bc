#!/usr/bin/env bash
# Why change-aware sampling keeps Gemini's default media resolution for screen recordings:
# OCR (tesseract) reads the shared recordings' screens at the size each Gemini setting leaves
# them. MEDIA_RESOLUTION_LOW costs a quarter of the default's tokens a frame, so it keeps about
# half the side: 384 px where the default keeps 768. Prints, per screen and size, the share of
# the words read at full size that are still read.
#
# Usage: bash scripts/media-resolution.sh [MEDIA_DIR]   (needs ffmpeg and tesseract-ocr)
set -euo pipefail
MEDIA="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/shared/media}"
command -v tesseract >/dev/null || { echo "install tesseract-ocr first (apt-get install tesseract-ocr)" >&2; exit 1; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
words() { tesseract "$1" - 2>/dev/null | tr -cs '[:alnum:]' '\n' | grep -E '^.{2,}$' | sort -u; }
printf '| screen | full size words | 768 px (default) | 384 px (LOW) |\n|---|---|---|---|\n'
for shot in "$MEDIA"/*.png; do
  name="$(basename "$shot" .png)"
  words "$shot" > "$work/full"
  total=$(wc -l < "$work/full")
  row="| $name | $total"
  for side in 768 384; do
    ffmpeg -v error -y -i "$shot" -vf "scale='if(gt(iw,ih),$side,-2)':'if(gt(iw,ih),-2,$side)':flags=area" "$work/$side.png"
    kept=$(words "$work/$side.png" | comm -12 - "$work/full" | wc -l)
    row="$row | $kept ($(( total ? 100 * kept / total : 0 )) %)"
  done
  echo "$row |"
done
