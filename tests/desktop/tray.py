#!/usr/bin/python3
"""Stands in for the desktop panel (the tray host) in the desktop tests: reads the tray menu
that the app exports over D-Bus (StatusNotifierItem with a com.canonical.dbusmenu menu, as
libayatana-appindicator publishes it) and clicks its items, exactly as a panel does.

    tray.py PID menu           the menu as JSON: [{"id", "label", "enabled", "checked"}]
    tray.py PID click LABEL    clicks the item with that label; exit 1 if there is none

PID is the app's process: its connection on the session bus is found from it. Needs
python3-gi (apt) and the session bus the app uses ($DBUS_SESSION_BUS_ADDRESS).
"""

import json
import sys
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

DBUS = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")
ITEM_ROOT = "/org/ayatana/NotificationItem"


def call(bus, name, path, interface, method, args=None, reply=None, timeout_ms=5000):
    return bus.call_sync(
        name, path, interface, method, args,
        GLib.VariantType(reply) if reply else None,
        Gio.DBusCallFlags.NONE, timeout_ms, None,
    ).unpack()


def app_connection(bus, pid):
    (names,) = call(bus, *DBUS, "ListNames", None, "(as)")
    for name in names:
        if not name.startswith(":"):
            continue
        try:
            (owner,) = call(bus, *DBUS, "GetConnectionUnixProcessID", GLib.Variant("(s)", (name,)), "(u)")
        except GLib.Error:
            continue
        if owner == pid:
            # The app has other connections too (the single-instance lock's does not answer
            # introspection): a short wait each.
            try:
                (xml,) = call(bus, name, ITEM_ROOT, "org.freedesktop.DBus.Introspectable",
                              "Introspect", None, "(s)", timeout_ms=500)
            except GLib.Error:
                continue
            node = Gio.DBusNodeInfo.new_for_xml(xml)
            if node.nodes:
                return name, f"{ITEM_ROOT}/{node.nodes[0].path}/Menu"
    raise SystemExit(f"no tray menu on the session bus for process {pid}")


def menu_items(bus, name, menu):
    _, layout = call(bus, name, menu, "com.canonical.dbusmenu", "GetLayout",
                     GLib.Variant("(iias)", (0, -1, [])), "(u(ia{sv}av))")
    items = []

    def walk(node):
        item_id, props, children = node
        if item_id != 0 and props.get("type") != "separator":
            items.append({
                "id": item_id,
                "label": props.get("label", "").replace("_", ""),
                "enabled": props.get("enabled", True),
                "checked": props.get("toggle-state", -1) == 1 if "toggle-type" in props else None,
            })
        for child in children:
            walk(child)

    walk(layout)
    return items


def main(argv):
    if len(argv) < 3 or argv[2] not in ("menu", "click") or (argv[2] == "click") != (len(argv) == 4):
        sys.stderr.write(__doc__)
        return 2
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    name, menu = app_connection(bus, int(argv[1]))
    items = menu_items(bus, name, menu)
    if argv[2] == "menu":
        print(json.dumps(items))
        return 0
    for item in items:
        if item["label"] == argv[3]:
            call(bus, name, menu, "com.canonical.dbusmenu", "Event",
                 GLib.Variant("(isvu)", (item["id"], "clicked", GLib.Variant("i", 0), int(time.time()))))
            return 0
    sys.stderr.write(f"no item {argv[3]!r} in {[i['label'] for i in items]}\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
