#!/usr/bin/env bash
# Interop: the official Python MCP SDK client against the streamable_http example, and against
# the context example over stdio (progress, logging, elicitation) and HTTP (sampling).
# Creates its own venv (pip install mcp), starts the examples on free ports, runs the clients.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
venv="${MCP_INTEROP_VENV:-$root/target/mcp-interop-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet mcp
fi
cargo build --quiet -p wymcp --example streamable_http --example context
pids=()
logs=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "${logs[@]}"' EXIT
# Starts an example serving HTTP on a free port; sets $addr to its address.
start_http() {
  local log
  log="$(mktemp)"
  logs+=("$log")
  "$@" >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    grep -q '^listening on ' "$log" && break
    sleep 0.1
  done
  addr="$(sed -n 's/^listening on //p' "$log")"
  [ -n "$addr" ] || { cat "$log" >&2; exit 1; }
}
start_http "$root/target/debug/examples/streamable_http" 127.0.0.1:0
"$venv/bin/python" "$here/python_client.py" "http://$addr/mcp"
"$venv/bin/python" "$here/python_context_client.py" stdio "$root/target/debug/examples/context"
start_http "$root/target/debug/examples/context" http 127.0.0.1:0
"$venv/bin/python" "$here/python_context_client.py" http "http://$addr/mcp"
