#!/usr/bin/env bash
# Every figure of the table at the top of docs/performance.md, in one command, one round each:
# instructions per call under callgrind (bench/http/instructions.sh), memory from /proc
# (bench/http/scale.sh), stdio against rmcp's stdio server (bench/http/stdio.sh, three
# rounds), help on large tools (bench/http/help_scale.sh) and a session's runtime tools
# (bench/http/runtime_tools.sh), after one release build of bench/http shared by all. 9 to 13 minutes on the
# 2-core development VM while other builds run before the listen-stream and stdio figures were
# added (7 December; each took under 1.5 minutes alone on the busy VM, not yet timed inside a
# whole run): callgrind's count does not depend on the load; every loop and wait in the
# scripts it runs is bounded.
#
#   bash bench/run-all.sh            # prints the table's rows, then the time it took
#   BUILD=0 bash bench/run-all.sh    # reuse the built binaries
#
# CALLS (default 1000) calls per instructions figure; the argument-size figures make fewer
# calls as the argument grows (1 MiB: 50). Ratios are against bare in the same run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
http="$root/bench/http"
export CALLS="${CALLS:-1000}"
started="$(date +%s)"
# shellcheck source=http/build.sh
here="$http" && source "$http/build.sh"
export BUILD=0
out="$(mktemp)"; trap 'rm -f "$out" "$out".*' EXIT

# ins FILE [VAR=value ...] -- server ...: instructions.sh's lines, also added to FILE.
ins() {
  local file="$1" env=()
  shift
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  env "${env[@]}" bash "$http/instructions.sh" "$@" | tee -a "$file"
}
# of ERA SERVER [NOTE] [FILE]: the figure instructions.sh printed for SERVER in ERA (with NOTE
# in its line; none: without a note), in FILE (default the plain figures).
of() {
  awk -v e="$1" -v s="$2" -v n="${3:-}" '$1 == s && $2 == e && (n == "" ? !index($0, "note of") : index($0, n)) {v = $3} END {print v}' "${4:-$out}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

echo "== instructions per tools/call (callgrind, the server's own work)"
ins "$out" ERA=2025-06-18 -- bare floor wymcp rmcp-stateless rmcp-stateful
ins "$out" ERA=2026-07-28 -- bare floor wymcp rmcp-stateless
echo "== a call among 1,000 tools of 10 actions, and among 10,000 idle sessions"
ins "$out.tools" ERA=2025-06-18 WYMCP_CALC_TOOLS=1000 -- wymcp
ins "$out.tools" ERA=2026-07-28 WYMCP_CALC_TOOLS=1000 -- wymcp
ins "$out.idle" ERA=2025-06-18 IDLE_SESSIONS=10000 -- wymcp
echo "== argument size: a note of 1 KiB, 64 KiB, 1 MiB in the call's data"
for pad in 1024 65536 1048576; do
  calls=$((pad > 65536 ? 50 : CALLS))
  ins "$out" ERA=2025-06-18 PAD="$pad" CALLS="$calls" -- bare floor wymcp
done
echo "== memory (VmRSS, glibc): build, idle sessions, open GET and listen streams"
FANOUT_INSTRUCTIONS=1 bash "$http/scale.sh" build sessions streams listens | tee "$out.scale"
echo "== stdio: wymcp against rmcp's stdio server"
ROUNDS=3 bash "$http/stdio.sh" | tee "$out.stdio"
echo "== help on a tool of 10, 100, 1,000 actions; a session's runtime tools"
bash "$http/help_scale.sh" | tee "$out.help"
bash "$http/runtime_tools.sh" | tee "$out.runtime"

echo
echo "== the table's rows ($(date -u +%F), $(git -C "$root" rev-parse --short HEAD))"
printf '| figure | session era (2025-06-18) | 2026-07-28 |\n|---|---:|---:|\n'
for s in bare floor wymcp rmcp-stateless rmcp-stateful; do
  a="$(of 2025-06-18 "$s")"; b="$(of 2026-07-28 "$s")"
  printf '| %s | %s (%s× bare) | %s |\n' "$s" "$a" "$(ratio "$a" "$(of 2025-06-18 bare)")" \
    "$([ -n "$b" ] && printf '%s (%s× bare)' "$b" "$(ratio "$b" "$(of 2026-07-28 bare)")")"
done
for era in 2025-06-18 2026-07-28; do
  f="$(of "$era" wymcp)"; b="$(of "$era" bare)"; fl="$(of "$era" floor)"
  printf '| wymcp above the floor (%s) | %s instructions, %s %% of bare |\n' "$era" "$((f - fl))" \
    "$(awk -v d="$((f - fl))" -v b="$b" 'BEGIN {printf "%.1f", d * 100 / b}')"
done
t1="$(of 2025-06-18 wymcp "" "$out.tools")"; t2="$(of 2026-07-28 wymcp "" "$out.tools")"
printf '| wymcp among 1,000 tools of 10 actions | %s (%s× one tool) | %s (%s× one tool) |\n' \
  "$t1" "$(ratio "$t1" "$(of 2025-06-18 wymcp)")" "$t2" "$(ratio "$t2" "$(of 2026-07-28 wymcp)")"
i1="$(of 2025-06-18 wymcp "" "$out.idle")"
printf '| wymcp among 10,000 idle sessions | %s (%s× without) | no sessions |\n' "$i1" "$(ratio "$i1" "$(of 2025-06-18 wymcp)")"
for pad in 1024 65536 1048576; do
  printf '| a note of %s bytes: bare, floor, wymcp | %s, %s, %s (wymcp %s× bare; +%s per KiB over the call without) | |\n' "$pad" \
    "$(of 2025-06-18 bare "of $pad ")" "$(of 2025-06-18 floor "of $pad ")" "$(of 2025-06-18 wymcp "of $pad ")" \
    "$(ratio "$(of 2025-06-18 wymcp "of $pad ")" "$(of 2025-06-18 bare "of $pad ")")" \
    "$(awk -v w="$(of 2025-06-18 wymcp "of $pad ")" -v z="$(of 2025-06-18 wymcp)" -v p="$pad" 'BEGIN {printf "%.0f", (w - z) * 1024 / p}')"
done
cat "$out.scale"
grep -E '^(wymcp|rmcp) |^wymcp / rmcp' "$out.stdio"
cat "$out.help" "$out.runtime"
echo "took $(( $(date +%s) - started )) s"
