"""Interop check: the official Python MCP SDK client (mcp >= 2.0) in its default mode against
the tasks example, compared with the same client forced into the session era.

Usage: python_modern_client.py http://127.0.0.1:PORT/mcp

`Client(url)` with no `mode` is the SDK's default, "auto": it probes `server/discover` at
2026-07-28 and falls back to `initialize` only when the server is not a 2026-07-28 server.
The script creates a task in the session era (`mode="legacy"`, the `initialize` handshake),
then reads it back and sends one refused call in both eras, and asserts:

* the legacy client negotiated 2025-11-25, the default client 2026-07-28 (the client's own
  state: `Client.protocol_version`, and the `server/discover` result it holds);
* both eras give the same answer to the same action, and the same gate refusal.

Exits non-zero on any mismatch.
"""

import asyncio
import json
import sys

from mcp import Client

TITLE = "Write the interop report"


def text_of(result) -> str:
    assert len(result.content) == 1, result
    return result.content[0].text


async def same_calls(client: Client, task_id: int) -> dict:
    """The calls made in both eras: the tool list, one action, one gate refusal."""
    tools = await client.list_tools()
    got = await client.call_tool("tasks", {"action": "get", "data": {"id": task_id}})
    assert not got.is_error, got
    refused = await client.call_tool("tasks", {"action": "get", "data": {"id": task_id, "idd": 1}})
    assert refused.is_error, refused
    return {
        "tools": [t.name for t in tools.tools],
        "get": text_of(got),
        "refused": text_of(refused),
    }


async def main(url: str) -> None:
    async with Client(url, mode="legacy") as legacy:
        assert legacy.protocol_version == "2025-11-25", legacy.protocol_version
        assert legacy.session.discover_result is None
        created = await legacy.call_tool("tasks", {"action": "create", "data": {"title": TITLE}})
        assert not created.is_error, created
        task_id = json.loads(text_of(created))["id"]
        session_era = await same_calls(legacy, task_id)

    async with Client(url) as default:  # the SDK's default mode: tries 2026-07-28 first
        assert default.protocol_version == "2026-07-28", default.protocol_version
        discovered = default.session.discover_result
        assert discovered is not None and "2026-07-28" in discovered.supported_versions, discovered
        assert default.server_info is not None and default.server_info.name == "wymcp-tasks"
        stateless_era = await same_calls(default, task_id)

    assert session_era["tools"] == ["tasks", "projects", "search", "help"], session_era
    assert TITLE in session_era["get"], session_era
    assert json.loads(session_era["refused"])["error"] == "unknown_params", session_era
    for key in ("tools", "get", "refused"):
        assert session_era[key] == stateless_era[key], (key, session_era[key], stateless_era[key])
    print(
        "python interop (mcp default mode): 2026-07-28 negotiated; "
        "tasks get and its refusal answer as in 2025-11-25"
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
