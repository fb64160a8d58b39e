#!/usr/bin/env bash
# The memory side of "cost as the work grows" (issue 46): what wymcp_calc holds as sessions,
# streams and actions grow. Memory is VmRSS from /proc (glibc, the system allocator), which other
# load on the machine does not move; the one CPU figure (build) is the server's own utime+stime.
#
#   bash bench/http/scale.sh [figure ...]     # default: build sessions streams listens
#
# * build: CPU time to `listening` and VmRSS then, of wymcp_calc with TOOLS tools of ACTIONS
#   actions (default 1,000 of 10), less the same of wymcp_calc alone: per action.
# * sessions: after 64 sessions and 5,000 calls, SESSIONS (default 10,000) more opened and left
#   idle; the VmRSS growth per session.
# * streams: STREAMS (default 10,000) sessions opened, then one GET stream held open on each
#   (`mcpload streams`); the VmRSS growth per stream once all are open; then one
#   `notifications/tools/list_changed` fanned out to all of them (SIGUSR1) and awaited on every
#   stream. FANOUT_INSTRUCTIONS=1 runs it again under callgrind and prints the instructions of
#   the fan-out (zeroed when every stream is open, dumped when every stream has its message).
# * listens: the same with LISTENS (default 10,000) `subscriptions/listen` streams (2026-07-28,
#   no sessions; `mcpload listens`), each counted open once acknowledged, after 1,000 stateless
#   calls: the VmRSS growth per stream, then the fan-out (and its instructions with
#   FANOUT_INSTRUCTIONS=1). The default cap of 1,000 listen streams (16 per client) is raised
#   by WYMCP_CALC_STREAMS=1 to 20,000.
#
# BUILD=0 reuses the built binaries (build.sh); PROFILE and ALLOC as in run.sh. Every wait is
# bounded; the client (mcpload) runs in its own process, so its memory is not counted.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOLS="${TOOLS:-1000}"
ACTIONS="${ACTIONS:-10}"
SESSIONS="${SESSIONS:-10000}"
STREAMS="${STREAMS:-10000}"
LISTENS="${LISTENS:-10000}"
# shellcheck source=build.sh
source "$here/build.sh"
work="$(mktemp -d)"; pid=""; client=""
trap '[ -n "$client" ] && kill "$client" 2>/dev/null; [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
tick="$(getconf CLK_TCK)"
# One client process holds a connection per stream, and the server one per stream too.
most=$((STREAMS > LISTENS ? STREAMS : LISTENS))
[ "$(ulimit -n)" -ge $((most + 256)) ] || ulimit -n $((most + 256)) 2>/dev/null ||
  { echo "streams: needs ulimit -n of $((most + 256)) (now $(ulimit -n))" >&2; exit 1; }

# start [VAR=value ...] [--callgrind]: wymcp_calc on a free port; sets pid and url.
start() {
  local env=() tool=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --callgrind) tool=(valgrind --tool=callgrind --callgrind-out-file="$work/fanout.%p.out") ;;
      *) env+=("$1") ;;
    esac
    shift
  done
  : >"$work/server.log"
  env "${env[@]}" "${tool[@]}" "$bin/wymcp_calc" 127.0.0.1:0 >"$work/server.log" 2>&1 &
  pid=$!
  local addr=""
  for _ in $(seq 1 1200); do addr="$(sed -n 's/^listening on //p' "$work/server.log" | head -1)"; [ -n "$addr" ] && break; sleep 0.1; done
  [ -n "$addr" ] || { echo "wymcp_calc did not start" >&2; cat "$work/server.log" >&2; exit 1; }
  url="http://$addr/mcp"
}
stop() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; pid=""; }
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
cpu_ms() { awk -v t="$tick" '{printf "%.0f", ($14 + $15) * 1000 / t}' "/proc/$pid/stat"; }
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN {printf "%.2f", (b - a) / n}'; }

# wait_line FILE TEXT SECONDS: until FILE has a line starting with TEXT (fails after SECONDS).
wait_line() {
  for _ in $(seq 1 $(($3 * 10))); do grep -q "^$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "no '$2' in $1 after $3 s" >&2; cat "$1" >&2; return 1
}

figure_build() {
  start
  local cpu0 rss0; cpu0="$(cpu_ms)"; rss0="$(rss)"; stop
  start WYMCP_CALC_TOOLS="$TOOLS" WYMCP_CALC_ACTIONS="$ACTIONS"
  local cpu1 rss1 n=$((TOOLS * ACTIONS)); cpu1="$(cpu_ms)"; rss1="$(rss)"; stop
  printf '| build: %s actions (%s tools of %s) | %s ms CPU, %s MiB RSS (alone: %s ms, %s MiB) | %s µs, %s KiB per action |\n' \
    "$n" "$TOOLS" "$ACTIONS" "$cpu1" "$((rss1 / 1024))" "$cpu0" "$((rss0 / 1024))" \
    "$(awk -v a="$cpu0" -v b="$cpu1" -v n="$n" 'BEGIN {printf "%.1f", (b - a) * 1000 / n}')" \
    "$(per "$rss0" "$rss1" "$n")"
}

figure_sessions() {
  start
  timeout 120 "$bin/mcpload" sessions "$url" 64 "$work/warm" 2>/dev/null
  timeout 300 "$bin/mcpload" calls "$url" "$work/warm" 5000 16 2>"$work/calls.err" || { cat "$work/calls.err" >&2; exit 1; }
  sleep 0.5
  local rss0 rss1; rss0="$(rss)"
  timeout 600 "$bin/mcpload" sessions "$url" "$SESSIONS" "$work/idle" 2>/dev/null
  sleep 1; rss1="$(rss)"; stop
  printf '| idle sessions: %s opened after 64 and 5,000 calls | %s → %s MiB RSS | %s KiB per session |\n' \
    "$SESSIONS" "$((rss0 / 1024))" "$((rss1 / 1024))" "$(per "$rss0" "$rss1" "$SESSIONS")"
}

# open_streams: opens STREAMS sessions and a GET stream on each (mcpload in the background,
# client set); waits for every stream to be open.
open_streams() {
  timeout 1200 "$bin/mcpload" sessions "$url" "$STREAMS" "$work/streams" 2>/dev/null
  sleep 0.5; rss_sessions="$(rss)"
  : >"$work/client.out"
  timeout 2400 "$bin/mcpload" streams "$url" "$work/streams" 1 >"$work/client.out" 2>"$work/client.err" &
  client=$!
  wait_line "$work/client.out" open 1200
}

figure_streams() {
  local rss_sessions rss_streams
  start WYMCP_CALC_STREAMS=1
  open_streams
  sleep 1; rss_streams="$(rss)"
  kill -USR1 "$pid"
  wait_line "$work/client.out" received 600
  wait "$client"; client=""
  stop
  printf '| open GET streams: %s, one per session | %s → %s MiB RSS | %s KiB per stream |\n' \
    "$STREAMS" "$((rss_sessions / 1024))" "$((rss_streams / 1024))" \
    "$(per "$rss_sessions" "$rss_streams" "$STREAMS")"
  [ "${FANOUT_INSTRUCTIONS:-0}" = 1 ] || return 0
  start WYMCP_CALC_STREAMS=1 --callgrind
  open_streams
  callgrind_control -z "$pid" >/dev/null 2>&1
  kill -USR1 "$pid"
  wait_line "$work/client.out" received 1200
  callgrind_control -d "$pid" >/dev/null 2>&1
  sleep 0.5
  wait "$client"; client=""
  local total; total="$(for f in "$work"/fanout.*.out.*; do sed -n 's/^totals: //p' "$f"; done | awk '{s += $1} END {print s}')"
  stop
  rm -f "$work"/fanout.*
  printf '| one notification fanned out to %s GET streams | %.0f instructions | %.0f per stream |\n' \
    "$STREAMS" "$total" "$(awk -v t="$total" -v n="$STREAMS" 'BEGIN {print t / n}')"
}

# open_listens: LISTENS listen streams after 1,000 stateless calls (mcpload in the background,
# client set); waits for every stream to be acknowledged. Sets rss_before.
open_listens() {
  timeout 300 "$bin/mcpload" calls "$url" - 1000 16 2026-07-28 2>"$work/calls.err" || { cat "$work/calls.err" >&2; exit 1; }
  sleep 0.5; rss_before="$(rss)"
  : >"$work/client.out"
  timeout 2400 "$bin/mcpload" listens "$url" "$LISTENS" 1 >"$work/client.out" 2>"$work/client.err" &
  client=$!
  wait_line "$work/client.out" open 1200 || { cat "$work/client.err" >&2; exit 1; }
}

figure_listens() {
  local rss_before rss_open
  start WYMCP_CALC_STREAMS=1
  open_listens
  sleep 1; rss_open="$(rss)"
  kill -USR1 "$pid"
  wait_line "$work/client.out" received 600 || { cat "$work/client.err" >&2; exit 1; }
  wait "$client"; client=""
  stop
  printf '| open subscriptions/listen streams: %s, no sessions | %s → %s MiB RSS | %s KiB per stream |\n' \
    "$LISTENS" "$((rss_before / 1024))" "$((rss_open / 1024))" \
    "$(per "$rss_before" "$rss_open" "$LISTENS")"
  [ "${FANOUT_INSTRUCTIONS:-0}" = 1 ] || return 0
  start WYMCP_CALC_STREAMS=1 --callgrind
  open_listens
  callgrind_control -z "$pid" >/dev/null 2>&1
  kill -USR1 "$pid"
  wait_line "$work/client.out" received 1200 || { cat "$work/client.err" >&2; exit 1; }
  callgrind_control -d "$pid" >/dev/null 2>&1
  sleep 0.5
  wait "$client"; client=""
  local total; total="$(for f in "$work"/fanout.*.out.*; do sed -n 's/^totals: //p' "$f"; done | awk '{s += $1} END {print s}')"
  stop
  rm -f "$work"/fanout.*
  printf '| one notification fanned out to %s listen streams | %.0f instructions | %.0f per stream |\n' \
    "$LISTENS" "$total" "$(awk -v t="$total" -v n="$LISTENS" 'BEGIN {print t / n}')"
}

for figure in ${@:-build sessions streams listens}; do
  case "$figure" in
    build|sessions|streams|listens) "figure_$figure" ;;
    *) echo "unknown figure $figure (build, sessions, streams, listens)" >&2; exit 1 ;;
  esac
done
