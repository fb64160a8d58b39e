#!/usr/bin/env bash
# Instructions per tools/call under callgrind: a figure other load on the machine cannot move,
# for comparing two builds of the hot path (run.sh's CPU µs/request is the real-world figure).
#
#   bash bench/http/instructions.sh [server ...]    # default: bare wymcp
#
# Needs valgrind (Debian package). CALLS (default 2000) calls after 64 sessions and 500 warm-up
# calls; prints instructions (Ir) per call, the server's own work only (client in another process).
# PROFILE=lto measures the builds with fat LTO (see run.sh), ALLOC=mimalloc the builds on
# mimalloc. KEEP=prefix keeps each server's callgrind output as prefix.<server> (for
# callgrind_annotate). ERA=2026-07-28 makes the calls
# the stateless era's (no sessions; see calls.lua), ERA=2025-06-18 (the default) the session
# era's. A server named wymcp=PATH runs the wymcp_calc binary at PATH (see run.sh);
# wymcp-redis (or wymcp-redis=PATH) runs it as a node on Redis, on a redis-server started here
# (Debian package) with nothing saved to disk. `floor` is bare plus the `jsonschema` check of
# the call's data (src/bin/floor.rs): wymcp's own share is what it costs above it.
# `gateway` is wymcp-gateway in front of a wymcp_calc (src/bin/gateway_calc.rs, tools mode,
# empty prefix: the same `calc` call), the gateway's instructions only: against `wymcp`, the
# gateway's CPU per forwarded call as a ratio to serving the tool in-process.
#
# How the load reaches the server (issue 46: what an outside harness sees):
# CONCURRENCY (default 16) calls in flight, each on its own keep-alive connection;
# SERVER_CPU=N pins the server to cpu N (`taskset`; tokio then runs one worker thread, as in
# run.sh, where the server is pinned); SERVER_PRELOAD=path preloads a shared library into the
# server (say /usr/lib/x86_64-linux-gnu/libjemalloc.so.2: another allocator without a rebuild).
# IDLE_SESSIONS=N (session era) opens N more sessions that stay idle during the calls.
# PAD=N (bare, floor, wymcp) adds a string `note` of N bytes to each call's `data` (the
# argument-size figure: `MCPLOAD_PAD`; wymcp_calc then declares it, `WYMCP_CALC_NOTE=1`).
# The `otel` feature's A/B (issue 44): wymcp_calc built with `--features otel` is run as
# wymcp=PATH, with WYMCP_CALC_METRICS=1 for metrics on (docs/performance.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CALLS="${CALLS:-2000}"
CONCURRENCY="${CONCURRENCY:-16}"
pin=(); [ -z "${SERVER_CPU:-}" ] || pin=(taskset -c "$SERVER_CPU")
[ -z "${SERVER_PRELOAD:-}" ] || [ -f "$SERVER_PRELOAD" ] || { echo "SERVER_PRELOAD: no file $SERVER_PRELOAD" >&2; exit 1; }
ERA="${ERA:-2025-06-18}"
case "$ERA" in 2025-06-18|2026-07-28) ;; *) echo "ERA must be 2025-06-18 or 2026-07-28" >&2; exit 1 ;; esac
if [ "${PAD:-0}" -gt 0 ]; then export MCPLOAD_PAD="$PAD" WYMCP_CALC_NOTE=1; fi
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
# shellcheck source=build.sh
source "$here/build.sh"
work="$(mktemp -d)"; pid=""; redis_pid=""; upstream_pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null; [ -n "$upstream_pid" ] && kill "$upstream_pid" 2>/dev/null; rm -rf "$work"' EXIT
# `gateway`: a wymcp_calc outside callgrind for the gateway to forward to (started once).
upstream_url=""
upstream_calc() {
  [ -z "$upstream_url" ] || return 0
  "$bin/wymcp_calc" 127.0.0.1:0 >"$work/upstream.log" 2>&1 &
  upstream_pid=$!
  local at=""
  for _ in $(seq 1 300); do at="$(sed -n 's/^listening on //p' "$work/upstream.log" | head -1)"; [ -n "$at" ] && break; sleep 0.1; done
  [ -n "$at" ] || { echo "the gateway's upstream did not start" >&2; cat "$work/upstream.log" >&2; exit 1; }
  upstream_url="http://$at/mcp"
}
redis_url=""
if [[ " $* " == *" wymcp-redis"* ]]; then
  command -v redis-server >/dev/null || { echo "wymcp-redis needs redis-server (Debian package)" >&2; exit 1; }
  redis_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis_url="redis://127.0.0.1:$redis_port/"
fi
for name in "${@:-bare wymcp}"; do
  for one in $name; do
    case "$one" in
      bare) args=("$bin/bare" 127.0.0.1:0); sessions=0 ;;
      floor) args=("$bin/floor" 127.0.0.1:0); sessions=0 ;;
      wymcp) args=("$bin/wymcp_calc" 127.0.0.1:0); sessions=64 ;;
      wymcp=*) args=("${one#wymcp=}" 127.0.0.1:0); sessions=64 ;;
      wymcp-redis) args=("$bin/wymcp_calc" 127.0.0.1:0); sessions=64 ;;
      wymcp-redis=*) args=("${one#wymcp-redis=}" 127.0.0.1:0); sessions=64 ;;
      # The gateway in front of a wymcp_calc started here (not counted): its own cost per
      # forwarded call.
      gateway) upstream_calc; args=("$bin/gateway_calc" 127.0.0.1:0 "$upstream_url"); sessions=64 ;;
      rmcp-stateless) args=("$bin/rmcp_calc" 127.0.0.1:0 stateless); sessions=0 ;;
      rmcp-stateful) args=("$bin/rmcp_calc" 127.0.0.1:0 stateful); sessions=64 ;;
      *) echo "unknown server $one" >&2; exit 1 ;;
    esac
    # The stateless era has no sessions (rmcp-stateful serves it statelessly too).
    [ "$ERA" = 2025-06-18 ] || sessions=0
    key="${one//[^A-Za-z0-9._-]/_}"
    node=(); [[ "$one" == wymcp-redis* ]] && node=("WYMCP_CALC_REDIS=$redis_url")
    [ -z "${SERVER_PRELOAD:-}" ] || node+=("LD_PRELOAD=$SERVER_PRELOAD")
    env "${node[@]}" "${pin[@]}" valgrind --tool=callgrind --callgrind-out-file="$work/$key.%p.out" "${args[@]}" >"$work/$key.log" 2>&1 &
    pid=$!
    addr=""
    for _ in $(seq 1 1200); do addr="$(sed -n 's/^listening on //p' "$work/$key.log" 2>/dev/null | head -1 || true)"; [ -n "$addr" ] && break; sleep 0.1; done
    [ -n "$addr" ] || { echo "$one did not start" >&2; cat "$work/$key.log" >&2; exit 1; }
    url="http://$addr/mcp"; file="-"
    if [ "$sessions" -gt 0 ]; then file="$work/$key.sessions"; timeout 300 "$bin/mcpload" sessions "$url" "$sessions" "$file" 2>/dev/null; fi
    # IDLE_SESSIONS=N: N more sessions opened and left idle while the 64 take the calls.
    if [ "$sessions" -gt 0 ] && [ "${IDLE_SESSIONS:-0}" -gt 0 ]; then timeout 900 "$bin/mcpload" sessions "$url" "$IDLE_SESSIONS" "$work/$key.idle" 2>/dev/null; fi
    timeout 300 "$bin/mcpload" calls "$url" "$file" 500 "$CONCURRENCY" "$ERA" 2>"$work/$key.load" || { echo "$one: the warm-up failed" >&2; cat "$work/$key.load" >&2; exit 1; }
    callgrind_control -z "$pid" >/dev/null 2>&1
    timeout 600 "$bin/mcpload" calls "$url" "$file" "$CALLS" "$CONCURRENCY" "$ERA" 2>"$work/$key.load" || { echo "$one: the calls failed" >&2; cat "$work/$key.load" >&2; exit 1; }
    callgrind_control -d "$pid" >/dev/null 2>&1
    sleep 0.5
    total="$(for f in "$work/$key".*.out.*; do sed -n 's/^totals: //p' "$f"; done | awk '{s += $1} END {print s}')"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
    printf '%-16s %s %10.0f instructions per call%s\n' "$one" "$ERA" "$(awk -v t="$total" -v n="$CALLS" 'BEGIN {print t / n}')" \
      "$([ "${PAD:-0}" -gt 0 ] && echo " (note of $PAD bytes)")"
    [ -z "${KEEP:-}" ] || cat "$work/$key".*.out.* >"$KEEP.$key"
    rm -f "$work/$key".*.out*
  done
done
