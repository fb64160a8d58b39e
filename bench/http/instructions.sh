#!/usr/bin/env bash
# Instructions per tools/call under callgrind: a figure other load on the machine cannot move,
# for comparing two builds of the hot path (run.sh's CPU µs/request is the real-world figure).
#
#   bash bench/http/instructions.sh [server ...]    # default: bare wymcp
#
# Needs valgrind (Debian package). CALLS (default 2000) calls after 64 sessions and 500 warm-up
# calls; prints instructions (Ir) per call, the server's own work only (client in another process).
# PROFILE=lto measures the builds with fat LTO (see run.sh). KEEP=prefix keeps each server's
# callgrind output as prefix.<server> (for callgrind_annotate).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CALLS="${CALLS:-2000}"
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
export CARGO_TARGET_DIR="$here/target"
PROFILE="${PROFILE:-release}"
if [ "${BUILD:-1}" = 1 ]; then (cd "$here" && cargo build --profile "$PROFILE" --quiet --bins); fi
bin="$CARGO_TARGET_DIR/$PROFILE"
work="$(mktemp -d)"; pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
for name in "${@:-bare wymcp}"; do
  for one in $name; do
    case "$one" in
      bare) args=("$bin/bare" 127.0.0.1:0); sessions=0 ;;
      wymcp) args=("$bin/wymcp_calc" 127.0.0.1:0); sessions=64 ;;
      rmcp-stateless) args=("$bin/rmcp_calc" 127.0.0.1:0 stateless); sessions=0 ;;
      rmcp-stateful) args=("$bin/rmcp_calc" 127.0.0.1:0 stateful); sessions=64 ;;
      *) echo "unknown server $one" >&2; exit 1 ;;
    esac
    valgrind --tool=callgrind --callgrind-out-file="$work/$one.%p.out" "${args[@]}" >"$work/$one.log" 2>&1 &
    pid=$!
    addr=""
    for _ in $(seq 1 300); do addr="$(sed -n 's/^listening on //p' "$work/$one.log" | head -1)"; [ -n "$addr" ] && break; sleep 0.1; done
    [ -n "$addr" ] || { echo "$one did not start" >&2; cat "$work/$one.log" >&2; exit 1; }
    url="http://$addr/mcp"; file="-"
    if [ "$sessions" -gt 0 ]; then file="$work/$one.sessions"; timeout 300 "$bin/mcpload" sessions "$url" "$sessions" "$file" 2>/dev/null; fi
    timeout 300 "$bin/mcpload" calls "$url" "$file" 500 16 2>/dev/null
    callgrind_control -z "$pid" >/dev/null 2>&1
    timeout 600 "$bin/mcpload" calls "$url" "$file" "$CALLS" 16 2>/dev/null
    callgrind_control -d "$pid" >/dev/null 2>&1
    sleep 0.5
    total="$(for f in "$work/$one".*.out.*; do sed -n 's/^totals: //p' "$f"; done | awk '{s += $1} END {print s}')"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    printf '%-16s %10.0f instructions per call\n' "$one" "$(awk -v t="$total" -v n="$CALLS" 'BEGIN {print t / n}')"
    [ -z "${KEEP:-}" ] || cat "$work/$one".*.out.* >"$KEEP.$one"
    rm -f "$work/$one".*.out*
  done
done
