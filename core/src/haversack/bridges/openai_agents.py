"""OpenAI Agents SDK: function tools whose calls run through a :class:`~haversack.ToolExecutor`.

Install with ``pip install 'haversack[openai-agents]'``. A tool an
:class:`~haversack.ApprovalPolicy` holds for a human gets the SDK's ``needs_approval``: the
run stops with the call in ``result.interruptions``, and ``state.approve(item)`` /
``state.reject(item)`` answer it, as for any SDK tool.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from agents import FunctionTool

from haversack.adapters._common import NO_APPROVER, asks_approval, pending_of, tool_definition

if TYPE_CHECKING:
    from agents.tool_context import ToolContext

    from haversack._executor import ToolExecutor
    from haversack._tool import Tool

__all__ = ["function_tool", "function_tools"]


def function_tools(executor: ToolExecutor) -> list[FunctionTool]:
    """The tools of ``executor``'s rendered prompt as Agents SDK ``FunctionTool`` objects, in
    prompt order; pass them as ``Agent(..., tools=function_tools(executor))``. See
    :func:`function_tool`."""
    return [function_tool(executor, item) for item in executor.rendered_prompt.tools]


def function_tool(executor: ToolExecutor, item: Tool[Any, Any]) -> FunctionTool:
    """``item`` as an Agents SDK ``FunctionTool`` whose calls run through ``executor``.

    Each call runs with ``await executor.aexecute(...)`` (parsing, policies, rollback of a
    failed call, the session's log); its rendered result, success or failure, is what the
    model gets, so a policy's denial reaches the model as the tool's output. The schema is
    not strict (optional fields with defaults are not allowed in strict mode); the executor
    parses every call strictly itself.

    ``needs_approval`` is set when an :class:`~haversack.ApprovalPolicy` governing the tool
    asks about it: the SDK asks the human before the call, and an approved call runs with
    that approval answering the policies that hold it (every other policy still applies).
    A call another policy holds, which the SDK could not know to ask about, is refused and
    the model is told that no one is there to approve it.
    """
    definition = tool_definition(item)
    name = item.name

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        call_id = context.tool_call_id
        result = await executor.aexecute(name, arguments, call_id=call_id)
        pending = pending_of(result)
        if pending is not None:
            # True only for a call the SDK stopped for and the human approved.
            approved = context.is_tool_approved(name, call_id) is True
            answer = pending.approve() if approved else pending.deny(NO_APPROVER)
            result = await executor.aresume(pending.call_id, answer)
        return result.render()

    return FunctionTool(
        name=name,
        description=definition.description,
        # The SDK may rewrite a schema it is given; the shared one is read-only.
        params_json_schema=copy.deepcopy(definition.parameters),
        on_invoke_tool=invoke,
        strict_json_schema=False,
        needs_approval=asks_approval(executor.rendered_prompt, item),
    )
