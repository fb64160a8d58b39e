"""Interop check of the shortest forms: the official Python MCP SDK client against the `notes`
example over stdio (an `#[wymcp::tool]` action tool, a `#[wymcp::plain_tool]` with an output
schema, a `#[wymcp::prompt]`, a resource).

Usage: python_notes_client.py <path to the notes example binary>
Exits non-zero on any mismatch.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client


def field(obj, snake, camel):
    """Reads a field under the SDK 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


async def run(command: str) -> None:
    async with stdio_client(StdioServerParameters(command=command, args=["--stdio"])) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert sorted(tools) == ["help", "notes", "tag_counts"], sorted(tools)
            output = field(tools["tag_counts"], "output_schema", "outputSchema")
            assert output["type"] == "object", output

            added = await session.call_tool(
                "notes", {"action": "add", "data": {"text": "Buy milk", "tags": ["errands"]}}
            )
            assert not field(added, "is_error", "isError"), added
            assert json.loads(added.content[0].text) == {
                "id": 1, "text": "Buy milk", "tags": ["errands"]
            }, added

            counted = await session.call_tool("tag_counts", {})
            structured = field(counted, "structured_content", "structuredContent")
            assert structured == {"errands": 1}, counted

            refused = await session.call_tool("notes", {"action": "list", "data": {"limit": 256}})
            assert field(refused, "is_error", "isError"), refused
            assert json.loads(refused.content[0].text)["error"] == "invalid_values", refused

            prompt = await session.get_prompt("summarize", {"tag": "errands"})
            assert '"errands"' in prompt.messages[0].content.text, prompt

            guide = await session.read_resource("notes://guide")
            assert guide.contents[0].text.startswith("Tag notes"), guide
    print("python interop (stdio: the notes example's shortest forms): ok")


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
