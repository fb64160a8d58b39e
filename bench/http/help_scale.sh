#!/usr/bin/env bash
# Instructions per `help` answer under callgrind, and the answer's size, on one tool of 10,
# 100 and 1,000 actions (wymcp_calc with WYMCP_CALC_TOOLS=1 and WYMCP_CALC_ACTIONS=N: the
# tool `filler0`, whose actions `a0` ... each take one optional string), in the session era:
#
#   bash bench/http/help_scale.sh
#
# Three answers per size: `index` (`help {}`: every tool with its actions' summaries), `tool`
# (`help {"tool": "filler0"}`: every action in full) and `action` (`help {"tool": "filler0",
# "action": "a<N-1>"}`: the last action). ACTIONS (default `10 100 1000`) the sizes, ROUNDS
# (default 100) answers per figure after 10 warm-up answers, on one kept-alive connection
# (python3's http.client); the server's instructions only (the client is another process).
# Bytes: the `tools/call` answer's JSON-RPC message. Needs valgrind. BIN_DIR, PROFILE, ALLOC,
# BUILD as for instructions.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ACTIONS="${ACTIONS:-10 100 1000}"
ROUNDS="${ROUNDS:-100}"
command -v valgrind >/dev/null || { echo "help_scale.sh needs valgrind (Debian package)" >&2; exit 1; }
# shellcheck source=build.sh
source "$here/build.sh"
work="$(mktemp -d)"; pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

# The client: `python3 - URL ROUNDS ARGUMENTS` calls help ROUNDS times with ARGUMENTS (JSON)
# in one session; prints the last answer's size in bytes and whether it was an error.
client='
import http.client, json, sys, urllib.parse
url, rounds, arguments = urllib.parse.urlparse(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
conn = http.client.HTTPConnection(url.hostname, url.port)
headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
def post(body, extra=()):
    h = dict(headers); h.update(extra)
    conn.request("POST", url.path, json.dumps(body), h)
    r = conn.getresponse(); text = r.read().decode()
    if r.getheader("content-type", "").startswith("text/event-stream"):
        text = "".join(l[5:] for l in text.splitlines() if l.startswith("data:"))
    return r, text
era = "2025-06-18"
r, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": era, "capabilities": {}, "clientInfo": {"name": "help_scale", "version": "0"}}})
extra = {"mcp-session-id": r.getheader("mcp-session-id"), "mcp-protocol-version": era}
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, extra)
for _ in range(rounds):
    _, text = post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "help", "arguments": arguments}}, extra)
answer = json.loads(text)["result"]
print(len(text.encode()), "error" if answer.get("isError") else "ok")
'

for n in $ACTIONS; do
  : >"$work/server.log"  # emptied here: the server's own redirect may come after the read below
  env WYMCP_CALC_TOOLS=1 WYMCP_CALC_ACTIONS="$n" valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p.out" "$bin/wymcp_calc" 127.0.0.1:0 >"$work/server.log" 2>&1 &
  pid=$!
  addr=""
  for _ in $(seq 1 1200); do addr="$(sed -n 's/^listening on //p' "$work/server.log" | head -1)"; [ -n "$addr" ] && break; sleep 0.1; done
  [ -n "$addr" ] || { echo "wymcp_calc did not start" >&2; cat "$work/server.log" >&2; exit 1; }
  url="http://$addr/mcp"
  for level in index tool action; do
    case "$level" in
      index) arguments='{}' ;;
      tool) arguments='{"tool": "filler0"}' ;;
      action) arguments="{\"tool\": \"filler0\", \"action\": \"a$((n - 1))\"}" ;;
    esac
    python3 -c "$client" "$url" 10 "$arguments" >/dev/null
    callgrind_control -z "$pid" >/dev/null 2>&1
    read -r bytes status < <(python3 -c "$client" "$url" "$ROUNDS" "$arguments")
    callgrind_control -d "$pid" >/dev/null 2>&1
    sleep 0.5
    total="$(for f in "$work"/cg.*.out.*; do sed -n 's/^totals: //p' "$f"; done | awk '{s += $1} END {print s}')"
    rm -f "$work"/cg.*.out.*
    # The measured client opens its own session: its `initialize` is counted once, spread
    # over the ROUNDS answers.
    printf 'help %-6s %5s actions %12.0f instructions per answer %9s bytes (%s)\n' "$level" "$n" \
      "$(awk -v t="$total" -v r="$ROUNDS" 'BEGIN {print t / r}')" "$bytes" "$status"
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  rm -f "$work"/cg.*
done
