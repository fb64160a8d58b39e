"""Interop check: the official Python MCP SDK client against a wymcp Streamable HTTP server.

Usage: python_client.py http://127.0.0.1:PORT/mcp
Initializes, lists tools, calls an action (success and a gate refusal), pings; exits non-zero
on any mismatch.
"""

import asyncio
import sys

from mcp import ClientSession

try:  # SDK 2.x
    from mcp.client.streamable_http import streamable_http_client as connect
except ImportError:  # SDK 1.x
    from mcp.client.streamable_http import streamablehttp_client as connect


def field(obj, snake, camel):
    """Reads a field under the SDK 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


async def main(url: str) -> None:
    async with connect(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert field(init, "server_info", "serverInfo").name == "wymcp-example", init
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            assert names == ["greeter", "help"], names
            ok = await session.call_tool("greeter", {"action": "greet", "data": {"name": "Ada"}})
            assert not field(ok, "is_error", "isError"), ok
            assert "Hello, Ada!" in ok.content[0].text, ok
            refused = await session.call_tool("greeter", {"action": "greet", "data": {"nmae": "Ada"}})
            assert field(refused, "is_error", "isError"), refused
            await session.send_ping()
    print("python interop: ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
