#!/usr/bin/env bash
# Runs every fuzz target (or those named) for a time each, one after the other, and prints per
# target its executions, coverage (libFuzzer's `cov` edges and `ft` features), corpus size and
# crashes. Needs a nightly toolchain and cargo-fuzz (docs/fuzzing.md).
#
#   fuzz/run.sh                  # 30 s per target
#   FUZZ_SECONDS=600 fuzz/run.sh # a campaign: 10 minutes per target
#   fuzz/run.sh templates gates  # only these
#   FUZZ_FORK=1 fuzz/run.sh      # keep going past a crash (libFuzzer's fork mode): a campaign
#
# Each run is bounded by -max_total_time (and every input by -timeout); the working corpus is
# fuzz/corpus/<target> (not in git), seeded from fuzz/seeds/<target>. Exit status 1 when any
# target crashed; the crashing inputs are in fuzz/artifacts/<target>/.
set -uo pipefail
cd "$(dirname "$0")"

SECONDS_EACH="${FUZZ_SECONDS:-30}"
TOOLCHAIN="${FUZZ_TOOLCHAIN:-nightly}"
TRIPLE="$(rustc "+$TOOLCHAIN" -vV | sed -n 's/^host: //p')"
BIN="target/$TRIPLE/release"
EXTRA=()
if [ "${FUZZ_FORK:-0}" = "1" ]; then
  EXTRA=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(http_session jsonrpc stdio_framing gates build_schema templates request_state
    openapi_loader jwt client_sse redis_records task_states)
fi
LOGS="${FUZZ_LOGS:-target/fuzz-logs}"
mkdir -p "$LOGS"

if ! cargo "+$TOOLCHAIN" fuzz --version >/dev/null 2>&1; then
  echo "fuzz/run.sh: needs cargo-fuzz on a $TOOLCHAIN toolchain (cargo install cargo-fuzz)" >&2
  exit 2
fi
# One build for every target: coverage-instrumented, debug assertions on, no sanitizer (safe
# Rust: ASan finds nothing the assertions do not, at a third of the speed).
if ! cargo "+$TOOLCHAIN" fuzz build -s none -a >"$LOGS/build.log" 2>&1; then
  tail -30 "$LOGS/build.log" >&2
  echo "fuzz/run.sh: the fuzz targets do not build" >&2
  exit 2
fi

failed=0
printf '%-14s %6s %12s %8s %8s %7s %8s\n' target secs execs exec/s cov ft crashes
for target in "${TARGETS[@]}"; do
  mkdir -p "corpus/$target" "seeds/$target" "artifacts/$target"
  log="$LOGS/$target.log"
  before=$(find "artifacts/$target" -type f | wc -l)
  # The binary cargo-fuzz built, run directly: bounded by -max_total_time, each input by
  # -timeout.
  "$BIN/$target" "corpus/$target" "seeds/$target" -max_total_time="$SECONDS_EACH" \
    -timeout=20 -rss_limit_mb=2048 -dict=mcp.dict -print_final_stats=1 -close_fd_mask=1 \
    -artifact_prefix="artifacts/$target/" "${EXTRA[@]}" >"$log" 2>&1
  status=$?
  after=$(find "artifacts/$target" -type f | wc -l)
  crashes=$((after - before))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  if [ -z "$execs" ]; then
    # Fork mode prints no final stats: its last status line counts the executions.
    execs=$(echo "$last" | grep -o '^#[0-9]*' | tr -d '#')
    rate=$(echo "$last" | grep -o 'exec/s: [0-9]*' | grep -o '[0-9]*')
  fi
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then
    crashes=1
  fi
  printf '%-14s %6s %12s %8s %8s %7s %8s\n' "$target" "$SECONDS_EACH" "${execs:-?}" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "$crashes"
  if [ "$crashes" -ne 0 ]; then
    failed=1
    grep -E 'panicked|SUMMARY|Test unit written' "$log" | head -5 >&2
  fi
done
exit "$failed"
