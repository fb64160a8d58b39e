#!/usr/bin/env bash
# Smoke test of the tasks example as a user runs it: builds it, starts it over Streamable HTTP
# on a free port and checks it answers initialize and tools/list, then does the same over
# stdio. Needs curl and python3. Run from anywhere: bash crates/wymcp/examples/tasks/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/../../../.."

cargo build -q -p wymcp --example tasks
bin=target/debug/examples/tasks
data=$(mktemp -d)
log=$(mktemp)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data" "$log"' EXIT

# HTTP: port 0 picks a free port; the banner (stderr) says which.
WYMCP_TASKS_DATA="$data" "$bin" --port 0 2>"$log" &
pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$log" | head -n1 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "the example did not start:"; cat "$log"; exit 1; }

headers=$(mktemp)
curl -sS -D "$headers" "$url" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}' \
  | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["result"]["serverInfo"]["name"]=="wymcp-tasks", r'
session=$(grep -i '^mcp-session-id:' "$headers" | cut -d' ' -f2 | tr -d '\r')
rm -f "$headers"
call() {
  curl -sS "$url" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $session" -H 'MCP-Protocol-Version: 2025-11-25' -d "$1"
}
call '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
call '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  | python3 -c 'import json,sys; r=json.load(sys.stdin); n=[t["name"] for t in r["result"]["tools"]]; assert n==["tasks","projects","search","help"], n'
echo "http: initialize and tools/list answered at $url"
kill "$pid"
wait "$pid" 2>/dev/null || true

# stdio: keep stdin open a moment so the answers are written before end of input.
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
  sleep 1
} | WYMCP_TASKS_DATA="$data" "$bin" --stdio 2>/dev/null \
  | python3 -c '
import json, sys
answers = {m.get("id"): m for m in map(json.loads, sys.stdin)}
assert answers[1]["result"]["serverInfo"]["name"] == "wymcp-tasks", answers
names = [t["name"] for t in answers[2]["result"]["tools"]]
assert names == ["tasks", "projects", "search", "help"], names
'
echo "stdio: initialize and tools/list answered"
