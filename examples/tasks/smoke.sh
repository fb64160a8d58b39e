#!/usr/bin/env bash
# Smoke test of the tasks example as a user runs it: builds it, starts it over Streamable HTTP
# on a free port and checks it answers initialize and tools/list, then does the same over
# stdio. Needs curl and python3. Run from anywhere: bash examples/tasks/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

# The target directory cargo really uses (CARGO_TARGET_DIR or a config file may move it).
target="$(cargo metadata --no-deps --format-version 1 | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"
# With `jwt`, as the other CI scripts build it: one build of the example for all of them.
cargo build -q -p wymcp-tasks --bin tasks --features jwt
bin="$target/debug/tasks"
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

# The Claude Desktop entry the banner prints, run exactly as printed: from /, as an unprivileged
# user (nobody, with a fresh HOME of its own and nothing else of this environment), so its data
# goes to that user's per-user data directory. Needs root (setpriv); the binary is copied to a
# directory everyone can read, and the entry printed by that copy is the one run.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
  public=$(mktemp -d)
  home=$(mktemp -d)
  trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data" "$log" "$public" "$home"' EXIT
  chmod 755 "$public"
  chown nobody "$home"
  cp "$bin" "$public/tasks"
  # The default data directory (no --data, no WYMCP_TASKS_DATA): the entry carries no --data.
  mkdir -p "$data/home"
  env -u WYMCP_TASKS_DATA HOME="$data/home" "$public/tasks" --port 0 2>"$log" &
  pid=$!
  entry=""
  for _ in $(seq 1 100); do
    entry=$(grep -o '{"mcpServers": {"tasks": {"command": "[^"]*", "args": \["--stdio"\]}}}' "$log" || true)
    [ -n "$entry" ] && break
    sleep 0.1
  done
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  [ -n "$entry" ] || { echo "no Claude Desktop entry for --stdio in the banner:"; cat "$log"; exit 1; }
  # The entry as a command line: command, then args.
  mapfile -t argv < <(python3 -c '
import json, sys
e = json.loads(sys.argv[1])["mcpServers"]["tasks"]
print(e["command"]); [print(a) for a in e["args"]]' "$entry")
  {
    echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}'
    echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    sleep 1
  } | (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups \
        env -i HOME="$home" PATH=/usr/bin:/bin "${argv[@]}" 2>"$log") \
    | python3 -c '
import json, sys
answers = {m.get("id"): m for m in map(json.loads, sys.stdin)}
names = [t["name"] for t in answers[2]["result"]["tools"]]
assert names == ["tasks", "projects", "search", "help"], names
' || { echo "the Desktop entry failed as nobody from /:"; cat "$log"; exit 1; }
  [ -f "$home/.local/share/wymcp-tasks/tasks.db" ] || { echo "no database in nobody's data directory"; exit 1; }
  echo "desktop entry: ${argv[*]} answered tools/list from / as nobody (database in its ~/.local/share/wymcp-tasks)"
else
  echo "desktop entry as an unprivileged user: skipped (needs root and setpriv)"
fi
