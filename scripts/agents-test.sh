#!/usr/bin/env bash
# Vaider with the agent CLIs people use, offline (tests/agents): the official MCP TypeScript
# SDK in both revisions (2025-11-25 and the stateless 2026-07-28, over HTTP and stdio), Codex
# CLI and Gemini CLI from npm, each configured by `vaider init`, each listing every tool and
# completing one tool call with its model replaced by a scripted stand-in on loopback. Vaider's
# own model is the fake Gemini.
#
# The tests run in a network namespace of their own with only a loopback interface (when this
# runs as root, as CI does), so no CLI can reach anything but loopback whatever it tries
# (update checks, telemetry, plugin syncs); they are also configured not to try.
#
# Usage: bash scripts/agents-test.sh   (installs tests/agents' npm packages and Node >= 22)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

MEDIA_DIR="$REPO_ROOT/../shared/media"
[ -d "$MEDIA_DIR" ] || die "shared media not found at $MEDIA_DIR (expected ../shared/media beside the repo)"

apt_ensure "${AGENTS_APT_PACKAGES[@]}"
ensure_agent_clis
NODE="$(node22_path)"

step "building vaider and fake-gemini (debug, as cargo nextest builds them; not the Tauri shell)"
build_test_binaries

export VAIDER_BIN="$TARGET_DIR/debug/vaider" FAKE_GEMINI_BIN="$TARGET_DIR/debug/fake-gemini" MEDIA_DIR
RUN=("$NODE" --test --test-concurrency=1 sdk.test.mjs codex.test.mjs gemini.test.mjs)
cd tests/agents
if [ "$(id -u)" -eq 0 ] && unshare --net true 2>/dev/null; then
    step "running tests/agents in a network namespace with loopback only"
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare --net bash -c 'ip link set lo up && exec "$@"' bash "${RUN[@]}"
else
    warn "not root (or no network namespaces): tests/agents run in the machine's network; the CLIs are configured to call only loopback"
    "${RUN[@]}"
fi
