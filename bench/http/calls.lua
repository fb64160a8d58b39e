-- wrk script: tools/call calc add {a:1,b:2}, each request with a fresh JSON-RPC id. The
-- arguments after `--`: the file of session ids to rotate over (`-`: none), then the protocol
-- revision the calls speak (byte for byte the calls of `mcpload`):
--   2025-06-18 (the default): the session era, `MCP-Protocol-Version` and `Mcp-Session-Id`;
--   2026-07-28: the stateless era, no session; `params._meta` carries the envelope
--     (protocolVersion, clientCapabilities, clientInfo) and the headers `Mcp-Method` and
--     `Mcp-Name` repeat the body's method and tool name, as that revision requires.
local sessions = {}
local n = 0
local revision = "2025-06-18"

function init(args)
  if args[1] and args[1] ~= "-" then
    for line in io.lines(args[1]) do
      if #line > 0 then sessions[#sessions + 1] = line end
    end
  end
  if args[2] then revision = args[2] end
  if revision ~= "2025-06-18" and revision ~= "2026-07-28" then
    error("revision must be 2025-06-18 or 2026-07-28, not " .. revision)
  end
end

local base = {
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/json, text/event-stream",
}

local arguments = '"name":"calc","arguments":{"action":"add","data":{"a":1,"b":2}}'
local envelope = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
  '"io.modelcontextprotocol/clientCapabilities":{},' ..
  '"io.modelcontextprotocol/clientInfo":{"name":"mcpload","version":"1.0"}}'

function request()
  n = n + 1
  local headers = {}
  for k, v in pairs(base) do headers[k] = v end
  headers["MCP-Protocol-Version"] = revision
  local params = arguments
  if revision == "2026-07-28" then
    headers["Mcp-Method"] = "tools/call"
    headers["Mcp-Name"] = "calc"
    params = params .. envelope
  end
  if #sessions > 0 then headers["Mcp-Session-Id"] = sessions[(n % #sessions) + 1] end
  local body = '{"jsonrpc":"2.0","id":' .. n .. ',"method":"tools/call","params":{' .. params .. '}}'
  return wrk.format("POST", "/mcp", headers, body)
end

-- Any answer without the sum (plain, or escaped inside a text block) counts as an error (wrk prints it as non-2xx when the status is
-- not 2xx; a 200 without "sum":3 is counted here).
bad = 0
local threads = {}
function setup(thread) threads[#threads + 1] = thread end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, 'sum\\?":3') then bad = bad + 1 end
end

function done(summary, latency, requests)
  local wrong = 0
  for _, t in ipairs(threads) do wrong = wrong + t:get("bad") end
  io.write(string.format("RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d errors=%d non2xx=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout + wrong, summary.errors.status))
end
