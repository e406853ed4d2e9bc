#!/usr/bin/env bash
# Rasterise icons/icon.svg and icons/tray.svg into the files the Tauri bundles use
# (PNG sizes, icon.ico for Windows, icon.icns for macOS). The outputs are committed; run this
# only after changing an SVG. Needs rsvg-convert (apt: librsvg2-bin) and Pillow (a throwaway
# venv in .tools/icon-venv is made when python3 lacks it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

command -v rsvg-convert >/dev/null || { echo "error: rsvg-convert missing (apt-get install librsvg2-bin)" >&2; exit 1; }
PY=python3
if ! "$PY" -c 'import PIL' 2>/dev/null; then
    venv="../.tools/icon-venv"
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -c 'import PIL' 2>/dev/null || "$venv/bin/pip" install --quiet pillow
    PY="$venv/bin/python"
fi

render() { rsvg-convert -w "$2" -h "$2" "$1" -o "$3"; }
render icon.svg 32 32x32.png
render icon.svg 128 128x128.png
render icon.svg 256 128x128@2x.png
render icon.svg 512 icon.png
render tray.svg 64 tray.png
render icon.svg 1024 .icon-1024.png
trap 'rm -f .icon-1024.png' EXIT

"$PY" - <<'PY'
from PIL import Image
big = Image.open(".icon-1024.png").convert("RGBA")
big.save("icon.ico", sizes=[(16, 16), (24, 24), (32, 32), (48, 48), (64, 64), (128, 128), (256, 256)])
big.save("icon.icns")
PY
ls -l 32x32.png 128x128.png 128x128@2x.png icon.png tray.png icon.ico icon.icns
