#!/usr/bin/env bash
# The HTTP load benchmark of issue 11: wymcp against the physical limit (a bare axum handler)
# and rmcp, same machine, same run, same payloads. Loopback only; every loop bounded.
#
#   bash bench/http/run.sh            # from the repository root (or anywhere)
#
# Knobs (environment): DURATION (s of measured load per server, default 10), WARMUP (s, 2),
# CONNECTIONS (64), IDLE_SESSIONS (10000), SHORT_CALLS (100000), LONG_CALLS (1000000),
# SCALE=0 to skip the scale figures, BUILD=0 to reuse the built binaries, SERVERS (names, default "bare wymcp rmcp-stateless
# rmcp-stateful").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
IDLE_SESSIONS="${IDLE_SESSIONS:-10000}"
SHORT_CALLS="${SHORT_CALLS:-100000}"
LONG_CALLS="${LONG_CALLS:-1000000}"
SCALE="${SCALE:-1}"
SERVERS="${SERVERS:-bare wymcp rmcp-stateless rmcp-stateful}"
SERVER_CPU=0
LOAD_CPU=1

# --- what it needs -------------------------------------------------------------------------
if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)..." >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq wrk >/dev/null; fi
fi
command -v taskset >/dev/null || { echo "taskset (util-linux) is required" >&2; exit 1; }
if [ "$(nproc --all)" -lt 2 ]; then echo "needs at least 2 cores" >&2; exit 1; fi

export CARGO_TARGET_DIR="$here/target"
if [ "${BUILD:-1}" = 1 ]; then (cd "$here" && cargo build --release --quiet --bins); fi
bin="$CARGO_TARGET_DIR/release"
results="$here/results"; mkdir -p "$results"
exec > >(tee "$results/$(date -u +%Y%m%dT%H%M%SZ).txt")
work="$(mktemp -d)"
tick="$(getconf CLK_TCK)"

server_pid=""
cleanup() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

# start NAME: starts the server pinned to SERVER_CPU; sets server_pid and url.
start() {
  local name="$1" log="$work/$1.log"
  case "$name" in
    bare)           taskset -c "$SERVER_CPU" "$bin/bare" 127.0.0.1:0 >"$log" 2>&1 & ;;
    wymcp)          taskset -c "$SERVER_CPU" "$bin/wymcp_calc" 127.0.0.1:0 >"$log" 2>&1 & ;;
    rmcp-stateless) taskset -c "$SERVER_CPU" "$bin/rmcp_calc" 127.0.0.1:0 stateless >"$log" 2>&1 & ;;
    rmcp-stateful)  taskset -c "$SERVER_CPU" "$bin/rmcp_calc" 127.0.0.1:0 stateful >"$log" 2>&1 & ;;
    *) echo "unknown server $name" >&2; exit 1 ;;
  esac
  server_pid=$!
  local addr="" i
  for i in $(seq 1 100); do
    addr="$(sed -n 's/^listening on //p' "$log" | head -1)"
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "$name did not start:" >&2; cat "$log" >&2; exit 1; }
  url="http://$addr/mcp"
}

stop() { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; }

stateful() { case "$1" in wymcp|rmcp-stateful) return 0 ;; *) return 1 ;; esac; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
status_kib() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$server_pid/status"; }
load() { timeout 120 taskset -c "$LOAD_CPU" "$bin/mcpload" "$@"; }

echo "machine: $(nproc --all) cores, $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "load: wrk -t1 -c$CONNECTIONS, ${DURATION}s after ${WARMUP}s warm-up; server on cpu $SERVER_CPU, wrk on cpu $LOAD_CPU"
echo

declare -A rps p50 p99 hwm cpu
for name in $SERVERS; do
  start "$name"
  sessions="-"
  if stateful "$name"; then
    sessions="$work/$name.sessions"
    load sessions "$url" "$CONNECTIONS" "$sessions" 2>/dev/null
  fi
  load check "$url" "$sessions" >"$work/$name.check" || { echo "$name: the check call failed" >&2; cat "$work/$name.check" >&2; exit 1; }
  timeout $((WARMUP + 30)) taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$here/calls.lua" "$url" -- "$sessions" >/dev/null
  before="$(cpu_ticks)"
  out="$(timeout $((DURATION + 30)) taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 5s -s "$here/calls.lua" "$url" -- "$sessions")"
  after="$(cpu_ticks)"
  line="$(grep '^RESULT' <<<"$out")"
  eval "$(sed 's/^RESULT //' <<<"$line")"   # requests duration_us p50_us p99_us errors
  if [ "$errors" != 0 ]; then echo "$name: $errors failed requests during the load" >&2; echo "$out" >&2; exit 1; fi
  rps[$name]="$(awk -v r="$requests" -v d="$duration_us" 'BEGIN {printf "%.0f", r / (d / 1e6)}')"
  p50[$name]="$p50_us"; p99[$name]="$p99_us"
  hwm[$name]="$(status_kib VmHWM)"
  cpu[$name]="$(awk -v t="$((after - before))" -v hz="$tick" -v r="$requests" 'BEGIN {printf "%.1f", t * 1e6 / hz / r}')"
  stop
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }
{
  printf '| server | requests/s | p50 µs | p99 µs | peak RSS MiB | server CPU µs/req | CPU ×bare | p99 ×bare | req/s ×bare |\n'
  printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
  for name in $SERVERS; do
    printf '| %s | %s | %s | %s | %.1f | %s | %s | %s | %s |\n' "$name" "${rps[$name]}" "${p50[$name]}" "${p99[$name]}" \
      "$(awk -v k="${hwm[$name]}" 'BEGIN {print k / 1024}')" "${cpu[$name]}" \
      "$(ratio "${cpu[$name]}" "${cpu[bare]:-0}")" "$(ratio "${p99[$name]}" "${p99[bare]:-0}")" "$(ratio "${rps[$name]}" "${rps[bare]:-0}")"
  done
} | tee "$work/table"

if [ "$SCALE" = 1 ]; then
  echo
  printf '| scale figure | server | value |\n|---|---|---:|\n'
  for name in wymcp rmcp-stateful; do
    case " $SERVERS " in *" $name "*) ;; *) continue ;; esac
    start "$name"
    load sessions "$url" "$CONNECTIONS" "$work/warm.sessions" 2>/dev/null
    load calls "$url" "$work/warm.sessions" 10000 "$CONNECTIONS" 2>/dev/null
    rss0="$(status_kib VmRSS)"
    timeout 300 taskset -c "$LOAD_CPU" "$bin/mcpload" sessions "$url" "$IDLE_SESSIONS" "$work/idle.sessions" 2>/dev/null
    sleep 1
    rss1="$(status_kib VmRSS)"
    printf '| RSS per idle session (%s sessions) | %s | %s KiB |\n' "$IDLE_SESSIONS" "$name" \
      "$(awk -v a="$rss0" -v b="$rss1" -v n="$IDLE_SESSIONS" 'BEGIN {printf "%.2f", (b - a) / n}')"
    stop
  done
  case " $SERVERS " in *" wymcp "*)
    start wymcp
    load sessions "$url" "$CONNECTIONS" "$work/long.sessions" 2>/dev/null
    timeout 600 taskset -c "$LOAD_CPU" "$bin/mcpload" calls "$url" "$work/long.sessions" "$SHORT_CALLS" "$CONNECTIONS" 2>/dev/null
    rss_short="$(status_kib VmRSS)"
    timeout 900 taskset -c "$LOAD_CPU" "$bin/mcpload" calls "$url" "$work/long.sessions" "$((LONG_CALLS - SHORT_CALLS))" "$CONNECTIONS" 2>/dev/null
    rss_long="$(status_kib VmRSS)"
    printf '| RSS after %s calls | wymcp | %s KiB |\n' "$SHORT_CALLS" "$rss_short"
    printf '| RSS after %s calls | wymcp | %s KiB (%+d KiB) |\n' "$LONG_CALLS" "$rss_long" "$((rss_long - rss_short))"
    stop
  ;; esac
fi
