#!/usr/bin/env bash
# Instructions per `tools/call` (`calc` `add`) and per `tools/list` under callgrind in a
# session that registered N tools at runtime (`SessionHandle::register_tool`, each of 10
# actions: wymcp_calc with WYMCP_CALC_RUNTIME=1, whose tool `grow` registers them on the
# caller's session), for each N in RUNTIME (default `0 1 100 1000`), in the session era:
#
#   bash bench/http/runtime_tools.sh
#
# Also the instructions of registering the N tools (one `grow` call; per tool), and the
# server's VmRSS before and after it (per tool; a run outside callgrind). ROUNDS (default 200)
# calls and LIST_ROUNDS (default 20) lists per figure after 20 warm-up calls, on one
# kept-alive connection (python3's http.client); the server's instructions only. Needs
# valgrind. BIN_DIR, PROFILE, ALLOC, BUILD as for instructions.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUNTIME="${RUNTIME:-0 1 100 1000}"
ROUNDS="${ROUNDS:-200}"
LIST_ROUNDS="${LIST_ROUNDS:-20}"
command -v valgrind >/dev/null || { echo "runtime_tools.sh needs valgrind (Debian package)" >&2; exit 1; }
# shellcheck source=build.sh
source "$here/build.sh"
work="$(mktemp -d)"; pid=""; client_pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$client_pid" ] && kill "$client_pid" 2>/dev/null; rm -rf "$work"' EXIT

# The client, one session for its whole life: `python3 - URL FIFO` reads commands from FIFO
# (`grow N`, `call R`, `list R`, `quit`), answers each on stdout with one line when done.
client='
import http.client, json, sys, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
conn = http.client.HTTPConnection(url.hostname, url.port)
headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
def post(body, extra=()):
    h = dict(headers); h.update(extra)
    conn.request("POST", url.path, json.dumps(body), h)
    r = conn.getresponse(); text = r.read().decode()
    if r.getheader("content-type", "").startswith("text/event-stream"):
        text = "".join(l[5:] for l in text.splitlines() if l.startswith("data:"))
    return r, json.loads(text) if text.strip() else None
era = "2025-06-18"
r, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": era, "capabilities": {}, "clientInfo": {"name": "runtime_tools", "version": "0"}}})
extra = {"mcp-session-id": r.getheader("mcp-session-id"), "mcp-protocol-version": era}
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, extra)
def call(name, arguments):
    _, answer = post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}}, extra)
    result = answer["result"]
    assert not result.get("isError"), result
    return result
print("ready", flush=True)
for line in open(sys.argv[2]):
    command, n = (line.split() + ["0"])[:2]
    n = int(n)
    if command == "grow":
        out = call("grow", {"action": "add", "data": {"n": n}})["content"][0]["text"]
    elif command == "call":
        for _ in range(n):
            out = call("calc", {"action": "add", "data": {"a": 1, "b": 2}})["content"][0]["text"]
    elif command == "list":
        for _ in range(n):
            _, answer = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, extra)
        out = "%d tools" % len(answer["result"]["tools"])
    else:
        break
    print(out, flush=True)
'

# Counts between a zero and a dump of the server's callgrind counters.
counted() { # label, per, then the client command
  local label="$1" per="$2"; shift 2
  callgrind_control -z "$pid" >/dev/null 2>&1
  echo "$*" >&3
  read -r answer <&4
  callgrind_control -d "$pid" >/dev/null 2>&1
  sleep 0.5
  local total; total="$(for f in "$work"/cg.*.out.*; do sed -n 's/^totals: //p' "$f"; done | awk '{s += $1} END {print s}')"
  rm -f "$work"/cg.*.out.*
  printf '%5s runtime tools  %-9s %12.0f instructions per %s (%s)\n' "$n" "$label" \
    "$(awk -v t="$total" -v p="$per" 'BEGIN {print t / p}')" "$([ "$label" = register ] && echo tool || echo answer)" "$answer"
}

start() { # valgrind or not
  : >"$work/server.log"  # emptied here: the server's own redirect may come after the read below
  env WYMCP_CALC_RUNTIME=1 "$@" "$bin/wymcp_calc" 127.0.0.1:0 >"$work/server.log" 2>&1 &
  pid=$!
  addr=""
  for _ in $(seq 1 1200); do addr="$(sed -n 's/^listening on //p' "$work/server.log" | head -1)"; [ -n "$addr" ] && break; sleep 0.1; done
  [ -n "$addr" ] || { echo "wymcp_calc did not start" >&2; cat "$work/server.log" >&2; exit 1; }
  rm -f "$work/in" "$work/out"; mkfifo "$work/in" "$work/out"
  python3 -c "$client" "http://$addr/mcp" "$work/in" >"$work/out" &
  client_pid=$!
  # The reader of `out` first: the client opens it before it opens `in`.
  exec 4<"$work/out" 3>"$work/in"
  read -r _ <&4
}
stop() {
  echo quit >&3; exec 3>&- 4<&-
  wait "$client_pid" 2>/dev/null || true; client_pid=""
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  rm -f "$work"/cg.*
}
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }

for n in $RUNTIME; do
  start valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p.out"
  if [ "$n" -gt 0 ]; then counted register "$n" grow "$n"; fi
  echo "call 20" >&3; read -r _ <&4
  counted call "$ROUNDS" call "$ROUNDS"
  counted list "$LIST_ROUNDS" list "$LIST_ROUNDS"
  stop
  if [ "$n" -gt 0 ]; then
    start
    echo "call 20" >&3; read -r _ <&4
    before="$(rss)"; echo "grow $n" >&3; read -r _ <&4; after="$(rss)"
    printf '%5s runtime tools  VmRSS %s -> %s KiB: %.1f KiB per tool\n' "$n" "$before" "$after" \
      "$(awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN {print (a - b) / n}')"
    stop
  fi
done
