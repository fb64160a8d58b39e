#!/usr/bin/env bash
# Instructions (callgrind Ir) of one valid `orders/create` call through every gate, in process:
# two runs of the gates bench binary with GATES_CALLS=N and 2N, the difference divided by N.
# Load on the machine cannot move this figure.
#
#   bash bench/gates-instructions.sh        # N defaults to 2000
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N="${N:-2000}"
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
cd "$root"
bin="$(cargo bench -p wymcp --bench gates --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
ir() {
  GATES_CALLS="$1" valgrind --tool=callgrind --callgrind-out-file="$work/out.$1" "$bin" >/dev/null 2>&1
  sed -n 's/^totals: //p' "$work/out.$1"
}
one="$(ir "$N")"; two="$(ir $((2 * N)))"
printf 'valid call through all gates: %.0f instructions\n' "$(awk -v a="$one" -v b="$two" -v n="$N" 'BEGIN {print (b - a) / n}')"
[ -z "${KEEP:-}" ] || cp "$work/out.$((2 * N))" "$KEEP"
