#!/usr/bin/env bash
# Interop: the official Python MCP SDK client against the streamable_http example, against
# the context example over stdio (progress, logging, elicitation) and HTTP (sampling), and in
# its default mode (2026-07-28 first, mcp 2.3.0) against the tasks example, compared with the
# session era, and behind JWT auth with a bearer token (python_auth_client.py plays the
# identity provider); against the notes example (the shortest forms) over stdio; and against the
# conformance fixture, driving tasks (SEP-2663) and listing skills (SEP-2640) through the SDK's
# client extension API (python_extensions_client.py: mcp 2.3.0 has no client of its own for
# either). Creates its own
# venv in the target directory (pip install mcp==2.3.0), starts the examples on free ports,
# runs the clients.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
cd "$root"
# The target directory cargo really uses (CARGO_TARGET_DIR or a config file may move it).
target="$(cargo metadata --no-deps --format-version 1 | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"
venv="${MCP_INTEROP_VENV:-$target/mcp-interop-venv}"
# Pinned: mcp 2.0.0 is the first stable release whose default mode speaks 2026-07-28; this is
# the release these clients were last run against.
sdk_version='2.3.0'
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/pip" show mcp 2>/dev/null | grep -qx "Version: $sdk_version"; then
  timeout 600 "$venv/bin/pip" install --quiet "mcp==$sdk_version"
fi
cargo build --quiet -p wymcp --example streamable_http --example context --example conformance
cargo build --quiet -p wymcp-notes --bin notes
# `jwt`: python_auth_client.py drives the example behind JWT auth.
cargo build --quiet -p wymcp-tasks --bin tasks --features jwt
pids=()
logs=()
data="$(mktemp -d)"
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "${logs[@]}"; rm -rf "$data"' EXIT
# Starts an example serving HTTP on a free port (wymcp::run's --port 0); sets $addr to the
# address its banner names.
start_http() {
  local log
  log="$(mktemp)"
  logs+=("$log")
  "$@" >"$log" 2>&1 &
  pids+=($!)
  addr=""
  for _ in $(seq 1 100); do
    # wymcp::run's banner names `http://127.0.0.1:PORT/mcp`; the fixture says `listening on …`.
    addr="$(grep -oE 'http://127.0.0.1:[0-9]+/mcp|^listening on 127.0.0.1:[0-9]+' "$log" | head -n 1 |
      sed 's#^http://##; s#/mcp$##; s#^listening on ##' || true)"
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { cat "$log" >&2; exit 1; }
}
start_http "$target/debug/examples/streamable_http" --port 0
"$venv/bin/python" "$here/python_client.py" "http://$addr/mcp"
"$venv/bin/python" "$here/python_context_client.py" stdio "$target/debug/examples/context"
"$venv/bin/python" "$here/python_notes_client.py" "$target/debug/notes"
start_http "$target/debug/examples/context" --port 0
"$venv/bin/python" "$here/python_context_client.py" http "http://$addr/mcp"
# The tasks example, with a data directory of its own.
start_http env WYMCP_TASKS_DATA="$data" "$target/debug/tasks" --port 0
timeout 300 "$venv/bin/python" "$here/python_modern_client.py" "http://$addr/mcp"
# The tasks example behind JWT auth (it starts the example itself, with its own JWKS).
timeout 300 "$venv/bin/python" "$here/python_auth_client.py" "$target/debug/tasks"
# The conformance fixture (port 0), for the extensions client.
start_http "$target/debug/examples/conformance" 0
timeout 120 "$venv/bin/python" "$here/python_extensions_client.py" "http://$addr/mcp"
