"""Interop check: the official Python MCP SDK client (mcp 2.3.0, 2026-07-28) drives tasks and
lists skills of the conformance fixture through the SDK's client extension API.

Usage: python_extensions_client.py http://127.0.0.1:PORT/mcp

mcp 2.3.0 ships no client for the tasks extension (SEP-2663; its task types are the 2025-11-25
ones) nor for skills (SEP-2640), but it has the interface extensions plug into: a `ClientExtension` advertised under
`capabilities.extensions`, whose `ResultClaim` takes over a `tools/call` answered with
`resultType: "task"`, and custom requests (`Request` with `name_param`, which the SDK mirrors
into `Mcp-Name`). Written here in about 60 lines, it turns a task into the call's result, and
answers the elicitation a task parks on with the client's own elicitation callback. The script
asserts:

* `slow_compute` (a task when the client declares the extension) returns its result through
  `call_tool`, the task polled to `completed` on the way;
* `confirm_delete` parks as `input_required`; the extension answers its `inputRequests` with
  `tasks/update`, and the result shows the answer;
* without the extension, `slow_compute` answers at once and `failing_job` (task required) is
  refused `-32021`;
* `skills/list` (the skills extension advertised with the SDK's `advertise`) names the
  fixture's skills, and the SDK's `read_resource` reads a `skill://` resource it lists.

Exits non-zero on any mismatch.
"""

import asyncio
import sys
from typing import Any, Literal

from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim, advertise
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, Request, RequestParams, Result
from pydantic import ConfigDict, TypeAdapter

TASKS = "io.modelcontextprotocol/tasks"


class CreateTaskResult(Result):
    """The task handle a `tools/call` may answer (SEP-2663)."""

    result_type: Literal["task"]
    task_id: str
    status: str


class TaskParams(RequestParams):
    task_id: str
    input_responses: dict[str, Any] | None = None


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    name_param = "taskId"
    method: Literal["tasks/get"] = "tasks/get"


class UpdateTask(Request[TaskParams, Literal["tasks/update"]]):
    name_param = "taskId"
    method: Literal["tasks/update"] = "tasks/update"


class DetailedTask(Result):
    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class Ack(Result):
    model_config = ConfigDict(extra="allow")


class ListSkills(Request[RequestParams | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: RequestParams | None = None


class SkillsResult(Result):
    model_config = ConfigDict(extra="allow")
    skills: list[dict[str, Any]]


async def on_elicit(_context, params: ElicitRequestParams) -> ElicitResult:
    """The user: confirms whatever is asked."""
    assert params.message == "Delete the file?", params
    return ElicitResult(action="accept", content={"confirm": True})


class Tasks(ClientExtension):
    """Polls a task to its end, answering its elicitations with `elicit`."""

    identifier = TASKS

    def __init__(self, elicit) -> None:
        self.elicit = elicit
        self.seen: list[str] = []

    async def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        assert request["method"] == "elicitation/create", request
        params = TypeAdapter(ElicitRequestParams).validate_python(request["params"])
        result = await self.elicit(None, params)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]

    async def resolve(self, handle: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
        params = TaskParams(task_id=handle.task_id)
        for _ in range(200):
            task = await ctx.session.send_request(GetTask(params=params), DetailedTask)
            if not self.seen or self.seen[-1] != task.status:
                self.seen.append(task.status)
            if task.status == "completed":
                return CallToolResult.model_validate(task.result)
            if task.status in ("failed", "cancelled"):
                raise RuntimeError(f"task {task.status}: {task.error}")
            if task.status == "input_required":
                answers = {key: await self.answer(r) for key, r in task.input_requests.items()}
                update = TaskParams(task_id=handle.task_id, input_responses=answers)
                await ctx.session.send_request(UpdateTask(params=update), Ack)
            await asyncio.sleep(0.05)
        raise RuntimeError("the task did not end")


async def main(url: str) -> None:
    tasks = Tasks(on_elicit)
    async with Client(url, extensions=[tasks], elicitation_callback=on_elicit) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        assert TASKS in (client.server_capabilities.extensions or {}), client.server_capabilities
        computed = await client.call_tool("slow_compute", {"seconds": 0.3})
        assert computed.content[0].text == "Computed after 0.3 s", computed
        assert tasks.seen[-1] == "completed" and "working" in tasks.seen, tasks.seen
        tasks.seen.clear()
        confirmed = await client.call_tool("confirm_delete", {"filename": "a.txt"})
        text = confirmed.content[0].text
        assert text.startswith("answered: ") and '"confirm":true' in text, text
        assert "input_required" in tasks.seen and tasks.seen[-1] == "completed", tasks.seen
    async with Client(url, extensions=[advertise("io.modelcontextprotocol/skills")]) as client:
        listed = await client.session.send_request(ListSkills(), SkillsResult)
        names = sorted(s["frontmatter"]["name"] for s in listed.skills)
        assert names == ["code-review", "refunds"], names
        uri = next(r["uri"] for s in listed.skills for r in s["resources"] if r["uri"].endswith("SKILL.md"))
        read = await client.read_resource(uri)
        assert "name:" in read.contents[0].text, read
    async with Client(url) as plain:
        at_once = await plain.call_tool("slow_compute", {"seconds": 0})
        assert at_once.content[0].text == "Computed after 0 s", at_once
        try:
            await plain.call_tool("failing_job", {})
        except MCPError as err:
            assert err.error.code == -32021, err.error
        else:
            raise AssertionError("failing_job without the extension was not refused")
    print("python extensions client: tasks driven and skills listed through the SDK's extension API; refusal without it")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
