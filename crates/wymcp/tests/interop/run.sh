#!/usr/bin/env bash
# Interop: the official Python MCP SDK client against the streamable_http example.
# Creates its own venv (pip install mcp), starts the example on a free port, runs the client.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
venv="${MCP_INTEROP_VENV:-$root/target/mcp-interop-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet mcp
fi
cargo build --quiet -p wymcp --example streamable_http
log="$(mktemp)"
"$root/target/debug/examples/streamable_http" 127.0.0.1:0 >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  grep -q '^listening on ' "$log" && break
  sleep 0.1
done
addr="$(sed -n 's/^listening on //p' "$log")"
[ -n "$addr" ] || { cat "$log"; exit 1; }
"$venv/bin/python" "$here/python_client.py" "http://$addr/mcp"
