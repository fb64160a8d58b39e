#!/usr/bin/env bash
# The HTTP load benchmark of issue 11: wymcp against the physical limit (a bare axum handler)
# and rmcp, same machine, same run, same payloads. Loopback only; every loop bounded.
#
#   bash bench/http/run.sh            # from the repository root (or anywhere)
#
# Knobs (environment): DURATION (s of measured load per server and round, default 10), WARMUP (s, 2),
# ROUNDS (5: the servers take turns this many times; the table shows medians),
# CONNECTIONS (64), IDLE_SESSIONS (10000), SHORT_CALLS (100000), LONG_CALLS (1000000),
# SCALE=0 to skip the scale figures, BUILD=0 to reuse the built binaries, SERVERS (names, default "bare wymcp rmcp-stateless
# rmcp-stateful"), PROFILE (the Cargo profile every server is built with: `release`, the default, or
# `lto`, release with fat LTO and one codegen unit). A server named `wymcp=PATH` runs the wymcp_calc
# binary at PATH (say, a copy built from another commit) in the same rounds: an A/B comparison.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
IDLE_SESSIONS="${IDLE_SESSIONS:-10000}"
SHORT_CALLS="${SHORT_CALLS:-100000}"
LONG_CALLS="${LONG_CALLS:-1000000}"
SCALE="${SCALE:-1}"
ROUNDS="${ROUNDS:-5}"
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
PROFILE="${PROFILE:-release}"
if [ "${BUILD:-1}" = 1 ]; then (cd "$here" && cargo build --profile "$PROFILE" --quiet --bins); fi
bin="$CARGO_TARGET_DIR/$PROFILE"
results="$here/results"; mkdir -p "$results"
exec > >(tee "$results/$(date -u +%Y%m%dT%H%M%SZ).txt")
work="$(mktemp -d)"
tick="$(getconf CLK_TCK)"

server_pid=""
cleanup() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

# start NAME: starts the server pinned to SERVER_CPU; sets server_pid and url.
start() {
  local name="$1" log="$work/${1//\//_}.log"
  case "$name" in
    bare)           taskset -c "$SERVER_CPU" "$bin/bare" 127.0.0.1:0 >"$log" 2>&1 & ;;
    wymcp)          taskset -c "$SERVER_CPU" "$bin/wymcp_calc" 127.0.0.1:0 >"$log" 2>&1 & ;;
    wymcp=*)        taskset -c "$SERVER_CPU" "${name#wymcp=}" 127.0.0.1:0 >"$log" 2>&1 & ;;
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

stateful() { case "$1" in wymcp|wymcp=*|rmcp-stateful) return 0 ;; *) return 1 ;; esac; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
status_kib() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$server_pid/status"; }
load() { timeout 120 taskset -c "$LOAD_CPU" "$bin/mcpload" "$@"; }

echo "machine: $(nproc --all) cores, $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "load: wrk -t1 -c$CONNECTIONS, ${DURATION}s after ${WARMUP}s warm-up, $ROUNDS rounds (medians; ratios are medians of same-round ratios); server on cpu $SERVER_CPU, wrk on cpu $LOAD_CPU; every server built with profile $PROFILE"
echo

# One measured run of a server: sets rps/p50/p99/hwm/cpu[name,round].
declare -A rps p50 p99 hwm cpu
measure() {
  local name="$1" round="$2" sessions="-"
  start "$name"
  if stateful "$name"; then
    sessions="$work/${name//\//_}.sessions"
    load sessions "$url" "$CONNECTIONS" "$sessions" 2>/dev/null
  fi
  local check="$work/${name//\//_}.check"
  load check "$url" "$sessions" >"$check" || { echo "$name: the check call failed" >&2; cat "$check" >&2; exit 1; }
  timeout $((WARMUP + 30)) taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$here/calls.lua" "$url" -- "$sessions" >/dev/null
  local before after out line
  before="$(cpu_ticks)"
  out="$(timeout $((DURATION + 30)) taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 5s -s "$here/calls.lua" "$url" -- "$sessions")"
  after="$(cpu_ticks)"
  line="$(grep '^RESULT' <<<"$out")"
  eval "$(sed 's/^RESULT //' <<<"$line")"   # requests duration_us p50_us p99_us errors
  if [ "$errors" != 0 ]; then echo "$name: $errors failed requests during the load" >&2; echo "$out" >&2; exit 1; fi
  rps[$name,$round]="$(awk -v r="$requests" -v d="$duration_us" 'BEGIN {printf "%.0f", r / (d / 1e6)}')"
  p50[$name,$round]="$p50_us"; p99[$name,$round]="$p99_us"
  hwm[$name,$round]="$(status_kib VmHWM)"
  cpu[$name,$round]="$(awk -v t="$((after - before))" -v hz="$tick" -v r="$requests" 'BEGIN {printf "%.1f", t * 1e6 / hz / r}')"
  stop
}

# The servers take turns, ROUNDS times over: a slow spell of the machine (other tenants of a
# VM) then falls on every server alike instead of on whichever ran during it.
for round in $(seq 1 "$ROUNDS"); do
  for name in $SERVERS; do measure "$name" "$round"; done
done

median() { tr ' ' '\n' | sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# med KIND NAME: the median of that figure over the rounds.
med() { local -n figure="$1"; local r values=""; for r in $(seq 1 "$ROUNDS"); do values+="${figure[$2,$r]} "; done; median <<<"${values% }"; }
# ratio KIND NAME: the median over the rounds of NAME's figure over bare's in the same round.
ratio() {
  local -n figure="$1"; local r values=""
  [ -n "${figure[bare,1]:-}" ] || { printf -- '-'; return; }
  for r in $(seq 1 "$ROUNDS"); do values+="$(awk -v a="${figure[$2,$r]}" -v b="${figure[bare,$r]}" 'BEGIN {printf "%.4f", a / b}') "; done
  printf '%.2f' "$(median <<<"${values% }")"
}
{
  printf '| server | requests/s | p50 µs | p99 µs | peak RSS MiB | server CPU µs/req | CPU ×bare | p99 ×bare | req/s ×bare |\n'
  printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
  for name in $SERVERS; do
    printf '| %s | %.0f | %.0f | %.0f | %.1f | %.1f | %s | %s | %s |\n' "$name" "$(med rps "$name")" "$(med p50 "$name")" "$(med p99 "$name")" \
      "$(awk -v k="$(med hwm "$name")" 'BEGIN {print k / 1024}')" "$(med cpu "$name")" \
      "$(ratio cpu "$name")" "$(ratio p99 "$name")" "$(ratio rps "$name")"
  done
  echo
  printf 'server CPU µs/req, round by round:\n'
  for name in $SERVERS; do
    printf '  %-15s' "$name"; for r in $(seq 1 "$ROUNDS"); do printf ' %7s' "${cpu[$name,$r]}"; done; printf '\n'
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
