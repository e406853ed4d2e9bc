#!/usr/bin/python3
"""What the desktop tests need from the X server (Xvfb, no window manager), done the way a
window manager or a user would: list the top-level windows' titles, ask a window to close
(WM_DELETE_WINDOW, as the title bar's close button does), and save a screenshot.

    xwin.py list                 one title per line
    xwin.py close TITLE          ask every window titled TITLE to close; exit 1 if none
    xwin.py screenshot OUT.png   the whole screen

Needs python3-xlib (apt) and $DISPLAY.
"""

import struct
import sys
import zlib

from Xlib import X, display, protocol


def windows_with_titles(d):
    """Every window under the root (Xvfb has no window manager, so no frames) with a title."""
    found = []
    stack = [d.screen().root]
    while stack:
        window = stack.pop()
        try:
            children = window.query_tree().children
        except Exception:  # the window went away meanwhile
            continue
        for child in children:
            stack.append(child)
            try:
                title = child.get_full_text_property(d.intern_atom("_NET_WM_NAME"))
                title = title or child.get_wm_name()
                mapped = child.get_attributes().map_state == X.IsViewable
            except Exception:
                continue
            if title and mapped:
                found.append((child, str(title)))
    return found


def close(d, title):
    wm_protocols = d.intern_atom("WM_PROTOCOLS")
    wm_delete = d.intern_atom("WM_DELETE_WINDOW")
    targets = [w for w, t in windows_with_titles(d) if t == title]
    for window in targets:
        event = protocol.event.ClientMessage(
            window=window,
            client_type=wm_protocols,
            data=(32, [wm_delete, X.CurrentTime, 0, 0, 0]),
        )
        window.send_event(event)
    d.flush()
    return len(targets)


def screenshot(d, path):
    root = d.screen().root
    geometry = root.get_geometry()
    width, height = geometry.width, geometry.height
    raw = root.get_image(0, 0, width, height, X.ZPixmap, 0xFFFFFFFF).data
    # 24/32-bit TrueColor: BGRX in memory.
    rows = []
    for y in range(height):
        line = raw[y * width * 4 : (y + 1) * width * 4]
        rgb = bytearray(width * 3)
        rgb[0::3] = line[2::4]
        rgb[1::3] = line[1::4]
        rgb[2::3] = line[0::4]
        rows.append(b"\x00" + bytes(rgb))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(b"".join(rows), 6))
    png += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def main(argv):
    if len(argv) < 2 or argv[1] not in ("list", "close", "screenshot"):
        sys.stderr.write(__doc__)
        return 2
    d = display.Display()
    if argv[1] == "list":
        for _, title in windows_with_titles(d):
            print(title)
        return 0
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    if argv[1] == "close":
        return 0 if close(d, argv[2]) else 1
    screenshot(d, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
