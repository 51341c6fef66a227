"""A hostile model through the bridges: malformed, non-object, deeply nested and oversized
arguments, sent through each framework's own tool entry point, are answered with a message
and change nothing; nothing raises and nothing stays held."""

from __future__ import annotations

import asyncio
import json

import llm
import pytest
from agents.tool_context import ToolContext

from haversack.bridges.llm import tools as llm_tools
from haversack.bridges.openai_agents import function_tools
from haversack.testing import fingerprint

from ._kit import executor

HOSTILE_TEXT = [
    "{not json",
    "[1, 2]",
    "null",
    '"a string"',
    "1e999999",
    '{"path": "a\\ud800"}',
    "[" * 50_000 + "]" * 50_000,
    json.dumps({"path": "x" * 1_000_000, "content": "y"}),
    json.dumps({"path": "../../etc/passwd", "content": "y"}),
    json.dumps({"path": "a.md", "content": "y", "unknown": 1}),
]
TOOLS = ("write_file", "edit_file", "rm", "read_file", "scribble")


@pytest.mark.parametrize("name", TOOLS)
def test_agents_sdk_tools_answer_hostile_arguments(name):
    with executor() as ex:
        tool = {t.name: t for t in function_tools(ex)}[name]
        before = fingerprint(ex.session, ex.resources)
        for index, text in enumerate(HOSTILE_TEXT):
            context = ToolContext(
                context=None, tool_name=name, tool_call_id=f"h{index}", tool_arguments=text
            )
            output = asyncio.run(tool.on_invoke_tool(context, text))
            assert isinstance(output, str)
            assert output.strip(), (name, text[:40])
        assert ex.pending == ()
        # The refused calls changed nothing: no file, no policy state.
        assert not before.differences(fingerprint(ex.session, ex.resources))


@pytest.mark.parametrize("name", TOOLS)
def test_llm_tools_answer_hostile_arguments(name):
    with executor() as ex:
        tool = {t.name: t for t in llm_tools(ex)}[name]
        before = fingerprint(ex.session, ex.resources)
        for index, text in enumerate(HOSTILE_TEXT):
            try:
                arguments = json.loads(text)
            except (ValueError, RecursionError):
                arguments = {"raw": text}
            call = llm.ToolCall(name=name, arguments=arguments, tool_call_id=f"h{index}")
            output = tool.implementation(llm_tool_call=call)
            assert isinstance(output, str)
            assert output.strip(), (name, text[:40])
        assert ex.pending == ()
        assert not before.differences(fingerprint(ex.session, ex.resources))
