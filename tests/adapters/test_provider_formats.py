"""Provider formats checked against the official SDKs' own types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest
from pydantic import TypeAdapter

from haversack import (
    MarkdownSection,
    Prompt,
    Session,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolExecutor,
    ToolResult,
)
from haversack.adapters import anthropic, mcp, openai


@dataclass(frozen=True)
class Inner:
    level: int = field(metadata={"description": "How deep."})


@dataclass(frozen=True)
class Params:
    path: str = field(metadata={"description": "File to read."})
    mode: Literal["fast", "slow"] = field(default="fast", metadata={"description": "Speed."})
    inner: Inner | None = None


@dataclass(frozen=True)
class Out:
    size: int


def handler(params: Params, *, context: ToolContext) -> ToolResult[Out]:
    if params.path == "missing":
        return ToolResult.error("No such file: missing.")
    return ToolResult.ok(Out(size=len(params.path)), message="read")


def _rendered():
    reader = Tool[Params, Out](
        name="read_it",
        description="Read a file.",
        handler=handler,
        annotations=ToolAnnotations(read_only=True, idempotent=True),
    )
    plain = Tool[None, None](
        name="ping", description="Ping.", handler=lambda p, *, context: ToolResult.ok(None, "pong")
    )
    prompt = Prompt(
        ns="t",
        key="adapters",
        sections=[MarkdownSection(title="T", key="t", template="x", tools=[reader, plain])],
    )
    return prompt.render()


def _walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _assert_self_contained(schema):
    for node in _walk(schema):
        assert "$ref" not in node
        assert "$defs" not in node


def test_openai_chat_tools_match_the_sdk_type():
    from openai.types.chat import ChatCompletionToolParam

    tools = openai.chat_tools(_rendered())
    adapter = TypeAdapter(ChatCompletionToolParam)
    for item in tools:
        adapter.validate_python(item, strict=True)
    first = tools[0]["function"]
    assert first["name"] == "read_it"
    assert first["parameters"]["properties"]["path"]["description"] == "File to read."
    assert first["parameters"]["additionalProperties"] is False
    _assert_self_contained(first["parameters"])
    assert tools[1]["function"]["parameters"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_openai_responses_tools_match_the_sdk_type():
    from openai.types.responses import FunctionToolParam

    adapter = TypeAdapter(FunctionToolParam)
    for item in openai.response_tools(_rendered()):
        adapter.validate_python(item, strict=True)
        _assert_self_contained(item["parameters"])


def test_openai_chat_tool_call_round_trip_with_sdk_objects():
    from openai.types.chat import ChatCompletionMessageToolCall, ChatCompletionToolMessageParam

    call = ChatCompletionMessageToolCall.model_validate(
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "read_it", "arguments": '{"path": "abc"}'},
        }
    )
    executor = ToolExecutor(_rendered(), session=Session())
    message = openai.run_chat_tool_call(executor, call)
    TypeAdapter(ChatCompletionToolMessageParam).validate_python(message, strict=True)
    assert message == {"role": "tool", "tool_call_id": "call_1", "content": 'read\n{"size":3}'}


def test_openai_responses_function_call_round_trip():
    from openai.types.responses import ResponseFunctionToolCall
    from openai.types.responses.response_input_param import FunctionCallOutput

    item = ResponseFunctionToolCall.model_validate(
        {"type": "function_call", "call_id": "c9", "name": "read_it", "arguments": '{"path": 1}'}
    )
    executor = ToolExecutor(_rendered(), session=Session())
    output = openai.run_response_function_call(executor, item)
    TypeAdapter(FunctionCallOutput).validate_python(output, strict=True)
    assert output["call_id"] == "c9"
    assert "field 'path'" in output["output"]


def test_anthropic_tools_and_tool_result_match_the_sdk_types():
    from anthropic.types import ToolParam, ToolResultBlockParam, ToolUseBlock

    adapter = TypeAdapter(ToolParam)
    for item in anthropic.tools(_rendered()):
        adapter.validate_python(item, strict=True)
        _assert_self_contained(item["input_schema"])
    block = ToolUseBlock.model_validate(
        {"type": "tool_use", "id": "toolu_1", "name": "read_it", "input": {"path": "missing"}}
    )
    executor = ToolExecutor(_rendered(), session=Session())
    result = anthropic.run_tool_use(executor, block)
    TypeAdapter(ToolResultBlockParam).validate_python(result, strict=True)
    assert result["is_error"] is True
    assert result["content"] == "No such file: missing."


def test_mcp_tools_validate_as_sdk_tools_with_annotations():
    import mcp.types as types

    tools = [types.Tool.model_validate(item) for item in mcp.tools(_rendered())]
    assert tools[0].annotations is not None
    assert tools[0].annotations.read_only_hint is True
    assert tools[0].annotations.idempotent_hint is True
    assert tools[0].annotations.destructive_hint is False
    assert tools[0].annotations.open_world_hint is None
    _assert_self_contained(tools[0].input_schema)
    assert tools[1].annotations is not None
    assert tools[1].annotations.read_only_hint is False


def test_mcp_call_result_marks_failures_as_error_results():
    import mcp.types as types

    ok = types.CallToolResult.model_validate(mcp.call_result(ToolResult.ok(Out(1), "fine")))
    bad = types.CallToolResult.model_validate(mcp.call_result(ToolResult.error("nope")))
    assert ok.is_error is False
    assert bad.is_error is True
    assert bad.content[0].text == "nope"


def test_plain_dict_calls_are_accepted():
    executor = ToolExecutor(_rendered(), session=Session())
    message = openai.run_chat_tool_call(
        executor, {"id": "x", "function": {"name": "ping", "arguments": "{}"}}
    )
    assert message["content"] == "pong"
    with pytest.raises(KeyError, match="function"):
        openai.read_chat_tool_call({"id": "x"})
