#!/usr/bin/env bash
# The HTTP load benchmark of issue 11: wymcp against the physical limit (a bare axum handler)
# and rmcp, same machine, same run, same payloads. Loopback only; every loop bounded.
#
#   bash bench/http/run.sh            # from the repository root (or anywhere)
#
# Every server is measured in each protocol era it speaks (issue 18), with the same tools/call:
#   2025-06-18  the session era: wymcp and rmcp-stateful in 64 sessions (initialize first);
#               bare and rmcp-stateless without one;
#   2026-07-28  the stateless era: no session, the `_meta` envelope in the body and the
#               Mcp-Method / Mcp-Name headers (calls.lua); every server but rmcp-stateful (in
#               that era rmcp serves every request statelessly whatever its mode: one rmcp row).
# Each ratio is against bare in the same era and round (bare reads the era's request too).
#
# Knobs (environment): DURATION (s of measured load per server, era and round, default 10),
# WARMUP (s, 2), ROUNDS (5: the servers take turns this many times; the table shows medians),
# ERAS (default "2025-06-18 2026-07-28"), CONNECTIONS (64), IDLE_SESSIONS (10000),
# SHORT_CALLS (100000), LONG_CALLS (1000000), SCALE=0 to skip the scale figures (session era
# only), BUILD=0 to reuse the built binaries, SERVERS (names, default "bare wymcp rmcp-stateless
# rmcp-stateful"; `wymcp-redis` adds wymcp as a node on Redis, `wymcp-redis=PATH` the binary at
# PATH as one), PROFILE (the Cargo profile
# every server is built with: `release`, the default, or `lto`, release with fat LTO and one
# codegen unit), ALLOC (the allocator every server is built with: `system`, the default, or
# `mimalloc`). A server named `wymcp=PATH`
# runs the wymcp_calc binary at PATH (say, a copy built from another commit) in the same rounds
# and both eras: an A/B comparison; with `wymcp` in SERVERS too, the script prints wymcp's CPU
# over PATH's, the median of the same-round ratios, per era. For example:
#
#   SERVERS="bare wymcp=/path/to/old/wymcp_calc wymcp rmcp-stateless rmcp-stateful" bash bench/http/run.sh
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
ERAS="${ERAS:-2025-06-18 2026-07-28}"
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

# shellcheck source=build.sh
source "$here/build.sh"
results="$here/results"; mkdir -p "$results"
exec > >(tee "$results/$(date -u +%Y%m%dT%H%M%SZ).txt")
work="$(mktemp -d)"
tick="$(getconf CLK_TCK)"

server_pid=""; redis_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# `wymcp-redis` in SERVERS: wymcp_calc as a node of a Redis deployment (docs/scale-out.md), its
# sessions loaded from a redis-server started here on the load's cpu (REDIS_URL names another).
if [[ " $SERVERS " == *" wymcp-redis"* ]] && [ -z "${REDIS_URL:-}" ]; then
  command -v redis-server >/dev/null || { echo "wymcp-redis needs redis-server (Debian package)" >&2; exit 1; }
  redis_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  taskset -c "$LOAD_CPU" redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
  redis_pid=$!
  REDIS_URL="redis://127.0.0.1:$redis_port/"
  for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
fi

# start NAME: starts the server pinned to SERVER_CPU; sets server_pid and url.
start() {
  local name="$1" log="$work/${1//\//_}.log"
  # Emptied here, not only by the server's redirection: a server started before (another round
  # or era) left its address in this file, and the loop below must not read that one.
  : >"$log"
  case "$name" in
    bare)           taskset -c "$SERVER_CPU" "$bin/bare" 127.0.0.1:0 >"$log" 2>&1 & ;;
    floor)          taskset -c "$SERVER_CPU" "$bin/floor" 127.0.0.1:0 >"$log" 2>&1 & ;;
    wymcp)          taskset -c "$SERVER_CPU" "$bin/wymcp_calc" 127.0.0.1:0 >"$log" 2>&1 & ;;
    wymcp=*)        taskset -c "$SERVER_CPU" "${name#wymcp=}" 127.0.0.1:0 >"$log" 2>&1 & ;;
    wymcp-redis)    WYMCP_CALC_REDIS="$REDIS_URL" taskset -c "$SERVER_CPU" "$bin/wymcp_calc" 127.0.0.1:0 >"$log" 2>&1 & ;;
    wymcp-redis=*)  WYMCP_CALC_REDIS="$REDIS_URL" taskset -c "$SERVER_CPU" "${name#wymcp-redis=}" 127.0.0.1:0 >"$log" 2>&1 & ;;
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

# speaks NAME ERA: whether NAME is measured in ERA (rmcp-stateful is a session-era row only: at
# 2026-07-28 rmcp serves statelessly in either mode, and rmcp-stateless is that row).
speaks() { [ "$2" = 2025-06-18 ] || [ "$1" != rmcp-stateful ]; }
# in_session NAME ERA: whether NAME's calls in ERA go through sessions opened first.
in_session() { [ "$2" = 2025-06-18 ] && case "$1" in wymcp|wymcp=*|wymcp-redis|wymcp-redis=*|rmcp-stateful) return 0 ;; *) return 1 ;; esac; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
status_kib() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$server_pid/status"; }
load() { timeout 120 taskset -c "$LOAD_CPU" "$bin/mcpload" "$@"; }

echo "machine: $(nproc --all) cores, $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "load: wrk -t1 -c$CONNECTIONS, ${DURATION}s after ${WARMUP}s warm-up, $ROUNDS rounds (medians; ratios are medians of same-round ratios against bare in the same era); server on cpu $SERVER_CPU, wrk on cpu $LOAD_CPU; every server built with profile $PROFILE and allocator $ALLOC; eras $ERAS"
echo

# wrk_calls SECONDS URL SESSIONS ERA: wrk's closed loop of calls.lua; prints its RESULT line's
# fields (requests duration_us p50_us p99_us errors non2xx) as shell assignments.
wrk_calls() {
  local out
  out="$(timeout $(($1 + 30)) taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNECTIONS" -d"$1s" --timeout 5s -s "$here/calls.lua" "$2" -- "$3" "$4")"
  grep '^RESULT' <<<"$out" | sed 's/^RESULT //' || { echo "wrk printed no result:" >&2; echo "$out" >&2; exit 1; }
}

# One measured run of a server in an era: sets rps/p50/p99/hwm/cpu[NAME@ERA,round]. A run in
# which any answer is not a 200 carrying the sum (calls.lua checks every one) fails the script.
declare -A rps p50 p99 hwm cpu answer
checked=0; not_2xx=0
measure() {
  local name="$1" era="$2" round="$3" run="$1@$2" sessions="-" file line
  file="$work/${run//[^A-Za-z0-9._-]/_}"
  start "$name"
  if in_session "$name" "$era"; then
    sessions="$file.sessions"
    load sessions "$url" "$CONNECTIONS" "$sessions" 2>/dev/null
  fi
  load check "$url" "$sessions" "$era" >"$file.check" || { echo "$run: the check call failed" >&2; cat "$file.check" >&2; exit 1; }
  line="$(<"$file.check")"; line="${line//$'\n'/ }"; answer[$run]="${line:0:600}"
  local before after requests duration_us p50_us p99_us errors non2xx
  line="$(wrk_calls "$WARMUP" "$url" "$sessions" "$era")"; eval "$line"
  if [ "$errors" != 0 ]; then echo "$run: $errors failed requests ($non2xx not 2xx) during the warm-up" >&2; exit 1; fi
  before="$(cpu_ticks)"
  line="$(wrk_calls "$DURATION" "$url" "$sessions" "$era")"; eval "$line"
  after="$(cpu_ticks)"
  if [ "$errors" != 0 ]; then echo "$run: $errors failed requests ($non2xx not 2xx) during the load" >&2; exit 1; fi
  checked=$((checked + requests)); not_2xx=$((not_2xx + non2xx))
  rps[$run,$round]="$(awk -v r="$requests" -v d="$duration_us" 'BEGIN {printf "%.0f", r / (d / 1e6)}')"
  p50[$run,$round]="$p50_us"; p99[$run,$round]="$p99_us"
  hwm[$run,$round]="$(status_kib VmHWM)"
  cpu[$run,$round]="$(awk -v t="$((after - before))" -v hz="$tick" -v r="$requests" 'BEGIN {printf "%.1f", t * 1e6 / hz / r}')"
  stop
}

# What is measured, NAME@ERA, era by era: each era's bare run beside its servers.
runs=()
for era in $ERAS; do
  case "$era" in 2025-06-18|2026-07-28) ;; *) echo "unknown era $era (2025-06-18 or 2026-07-28)" >&2; exit 1 ;; esac
  for name in $SERVERS; do if speaks "$name" "$era"; then runs+=("$name@$era"); fi; done
done

width=0; for run in "${runs[@]}"; do [ "${#run}" -le "$width" ] || width="${#run}"; done

# The servers take turns, ROUNDS times over: a slow spell of the machine (other tenants of a
# VM) then falls on every server alike instead of on whichever ran during it. Even rounds go
# in the reverse order, so that of two servers (an A/B pair) neither always runs after the other.
for round in $(seq 1 "$ROUNDS"); do
  order=("${runs[@]}")
  if [ $((round % 2)) = 0 ]; then order=(); for run in "${runs[@]}"; do order=("$run" "${order[@]}"); done; fi
  for run in "${order[@]}"; do measure "${run%@*}" "${run##*@}" "$round"; done
done

median() { tr ' ' '\n' | sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# med KIND RUN: the median of that figure over the rounds.
med() { local -n figure="$1"; local r values=""; for r in $(seq 1 "$ROUNDS"); do values+="${figure[$2,$r]} "; done; median <<<"${values% }"; }
# rounds_over KIND RUN BASE: RUN's figure over BASE's, round by round.
rounds_over() {
  local -n figure="$1"; local r
  for r in $(seq 1 "$ROUNDS"); do awk -v a="${figure[$2,$r]}" -v b="${figure[$3,$r]}" 'BEGIN {printf "%.4f ", a / b}'; done
}
# over KIND RUN BASE: the median over the rounds of RUN's figure over BASE's in the same round.
over() {
  local -n base_figure="$1"
  [ -n "${base_figure[$3,1]:-}" ] || { printf -- '-'; return; }
  local values; values="$(rounds_over "$@")"
  printf '%.2f' "$(median <<<"${values% }")"
}
# ratio KIND RUN: against bare in RUN's era.
ratio() { over "$1" "$2" "bare@${2##*@}"; }
{
  printf '| server | era | requests/s | p50 µs | p99 µs | peak RSS MiB | server CPU µs/req | CPU ×bare | p99 ×bare | req/s ×bare |\n'
  printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
  for run in "${runs[@]}"; do
    printf '| %s | %s | %.0f | %.0f | %.0f | %.1f | %.1f | %s | %s | %s |\n' "${run%@*}" "${run##*@}" \
      "$(med rps "$run")" "$(med p50 "$run")" "$(med p99 "$run")" \
      "$(awk -v k="$(med hwm "$run")" 'BEGIN {print k / 1024}')" "$(med cpu "$run")" \
      "$(ratio cpu "$run")" "$(ratio p99 "$run")" "$(ratio rps "$run")"
  done
  echo
  printf 'server CPU µs/req, round by round:\n'
  for run in "${runs[@]}"; do
    printf '  %-*s' "$width" "$run"; for r in $(seq 1 "$ROUNDS"); do printf ' %7s' "${cpu[$run,$r]}"; done; printf '\n'
  done
  # A/B: wymcp (built from this checkout) against each wymcp=PATH, era by era.
  case " $SERVERS " in *" wymcp "*)
    for name in $SERVERS; do
      case "$name" in wymcp=*) ;; *) continue ;; esac
      for era in $ERAS; do
        printf '\nwymcp CPU over %s, %s: %s× (round by round: %s)' "$name" "$era" \
          "$(over cpu "wymcp@$era" "$name@$era")" "$(rounds_over cpu "wymcp@$era" "$name@$era" | xargs printf '%.2f ')"
      done
      echo
    done
  ;; esac
  echo
  printf '%s requests under measured load, %s of them not 2xx (by wrk); every answer a 200 carrying the sum (by calls.lua).\n' "$checked" "$not_2xx"
  printf 'One checked answer per run (mcpload check, before its load):\n'
  for run in "${runs[@]}"; do printf '  %-*s  %s\n' "$width" "$run" "${answer[$run]}"; done
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
