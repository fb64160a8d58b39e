#!/usr/bin/env bash
# System calls per tools/call of wymcp_calc, counted by strace over a fixed number of calls (a
# count other load on the machine does not move, unlike CPU time).
#
#   bash bench/http/syscalls.sh                                  # the node in memory
#   WYMCP_CALC_REDIS=redis://127.0.0.1:6390/ bash bench/http/syscalls.sh   # a node on Redis
#
# Needs strace (Debian package) and the release build of bench/http (run.sh or instructions.sh
# builds it; BUILD=0 is assumed here). CALLS (default 5000) session-era calls from CALLERS
# (default 16) concurrent callers in 64 sessions, after 500 warm-up calls; BIN names another
# wymcp_calc (an A/B). Prints strace's table and the calls per tools/call.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${CARGO_TARGET_DIR:-$here/target}/release"
server="${BIN:-$bin/wymcp_calc}"
CALLS="${CALLS:-5000}"; CALLERS="${CALLERS:-16}"
command -v strace >/dev/null || { echo "strace (Debian package) is required" >&2; exit 1; }
work="$(mktemp -d)"; pid=""; tracer=""
cleanup() {
  [ -z "$tracer" ] || kill "$tracer" 2>/dev/null || true
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
taskset -c 0 "$server" 127.0.0.1:0 >"$work/server.log" 2>&1 &
pid=$!
addr=""
for _ in $(seq 1 100); do addr="$(sed -n 's/^listening on //p' "$work/server.log" | head -1)"; [ -n "$addr" ] && break; sleep 0.1; done
[ -n "$addr" ] || { echo "the server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
url="http://$addr/mcp"
timeout 120 "$bin/mcpload" sessions "$url" 64 "$work/sessions" 2>/dev/null
timeout 120 "$bin/mcpload" calls "$url" "$work/sessions" 500 "$CALLERS" 2025-06-18 2>/dev/null
strace -f -c -o "$work/strace" -p "$pid" 2>/dev/null &
tracer=$!
sleep 1
timeout 300 "$bin/mcpload" calls "$url" "$work/sessions" "$CALLS" "$CALLERS" 2025-06-18 2>/dev/null
kill -INT "$tracer"; wait "$tracer" 2>/dev/null || true; tracer=""
cat "$work/strace"
awk -v n="$CALLS" '$NF == "total" {printf "%.2f system calls per call\n", $4 / n}' "$work/strace"
