#!/usr/bin/env bash
# Instructions (callgrind Ir) of what the gates benchmark times: one valid `orders/create` call
# through every gate (`one_call`), and the benchmark's floor (`floor`: the call's data checked by
# a plain `jsonschema` validator, then freed). Each is the function's inclusive cost over N runs
# of the gates bench binary (GATES_CALLS=N), divided by N; copying the input is outside both.
# Load on the machine cannot move these figures.
#
#   bash bench/gates-instructions.sh                 # N defaults to 2000
#   KEEP=/tmp/gates bash bench/gates-instructions.sh # also keeps /tmp/gates.{call,floor}
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N="${N:-2000}"
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
cd "$root"
bin="$(cargo bench -p wymcp --bench gates --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
# per NAME FUNCTION [ENV...]: FUNCTION's inclusive instructions per run, over N runs.
per() {
  local name="$1" function="$2"; shift 2
  env GATES_CALLS="$N" "$@" valgrind --tool=callgrind \
    --callgrind-out-file="$work/$name" "$bin" >/dev/null 2>&1
  [ -z "${KEEP:-}" ] || cp "$work/$name" "$KEEP.$name"
  callgrind_annotate --inclusive=yes --threshold=100 "$work/$name" \
    | awk -v f="???:$function" -v n="$N" '
        # The percentage column may hold a space ("( 5.1%)"): find the name in any field.
        !found { for (i = 2; i <= NF; i++) if ($i == f) { gsub(",", "", $1); printf "%.0f", $1 / n; found = 1 } }
        END { if (!found) { print "no " f " in the profile" > "/dev/stderr"; exit 1 } }'
}
call="$(per call gates::one_call)"
floor="$(per floor gates::floor GATES_FLOOR=1)"
printf 'valid call through all gates: %s instructions\n' "$call"
printf 'floor (jsonschema is_valid on the data, then freeing it): %s instructions\n' "$floor"
printf "wymcp's own share: %s instructions; the call is %.2fx the floor\n" "$((call - floor))" \
  "$(awk -v c="$call" -v f="$floor" 'BEGIN {print c / f}')"
