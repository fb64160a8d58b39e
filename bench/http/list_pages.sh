#!/usr/bin/env bash
# Instructions per `tools/list` answer under callgrind, among 1,002 tools (wymcp_calc with
# WYMCP_CALC_TOOLS=1000: 1,000 filler tools of 10 actions, `calc`, `help`), in both eras:
#
#   bash bench/http/list_pages.sh
#
# `full`: the unpaged list (the default, the contract's LIST-11); `atN`: a page of PER_PAGE
# (default 50) tools, wymcp_calc with WYMCP_CALC_TOOLS_PER_PAGE, starting at tool N for each N
# in PAGES (default `0 50 500 950`: the first page, which has no cursor, and three with one,
# each taken by following nextCursor before counting). Issue 46's "cost per page flat": the
# pages with a cursor must cost alike wherever they are. ROUNDS (default 200) answers per
# page figure, FULL_ROUNDS (default 20) of the full list, after 20 warm-up requests each, all on
# one kept-alive connection (python3's http.client); the server's instructions only (the client
# is another process). Needs valgrind. BIN_DIR, PROFILE, ALLOC, BUILD as for instructions.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PER_PAGE="${PER_PAGE:-50}"
ROUNDS="${ROUNDS:-200}"
FULL_ROUNDS="${FULL_ROUNDS:-20}"
PAGES="${PAGES:-0 50 500 950}"
command -v valgrind >/dev/null || { echo "list_pages.sh needs valgrind (Debian package)" >&2; exit 1; }
# shellcheck source=build.sh
source "$here/build.sh"
work="$(mktemp -d)"; pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

# The client: `python3 - URL ERA ROUNDS [AT | cursor=CURSOR]` lists ROUNDS times the page
# starting at tool AT (found by following nextCursor first) or at CURSOR; prints the tools per
# answer, or with ROUNDS 0 the cursor of tool AT. The cursor is found before callgrind's count
# is zeroed: counting the walk to it made a later page look dearer (about 7k instructions per
# page walked over 200 answers).
client='
import http.client, json, sys, urllib.parse
url, era, rounds = urllib.parse.urlparse(sys.argv[1]), sys.argv[2], int(sys.argv[3])
arg = sys.argv[4] if len(sys.argv) > 4 else "0"
cursor, at = (arg[len("cursor="):], 0) if arg.startswith("cursor=") else (None, int(arg))
conn = http.client.HTTPConnection(url.hostname, url.port)
headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
def post(body, extra=()):
    h = dict(headers); h.update(extra)
    conn.request("POST", url.path, json.dumps(body), h)
    r = conn.getresponse(); text = r.read().decode()
    if r.getheader("content-type", "").startswith("text/event-stream"):
        text = "".join(l[5:] for l in text.splitlines() if l.startswith("data:"))
    return r, json.loads(text) if text.strip() else None
if era == "2026-07-28":
    meta = {"io.modelcontextprotocol/protocolVersion": era,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "list_pages", "version": "0"}}
    extra = {"mcp-protocol-version": era, "mcp-method": "tools/list"}
else:
    r, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": era, "capabilities": {}, "clientInfo": {"name": "list_pages", "version": "0"}}})
    sid = r.getheader("mcp-session-id")
    extra = {"mcp-session-id": sid, "mcp-protocol-version": era}
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, extra)
    meta = None
def list_tools(cursor):
    params = {} if cursor is None else {"cursor": cursor}
    if meta: params["_meta"] = meta
    _, answer = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}, extra)
    return answer["result"]
seen = 0
while seen < at:
    result = list_tools(cursor); seen += len(result["tools"]); cursor = result["nextCursor"]
if rounds == 0:
    print(cursor); sys.exit(0)
for _ in range(rounds):
    result = list_tools(cursor)
print(len(result["tools"]))
'

measure() { # era, label, env, rounds, cursor_at
  local era="$1" label="$2" env="$3" rounds="$4" at="${5:-}"
  env WYMCP_CALC_TOOLS=1000 $env valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p.out" "$bin/wymcp_calc" 127.0.0.1:0 >"$work/server.log" 2>&1 &
  pid=$!
  local addr=""
  for _ in $(seq 1 1200); do addr="$(sed -n 's/^listening on //p' "$work/server.log" | head -1)"; [ -n "$addr" ] && break; sleep 0.1; done
  [ -n "$addr" ] || { echo "wymcp_calc did not start" >&2; cat "$work/server.log" >&2; exit 1; }
  local url="http://$addr/mcp"
  [ -z "$at" ] || [ "$at" = 0 ] || at="cursor=$(python3 -c "$client" "$url" "$era" 0 "$at")"
  python3 -c "$client" "$url" "$era" 20 $at >/dev/null
  callgrind_control -z "$pid" >/dev/null 2>&1
  local tools; tools="$(python3 -c "$client" "$url" "$era" "$rounds" $at)"
  callgrind_control -d "$pid" >/dev/null 2>&1
  sleep 0.5
  local total; total="$(for f in "$work"/cg.*.out.*; do sed -n 's/^totals: //p' "$f"; done | awk '{s += $1} END {print s}')"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  rm -f "$work"/cg.*
  printf '%-10s %-6s %5s tools %12.0f instructions per answer\n' "$era" "$label" "$tools" "$(awk -v t="$total" -v n="$rounds" 'BEGIN {print t / n}')"
}

# A session's list answers are its session's (the tool list of the handle); the stateless
# era's the server's.
for era in 2025-06-18 2026-07-28; do
  measure "$era" full "" "$FULL_ROUNDS"
  for at in $PAGES; do
    measure "$era" "at$at" "WYMCP_CALC_TOOLS_PER_PAGE=$PER_PAGE" "$ROUNDS" "$at"
  done
done
