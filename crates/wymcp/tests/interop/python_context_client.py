"""Interop check of the tool context: the official Python MCP SDK client against the `context`
example.

Usage:
  python_context_client.py stdio <path to the context example binary>
      spawns the server over stdio, calls `deploy run`: the server reports progress, logs, and
      elicits the branch; this client answers the elicitation.
  python_context_client.py http http://127.0.0.1:PORT/mcp
      calls `deploy summarize`: the server asks this client's "model" (sampling) for a summary.
Exits non-zero on any mismatch.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client, types

try:  # SDK 2.x
    from mcp.client.streamable_http import streamable_http_client as http_connect
except ImportError:  # SDK 1.x
    from mcp.client.streamable_http import streamablehttp_client as http_connect


def field(obj, snake, camel):
    """Reads a field under the SDK 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def body(result):
    """The JSON a wymcp tool answered (its first text content)."""
    assert not field(result, "is_error", "isError"), result
    return json.loads(result.content[0].text)


async def run_stdio(command: str) -> None:
    seen = {"progress": [], "logs": [], "elicitations": []}

    async def on_progress(progress, total, message):
        seen["progress"].append((progress, total, message))

    async def on_log(params):
        seen["logs"].append(params.data)

    async def on_elicit(context, params):
        seen["elicitations"].append(params.message)
        return types.ElicitResult.model_validate({"action": "accept", "content": {"branch": "main"}})

    server = StdioServerParameters(command=command, args=["--stdio"])
    async with stdio_client(server) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(
            read, write, elicitation_callback=on_elicit, logging_callback=on_log
        ) as session:
            await session.initialize()
            result = await session.call_tool(
                "deploy",
                {"action": "run", "data": {"service": "api"}},
                progress_callback=on_progress,
            )
            answer = body(result)
            assert answer["deployed"] == "api" and answer["branch"] == "main", answer
    assert seen["elicitations"] == ["Which branch of api?"], seen
    assert seen["logs"] == ["deploying api"], seen
    assert [p[0] for p in seen["progress"]] == [1.0, 3.0], seen
    print("python interop (stdio: progress, logging, elicitation): ok")


async def run_http(url: str) -> None:
    prompts = []

    async def on_sample(context, params):
        prompts.append(params.messages[0].content.text)
        return types.CreateMessageResult.model_validate(
            {
                "role": "assistant",
                "content": {"type": "text", "text": "A short summary."},
                "model": "interop-model",
                "stopReason": "endTurn",
            }
        )

    async with http_connect(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, sampling_callback=on_sample) as session:
            await session.initialize()
            result = await session.call_tool(
                "deploy", {"action": "summarize", "data": {"text": "a long text"}}
            )
            answer = body(result)
            assert answer == {"summary": "A short summary.", "model": "interop-model"}, answer
    assert prompts == ["Summarize: a long text"], prompts
    print("python interop (http: sampling): ok")


if __name__ == "__main__":
    mode, target = sys.argv[1], sys.argv[2]
    asyncio.run(run_stdio(target) if mode == "stdio" else run_http(target))
