#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance) against a real,
# running Vaider that talks to the fake Gemini.
#
# Vaider requires its bearer token on /mcp and the suite cannot send one, so the suite talks
# to scripts/auth-proxy.mjs, which forwards everything unchanged (Host and Origin included,
# so Vaider's own DNS-rebinding checks still see what the suite sent) and adds the token,
# like a configured client would. Without the proxy, /mcp must answer 401.
#
# Usage: bash scripts/conformance.sh   (installs the suite and Node >= 22 into .tools/ if missing)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

# The suite's frozen requirement sets of both revisions Vaider speaks, each run as the suite
# runs it (2025-11-25 stateful, 2026-07-28 stateless), against the baseline in
# scripts/conformance/baseline-<revision>.yml: the scenarios and checks that do not apply to a
# server with its own tools (they call the reference server's test tools, resources and
# prompts), each with its reason. The suite fails the run on any other failure, and on a
# baselined entry that passes (a stale baseline).
REVISIONS=(2025-11-25 2026-07-28)
REVISION_TIMEOUT_S=900

apt_ensure "${CONFORMANCE_APT_PACKAGES[@]}"
ensure_venv
ensure_conformance
NODE="$(node22_path)"

step "building vaider and fake-gemini (debug, as cargo nextest builds them; not the Tauri shell)"
build_test_binaries

new_temp_dir WORK
mkdir -p "$WORK/data" "$WORK/config" "$WORK/results"

step "starting fake-gemini, vaider serve and the auth proxy"
start_bg "$WORK/fake.out" "$WORK/fake.err" "$TARGET_DIR/debug/fake-gemini" --port 0
wait_for_line FAKE_URL "$WORK/fake.out" 's/^FAKE_GEMINI_URL=//p' "$LAST_BG_PID" 30 \
    fake-gemini "$WORK/fake.err"
info "fake Gemini: $FAKE_URL"

TOKEN="$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"
start_bg "$WORK/vaider.out" "$WORK/vaider.err" \
    env -u VAIDER_PORT \
    VAIDER_DATA_DIR="$WORK/data" VAIDER_CONFIG_DIR="$WORK/config" VAIDER_TOKEN="$TOKEN" \
    GEMINI_API_KEY=test-gemini-key VAIDER_GEMINI_BASE_URL="$FAKE_URL" \
    "$TARGET_DIR/debug/vaider" serve --port 0
VAIDER_PID=$LAST_BG_PID
wait_for_line VAIDER_URL "$WORK/vaider.out" \
    's/^Vaider .* listening on \(http:\/\/[^ ]*\).*/\1/p' "$VAIDER_PID" 60 "vaider serve" "$WORK/vaider.err"
VAIDER_URL="${VAIDER_URL%/}"
info "vaider: $VAIDER_URL"

start_bg "$WORK/proxy.out" "$WORK/proxy.err" \
    env VAIDER_TOKEN="$TOKEN" "$NODE" "$REPO_ROOT/scripts/auth-proxy.mjs" "$VAIDER_URL"
wait_for_line PROXY_PORT "$WORK/proxy.out" 's/^AUTH_PROXY_PORT=//p' "$LAST_BG_PID" 30 \
    auth-proxy "$WORK/proxy.err"
PROXY_URL="http://127.0.0.1:$PROXY_PORT"
info "auth proxy: $PROXY_URL -> $VAIDER_URL (adds the bearer token)"

# Show the server's log when something fails.
show_logs_on_failure() {
    [ "$1" -eq 0 ] && return 0
    echo "---- vaider stderr (last 40 lines) ----" >&2
    tail -n 40 "$WORK/vaider.err" >&2 || true
    echo "---- auth-proxy stderr ----" >&2
    cat "$WORK/proxy.err" >&2 || true
}
on_exit show_logs_on_failure

# ---- without the proxy: no token, wrong token -> 401; right token -> 200 -------------------
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"conformance-sh","version":"0"}}}'
post_init() { # post_init [extra curl args...] -> HTTP status
    curl -sS -o /dev/null -w '%{http_code}' --max-time 10 -X POST "$VAIDER_URL/mcp" \
        -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
        --data "$INIT" "$@"
}
FAILED=()
check_status() { # check_status NAME EXPECTED ACTUAL
    if [ "$3" = "$2" ]; then
        printf '    PASS  %-28s HTTP %s\n' "$1" "$3"
    else
        printf '    FAIL  %-28s HTTP %s (expected %s)\n' "$1" "$3" "$2"
        FAILED+=("$1")
    fi
}
step "checking that /mcp refuses requests without the token (no proxy)"
check_status "no token -> 401" 401 "$(post_init)"
check_status "wrong token -> 401" 401 "$(post_init -H 'Authorization: Bearer not-the-token')"
check_status "right token -> 200" 200 "$(post_init -H "Authorization: Bearer $TOKEN")"

# ---- the suite, through the proxy ----------------------------------------------------------
# Per revision, the suite prints each scenario's checks ("✓ name: N passed, M failed"), the
# total, and the baseline verdict; it exits 0 when every failure is a baselined one.
run_revision() { # run_revision REVISION -> 0 pass, 1 fail
    local rev="$1" log="$WORK/results/$1.log" rc=0 total
    timeout "$REVISION_TIMEOUT_S" "$NODE" "$CONFORMANCE_JS" server \
        --url "$PROXY_URL/mcp" --requirements "$rev" \
        --expected-failures "$REPO_ROOT/scripts/conformance/baseline-$rev.yml" \
        -o "$WORK/results/$rev" >"$log" 2>&1 || rc=$?
    total="$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)"
    if [ "$rc" -eq 0 ] && grep -q 'Baseline check passed' "$log"; then
        printf '    PASS  %-12s %s (every failure is baselined as not applicable)\n' "$rev" "$total"
        grep -E '^[^ ]*[✓✗] ' "$log" | grep -vFf <(baselined "$rev") | annotate_checks "$rev" |
            sed 's/^/          /'
        return 0
    fi
    printf '    FAIL  %-12s exit %s; %s\n' "$rev" "$rc" "${total:-no result line}"
    sed 's/^/        | /' "$log"
    return 1
}

# annotate_checks REVISION: a scenario line gets how many of its checks the baseline excuses
# (each with its reason there), so a ✗ with only those failing reads as what it is.
annotate_checks() {
    local file="$REPO_ROOT/scripts/conformance/baseline-$1.yml" line name n
    while IFS= read -r line; do
        name="$(printf '%s' "$line" | sed -n 's/^[^ ]*[✓✗] \([a-z0-9-]*\):.*/\1/p')"
        n="$(grep -c "^  - $name:" "$file" || true)"
        if [ -n "$name" ] && [ "$n" -gt 0 ]; then
            line="$line ($n baselined: see $(basename "$file"))"
        fi
        printf '%s\n' "$line"
    done
}

# baselined REVISION: the whole scenarios the baseline excuses, as "✗ name:" patterns.
baselined() {
    sed -n 's/^  - \([a-z0-9-]*\)$/✗ \1:/p' "$REPO_ROOT/scripts/conformance/baseline-$1.yml"
}

step "running the MCP conformance suite $CONFORMANCE_VERSION's requirement sets against $PROXY_URL/mcp"
for rev in "${REVISIONS[@]}"; do
    run_revision "$rev" || FAILED+=("$rev")
done

kill -0 "$VAIDER_PID" 2>/dev/null || FAILED+=("vaider exited during the suite")

if [ ${#FAILED[@]} -gt 0 ]; then
    die "conformance: failed: ${FAILED[*]}"
fi
step "conformance: both requirement sets passed (${REVISIONS[*]}), each failure a baselined one"
