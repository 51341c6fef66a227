"""OpenAI Chat Completions and Responses API formats."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haversack import serde

from ._common import (
    ToolCall,
    aexecute_calls,
    chat_tool_calls_of,
    field_of,
    function_calls_of,
)

if TYPE_CHECKING:
    from haversack._executor import ToolExecutor
    from haversack._prompt import RenderedPrompt

__all__ = [
    "arun_chat_tool_call",
    "arun_chat_tool_calls",
    "arun_response_function_call",
    "arun_response_function_calls",
    "chat_tool_message",
    "chat_tools",
    "read_chat_tool_call",
    "read_response_function_call",
    "response_function_output",
    "response_tools",
    "run_chat_tool_call",
    "run_chat_tool_calls",
    "run_response_function_call",
    "run_response_function_calls",
]


def chat_tools(rendered: RenderedPrompt) -> list[dict[str, Any]]:
    """``tools=`` for ``chat.completions.create``: one ``{"type": "function", ...}`` per tool.

    The list and its dicts are new on every call (add ``strict`` or reorder freely); each
    ``parameters`` is the tool's shared, read-only schema (:func:`haversack.serde.shared_schema`),
    not a copy: deep-copy it to change it.
    """
    schema_of = serde.shared_schema
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": schema_of(tool.params_type),
            },
        }
        for tool in rendered.tools
    ]


def response_tools(rendered: RenderedPrompt) -> list[dict[str, Any]]:
    """``tools=`` for ``responses.create``: flat function tools (``strict`` off, since
    optional fields with defaults are not allowed in strict mode). New list and dicts on every
    call; each ``parameters`` is shared and read-only, as in :func:`chat_tools`."""
    schema_of = serde.shared_schema
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": schema_of(tool.params_type),
            "strict": False,
        }
        for tool in rendered.tools
    ]


def read_chat_tool_call(call: object) -> ToolCall:
    """A Chat Completions ``tool_calls`` entry (SDK object or dict) as a :class:`ToolCall`."""
    function = field_of(call, "function")
    return ToolCall(
        call_id=field_of(call, "id"),
        name=field_of(function, "name"),
        arguments=field_of(function, "arguments"),
    )


def chat_tool_message(call_id: str | None, text: str) -> dict[str, Any]:
    """The ``{"role": "tool", ...}`` message answering a Chat Completions tool call."""
    return {"role": "tool", "tool_call_id": call_id or "", "content": text}


def run_chat_tool_call(executor: ToolExecutor, call: object) -> dict[str, Any]:
    """Run a Chat Completions tool call and return the tool message to append."""
    parsed = read_chat_tool_call(call)
    result = executor.execute(parsed.name, parsed.arguments, call_id=parsed.call_id)
    return chat_tool_message(parsed.call_id, result.render())


def read_response_function_call(item: object) -> ToolCall:
    """A Responses API ``function_call`` output item as a :class:`ToolCall`."""
    return ToolCall(
        call_id=field_of(item, "call_id"),
        name=field_of(item, "name"),
        arguments=field_of(item, "arguments"),
    )


def response_function_output(call_id: str | None, text: str) -> dict[str, Any]:
    """The ``function_call_output`` input item answering a Responses function call."""
    return {"type": "function_call_output", "call_id": call_id or "", "output": text}


def run_response_function_call(executor: ToolExecutor, item: object) -> dict[str, Any]:
    """Run a Responses function call and return the ``function_call_output`` item."""
    parsed = read_response_function_call(item)
    result = executor.execute(parsed.name, parsed.arguments, call_id=parsed.call_id)
    return response_function_output(parsed.call_id, result.render())


async def arun_chat_tool_call(executor: ToolExecutor, call: object) -> dict[str, Any]:
    """:func:`run_chat_tool_call` with ``await executor.aexecute`` (async tools in an async app)."""
    parsed = read_chat_tool_call(call)
    result = await executor.aexecute(parsed.name, parsed.arguments, call_id=parsed.call_id)
    return chat_tool_message(parsed.call_id, result.render())


def run_chat_tool_calls(executor: ToolExecutor, response: object) -> list[dict[str, Any]]:
    """Run every tool call of a Chat Completions response (a ``ChatCompletion``, its
    ``message`` or a dict of either) in order; returns the tool messages to append after
    the assistant message."""
    return [run_chat_tool_call(executor, call) for call in chat_tool_calls_of(response)]


async def arun_chat_tool_calls(executor: ToolExecutor, response: object) -> list[dict[str, Any]]:
    """:func:`run_chat_tool_calls` for asynchronous callers; when every call is of a
    ``read_only`` tool (and the call ids differ) they run concurrently, the messages still
    in call order."""
    calls = [read_chat_tool_call(call) for call in chat_tool_calls_of(response)]
    results = await aexecute_calls(executor, calls)
    return [
        chat_tool_message(call.call_id, result.render())
        for call, result in zip(calls, results, strict=True)
    ]


async def arun_response_function_call(executor: ToolExecutor, item: object) -> dict[str, Any]:
    """:func:`run_response_function_call` with ``await executor.aexecute``."""
    parsed = read_response_function_call(item)
    result = await executor.aexecute(parsed.name, parsed.arguments, call_id=parsed.call_id)
    return response_function_output(parsed.call_id, result.render())


def run_response_function_calls(executor: ToolExecutor, response: object) -> list[dict[str, Any]]:
    """Run every ``function_call`` item of a Responses ``Response`` (or its ``output`` list)
    in order; returns the ``function_call_output`` items to append to the next input."""
    return [run_response_function_call(executor, item) for item in function_calls_of(response)]


async def arun_response_function_calls(
    executor: ToolExecutor, response: object
) -> list[dict[str, Any]]:
    """:func:`run_response_function_calls` for asynchronous callers; read-only calls run
    concurrently as in :func:`arun_chat_tool_calls`."""
    calls = [read_response_function_call(item) for item in function_calls_of(response)]
    results = await aexecute_calls(executor, calls)
    return [
        response_function_output(call.call_id, result.render())
        for call, result in zip(calls, results, strict=True)
    ]
