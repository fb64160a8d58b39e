#!/usr/bin/env bash
# Issue 23's load figure: two wymcp_calc nodes sharing one redis-server, every session served
# by both, beside one node in memory, in the same rounds. Loopback only; every loop bounded.
#
#   bash bench/http/two-nodes.sh            # BUILD=0 reuses the built binaries
#
# The sessions (CONNECTIONS of them) are opened on node A; then two wrk processes run at once,
# one against node A and one against node B, each over all the sessions, so every session's
# calls land on both nodes. Both nodes run on one pinned core, wrk and Redis on the other.
# Printed, per round and as medians: CPU µs per call of node A, of node B, of the in-memory
# node (its own run, under the same two wrk processes), each node's ratio to the in-memory node in
# the same round, and the commands Redis ran per call (`INFO commandstats`, over the load).
# A control, in the same rounds: two nodes in memory on the same core, each with sessions of
# its own, under the same two wrk processes: what two processes taking turns on one core cost
# without Redis, and so what of the two nodes' ratio is Redis's.
#
# Knobs (environment): DURATION (s, 10), WARMUP (s, 2), ROUNDS (5), CONNECTIONS (64, half on
# each node), BIN (another wymcp_calc to measure), PROFILE (release), ALLOC (`system`, the
# default, or `mimalloc`: the nodes built on mimalloc).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DURATION="${DURATION:-10}"; WARMUP="${WARMUP:-2}"; ROUNDS="${ROUNDS:-5}"
CONNECTIONS="${CONNECTIONS:-64}"
SERVER_CPU=0; LOAD_CPU=1
for tool in wrk redis-server redis-cli taskset; do
  command -v "$tool" >/dev/null || { echo "$tool is required (Debian: wrk, redis-server, util-linux)" >&2; exit 1; }
done
# shellcheck source=build.sh
source "$here/build.sh"
server="${BIN:-$bin/wymcp_calc}"
work="$(mktemp -d)"; tick="$(getconf CLK_TCK)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
redis_port="$(free_port)"
taskset -c "$LOAD_CPU" redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis_url="redis://127.0.0.1:$redis_port/"

# start_node NAME [REDIS_URL]: a wymcp_calc on the server core; sets pid_NAME and url_NAME.
start_node() {
  local log="$work/$1.log"
  if [ -n "${2:-}" ]; then
    WYMCP_CALC_REDIS="$2" taskset -c "$SERVER_CPU" "$server" 127.0.0.1:0 >"$log" 2>&1 &
  else
    env -u WYMCP_CALC_REDIS taskset -c "$SERVER_CPU" "$server" 127.0.0.1:0 >"$log" 2>&1 &
  fi
  local pid=$! addr=""
  pids+=("$pid")
  for _ in $(seq 1 100); do addr="$(sed -n 's/^listening on //p' "$log" | head -1)"; [ -n "$addr" ] && break; sleep 0.1; done
  [ -n "$addr" ] || { echo "$1 did not start:" >&2; cat "$log" >&2; exit 1; }
  printf -v "pid_$1" '%s' "$pid"; printf -v "url_$1" '%s' "http://$addr/mcp"
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
redis_calls() { redis-cli -p "$redis_port" info commandstats | awk -F'[=,]' '/^cmdstat_/ {s += $2} END {print s + 0}'; }
# wrk_run SECONDS URL CONNECTIONS [SESSIONS]: wrk's closed loop of calls.lua over the sessions
# (the file SESSIONS, default $work/sessions); prints
# the number of requests (every answer a 200 carrying the sum, or the script fails).
wrk_run() {
  local out requests duration_us p50_us p99_us errors non2xx
  out="$(timeout $(($1 + 30)) taskset -c "$LOAD_CPU" wrk -t1 -c"$3" -d"$1s" --timeout 5s -s "$here/calls.lua" "$2" -- "${4:-$work/sessions}" 2025-06-18)"
  eval "$(grep '^RESULT' <<<"$out" | sed 's/^RESULT //')"
  [ "${errors:-1}" = 0 ] || { echo "wrk against $2: ${errors:-?} failed requests" >&2; echo "$out" >&2; exit 1; }
  echo "$requests"
}
per_call() { awk -v t="$1" -v hz="$tick" -v r="$2" 'BEGIN {printf "%.1f", t * 1e6 / hz / r}'; }

# drive SECONDS URL1 URL2 [SESSIONS1 SESSIONS2]: two wrk processes at once, half the
# connections each, one per URL; their requests in $work/1.requests and $work/2.requests.
drive() {
  wrk_run "$1" "$2" "$half" "${4:-}" >"$work/1.requests" &
  local other=$!
  wrk_run "$1" "$3" "$half" "${5:-}" >"$work/2.requests"
  wait "$other"
}

start_node memory; start_node c; start_node d
start_node a "$redis_url"; start_node b "$redis_url"
half=$((CONNECTIONS / 2))
declare -a mem_cpu a_cpu b_cpu a_ratio b_ratio commands pair_cpu pair_ratio over_pair
for round in $(seq 1 "$ROUNDS"); do
  # The node in memory, alone, under the same two wrk processes.
  timeout 120 "$bin/mcpload" sessions "$url_memory" "$CONNECTIONS" "$work/sessions" 2>/dev/null
  drive "$WARMUP" "$url_memory" "$url_memory"
  before="$(cpu_ticks "$pid_memory")"
  drive "$DURATION" "$url_memory" "$url_memory"
  requests=$(($(<"$work/1.requests") + $(<"$work/2.requests")))
  mem_cpu[round]="$(per_call $(($(cpu_ticks "$pid_memory") - before)) "$requests")"
  # The control: two nodes in memory on the server core, each over sessions of its own.
  timeout 120 "$bin/mcpload" sessions "$url_c" "$half" "$work/c.sessions" 2>/dev/null
  timeout 120 "$bin/mcpload" sessions "$url_d" "$half" "$work/d.sessions" 2>/dev/null
  drive "$WARMUP" "$url_c" "$url_d" "$work/c.sessions" "$work/d.sessions"
  p0="$(cpu_ticks "$pid_c")"; q0="$(cpu_ticks "$pid_d")"
  drive "$DURATION" "$url_c" "$url_d" "$work/c.sessions" "$work/d.sessions"
  requests=$(($(<"$work/1.requests") + $(<"$work/2.requests")))
  pair_cpu[round]="$(per_call $(($(cpu_ticks "$pid_c") - p0 + $(cpu_ticks "$pid_d") - q0)) "$requests")"
  pair_ratio[round]="$(awk -v p="${pair_cpu[round]}" -v m="${mem_cpu[round]}" 'BEGIN {printf "%.2f", p / m}')"
  # The two nodes on Redis, the sessions opened on A and called on both at once.
  timeout 120 "$bin/mcpload" sessions "$url_a" "$CONNECTIONS" "$work/sessions" 2>/dev/null
  drive "$WARMUP" "$url_a" "$url_b"
  a0="$(cpu_ticks "$pid_a")"; b0="$(cpu_ticks "$pid_b")"; c0="$(redis_calls)"
  drive "$DURATION" "$url_a" "$url_b"
  a1="$(cpu_ticks "$pid_a")"; b1="$(cpu_ticks "$pid_b")"; c1="$(redis_calls)"
  ra="$(<"$work/1.requests")"; rb="$(<"$work/2.requests")"
  a_cpu[round]="$(per_call $((a1 - a0)) "$ra")"; b_cpu[round]="$(per_call $((b1 - b0)) "$rb")"
  a_ratio[round]="$(awk -v a="${a_cpu[round]}" -v m="${mem_cpu[round]}" 'BEGIN {printf "%.2f", a / m}')"
  b_ratio[round]="$(awk -v a="${b_cpu[round]}" -v m="${mem_cpu[round]}" 'BEGIN {printf "%.2f", a / m}')"
  commands[round]="$(awk -v c=$((c1 - c0)) -v r=$((ra + rb)) 'BEGIN {printf "%.2f", c / r}')"
  both="$(per_call $((a1 - a0 + b1 - b0)) $((ra + rb)))"
  over_pair[round]="$(awk -v r="$both" -v p="${pair_cpu[round]}" 'BEGIN {printf "%.2f", r / p}')"
  echo "round $round: in memory ${mem_cpu[round]} µs/call; two in memory ${pair_cpu[round]} (${pair_ratio[round]}×); node A ${a_cpu[round]} (${a_ratio[round]}×, $ra calls), node B ${b_cpu[round]} (${b_ratio[round]}×, $rb calls), the two on Redis ${over_pair[round]}× the two in memory; Redis commands per call ${commands[round]}"
done
median() { tr ' ' '\n' | sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo
echo "medians over $ROUNDS rounds (session era, $CONNECTIONS connections; two nodes: $half each; allocator: $ALLOC):"
echo "  in memory:  $(median <<<"${mem_cpu[*]}") µs/call"
echo "  node A:     $(median <<<"${a_cpu[*]}") µs/call, $(median <<<"${a_ratio[*]}")× the node in memory (same-round ratios)"
echo "  node B:     $(median <<<"${b_cpu[*]}") µs/call, $(median <<<"${b_ratio[*]}")× the node in memory (same-round ratios)"
echo "  two in memory (the control): $(median <<<"${pair_cpu[*]}") µs/call, $(median <<<"${pair_ratio[*]}")× the node in memory"
echo "  the two on Redis over the two in memory: $(median <<<"${over_pair[*]}")× (same-round ratios)"
echo "  Redis:      $(median <<<"${commands[*]}") commands per call"
