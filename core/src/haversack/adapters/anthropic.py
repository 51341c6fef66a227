"""Anthropic Messages API format."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haversack import serde

from ._common import ToolCall, aexecute_calls, field_of, tool_uses_of

if TYPE_CHECKING:
    from haversack._executor import ToolExecutor
    from haversack._prompt import RenderedPrompt
    from haversack._result import ToolResult

__all__ = [
    "arun_tool_use",
    "arun_tool_uses",
    "read_tool_use",
    "run_tool_use",
    "run_tool_uses",
    "tool_result_block",
    "tools",
]


def tools(rendered: RenderedPrompt) -> list[dict[str, Any]]:
    """``tools=`` for ``messages.create``: ``{"name", "description", "input_schema"}`` each.

    The list and its dicts are new on every call (add ``cache_control`` to the last one
    freely); each ``input_schema`` is the tool's shared, read-only schema
    (:func:`haversack.serde.shared_schema`), not a copy: deep-copy it to change it.
    """
    schema_of = serde.shared_schema
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": schema_of(tool.params_type),
        }
        for tool in rendered.tools
    ]


def read_tool_use(block: object) -> ToolCall:
    """A ``tool_use`` content block (SDK object or dict) as a :class:`ToolCall`."""
    return ToolCall(
        call_id=field_of(block, "id"),
        name=field_of(block, "name"),
        arguments=field_of(block, "input"),
    )


def tool_result_block(call_id: str | None, result: ToolResult[Any]) -> dict[str, Any]:
    """The ``tool_result`` block answering a ``tool_use``; failures set ``is_error``."""
    return {
        "type": "tool_result",
        "tool_use_id": call_id or "",
        "content": result.render(),
        "is_error": not result.success,
    }


def run_tool_use(executor: ToolExecutor, block: object) -> dict[str, Any]:
    """Run a ``tool_use`` block and return the ``tool_result`` block for the next user turn."""
    parsed = read_tool_use(block)
    result = executor.execute(parsed.name, parsed.arguments, call_id=parsed.call_id)
    return tool_result_block(parsed.call_id, result)


async def arun_tool_use(executor: ToolExecutor, block: object) -> dict[str, Any]:
    """:func:`run_tool_use` with ``await executor.aexecute`` (async tools in an async app)."""
    parsed = read_tool_use(block)
    result = await executor.aexecute(parsed.name, parsed.arguments, call_id=parsed.call_id)
    return tool_result_block(parsed.call_id, result)


def run_tool_uses(executor: ToolExecutor, message: object) -> list[dict[str, Any]]:
    """Run every ``tool_use`` block of a ``Message`` (or its ``content`` list) in order;
    returns the messages to append: one user message holding every ``tool_result`` block
    (none when the message made no tool call)."""
    blocks = [run_tool_use(executor, block) for block in tool_uses_of(message)]
    return [{"role": "user", "content": blocks}] if blocks else []


async def arun_tool_uses(executor: ToolExecutor, message: object) -> list[dict[str, Any]]:
    """:func:`run_tool_uses` for asynchronous callers; when every call is of a
    ``read_only`` tool (and the call ids differ) they run concurrently, the blocks still in
    call order."""
    calls = [read_tool_use(block) for block in tool_uses_of(message)]
    results = await aexecute_calls(executor, calls)
    blocks = [
        tool_result_block(call.call_id, result) for call, result in zip(calls, results, strict=True)
    ]
    return [{"role": "user", "content": blocks}] if blocks else []
