#!/usr/bin/env bash
# Inside a private D-Bus session (run under `dbus-run-session`): starts gnome-keyring's Secret
# Service unlocked, checks that a secret can be stored and read back, then runs the command
# given. test.sh (Rust tests) and ui-test.sh (Playwright) use it, so the keychain tests run
# against a real Secret Service, and a box where it cannot work says so instead of failing
# obscurely.
#
#   dbus-run-session -- bash scripts/keyring-session.sh CMD [ARGS...]
set -euo pipefail
echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null
probe=(service vaider-probe username probe)
if ! secret-tool store --label=vaider-probe "${probe[@]}" <<<x ||
    [ "$(secret-tool lookup "${probe[@]}")" != x ]; then
    echo "error: the headless keychain (gnome-keyring Secret Service on a private D-Bus" >&2
    echo "session) does not work here, so the keychain tests cannot run." >&2
    echo "Needs: apt-get install gnome-keyring dbus dbus-x11 libsecret-tools" >&2
    exit 1
fi
secret-tool clear "${probe[@]}"
echo "    keychain: gnome-keyring Secret Service unlocked on a private D-Bus session"
exec "$@"
