"""The MCP server driven over stdio by the official ``mcp`` client."""

from __future__ import annotations

import sys
import textwrap

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

SERVER_SCRIPT = textwrap.dedent(
    """
    import asyncio
    from dataclasses import dataclass, field

    from haversack import (
        MarkdownSection, Prompt, SequentialDependencyPolicy, Tool, ToolAnnotations,
        ToolContext, ToolResult,
    )
    from haversack.server import serve_stdio

    @dataclass(frozen=True)
    class Note:
        text: str

    @dataclass(frozen=True)
    class AddParams:
        text: str = field(metadata={"description": "The note."})

    @dataclass(frozen=True)
    class Count:
        notes: int

    def add(params: AddParams, *, context: ToolContext) -> ToolResult[Count]:
        context.session[Note].append(Note(params.text))
        if params.text == "boom":
            raise RuntimeError("exploded after writing")
        return ToolResult.ok(Count(len(context.session[Note].all())), message="added")

    def count(params: None, *, context: ToolContext) -> ToolResult[Count]:
        return ToolResult.ok(Count(len(context.session[Note].all())), message="counted")

    def publish(params: None, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult.ok(None, message="published")

    section = MarkdownSection(
        title="Notes",
        key="notes",
        template="Add notes with ${tool:add}, then publish.",
        tools=[
            Tool[AddParams, Count](name="add", description="Add a note.", handler=add),
            Tool[None, Count](
                name="count", description="Count notes.", handler=count,
                annotations=ToolAnnotations(read_only=True),
            ),
            Tool[None, None](name="publish", description="Publish notes.", handler=publish),
        ],
        policies=[SequentialDependencyPolicy({"publish": {"add"}})],
    )
    asyncio.run(serve_stdio(Prompt(ns="tests", key="notes", sections=[section])))
    """
)


def _texts(result):
    return [block.text for block in result.content]


def test_mcp_client_lists_calls_and_sees_denials_and_rollbacks(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(SERVER_SCRIPT)
    params = StdioServerParameters(command=sys.executable, args=[str(script)])

    async def scenario():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            init = await client.initialize()
            assert "Add notes with add, then publish." in (init.instructions or "")
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == {"add", "count", "publish"}
            assert tools["count"].annotations.read_only_hint is True
            assert tools["add"].input_schema["properties"]["text"]["description"] == "The note."

            denied = await client.call_tool("publish", {})
            assert denied.is_error
            assert "Denied by policy 'sequential-dependency'" in _texts(denied)[0]

            ok = await client.call_tool("add", {"text": "first"})
            assert not ok.is_error
            assert _texts(ok) == ['added\n{"notes":1}']

            failed = await client.call_tool("add", {"text": "boom"})
            assert failed.is_error
            assert "exploded after writing" in _texts(failed)[0]
            # The failed call's note was rolled back.
            counted = await client.call_tool("count", {})
            assert _texts(counted) == ['counted\n{"notes":1}']

            invalid = await client.call_tool("add", {"text": 3})
            assert invalid.is_error
            assert "field 'text'" in _texts(invalid)[0]
            # An unknown tool is a JSON-RPC error (-32602), not a tool result (issue 25).
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("nope", {})
            assert unknown.value.code == -32602
            assert "Unknown tool: 'nope'. Available tools: add, count, publish" in str(
                unknown.value.error.message
            )

            published = await client.call_tool("publish", {})
            assert not published.is_error

            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == ["tests/notes"]
            got = await client.get_prompt("tests/notes")
            assert "## 1. Notes" in got.messages[0].content.text

    anyio.run(scenario)
