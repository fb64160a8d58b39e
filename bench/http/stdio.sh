#!/usr/bin/env bash
# stdio against rmcp's stdio server (issue 46): the same `calc` tool as the HTTP figures, served
# over a pipe by `wymcp_calc stdio` (wymcp::transport::stdio::serve) and `rmcp_calc stdio`
# (rmcp 3.11's `transport::stdio()`), driven by `mcpload pipe`: `initialize` (2025-06-18), then
# CALLS `tools/call` lines, at most WINDOW (default 64) unanswered at a time, every answer checked
# (its id one of the calls', seen once, carrying the sum).
#
#   bash bench/http/stdio.sh
#
# * Instructions per call under callgrind (the figure to decide by: other load cannot move it):
#   each server run twice, with WARM (default 200) calls and with WARM + CG_CALLS (default 2000);
#   the difference over CG_CALLS is one call's work, start-up and the first calls left out.
# * CPU time and calls per second: ROUNDS (default 3) interleaved rounds of CALLS (default
#   20000) calls each, the server pinned to CPU 0 (tokio then runs one worker thread) and the
#   driver to CPU 1 (`taskset`), the order reversed in even rounds; CPU is the server's
#   utime+stime over the calls (`/proc`, 10 ms ticks). Prints each round and the median of the
#   same-round ratios. CPU time moves with other load on the machine: report it with its spread.
#
# Needs valgrind (Debian package). BUILD=0 reuses the built binaries; PROFILE, ALLOC and BIN_DIR
# as in instructions.sh (build.sh). Every loop is bounded, every run under `timeout`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROUNDS="${ROUNDS:-3}"
CALLS="${CALLS:-20000}"
WINDOW="${WINDOW:-64}"
WARM="${WARM:-200}"
CG_CALLS="${CG_CALLS:-2000}"
command -v valgrind >/dev/null || { echo "stdio.sh needs valgrind (Debian package)" >&2; exit 1; }
# shellcheck source=build.sh
source "$here/build.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# server NAME: the command line of that stdio server.
server() {
  case "$1" in
    wymcp) echo "$bin/wymcp_calc stdio" ;;
    rmcp) echo "$bin/rmcp_calc stdio" ;;
  esac
}

# instructions NAME CALLS: callgrind's total for the server NAME serving CALLS calls.
instructions() {
  rm -f "$work"/cg.*
  # shellcheck disable=SC2046
  timeout 600 "$bin/mcpload" pipe "$2" "$WINDOW" valgrind --tool=callgrind \
    --callgrind-out-file="$work/cg.%p.out" $(server "$1") >"$work/pipe.out" 2>"$work/pipe.err" ||
    { cat "$work/pipe.out" "$work/pipe.err" >&2; exit 1; }
  for f in "$work"/cg.*; do sed -n 's/^totals: //p' "$f"; done | awk '{s += $1} END {print s}'
}

echo "== instructions per call over stdio (callgrind; $CG_CALLS calls after $WARM)"
declare -A ir
for s in wymcp rmcp; do
  base="$(instructions "$s" "$WARM")"
  more="$(instructions "$s" $((WARM + CG_CALLS)))"
  ir[$s]="$(awk -v a="$base" -v b="$more" -v n="$CG_CALLS" 'BEGIN {printf "%.0f", (b - a) / n}')"
  printf '%-6s %10s instructions per call\n' "$s" "${ir[$s]}"
done
printf 'wymcp / rmcp: %s\n' "$(awk -v a="${ir[wymcp]}" -v b="${ir[rmcp]}" 'BEGIN {printf "%.2f", a / b}')"

echo "== CPU per call and calls per second over stdio ($ROUNDS rounds of $CALLS calls, window $WINDOW)"
: >"$work/rounds"
for round in $(seq 1 "$ROUNDS"); do
  order="wymcp rmcp"; [ $((round % 2)) = 0 ] && order="rmcp wymcp"
  for s in $order; do
    # shellcheck disable=SC2046
    line="$(timeout 600 taskset -c 1 "$bin/mcpload" pipe "$CALLS" "$WINDOW" taskset -c 0 $(server "$s"))"
    rate="$(sed -n 's/.*: \([0-9]*\) calls\/s.*/\1/p' <<<"$line")"
    us="$(sed -n 's/.*, \([0-9.]*\) µs per call.*/\1/p' <<<"$line")"
    echo "$round $s $rate $us" >>"$work/rounds"
    printf 'round %s %-6s %8s calls/s %8s µs CPU per call\n' "$round" "$s" "$rate" "$us"
  done
done
awk '
  {rate[$1, $2] = $3; us[$1, $2] = $4; if ($1 > n) n = $1}
  function median(a, k,   i, j, t) {
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    for (i = 1; i <= n; i++) {
      w[i] = us[i, "wymcp"]; r[i] = us[i, "rmcp"]; c[i] = us[i, "wymcp"] / us[i, "rmcp"]
      wr[i] = rate[i, "wymcp"]; rr[i] = rate[i, "rmcp"]; cr[i] = rate[i, "wymcp"] / rate[i, "rmcp"]
      cpu = cpu sprintf(" %.2f", c[i]); calls = calls sprintf(" %.2f", cr[i])
    }
    printf "wymcp %.2f µs CPU per call, %.0f calls/s; rmcp %.2f µs, %.0f calls/s (medians)\n", median(w, n), median(wr, n), median(r, n), median(rr, n)
    printf "wymcp / rmcp, CPU per call: %.2f (rounds%s); calls per second: %.2f (rounds%s)\n", median(c, n), cpu, median(cr, n), calls
  }' "$work/rounds"
