#!/usr/bin/env bash
# The in-memory session store as the live sessions grow (issue 46): instructions (callgrind) of
# opening one session (`SessionStore::create`) and of one reaper sweep that finds none expired
# (`SessionStore::reap`), among N live sessions, for each N in SIZES (default 1000 10000
# 100000), and of an attempt refused at the cap (the store then counts its live sessions by a
# scan: what every `create` cost before 7 December 2026). src/bin/store_scale.rs fills the
# store outside the count (`--toggle-collect`).
#
#   bash bench/http/store_scale.sh
#
# CREATES (default 1000) sessions opened and SWEEPS (default 10) sweeps per size. Needs
# valgrind (Debian package). BUILD=0, PROFILE, ALLOC, BIN_DIR as for instructions.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SIZES="${SIZES:-1000 10000 100000}"
CREATES="${CREATES:-1000}"
SWEEPS="${SWEEPS:-10}"
command -v valgrind >/dev/null || { echo "store_scale.sh needs valgrind (Debian package)" >&2; exit 1; }
# shellcheck source=build.sh
source "$here/build.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# counted N FUNCTION: the instructions inside FUNCTION (and what it calls) among N sessions.
counted() {
  timeout 1200 valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
    --toggle-collect="*store_scale::$2*" "$bin/store_scale" "$1" "$CREATES" "$SWEEPS" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  sed -n 's/^totals: //p' "$work/cg.out"
}

printf '| live sessions | open one (create) | one reaper sweep (reap) | per live session | refused at the cap (the scan) | per live session |\n|---:|---:|---:|---:|---:|---:|\n'
for n in $SIZES; do
  create="$(counted "$n" measured_creates)"
  sweep="$(counted "$n" measured_sweeps)"
  refused="$(counted "$n" measured_refusals)"
  awk -v n="$n" -v c="$create" -v s="$sweep" -v r="$refused" -v nc="$CREATES" -v ns="$SWEEPS" 'BEGIN {
    m = n + nc
    printf "| %d | %.0f | %.0f | %.2f | %.0f | %.2f |\n", n, c / nc, s / ns, s / ns / m, r / nc, r / nc / m }'
done
